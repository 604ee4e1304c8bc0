"""A tiny, obviously-correct pure-Python scorer: the test oracle for ``evaluate``.

Each measure is a few lines over ``workbench.ranking.ranked_ids``; no arrays,
no caching. It scores only topics present in both qrels and run with |R| > 0
at the strictest threshold, so its results match ``evaluate`` with
``missing="exclude"``. A measure without a cutoff (``AP``, ``Rprec``) sees the
whole ranking. Same conventions and sources as ``scoring.evaluate`` and
``scoring.measures`` (trec_eval ``map``, ``Rprec``, ``bpref``, ``rbp``; the RBP
residual of Moffat & Zobel, ACM TOIS 2008, doi:10.1145/1416950.1416952).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

from workbench.ranking import ranked_ids
from workbench.scoring.measures import (
    AP,
    RBP,
    RR,
    Bpref,
    Judged,
    Measure,
    NumRel,
    NumRelRet,
    NumRet,
    P,
    R,
    RBPResidual,
    Rprec,
    Success,
    nDCG,
    parse_measures,
)
from workbench.types import Qrels, Run

SCORER_ID = "reference-python/1"


def _relevant(grades: Mapping[str, int], rel: int) -> set[str]:
    return {d for d, g in grades.items() if g >= max(rel, 0)}


def _gain(grade: int, dcg: str) -> float:
    if grade <= 0:
        return 0.0
    return float(grade) if dcg == "log2" else 2.0**grade - 1.0


def recall(top: list[str], grades: Mapping[str, int], rel: int) -> float:
    """|top ∩ R| / |R| (trec_eval recall_k)."""
    rel_set = _relevant(grades, rel)
    return sum(d in rel_set for d in top) / len(rel_set)


def precision(top: list[str], grades: Mapping[str, int], rel: int, k: int) -> float:
    """|top ∩ R| / k (trec_eval P_k)."""
    rel_set = _relevant(grades, rel)
    return sum(d in rel_set for d in top) / k


def reciprocal_rank(top: list[str], grades: Mapping[str, int], rel: int) -> float:
    """1 / rank of the first relevant document in ``top``, else 0."""
    rel_set = _relevant(grades, rel)
    for i, d in enumerate(top, 1):
        if d in rel_set:
            return 1.0 / i
    return 0.0


def success(top: list[str], grades: Mapping[str, int], rel: int) -> float:
    """1 if any relevant document is in ``top``, else 0."""
    rel_set = _relevant(grades, rel)
    return 1.0 if any(d in rel_set for d in top) else 0.0


def ndcg(top: list[str], grades: Mapping[str, int], k: int, dcg: str) -> float:
    """DCG@k / IDCG@k, strict ideal from all judged grades (0 when IDCG = 0)."""
    actual = sum(_gain(grades.get(d, 0), dcg) / math.log2(i + 1) for i, d in enumerate(top, 1))
    ideal_gains = sorted((_gain(g, dcg) for g in grades.values()), reverse=True)[:k]
    ideal = sum(g / math.log2(i + 1) for i, g in enumerate(ideal_gains, 1))
    return actual / ideal if ideal > 0 else 0.0


def judged(top: list[str], grades: Mapping[str, int]) -> float:
    """Share of ``top`` with any judgment (denominator len(top), 0 when empty)."""
    return sum(d in grades for d in top) / len(top) if top else 0.0


def average_precision(top: list[str], grades: Mapping[str, int], rel: int) -> float:
    """Sum over the relevant documents of ``top`` of P@rank, divided by |R| (trec_eval map)."""
    rel_set = _relevant(grades, rel)
    precisions = [sum(x in rel_set for x in top[:i]) / i for i, d in enumerate(top, 1) if d in rel_set]
    return sum(precisions) / len(rel_set)


def r_precision(ranking: list[str], grades: Mapping[str, int], rel: int) -> float:
    """|top-|R| ∩ R| / |R| (trec_eval Rprec)."""
    rel_set = _relevant(grades, rel)
    return sum(d in rel_set for d in ranking[: len(rel_set)]) / len(rel_set)


def bpref(ranking: list[str], grades: Mapping[str, int], rel: int) -> float:
    """trec_eval bpref: per judged relevant retrieved d, 1 - min(#judged non-relevant above d, |R|) / min(|N|, |R|)."""
    rel_set = _relevant(grades, rel)
    nonrel = {d for d, g in grades.items() if 0 <= g < max(rel, 0)}
    total = 0.0
    for i, d in enumerate(ranking):
        if d in rel_set:
            above = sum(x in nonrel for x in ranking[:i])
            total += 1.0 - min(above, len(rel_set)) / min(len(nonrel), len(rel_set)) if above else 1.0
    return total / len(rel_set)


def rbp(top: list[str], grades: Mapping[str, int], rel: int, p: float) -> float:
    """(1 - p) * sum over the relevant documents of ``top`` of p^(rank - 1) (Moffat & Zobel 2008)."""
    rel_set = _relevant(grades, rel)
    return (1 - p) * sum(p ** (i - 1) for i, d in enumerate(top, 1) if d in rel_set)


def rbp_residual(top: list[str], grades: Mapping[str, int], p: float) -> float:
    """(1 - p) * sum over the unjudged documents of ``top`` of p^(rank - 1), plus p^len(top) (the tail)."""
    return (1 - p) * sum(p ** (i - 1) for i, d in enumerate(top, 1) if d not in grades) + p ** len(top)


_FORMULAS: dict[type[Measure], Callable[[Measure, list[str], Mapping[str, int], int], float]] = {
    R: lambda m, top, g, rel: recall(top, g, m.effective_rel(rel)),
    P: lambda m, top, g, rel: precision(top, g, m.effective_rel(rel), m.cutoff),  # type: ignore[arg-type]
    RR: lambda m, top, g, rel: reciprocal_rank(top, g, m.effective_rel(rel)),
    Success: lambda m, top, g, rel: success(top, g, m.effective_rel(rel)),
    nDCG: lambda m, top, g, rel: ndcg(top, g, m.cutoff, m.dcg),  # type: ignore[attr-defined, arg-type]
    Judged: lambda m, top, g, rel: judged(top, g),
    AP: lambda m, top, g, rel: average_precision(top, g, m.effective_rel(rel)),
    Rprec: lambda m, top, g, rel: r_precision(top, g, m.effective_rel(rel)),
    Bpref: lambda m, top, g, rel: bpref(top, g, m.effective_rel(rel)),
    RBP: lambda m, top, g, rel: rbp(top, g, m.effective_rel(rel), m.p),  # type: ignore[attr-defined]
    RBPResidual: lambda m, top, g, rel: rbp_residual(top, g, m.p),  # type: ignore[attr-defined]
    NumRelRet: lambda m, top, g, rel: float(len(_relevant(g, m.effective_rel(rel)) & set(top))),
    NumRel: lambda m, top, g, rel: float(len(_relevant(g, m.effective_rel(rel)))),
    NumRet: lambda m, top, g, rel: float(len(top)),
}


def reference_values(
    qrels: Qrels, run: Run, measures: Iterable[Measure | str], *, rel: int = 1
) -> dict[Measure, dict[str, float]]:
    """Per-topic values, computed the slow and simple way.

    Args:
        qrels: topic_id -> doc_id -> grade.
        run: topic_id -> doc_id -> score.
        measures: measures or names.
        rel: inclusive relevance threshold (a measure's own ``rel`` wins).

    Returns:
        measure -> topic_id -> value, for topics in both qrels and run with
        |R| > 0 at the strictest threshold used.
    """
    ms = parse_measures(measures)
    strictest = max([rel] + [m.effective_rel(rel) for m in ms if m.USES_REL])
    topics = [t for t in qrels if t in run and run[t] and _relevant(qrels[t], strictest)]
    out: dict[Measure, dict[str, float]] = {m: {} for m in ms}
    for t in topics:
        ordered = ranked_ids(run[t])
        for m in ms:
            out[m][t] = _FORMULAS[type(m)](m, ordered[: m.cutoff], qrels[t], rel)
    return out


def reference_unjudged(qrels: Qrels, run: Run, k: int) -> dict[str, list[str]]:
    """topic_id -> doc ids in the top k that the qrels never judged (run order)."""
    return {t: [d for d in ranked_ids(run[t], k) if d not in qrels.get(t, {})] for t in run if t in qrels}
