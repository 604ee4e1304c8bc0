"""Store methods for model assessors (a mixin of ``LabelStore``).

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
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from workbench.errors import DuplicateNameError, ValidationError
from workbench.store._rows import _one
from workbench.store.users import _NAME_RE, MODEL_TOKEN_HASH, UsersMixin

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


_COLS = "user_name, model, model_kind, weights_hash, grade_mapping, fitted_on, fit, created_by, created_at"


def _info(row: Any) -> ModelAssessorInfo:
    return ModelAssessorInfo(row[0], row[1], row[2], row[3], row[4], row[5], json.loads(row[6] or "{}"),
                             row[7], row[8])


class ModelAssessorsMixin(UsersMixin):
    """Model assessors: creation and reads."""

    def check_model_assessor_name(self, name: str, *, model: str, weights_hash: str) -> None:
        """Check, before any work, that ``name`` can be (or already is) this model's assessor.

        Raises:
            ValidationError: a bad name.
            DuplicateNameError: the name is a person, or a model assessor of another model or weights.
        """
        if not _NAME_RE.match(name or ""):
            raise ValidationError(
                f"expected a model assessor name of letters, digits and _.@- (1-64 characters), found {name!r}"
            )
        with self.connection(f"check model assessor {name}") as con:
            row = _one(con.execute(f"SELECT {_COLS} FROM model_assessors WHERE user_name = ?", [name]))
            person = row is None and _one(con.execute("SELECT 1 FROM users WHERE user_name = ?", [name]))
        if row is not None:
            info = _info(row)
            if (info.model, info.weights_hash) != (model, weights_hash):
                raise DuplicateNameError(
                    f"model assessor {name!r} already exists with model {info.model} "
                    f"(weights {info.weights_hash[:12]}); a model assessor never changes: choose another "
                    "name with --as"
                )
        elif person:
            raise DuplicateNameError(f"user {name!r} already exists (a person); choose another name with --as")

    def add_model_assessor(
        self,
        name: str,
        *,
        model: str,
        model_kind: str,
        weights_hash: str,
        grade_mapping: str,
        lead: str,
        fitted_on: str = "",
        fit: Mapping[str, Any] | None = None,
    ) -> ModelAssessorInfo:
        """Create a model assessor (a user of kind model), or return the same one.

        Creating it again with the same model, weights hash and grade mapping
        returns the stored one (so a re-run continues its judgments); anything
        else under a taken name is refused, since a model assessor's identity
        never changes.

        Raises:
            PermissionDeniedError: ``lead`` is not a lead.
            ValidationError: bad name or model kind.
            DuplicateNameError: the name is a person, or a model assessor with another identity.
        """
        if not _NAME_RE.match(name or ""):
            raise ValidationError(
                f"expected a model assessor name of letters, digits and _.@- (1-64 characters), found {name!r}"
            )
        if model_kind not in MODEL_KINDS:
            raise ValidationError(f"expected model kind {' or '.join(MODEL_KINDS)}, found {model_kind!r}")
        with self.transaction(f"add model assessor {name}") as cur:
            self._require_lead(cur, lead, f"add model assessor {name!r}")
            row = _one(cur.execute(f"SELECT {_COLS} FROM model_assessors WHERE user_name = ?", [name]))
            if row is not None:
                info = _info(row)
                if (info.model, info.model_kind, info.weights_hash, info.grade_mapping) == (
                        model, model_kind, weights_hash, grade_mapping):
                    return info
                raise DuplicateNameError(
                    f"model assessor {name!r} already exists with model {info.model} "
                    f"(weights {info.weights_hash[:12]}), grades {info.grade_mapping}; a model assessor "
                    "never changes: choose another name with --as"
                )
            if _one(cur.execute("SELECT 1 FROM users WHERE user_name = ?", [name])):
                raise DuplicateNameError(f"user {name!r} already exists (a person); choose another name with --as")
            cur.execute(
                "INSERT INTO users (user_name, role, token_hash, salt, created_by) VALUES (?, 'assessor', ?, ?, ?)",
                [name, MODEL_TOKEN_HASH, secrets.token_hex(16), lead],
            )
            cur.execute(
                "INSERT INTO model_assessors (user_name, model, model_kind, weights_hash, grade_mapping, fitted_on, "
                "fit, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [name, model, model_kind, weights_hash, grade_mapping, fitted_on, json.dumps(dict(fit or {})),
                 lead],
            )
            created = _one(cur.execute(f"SELECT {_COLS} FROM model_assessors WHERE user_name = ?", [name]))
        return _info(created)

    def model_assessor(self, name: str) -> ModelAssessorInfo | None:
        """A model assessor by name, or None when ``name`` is not one."""
        with self.connection("read model assessor") as cur:
            row = _one(cur.execute(f"SELECT {_COLS} FROM model_assessors WHERE user_name = ?", [name]))
        return None if row is None else _info(row)

    def list_model_assessors(self) -> list[ModelAssessorInfo]:
        """Every model assessor, by name."""
        with self.connection("list model assessors") as cur:
            rows = cur.execute(f"SELECT {_COLS} FROM model_assessors ORDER BY user_name").fetchall()
        return [_info(r) for r in rows]
