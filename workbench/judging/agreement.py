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
  values allowed), from the coincidence matrix with the ``krippendorff``
  package's formula (its ``alpha``: ``1 - sum(o * d) / sum(e * d)``); the tests
  keep the package as the oracle.

Both figures are computed from *counts*, never from per-item rows: a
confusion matrix per assessor pair (``Confusion``) and, for alpha, the
coincidence counts of each topic split by how many assessors graded a
document (``Coincidences``). The store aggregates both in SQL over any number
of judgments (``AgreementCounts``); ``agreement_report`` builds the same counts
from a Python mapping, so both paths give bit-identical figures.

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

Confusion = Mapping[tuple[int, int], int]
"""(grade of assessor A, grade of assessor B) -> number of items."""

Coincidences = Mapping[int, Mapping[tuple[int, int], int]]
"""m -> (value c, value k) -> sum over the items graded by exactly m assessors of
n_c * (n_k - [c == k]), where n_c is how many of the item's assessors gave c:
the item's coincidences before the division by m - 1 (Krippendorff 2004, 12.2)."""


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
    confusion: dict[tuple[int, int], int] = {}
    for a, b in pairs:
        confusion[(a, b)] = confusion.get((a, b), 0) + 1
    return cohen_kappa_counts(confusion, weights=weights)


