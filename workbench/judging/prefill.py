"""Pre-fill: a model assessor's grade shown to people, pre-selected, and what they did with it (pure).

A lead may turn pre-fill on for a pool version (``workbench prefill POOL --model
NAME``, or the Pool page): on the Judge page, a document the chosen model
assessor graded then shows the model's grade pre-selected and marked as the
model's; the assessor confirms it (saves that grade) or changes it (saves
another grade, or marks the document unsure). Each save records what was shown
(``Prefill``: the model assessor and its grade) and which of the two happened
(``prefill_outcome``), so the effect of pre-filling on agreement is measurable:
agreement of people with the model on the documents they saw pre-filled
against the documents they did not (``PrefillSplit``).

Pre-fill is off unless a lead turns it on; with it off, judging is blind to
every model (``workbench.store.model_assessors``). With ``share`` below 1, a
seeded, per-assessor share of the documents is pre-filled and the rest are
not, so the two groups of one campaign can be compared
(``is_prefilled``: the same document is pre-filled for an assessor every time).

Source:
    Anchoring of relevance assessors by shown labels: e.g. Scholer, Turpin &
    Sanderson, "Quantifying test collection quality based on the consistency
    of relevance judgements", SIGIR 2011, doi:10.1145/2009916.2010057;
    Thomas, Spielman, Craswell & Mitra, "Large language models can accurately
    predict searcher preferences", SIGIR 2024, doi:10.1145/3626772.3657707
    (model labels as a first pass that people check).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from workbench.errors import ValidationError
from workbench.judging.agreement import AgreementFigure, Weights, cohen_kappa, krippendorff_alpha

PrefillOutcome = Literal["confirmed", "changed"]
"""What the assessor did with a pre-filled grade: saved it (``confirmed``), or saved
another grade or an unsure mark (``changed``)."""

PREFILL_OUTCOMES: tuple[str, ...] = ("confirmed", "changed")

Subset = Literal["all", "pre-filled", "not pre-filled"]
"""Which of a person's judgments an agreement row counts: every one, those saved with
this model's grade pre-filled, or those saved with no grade pre-filled."""

SUBSETS: tuple[Subset, ...] = ("all", "pre-filled", "not pre-filled")


@dataclass(frozen=True, slots=True)
class Prefill:
    """A model assessor's grade shown pre-selected on the Judge page.

    Attributes:
        assessor: the model assessor (a user of kind ``model``).
        grade: its current grade of the document, the one pre-selected.
    """

    assessor: str
    grade: int


@dataclass(frozen=True, slots=True)
class PrefillSetting:
    """A pool version's pre-fill setting (the latest a lead set).

    Attributes:
        pool_version: the pool version.
        model: the model assessor whose grades are pre-filled; None = pre-fill off.
        share: the share of each assessor's documents pre-filled, 0 < share <= 1
            (1 = every document the model graded).
        set_by: the lead who set it.
        set_at: when.
    """

    pool_version: str
    model: str | None
    share: float = 1.0
    set_by: str = ""
    set_at: datetime | None = None

    @property
    def on(self) -> bool:
        """True when a model's grades are pre-filled."""
        return self.model is not None


def check_share(share: float) -> float:
    """The share of documents to pre-fill, checked: 0 < share <= 1.

    Raises:
        ValidationError: out of range or not a number.
    """
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0.0 < float(share) <= 1.0:
        raise ValidationError(f"expected a pre-fill share in (0, 1] (1 = every document), found {share!r}")
    return float(share)


def is_prefilled(share: float, assessor: str, topic_id: str, doc_id: str) -> bool:
    """Whether a document is pre-filled for an assessor under ``share``.

    Every document when ``share`` is 1; otherwise the documents whose
    sha256 of (assessor, topic, document) falls in the first ``share`` of the
    hash range: a fixed draw per assessor and document (the same answer on every
    visit and in every process), independent of the queue order.

    Example:
        >>> is_prefilled(1.0, "ann", "1", "d1")
        True
        >>> sum(is_prefilled(0.5, "ann", "1", f"d{i}") for i in range(1000))
        502
    """
    if share >= 1.0:
        return True
    digest = hashlib.sha256(f"{assessor}\x1f{topic_id}\x1f{doc_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") < share * 2**64


