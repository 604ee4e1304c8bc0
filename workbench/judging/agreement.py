"""Inter-assessor agreement on doubly-judged documents (pure).

Two figures, each reported with the number of items behind it:

* **Weighted Cohen's kappa** per assessor pair, on the documents both
  assessors graded:

      kappa_w = 1 - sum_ij w_ij * o_ij / sum_ij w_ij * e_ij

  where ``o_ij`` is the observed share of items graded ``i`` by the first and
  ``j`` by the second assessor, ``e_ij = o_i. * o_.j`` the share expected by
  chance from the two marginals, and ``w_ij`` the disagreement weight:
  ``|i - j|`` (linear) or ``(i - j)^2`` (quadratic), on grade values. Any
  constant factor in ``w`` cancels, so this equals the textbook
  ``|i - j| / (k - 1)`` form and, on a contiguous integer scale passed as
  ``labels``, ``sklearn.metrics.cohen_kappa_score(weights=...)``.
* **Krippendorff's alpha**, ordinal level, per topic and overall, over every
  document graded by at least two assessors (any number of assessors, missing
  values allowed). Computed by the ``krippendorff`` package.

Conventions:

* Only integer grades count; a judgment marked *unsure* (grade ``None``) is not
  an item of agreement.
* A figure is *undefined* (``value=None`` with a ``reason``) when fewer than 2
  items are behind it, or when chance disagreement is zero (every grade given
  falls in one category, so agreement cannot be told from chance). Such
  figures are never NaN and never raise.

Source:
    Cohen, J. (1968). Weighted kappa. Psychological Bulletin 70(4), 213-220.
    doi:10.1037/h0026256. Krippendorff, K. (2004/2019). Content Analysis, ch. 12;
    Hayes & Krippendorff (2007), doi:10.1080/19312450709336664.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from workbench.errors import ValidationError
from workbench.ranking import natural_key

Weights = Literal["linear", "quadratic"]
"""Disagreement weights of Cohen's kappa: |i - j| or (i - j)^2."""

ItemKey = tuple[str, str]
"""(topic_id, doc_id): one judged item."""

MIN_ITEMS = 2
"""Fewest items behind a defined agreement figure."""


@dataclass(frozen=True, slots=True)
class AgreementFigure:
    """One agreement coefficient with its evidence.

    Attributes:
        value: the coefficient (1 = perfect agreement, 0 = chance level,
            negative = worse than chance), or ``None`` when undefined.
        n_items: number of items (documents) behind the figure.
        reason: why ``value`` is None ("" when defined).
    """

    value: float | None
    n_items: int
    reason: str = ""

    @property
    def defined(self) -> bool:
        """True when ``value`` is a number."""
        return self.value is not None


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """Cohen's weighted kappa of one assessor pair.

    Attributes:
        assessor_a: first assessor (sorted name order).
        assessor_b: second assessor.
        kappa: the figure; ``n_items`` counts documents both graded.
        n_agree: items where both gave the same grade.
        weights: ``linear`` or ``quadratic``.
    """

    assessor_a: str
    assessor_b: str
    kappa: AgreementFigure
    n_agree: int
    weights: Weights


@dataclass(frozen=True, slots=True)
class AgreementReport:
    """Agreement of a set of judgments.

    Attributes:
        pairs: one ``PairAgreement`` per assessor pair that shares at least one
            graded item, sorted by (assessor_a, assessor_b).
        alpha_overall: Krippendorff's alpha (ordinal) over all multiply-graded items.
        alpha_by_topic: topic_id -> alpha over that topic's multiply-graded items;
            one entry per topic having at least one such item.
        n_multi_graded: number of items graded by two or more assessors.
    """

    pairs: list[PairAgreement]
    alpha_overall: AgreementFigure
    alpha_by_topic: dict[str, AgreementFigure] = field(default_factory=dict)
    n_multi_graded: int = 0


def _weight(a: int, b: int, weights: Weights) -> float:
    d = abs(a - b)
    return float(d) if weights == "linear" else float(d * d)


def cohen_kappa(
    pairs: Sequence[tuple[int, int]],
    *,
    weights: Weights = "linear",
) -> AgreementFigure:
    """Weighted Cohen's kappa of two assessors' grades on the same items.

    kappa_w = 1 - sum_ij w_ij o_ij / sum_ij w_ij e_ij, with w_ij = |i-j| (linear)
    or (i-j)^2 (quadratic), o the observed joint shares and e the product of
    the two marginal shares.

    Args:
        pairs: one (grade of assessor A, grade of assessor B) per item.
        weights: ``"linear"`` or ``"quadratic"`` disagreement weights.

    Returns:
        ``AgreementFigure``; ``value`` is None with a reason when there are
        fewer than 2 items or the chance disagreement is 0 (both assessors used
        one and the same single grade).

    Raises:
        ValueError: ``weights`` is not ``linear`` or ``quadratic`` (a programming
            error; the edges offer only those two).

    Source:
        Cohen (1968), doi:10.1037/h0026256. Matches
        ``sklearn.metrics.cohen_kappa_score(a, b, weights=..., labels=scale)``
        on contiguous integer scales.

    Example:
        >>> round(cohen_kappa([(0, 0), (1, 1), (2, 1), (2, 2)]).value, 4)
        0.7143
    """
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be 'linear' or 'quadratic', found {weights!r}")
    n = len(pairs)
    if n < MIN_ITEMS:
        return AgreementFigure(None, n, f"fewer than {MIN_ITEMS} items graded by both")
    count_a: dict[int, int] = {}
    count_b: dict[int, int] = {}
    observed = 0.0
    for a, b in pairs:
        count_a[a] = count_a.get(a, 0) + 1
        count_b[b] = count_b.get(b, 0) + 1
        observed += _weight(a, b, weights)
    observed /= n
    expected = 0.0
    for a, ca in count_a.items():
        for b, cb in count_b.items():
            expected += _weight(a, b, weights) * (ca / n) * (cb / n)
    if expected == 0.0:
        return AgreementFigure(None, n, "chance disagreement is 0: every grade is the same category")
    return AgreementFigure(1.0 - observed / expected, n)


