"""A pure-Python scorer for small runs: the columnar scorer's numbers, bit for bit, without numpy.

Scoring a small run file (the Cranfield BM25 run, 22,471 lines; TREC DL size,
43,000) takes a few milliseconds; importing numpy takes longer than that
(80 ms idle, several times more on a busy machine). ``SmallEvaluator`` computes
the same ``Evaluation`` as ``scoring.evaluate.Evaluator`` (every value,
numerator, denominator, aggregate, ceiling, novelty count, pool-novel list,
recall-curve point and relevant-document rank) with plain Python lists, and
``services.evaluation.load`` uses it for small plain run files (``SMALL_RUN_BYTES``).

**Bit-identical, not merely close.** Every float is made by the same IEEE
operations in the same order as the columnar scorer:

* per-topic sums (nDCG's gains, IDCG, AP's precisions, Bpref's terms, RBP's
  weights and its residual's) are added one document at a time in rank order,
  as ``np.bincount`` adds its weights, each term made by the same operations
  (``count / rank``, ``1.0 - min(n, R) / min(N, R)``);
* means and totals over topics (``macro``, ``sum_value``, the ceiling, the
  micro sums) are numpy's pairwise sums (``numpy_sum``), not ``math.fsum`` and
  not a left-to-right loop;
* the recall curve adds the topics' contributions in the run's topic order
  (the columnar scorer's row order), then accumulates over ranks;
* discounts and RBP's weights come from one table each (``gains.discounts``,
  ``gains.rbp_powers``), which both scorers use.

``tests/scoring/test_small.py`` checks identity on many random qrels and runs
(ties, graded and negative grades, missing, ignored and excluded topics, every
measure kind and policy) and on the sample collection.

The semantics are those of ``scoring.evaluate`` (its module docstring: order,
relevant set, topics, missing topics, averages, Judged@k of an empty topic, ceilings, strict
ideal nDCG, the measures of the whole ranking); this module adds none of its own.

Source:
    numpy's pairwise summation (``numpy/_core/src/umath/loops_utils.h.src``,
    ``pairwise_sum``: blocks of 128 with 8 accumulators, halves above); the
    formulas and their sources in ``scoring.evaluate`` and ``scoring.measures``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.errors import ValidationError
from workbench.ranking import display_key, natural_key
from workbench.scoring.gains import discounts, gain, rbp_powers
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
)
from workbench.scoring.novelty import NovelLists, NoveltyAtK
from workbench.scoring.results import (
    Aggregate,
    EvaluatedTopics,
    Evaluation,
    MissingPolicy,
    RecallCurve,
    RelevantDoc,
    ValueMetrics,
    check_settings,
    evaluated_topics,
    micro_of,
)

if TYPE_CHECKING:
    from workbench.types import Qrels, TopicMetric

SMALL_SCORER_ID = "python/1"
"""Identifies this implementation in ``Evaluation.scorer`` (the numbers are the columnar scorer's)."""

_BLOCK = 128
"""numpy's ``PW_BLOCKSIZE``: pairwise summation splits above this many values."""


class ListMetrics(ValueMetrics):
    """topic_id -> ``TopicMetric`` of one measure, built on access from value lists.

    The pure-Python twin of ``scoring.evaluate.TopicMetrics`` (which reads numpy
    arrays; both are ``results.ValueMetrics``): a default report prints aggregates
    only, so no per-topic object is made until one is asked for.
    """

    __slots__ = ()

    def value_list(self, topics: Iterable[str]) -> list[float]:
        """The values of ``topics``, in order, as floats (no per-topic objects are built).

        Raises:
            KeyError: a topic that is not evaluated.
        """
        if topics is self._topics or topics == self._topics:
            return list(self._values)
        values, pos = self._values, self._position
        return [values[pos[t]] for t in topics]


def numpy_sum(values: Sequence[float]) -> float:
    """The float64 sum numpy's ``np.sum`` gives for ``values`` (a contiguous 1-D array), as a Python float.

    numpy adds with pairwise summation: fewer than 8 values left to right;
    up to 128 in 8 interleaved partial sums combined as
    ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))`` and then the rest;
    more than 128 split in two (the first half a multiple of 8) and summed
    recursively. The reduction starts from 0.0.

    Args:
        values: the numbers, in array order (nan and inf propagate as in numpy).

    Returns:
        The sum; 0.0 for no values.

    Example:
        >>> numpy_sum([0.1] * 10), sum([0.1] * 10)
        (1.0, 0.9999999999999999)

    Source:
        ``pairwise_sum`` in numpy/_core/src/umath/loops_utils.h.src.
    """
    return 0.0 + _pairwise(values, 0, len(values))


def _pairwise(a: Sequence[float], lo: int, n: int) -> float:
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= _BLOCK:
        r0, r1, r2, r3, r4, r5, r6, r7 = a[lo: lo + 8]
        i = 8
        end = n - n % 8
        while i < end:
            j = lo + i
            r0 += a[j]
            r1 += a[j + 1]
            r2 += a[j + 2]
            r3 += a[j + 3]
            r4 += a[j + 4]
            r5 += a[j + 5]
            r6 += a[j + 6]
            r7 += a[j + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        for j in range(lo + i, lo + n):
            res += a[j]
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, lo, n2) + _pairwise(a, lo + n2, n - n2)


def numpy_mean(values: Sequence[float]) -> float:
    """``float(np.mean(values))``: ``numpy_sum`` divided by the count (nan for none)."""
    return numpy_sum(values) / len(values) if values else math.nan


def numpy_nanmean(values: Sequence[float]) -> float:
    """``float(np.nanmean(values))``: nan values read as 0.0 in place, divided by the non-nan count."""
    count = sum(1 for v in values if v == v)
    if count == 0:
        return math.nan
    return numpy_sum([v if v == v else 0.0 for v in values]) / count


def _div(num: float, den: float) -> float:
    """num / den, 0.0 when den == 0 (``evaluate._div``)."""
    return num / den if den != 0 else 0.0


@dataclass(frozen=True)
class SmallRun:
    """One run in canonical order, as plain lists: what ``SmallEvaluator`` scores.

    Attributes:
        ranked: topic_id -> doc ids in rank order (score desc, doc_id desc,
            ``workbench.ranking``), each doc id once; topics in the run file's
            order of first appearance.
        name: the run's name (its tag).
        n_lines: result lines read.
        duplicates: topic_id -> duplicate lines dropped (topics with some).
    """

    ranked: Mapping[str, Sequence[str]]
    name: str = ""
    n_lines: int = 0
    duplicates: Mapping[str, int] = field(default_factory=dict)

    def n_results(self) -> dict[str, int]:
        """topic_id -> documents returned, for every topic of the run."""
        return {t: len(docs) for t, docs in self.ranked.items()}


class _RankLists:
    """The rank lists of one evaluation's topics: counts within a cutoff are bisections of them.

    Attributes:
        rows: per evaluated topic, its judged results [(rank, grade)] in rank order.
        judged: per evaluated topic, the ranks of its judged results.
    """

    __slots__ = ("_relevant", "judged", "rows")

    def __init__(self, rows: list[list[tuple[int, int]]]) -> None:
        self.rows = rows
        self.judged = [[r for r, _g in jr] for jr in rows]
        self._relevant: dict[int, list[list[int]]] = {}

    def relevant(self, th: int) -> list[list[int]]:
        """Per evaluated topic, the ranks of its results graded >= ``th`` (made once per threshold)."""
        if th not in self._relevant:
            self._relevant[th] = [[r for r, g in jr if g >= th] for jr in self.rows]
        return self._relevant[th]


def _dcg(rows: list[list[tuple[int, int]]], k: int, dcg: str) -> list[float]:
    """DCG@k per topic: gains added one document at a time in rank order (as ``np.bincount`` adds them)."""
    disc = discounts(min(k, max((jr[-1][0] for jr in rows if jr), default=0)))
    out = []
    for jr in rows:
        s = 0.0
        for r, g in jr:
            if r > k:
                break
            s += gain(g, dcg) * disc[r]
        out.append(s)
    return out


def _average_precision(relevant: list[list[int]], depth: float) -> list[float]:
    """AP's numerator per topic: P@rank summed over the relevant ranks within ``depth``, in rank order."""
    out = []
    for rr in relevant:
        s = 0.0
        for count, r in enumerate(rr, 1):
            if r > depth:
                break
            s += count / r  # P@rank at each relevant retrieved document
        out.append(s)
    return out


def _bpref(rows: list[list[tuple[int, int]]], nrel: list[int], nonrel: list[int], th: int) -> list[float]:
    """Bpref's numerator per topic: its preference terms over the judged results, in rank order.

    ``nrel`` and ``nonrel`` are |R| and |N| per topic; a negative grade is
    skipped (in the pool, not judged: trec_eval).
    """
    out = []
    for jr, n_rel, n_non in zip(rows, nrel, nonrel, strict=True):
        s = 0.0
        above = 0
        for _r, g in jr:
            if g < 0:  # in the pool, not judged (trec_eval): skipped
                continue
            if g < th:
                above += 1
            else:
                s += 1.0 - min(above, n_rel) / max(min(n_non, n_rel), 1) if above > 0 else 1.0
        out.append(s)
    return out


def _rbp(relevant: list[list[int]], p: float, depth: float) -> list[float]:
    """RBP per topic: (1 - p) * the weights p^(rank - 1) of the relevant ranks within ``depth``, in rank order."""
    table = rbp_powers(p, max((rr[-1] for rr in relevant if rr), default=0))
    out = []
    for rr in relevant:
        s = 0.0
        for r in rr:
            if r > depth:
                break
            s += table[r]
        out.append((1.0 - p) * s)
    return out


def _rbp_residual(judged: list[list[int]], depths: list[int], p: float) -> list[float]:
    """RBP's residual per topic: p^d plus (1 - p) * the weights of the unjudged ranks 1..d (d = ``depths``)."""
    table = rbp_powers(p, max(depths, default=0) + 1)
    out = []
    for d, ranks in zip(depths, judged, strict=True):
        seen = set(ranks)
        s = 0.0
        for r in range(1, d + 1):
            if r not in seen:
                s += table[r]
        out.append(table[d + 1] + (1.0 - p) * s)
    return out


def _aggregate(m: Measure, n_s: int, vals: list[float], num: list[float], den: list[float],
               ceiling_vals: list[float] | None) -> Aggregate:
    """The ``Aggregate`` of one measure over ``n_s`` topics, numpy's sums."""
    sum_num, sum_den = numpy_sum(num), numpy_sum(den)
    return Aggregate(
        measure=m,
        n_topics=n_s,
        macro=numpy_nanmean(vals) if n_s else math.nan,
        micro=micro_of(m, sum_num, sum_den) if m.HAS_MICRO and n_s else None,
        ceiling=(numpy_mean(ceiling_vals) if n_s else math.nan) if ceiling_vals is not None else None,
        sum_value=numpy_sum([v if v == v else 0.0 for v in vals]),
        sum_numerator=sum_num,
        sum_denominator=sum_den,
    )


_RANKING_MEASURES = (AP, Rprec, Bpref, RBP, RBPResidual, NumRelRet, NumRel, NumRet)
"""The measures of the whole ranking, or of an optional cutoff (``SmallEvaluator._ranking_fractions``)."""


class SmallEvaluator:
    """``scoring.evaluate.Evaluator`` for ``SmallRun``s: binds qrels, measures and policies; scores runs.

    Args:
        qrels: topic_id -> doc_id -> grade, in file order (that order breaks
            ties among equal grades of the relevant-document list, as in the
            columnar scorer).
        measures: measures or their names; default ``default_measures()``.
        rel: inclusive minimum grade of a relevant document (>= 0; default 1).
        missing: ``"fail"`` | ``"zero"`` | ``"exclude"``.

    Raises:
        ValidationError: an unknown policy, a bad measure name or a negative ``rel``.
        UnknownNameError: an unknown measure name.

    Example:
        >>> ev = SmallEvaluator({"1": {"d1": 1, "d2": 0}}, ["R@10", "P@1"])
        >>> e = ev.evaluate(SmallRun({"1": ["d1", "d3"]}))
        >>> e.aggregates[e.measures[0]].macro, e.aggregates[e.measures[1]].macro
        (1.0, 1.0)
    """

    def __init__(
        self,
        qrels: Qrels,
        measures: Iterable[Measure | str] | None = None,
        *,
        rel: int = 1,
        missing: MissingPolicy | str = "fail",
    ) -> None:
        self.measures, self.rel, self.missing = check_settings(measures, rel, missing)
        self.qrels: dict[str, dict[str, int]] = {t: {d: int(g) for d, g in docs.items()} for t, docs in qrels.items()}
        self.topic_ids = tuple(self.qrels)
        thresholds = {rel} | {m.effective_rel(rel) for m in self.measures if m.USES_REL}
        self._nrel = {
            th: {t: sum(1 for g in docs.values() if g >= max(th, 0)) for t, docs in self.qrels.items()}
            for th in thresholds
        }
        self._topic_threshold = max(thresholds)
        self._idcg: dict[tuple[int, str], dict[str, float]] = {}
        self._nnonrel: dict[int, dict[str, int]] = {}

    def eligible_topics(self) -> tuple[str, ...]:
        """Qrels topics with |R| > 0 at the strictest threshold of the measures, natural order."""
        top = self._nrel[self._topic_threshold]
        return tuple(sorted((t for t in self.topic_ids if top[t] > 0), key=natural_key))

    def n_relevant(self) -> dict[str, int]:
        """topic_id -> |R| at the evaluator's ``rel``, for every qrels topic."""
        return dict(self._nrel[self.rel])

    def relevant_doc_ids(self, topics: Collection[str]) -> list[str]:
        """The doc ids of the relevant (topic, doc) pairs of ``topics`` at ``rel``, in qrels order."""
        wanted = set(topics)
        th = max(self.rel, 0)
        return [d for t, docs in self.qrels.items() if t in wanted for d, g in docs.items() if g >= th]

    def missing_topics(self, run: SmallRun, failed_topics: Collection[str] = ()) -> tuple[str, ...]:
        """Qrels topics with |R| > 0 that ``run`` has no results for (or reports failed), natural order."""
        failed = set(failed_topics)
        top = self._nrel[self._topic_threshold]
        return tuple(sorted((t for t in self.topic_ids if top[t] > 0 and (not run.ranked.get(t) or t in failed)),
                            key=natural_key))

    def _ideal(self, k: int, dcg: str) -> dict[str, float]:
        """IDCG@k per qrels topic (strict ideal over all judged grades), summed best grade first."""
        key = (k, dcg)
        if key not in self._idcg:
            out: dict[str, float] = {}
            for t, docs in self.qrels.items():
                gains = sorted((gain(g, dcg) for g in docs.values()), reverse=True)[:k]
                disc = discounts(len(gains))
                s = 0.0
                for i, g in enumerate(gains, 1):
                    s += g * disc[i]
                out[t] = s
            self._idcg[key] = out
        return self._idcg[key]

    def evaluate(
        self,
        run: SmallRun,
        *,
        run_name: str = "",
        failed_topics: Collection[str] = (),
        topics: Collection[str] | None = None,
        keep_documents: bool = True,
    ) -> Evaluation:
        """Score one run; the arguments and the result are those of ``Evaluator.evaluate``.

        ``keep_documents=False`` gives ``evaluate(...).without_documents()``
        without making the document lists it would drop (the relevant
        documents with their ranks, the pool-novel lists): the numbers only.

        Raises:
            MissingTopicsError: policy ``"fail"`` and some evaluated topic has no results.
        """
        name = run_name or run.name or "run"
        counts = run.n_results()
        chosen = evaluated_topics(self._nrel[self._topic_threshold], counts, failed=set(failed_topics),
                                  restrict=topics, missing=self.missing, run_name=name)
        s_topics = chosen.topics
        n_ret = [0 if t in chosen.zeroed else counts.get(t, 0) for t in s_topics]
        judged = self._judged(run, chosen)
        ranks = _RankLists([judged.get(t, []) for t in s_topics])
        per_topic, aggregates = self._score_measures(s_topics, ranks, n_ret)
        th_rel = max(self.rel, 0)
        nrel_s = [float(self._nrel[self.rel][t]) for t in s_topics]
        kmax = max((m.cutoff for m in self.measures if m.cutoff is not None), default=0)
        return Evaluation(
            run_name=name,
            measures=self.measures,
            rel=self.rel,
            missing=self.missing,
            topics=s_topics,
            excluded_topics=chosen.excluded,
            missing_topics=chosen.missing,
            ignored_topics=chosen.ignored,
            n_results=dict(zip(s_topics, n_ret, strict=True)),
            duplicates=dict(run.duplicates),
            per_topic=per_topic,
            aggregates=aggregates,
            novelty=self._novelty(s_topics, n_ret, ranks, nrel_s),
            novel_documents=NovelLists(s_topics, self._novel(run, judged, kmax) if keep_documents else {}, kmax,
                                       kept=keep_documents),
            curve=self._curve(judged, s_topics, nrel_s, n_ret, th_rel),
            relevant=self._relevant(s_topics, chosen.zeroed, run, th_rel) if keep_documents else (),
            scorer=SMALL_SCORER_ID,
            documents_kept=keep_documents,
        )

    def _judged(self, run: SmallRun, chosen: EvaluatedTopics) -> dict[str, list[tuple[int, int]]]:
        """Judged results of the live topics (evaluated, not zeroed): topic -> [(rank, grade)] in rank order.

        Topics in the run's order (the columnar scorer's row order).
        """
        qrels = self.qrels
        evaluated, zeroed = set(chosen.topics), chosen.zeroed
        judged: dict[str, list[tuple[int, int]]] = {}
        for t, docs in run.ranked.items():
            if t in evaluated and t not in zeroed and t not in judged:
                qd = qrels[t]
                judged[t] = [(r, qd[d]) for r, d in enumerate(docs, 1) if d in qd]
        return judged

    def _score_measures(
        self, s_topics: tuple[str, ...], ranks: _RankLists, n_ret: list[int]
    ) -> tuple[dict[Measure, Mapping[str, TopicMetric]], dict[Measure, Aggregate]]:
        """Every measure's per-topic values (``ListMetrics``) and its ``Aggregate``, measure order."""
        per_topic: dict[Measure, Mapping[str, TopicMetric]] = {}
        aggregates: dict[Measure, Aggregate] = {}
        position = {t: i for i, t in enumerate(s_topics)}
        n_s = len(s_topics)
        for m in self.measures:
            num, den, ceiling_vals = self._fractions(m, s_topics, ranks, n_ret)
            vals = [_div(a, b) for a, b in zip(num, den, strict=True)]  # Judged@k's 0/0 -> 0 (trec_eval -c)
            per_topic[m] = ListMetrics(str(m), s_topics, position, vals, num, den)
            aggregates[m] = _aggregate(m, n_s, vals, num, den, ceiling_vals)
        return per_topic, aggregates

    def _fractions(
        self, m: Measure, s_topics: tuple[str, ...], ranks: _RankLists, n_ret: list[int]
    ) -> tuple[list[float], list[float], list[float] | None]:
        """(numerators, denominators, ceiling values or None) of measure ``m``, one per evaluated topic.

        The measures of the top k are here; those of the whole ranking (or of
        an optional cutoff) in ``_ranking_fractions``.
        """
        k = m.cutoff
        if k is None or isinstance(m, _RANKING_MEASURES):
            return self._ranking_fractions(m, s_topics, ranks, n_ret)
        n_s = len(s_topics)
        th = max(m.effective_rel(self.rel), 0)
        if isinstance(m, R | P | Success):
            hits = [float(bisect_right(rr, k)) for rr in ranks.relevant(th)]
            if isinstance(m, Success):
                return [1.0 if h > 0 else 0.0 for h in hits], [1.0] * n_s, None
            nrel_map = self._nrel[m.effective_rel(self.rel)]
            nrel = [nrel_map[t] for t in s_topics]
            if isinstance(m, R):
                return hits, [float(x) for x in nrel], [_div(float(min(k, x)), float(x)) for x in nrel]
            return hits, [float(k)] * n_s, [min(k, x) / float(k) for x in nrel]
        if isinstance(m, RR):
            firsts = [rr[0] if rr and rr[0] <= k else 0 for rr in ranks.relevant(th)]
            return [1.0 if f else 0.0 for f in firsts], [float(f) if f else 1.0 for f in firsts], None
        if isinstance(m, nDCG):
            ideal = self._ideal(k, m.dcg)
            return _dcg(ranks.rows, k, m.dcg), [ideal[t] for t in s_topics], None
        if isinstance(m, Judged):
            return [float(bisect_right(jr, k)) for jr in ranks.judged], [float(min(k, x)) for x in n_ret], None
        raise ValidationError(f"no scorer for measure {m}")  # pragma: no cover - every registered measure is above

    def _novelty(self, s_topics: tuple[str, ...], n_ret: list[int], ranks: _RankLists,
                 nrel_s: list[float]) -> dict[int, NoveltyAtK]:
        """Pool-novel (unjudged) counts and the R@k bounds at every cutoff of the measures (rel = ``self.rel``)."""
        relevant = ranks.relevant(max(self.rel, 0))
        n_s = len(s_topics)
        novelty: dict[int, NoveltyAtK] = {}
        for k in sorted({m.cutoff for m in self.measures if m.cutoff is not None}):
            returned = [min(k, x) for x in n_ret]
            unj = [ret - bisect_right(jr, k) for ret, jr in zip(returned, ranks.judged, strict=True)]
            hits_k = [float(bisect_right(rr, k)) for rr in relevant]
            low = [_div(h, x) for h, x in zip(hits_k, nrel_s, strict=True)]
            high = [_div(h + u, x + u) for h, u, x in zip(hits_k, unj, nrel_s, strict=True)]
            novelty[k] = NoveltyAtK(
                cutoff=k,
                unjudged=dict(zip(s_topics, unj, strict=True)),
                returned=dict(zip(s_topics, returned, strict=True)),
                recall_low=dict(zip(s_topics, low, strict=True)),
                recall_high=dict(zip(s_topics, high, strict=True)),
                macro_low=numpy_mean(low) if n_s else math.nan,
                macro_high=numpy_mean(high) if n_s else math.nan,
                total_unjudged=sum(unj),
                total_returned=sum(returned),
            )
        return novelty

    def _novel(self, run: SmallRun, judged: Mapping[str, object], kmax: int) -> dict[str, list[tuple[int, str]]]:
        """Pool-novel documents of the live topics within rank ``kmax``: topic -> [(rank, doc_id)]."""
        qrels = self.qrels
        novel: dict[str, list[tuple[int, str]]] = {}
        for t, docs in run.ranked.items():
            if t in judged and t not in novel:
                qd = qrels[t]
                novel[t] = [(r, d) for r, d in enumerate(docs[:kmax], 1) if d not in qd]
        return novel

    def _nonrelevant(self, rel: int) -> dict[str, int]:
        """|N| per qrels topic: judged non-relevant documents, 0 <= grade < rel (trec_eval ``bpref``'s)."""
        if rel not in self._nnonrel:
            self._nnonrel[rel] = {t: sum(1 for g in docs.values() if 0 <= g < rel) for t, docs in self.qrels.items()}
        return self._nnonrel[rel]

    def _ranking_fractions(
        self, m: Measure, s_topics: tuple[str, ...], ranks: _RankLists, n_ret: list[int]
    ) -> tuple[list[float], list[float], list[float] | None]:
        """``_fractions`` of the measures of the whole ranking, or of an optional cutoff (``AP``, ``AP@k``):
        ``Evaluator._ranking_fractions``'s numbers, each sum added in rank order as ``np.bincount`` adds."""
        n_s = len(s_topics)
        k = m.cutoff
        depth = k if k is not None else math.inf
        th = max(m.effective_rel(self.rel), 0)
        nrel_map = self._nrel[m.effective_rel(self.rel)] if m.USES_REL else None
        nrel = [nrel_map[t] for t in s_topics] if nrel_map is not None else [0] * n_s
        ones = [1.0] * n_s
        if isinstance(m, NumRelRet):
            return [float(bisect_right(rr, depth)) for rr in ranks.relevant(th)], ones, None
        if isinstance(m, AP):
            den = [float(x) for x in nrel]
            ceiling = [_div(float(min(k, x)), float(x)) for x in nrel] if k is not None else None
            return _average_precision(ranks.relevant(th), depth), den, ceiling
        if isinstance(m, Rprec):
            return [float(bisect_right(rr, x)) for rr, x in zip(ranks.relevant(th), nrel, strict=True)], \
                [float(x) for x in nrel], None
        if isinstance(m, Bpref):
            nonrel = self._nonrelevant(th)
            return _bpref(ranks.rows, nrel, [nonrel[t] for t in s_topics], th), [float(x) for x in nrel], None
        if isinstance(m, RBP):
            return _rbp(ranks.relevant(th), m.p, depth), ones, None
        depths = [x if k is None else min(k, x) for x in n_ret]
        if isinstance(m, RBPResidual):
            return _rbp_residual(ranks.judged, depths, m.p), ones, None
        if isinstance(m, NumRel):
            return [float(x) for x in nrel], ones, None
        if isinstance(m, NumRet):
            return [float(x) for x in depths], ones, None
        raise ValidationError(f"no scorer for measure {m}")  # pragma: no cover - every registered measure is above

    def _curve(self, judged: Mapping[str, list[tuple[int, int]]], s_topics: tuple[str, ...], nrel_s: list[float],
               n_ret: list[int], th: int) -> RecallCurve:
        n_s = len(s_topics)
        depth = max(n_ret) if n_s else 0
        if depth == 0:
            return RecallCurve((), (), (), n_s)
        nrel_of = dict(zip(s_topics, nrel_s, strict=True))
        weight_bins = [0.0] * depth
        count_bins = [0] * depth
        for t, jr in judged.items():  # the run's topic order, as the columnar scorer's rows
            w = 1.0 / nrel_of[t]
            for r, g in jr:
                if g >= th:
                    weight_bins[r - 1] += w
                    count_bins[r - 1] += 1
        total_rel = numpy_sum(nrel_s)
        macro: list[float] = []
        micro: list[float] = []
        acc = 0.0
        hits = 0
        for i in range(depth):
            acc = weight_bins[i] if i == 0 else acc + weight_bins[i]
            hits += count_bins[i]
            macro.append(acc / n_s)
            micro.append(hits / total_rel)
        sizes = sorted(nrel_s)
        inv_suffix = [0.0] * (len(sizes) + 1)
        s = 0.0
        for j in range(len(sizes) - 1, -1, -1):
            inv = 1.0 / sizes[j]
            s = inv if j == len(sizes) - 1 else s + inv
            inv_suffix[j] = s
        ceiling = []
        for k in range(1, depth + 1):
            n_le = bisect_right(sizes, k)
            ceiling.append((n_le + k * inv_suffix[n_le]) / n_s)
        return RecallCurve(tuple(macro), tuple(micro), tuple(ceiling), n_s)

    def _relevant(self, s_topics: tuple[str, ...], zeroed: AbstractSet[str], run: SmallRun,
                  th: int) -> tuple[RelevantDoc, ...]:
        out: list[RelevantDoc] = []
        for t in s_topics:
            docs = self.qrels[t]
            rank_of: dict[str, int] = {}
            if t not in zeroed:
                wanted = {d for d, g in docs.items() if g >= th}
                rank_of = {d: r for r, d in enumerate(run.ranked.get(t, ()), 1) if d in wanted}
            # grade descending, then doc id in natural order (d2 before d10): the columnar scorer's order
            entries = sorted(((-g, display_key(d), i, d) for i, (d, g) in enumerate(docs.items()) if g >= th))
            out.extend(RelevantDoc(t, d, -neg_g, rank_of.get(d)) for neg_g, _key, _i, d in entries)
        return tuple(out)