def prefill_outcome(prefill: Prefill, grade: int | None, unsure: bool) -> PrefillOutcome:
    """``confirmed`` when the saved grade is the pre-filled one, else ``changed`` (an unsure mark
    is a change: the model's grade was not kept).

    Example:
        >>> prefill_outcome(Prefill("bot", 2), 2, False), prefill_outcome(Prefill("bot", 2), 1, False)
        ('confirmed', 'changed')
    """
    return "confirmed" if (grade == prefill.grade and not unsure) else "changed"


@dataclass(frozen=True, slots=True)
class PrefillItem:
    """One document graded by a person and by a model assessor.

    Attributes:
        model: the model assessor.
        person: the person.
        model_grade: the model's current grade.
        person_grade: the person's current grade (integer; unsure is not an item).
        prefilled_by: the model assessor whose grade was pre-filled when the person
            saved their current judgment ("" = none was).
        outcome: ``confirmed`` / ``changed`` when pre-filled, else "".
    """

    model: str
    person: str
    model_grade: int
    person_grade: int
    prefilled_by: str = ""
    outcome: str = ""


@dataclass(frozen=True, slots=True)
class PrefillSplit:
    """Agreement of one person with one model assessor on a subset of their common documents.

    Attributes:
        model: the model assessor.
        person: the person.
        subset: ``all``, ``pre-filled`` (this model's grade was pre-filled when the
            person saved) or ``not pre-filled`` (no grade was pre-filled).
        n_items: documents in the subset.
        same_grade: share of them the person gave the model's grade (None when none).
        kappa: weighted Cohen's kappa (``value`` None with a ``reason`` when undefined).
        alpha: Krippendorff's alpha, ordinal.
        n_confirmed: documents of the subset pre-filled from this model whose grade the person
            confirmed (so 0 in ``not pre-filled``).
    """

    model: str
    person: str
    subset: Subset
    n_items: int
    same_grade: float | None
    kappa: AgreementFigure
    alpha: AgreementFigure
    n_confirmed: int = 0


def prefill_splits(items: Iterable[PrefillItem], *, scale: Sequence[int], weights: Weights = "linear",
                   split: bool = True) -> list[PrefillSplit]:
    """Model-against-person agreement, overall and (with ``split``) on pre-filled and not pre-filled documents.

    Args:
        items: one per document graded by both (any order).
        scale: the rubric's grades (alpha's ordinal scale).
        weights: kappa's disagreement weights.
        split: also the ``pre-filled`` and ``not pre-filled`` rows (the caller
            passes False when no save was ever pre-filled).

    Returns:
        Per (model, person), sorted by name: the ``all`` row, then (with
        ``split``) ``pre-filled`` and ``not pre-filled``. A document pre-filled
        from *another* model counts in ``all`` only.

    Example:
        >>> rows = prefill_splits([PrefillItem("bot", "ann", 2, 2, "bot", "confirmed"),
        ...                        PrefillItem("bot", "ann", 0, 1)], scale=[0, 1, 2, 3])
        >>> [(r.subset, r.n_items, r.same_grade, r.n_confirmed) for r in rows]
        [('all', 2, 0.5, 1), ('pre-filled', 1, 1.0, 1), ('not pre-filled', 1, 0.0, 0)]
    """
    by_pair: dict[tuple[str, str], list[PrefillItem]] = {}
    for it in items:
        by_pair.setdefault((it.model, it.person), []).append(it)
    out: list[PrefillSplit] = []
    for (model, person), rows in sorted(by_pair.items()):
        subsets: list[tuple[Subset, list[PrefillItem]]] = [("all", rows)]
        if split:
            subsets.append(("pre-filled", [r for r in rows if r.prefilled_by == model]))
            subsets.append(("not pre-filled", [r for r in rows if not r.prefilled_by]))
        for subset, chosen in subsets:
            pairs = [(r.model_grade, r.person_grade) for r in chosen]
            same = sum(1 for a, b in pairs if a == b) / len(pairs) if pairs else None
            kappa = cohen_kappa(pairs, weights=weights)
            alpha = krippendorff_alpha([{"model": a, "person": b} for a, b in pairs], scale=scale)
            confirmed = sum(1 for r in chosen if r.prefilled_by == model and r.outcome == "confirmed")
            out.append(PrefillSplit(model, person, subset, len(pairs), same, kappa, alpha, confirmed))
    return out