def krippendorff_alpha(
    units: Iterable[Mapping[str, int]],
    *,
    scale: Sequence[int],
) -> AgreementFigure:
    """Krippendorff's alpha, ordinal level, over items graded by 2+ assessors.

    Args:
        units: per item, assessor -> grade. Items with fewer than two grades
            are not pairable and are skipped (not counted in ``n_items``).
        scale: the ordered grade values of the rubric (the value domain), e.g.
            ``(0, 1, 2, 3)``. Grades outside it raise.

    Returns:
        ``AgreementFigure`` whose ``n_items`` counts the pairable items; None
        with a reason for fewer than 2 items or when every grade is the same.

    Raises:
        ValidationError: a grade is not in ``scale`` (a WorkbenchError).

    Source:
        Krippendorff (2004), ordinal metric; computed by the ``krippendorff``
        package (``level_of_measurement="ordinal"``, ``value_domain=scale``).
    """
    rows = [dict(u) for u in units if len(u) >= 2]
    n = len(rows)
    if n < MIN_ITEMS:
        return AgreementFigure(None, n, f"fewer than {MIN_ITEMS} items graded by two or more assessors")
    allowed = set(scale)
    values = {g for u in rows for g in u.values()}
    off = sorted(values - allowed)
    if off:
        raise ValidationError(
            f"expected grades in the rubric scale {list(scale)}, found {off}; the rubric changed after "
            "judging? set the rubric the documents were judged on (workbench rubric COLLECTION NAME)"
        )
    if len(values) < 2:
        return AgreementFigure(None, n, "every grade is the same category: no variation to agree on")
    import krippendorff
    import numpy as np  # lazily: the pure layer stays cheap to import

    assessors = sorted({a for u in rows for a in u})
    data = np.full((len(assessors), n), np.nan)
    index = {a: i for i, a in enumerate(assessors)}
    for j, u in enumerate(rows):
        for a, g in u.items():
            data[index[a], j] = g
    value = float(
        krippendorff.alpha(
            reliability_data=data, level_of_measurement="ordinal", value_domain=list(scale)
        )
    )
    if value != value:  # NaN: the package could not compute it
        return AgreementFigure(None, n, "undefined: no disagreement expected by chance")
    return AgreementFigure(value, n)


def agreement_report(
    grades: Mapping[ItemKey, Mapping[str, int | None]],
    *,
    scale: Sequence[int],
    weights: Weights = "linear",
) -> AgreementReport:
    """Kappa per assessor pair and alpha per topic and overall.

    Args:
        grades: (topic_id, doc_id) -> assessor -> current grade (``None`` for
            unsure, which is ignored).
        scale: the rubric's ordered grade values (Krippendorff's value domain).
        weights: kappa weights, ``linear`` or ``quadratic``.

    Returns:
        ``AgreementReport``: pairs sorted by names; ``alpha_by_topic`` keyed by
        topic_id for topics with at least one multiply-graded item.

    Source:
        See the module docstring (Cohen 1968; Krippendorff 2004).
    """
    graded: dict[ItemKey, dict[str, int]] = {}
    for key, by_assessor in grades.items():
        g = {a: int(v) for a, v in by_assessor.items() if v is not None}
        if g:
            graded[key] = g
    multi = {k: v for k, v in graded.items() if len(v) >= 2}

    by_pair: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for key in sorted(multi):
        u = multi[key]
        for a, b in itertools.combinations(sorted(u), 2):
            by_pair.setdefault((a, b), []).append((u[a], u[b]))
    pairs = [
        PairAgreement(a, b, cohen_kappa(p, weights=weights), sum(x == y for x, y in p), weights)
        for (a, b), p in sorted(by_pair.items())
    ]

    by_topic: dict[str, list[dict[str, int]]] = {}
    for (topic_id, _doc), u in sorted(multi.items(), key=lambda kv: (natural_key(kv[0][0]), kv[0][1])):
        by_topic.setdefault(topic_id, []).append(u)
    alpha_by_topic = {t: krippendorff_alpha(us, scale=scale) for t, us in by_topic.items()}
    overall = krippendorff_alpha([multi[k] for k in sorted(multi)], scale=scale)
    return AgreementReport(pairs, overall, alpha_by_topic, len(multi))