def cohen_kappa_counts(confusion: Confusion, *, weights: Weights = "linear") -> AgreementFigure:
    """Weighted Cohen's kappa from a confusion matrix (see ``cohen_kappa``).

    Args:
        confusion: (grade of A, grade of B) -> number of items (counts >= 0).
        weights: ``"linear"`` or ``"quadratic"``.

    Returns:
        ``AgreementFigure`` whose ``n_items`` is the total count. The sums run
        over grades in ascending order, so equal counts give a bit-identical
        value whatever order the items came in.

    Raises:
        ValueError: unknown ``weights``.
    """
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be 'linear' or 'quadratic', found {weights!r}")
    n = sum(confusion.values())
    if n < MIN_ITEMS:
        return AgreementFigure(None, n, f"fewer than {MIN_ITEMS} items graded by both")
    count_a: dict[int, int] = {}
    count_b: dict[int, int] = {}
    observed = 0.0
    for (a, b), c in sorted(confusion.items()):
        count_a[a] = count_a.get(a, 0) + c
        count_b[b] = count_b.get(b, 0) + c
        observed += _weight(a, b, weights) * c  # integer weights: an exact sum
    observed /= n
    expected = 0.0
    for a, ca in sorted(count_a.items()):
        for b, cb in sorted(count_b.items()):
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
        Krippendorff (2004), ordinal metric; the value of the ``krippendorff``
        package (``level_of_measurement="ordinal"``, ``value_domain=scale``),
        computed from coincidence counts (``krippendorff_alpha_counts``).
    """
    counts: dict[int, dict[tuple[int, int], int]] = {}
    n = 0
    for u in units:
        if len(u) < 2:
            continue
        n += 1
        add_coincidences(counts, list(u.values()))
    return krippendorff_alpha_counts(counts, n, scale=scale)


def add_coincidences(counts: dict[int, dict[tuple[int, int], int]], grades: Sequence[int], times: int = 1) -> None:
    """Add one item's grades (two or more) to ``Coincidences`` counts, in place
    (``times`` items with these same grades: each count is added ``times`` times)."""
    m = len(grades)
    by_value: dict[int, int] = {}
    for g in grades:
        by_value[g] = by_value.get(g, 0) + 1
    cell = counts.setdefault(m, {})
    for c, nc in by_value.items():
        for k, nk in by_value.items():
            add = nc * (nk - (1 if c == k else 0)) * times
            if add:
                cell[(c, k)] = cell.get((c, k), 0) + add


def krippendorff_alpha_counts(counts: Coincidences, n_items: int, *, scale: Sequence[int]) -> AgreementFigure:
    """Krippendorff's alpha (ordinal) from coincidence counts (see ``Coincidences``).

    The coincidence matrix is o_ck = sum_m counts[m][c, k] / (m - 1); then, as
    the ``krippendorff`` package computes it: n_c = sum_k o_ck, the expected
    coincidences e_ck = (n_c n_k - [c == k] n_c) / (n - 1), the ordinal
    distance d_ck = (sum_{g between c and k} n_g - (n_c + n_k) / 2)^2 over the
    value domain, and alpha = 1 - sum(o * d) / sum(e * d).

    Args:
        counts: m -> (c, k) -> summed n_c * (n_k - [c == k]) of the items graded
            by m >= 2 assessors.
        n_items: the number of those items (``n_items`` of the figure).
        scale: the ordered value domain (the rubric's grades).

    Returns:
        ``AgreementFigure``; None with a reason for fewer than 2 items or when
        every grade is the same.

    Raises:
        ValidationError: a counted grade is not in ``scale``.

    Source:
        Krippendorff (2004/2019), Content Analysis, ch. 12 (coincidence matrix,
        ordinal metric); Hayes & Krippendorff (2007), doi:10.1080/19312450709336664;
        the formula of ``krippendorff.alpha`` (its ``_coincidences``,
        ``_random_coincidences``, ``_ordinal_metric``).
    """
    if n_items < MIN_ITEMS:
        return AgreementFigure(None, n_items, f"fewer than {MIN_ITEMS} items graded by two or more assessors")
    values = {v for cell in counts.values() for (c, k), x in cell.items() if x for v in (c, k)}
    off = sorted(values - set(scale))
    if off:
        raise ValidationError(
            f"expected grades in the rubric scale {list(scale)}, found {off}; the rubric changed after "
            "judging? set the rubric the documents were judged on (workbench rubric COLLECTION NAME)"
        )
    if len(values) < 2:
        return AgreementFigure(None, n_items, "every grade is the same category: no variation to agree on")
    import numpy as np  # lazily: the pure layer stays cheap to import

    index = {v: i for i, v in enumerate(scale)}
    size = len(scale)
    o = np.zeros((size, size))
    for m in sorted(counts):
        part = np.zeros((size, size))
        for (c, k), x in counts[m].items():
            part[index[c], index[k]] = x
        o += part / (m - 1)
    n_v = o.sum(axis=0)
    e = (np.outer(n_v, n_v) - np.diagflat(n_v)) / (n_v.sum() - 1)
    i = np.arange(size)
    lo, hi = np.minimum(i[:, None], i[None, :]), np.maximum(i[:, None], i[None, :])
    ranges = np.dstack((lo, hi + 1))  # the package's _ordinal_metric, operation for operation
    between = np.add.reduceat(np.append(n_v, 0), ranges.reshape(-1))[::2].reshape(*lo.shape)
    d = (between - np.divide(n_v[lo] + n_v[hi], 2)) ** 2
    denominator = float((e * d).sum())
    if denominator == 0.0 or denominator != denominator:
        return AgreementFigure(None, n_items, "undefined: no disagreement expected by chance")
    return AgreementFigure(1.0 - float((o * d).sum()) / denominator, n_items)


@dataclass(frozen=True, slots=True)
class AgreementCounts:
    """What agreement needs, as counts (aggregated in SQL by the store).

    Attributes:
        pairs: (assessor_a, assessor_b) with a < b -> confusion counts of the
            items both graded.
        coincidences_by_topic: topic_id -> ``Coincidences`` of its items graded
            by two or more assessors.
        items_by_topic: topic_id -> the number of those items.
    """

    pairs: Mapping[tuple[str, str], Confusion]
    coincidences_by_topic: Mapping[str, Coincidences]
    items_by_topic: Mapping[str, int]


GradeProfile = tuple[str, Sequence[tuple[str, int]], int]
"""(topic_id, grades, n_items): ``n_items`` items of the topic whose current integer
grades are exactly ``grades``, one (assessor, grade) per assessor (distinct
assessors, any order). The store aggregates judgments into these (a campaign of
1e6 doubly-judged items has about 16 profiles per topic)."""


def counts_from_profiles(profiles: Iterable[GradeProfile]) -> AgreementCounts:
    """``AgreementCounts`` from grade profiles (see ``GradeProfile``).

    Each profile stands for ``n_items`` items with the same grades: it adds
    ``n_items`` to the confusion cell of every assessor pair (a < b by name) and
    ``n_items`` times its coincidences (``add_coincidences``) to its topic, as
    ``agreement_report`` does item by item. Profiles with fewer than two grades
    count for nothing; the same (topic, grades) may come in several profiles
    (their items add up).

    Args:
        profiles: (topic_id, [(assessor, grade), ...], n_items >= 1).

    Returns:
        ``AgreementCounts``; ``items_by_topic`` counts the items graded by two or more.

    Raises:
        ValueError: an assessor appears twice in one profile (a programming error:
            an item has one current grade per assessor).

    Example:
        >>> c = counts_from_profiles([("1", [("bob", 2), ("ann", 1)], 3)])
        >>> dict(c.pairs), dict(c.items_by_topic)
        ({('ann', 'bob'): {(1, 2): 3}}, {'1': 3})
    """
    pairs: dict[tuple[str, str], dict[tuple[int, int], int]] = {}
    coincidences: dict[str, dict[int, dict[tuple[int, int], int]]] = {}
    items: dict[str, int] = {}
    for topic_id, grades, n_items in profiles:
        u = {a: int(g) for a, g in grades}
        if len(u) != len(grades):
            raise ValueError(f"topic {topic_id!r}: an assessor appears twice in one item's grades {list(grades)}")
        if len(u) < 2 or n_items <= 0:
            continue
        for a, b in itertools.combinations(sorted(u), 2):
            conf = pairs.setdefault((a, b), {})
            conf[(u[a], u[b])] = conf.get((u[a], u[b]), 0) + n_items
        add_coincidences(coincidences.setdefault(topic_id, {}), list(u.values()), n_items)
        items[topic_id] = items.get(topic_id, 0) + n_items
    return AgreementCounts(pairs, coincidences, items)


def agreement_from_counts(counts: AgreementCounts, *, scale: Sequence[int],
                          weights: Weights = "linear") -> AgreementReport:
    """Kappa per assessor pair and alpha per topic and overall, from counts.

    Args:
        counts: the confusion and coincidence counts (``AgreementCounts``).
        scale: the rubric's ordered grade values (Krippendorff's value domain).
        weights: kappa weights, ``linear`` or ``quadratic``.

    Returns:
        ``AgreementReport`` (see ``agreement_report``).

    Raises:
        ValidationError: a grade outside ``scale``.
    """
    pairs = [
        PairAgreement(a, b, cohen_kappa_counts(conf, weights=weights),
                      sum(x for (ga, gb), x in conf.items() if ga == gb), weights)
        for (a, b), conf in sorted(counts.pairs.items()) if sum(conf.values())
    ]
    topics = sorted((t for t, n in counts.items_by_topic.items() if n), key=natural_key)
    alpha_by_topic = {t: krippendorff_alpha_counts(counts.coincidences_by_topic.get(t, {}), counts.items_by_topic[t],
                                                   scale=scale) for t in topics}
    overall: dict[int, dict[tuple[int, int], int]] = {}
    for t in topics:
        for m, cell in counts.coincidences_by_topic.get(t, {}).items():
            into = overall.setdefault(m, {})
            for key, x in cell.items():
                into[key] = into.get(key, 0) + x
    n_multi = sum(counts.items_by_topic[t] for t in topics)
    return AgreementReport(pairs, krippendorff_alpha_counts(overall, n_multi, scale=scale), alpha_by_topic, n_multi)


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
    pairs: dict[tuple[str, str], dict[tuple[int, int], int]] = {}
    coincidences: dict[str, dict[int, dict[tuple[int, int], int]]] = {}
    items: dict[str, int] = {}
    for (topic_id, _doc), by_assessor in grades.items():
        u = {a: int(v) for a, v in by_assessor.items() if v is not None}
        if len(u) < 2:
            continue
        for a, b in itertools.combinations(sorted(u), 2):
            conf = pairs.setdefault((a, b), {})
            conf[(u[a], u[b])] = conf.get((u[a], u[b]), 0) + 1
        add_coincidences(coincidences.setdefault(topic_id, {}), list(u.values()))
        items[topic_id] = items.get(topic_id, 0) + 1
    return agreement_from_counts(AgreementCounts(pairs, coincidences, items), scale=scale, weights=weights)
