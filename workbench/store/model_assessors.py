"""What the store keeps of model assessors (created and read by ``store.users``).

A model assessor is a user of kind ``model`` (role ``assessor``) whose
identity records the model, its weights' hash and the grade mapping; its
judgments go through the same append-only save path as a person's
(``record_judgment_outcome``). It can never sign in (its stored token hash
matches no token). Everything that people see or that decides for people
leaves model judgments out unless asked: ``current_judgments`` and
``item_grades`` (agreement, disagreements, final grades, publishing), queue
flags and progress; ``model_judgments`` reads them for the lead's pages.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

MODEL_KINDS: tuple[str, ...] = ("bi-encoder", "cross-encoder")

PERSON_ASSESSOR = "assessor NOT IN (SELECT user_name FROM model_assessors)"
"""SQL condition on a ``judgments`` row (or view): the assessor is a person."""

MODEL_ASSESSOR = "assessor IN (SELECT user_name FROM model_assessors)"
"""SQL condition on a ``judgments`` row (or view): the assessor is a model."""


@dataclass(frozen=True, slots=True)
class ModelAssessorInfo:
    """A model assessor's identity (immutable once created).

    Attributes:
        name: its user name.
        model: ``minilm`` (the bundled bi-encoder) or the model folder.
        model_kind: ``bi-encoder`` (cosine of embeddings) or ``cross-encoder``.
        weights_hash: sha256 over the model's files.
        grade_mapping: score thresholds to grades, e.g. ``0:<0.3,1:<0.5,2:<0.7,3``.
        fitted_on: the qrels version the thresholds were fitted on ("" = given).
        fit: the fit's agreement figures (JSON object), {} when not fitted.
        created_by: the lead who created it.
        created_at: when.
    """

    name: str
    model: str
    model_kind: str
    weights_hash: str
    grade_mapping: str
    fitted_on: str = ""
    fit: Mapping[str, Any] = field(default_factory=dict)
    created_by: str = ""
    created_at: datetime | None = None


MODEL_ASSESSOR_COLUMNS = "user_name, model, model_kind, weights_hash, grade_mapping, fitted_on, fit, created_by, created_at"


def model_assessor_info(row: Any) -> ModelAssessorInfo:
    """A ``model_assessors`` row (``MODEL_ASSESSOR_COLUMNS``) as ``ModelAssessorInfo``."""
    return ModelAssessorInfo(row[0], row[1], row[2], row[3], row[4], row[5], json.loads(row[6] or "{}"),
                             row[7], row[8])
