"""Score runs against qrels: per-topic values with evidence, macro and micro means, ceilings.

Semantics (each pinned by tests in ``tests/scoring``):

* **Order.** Each topic's results are ordered by score descending, ties by
  doc_id descending (``workbench.ranking``, as trec_eval); the file's rank
  column is ignored unless the run was read with ``trust_file_order``.
* **Duplicates.** A doc_id repeated within a topic counts once, at its best
  rank; the dropped lines are counted per topic (``Evaluation.duplicates``).
* **Relevant set.** R(q) = {d : grade(q, d) >= rel}, ``rel`` inclusive
  (default 1; a measure may carry its own, ``R(rel=2)@10``). Negative grades
  are never relevant. Unjudged documents count as non-relevant for the point
  value and are flagged as pool-novel (``novelty``).
* **Topics.** The qrels define the topics. Topics with |R(q)| = 0 at the
  strictest threshold any measure of the report uses are excluded from every
  average and listed in ``excluded_topics`` (never scored 0 or 1). Run topics
  absent from the qrels are ignored and listed in ``ignored_topics``. Every
  measure of one ``Evaluation`` is averaged over the same topics (``topics``).
* **Missing topics.** A qrels topic with no results in the run (or reported
  empty/failed by the run's producer, ``failed_topics``) is handled by
  ``missing``: ``"fail"`` (default) raises ``MissingTopicsError`` listing them,
  ``"zero"`` scores every measure 0 for them, ``"exclude"`` leaves them out.
  The choice is kept in ``Evaluation.missing`` and printed by reports.
* **Empty runs.** A run with no results at all is a run missing every topic.
* **Averages.** ``macro`` = mean over topics of the per-topic values (the
  default); ``micro`` = sum of numerators / sum of denominators (e.g. all hits /
  all relevant for R@k), for measures where that is meaningful.
* **Judged@k of a topic with no returned documents** (a missing topic under
  ``missing="zero"``) is 0, with numerator and denominator 0, like every
  other measure of that topic, and it counts in Judged@k's mean: every
  measure is averaged over the same topics. This is trec_eval's ``-c`` (a
  missing query contributes 0 to every measure), pytrec_eval's on an empty
  result list (``num_ret`` 0, ``P_k`` 0) and ir_measures' (``Judged@k`` of a
  topic the run lacks is 0). ``missing="exclude"`` gives the judged share of
  the answered topics only.
* **Ceiling.** For R@k: mean over the topics of min(k, |R|) / |R|, the best a
  perfect system can reach; for P@k: mean of min(k, |R|) / k.
* **nDCG@k.** Strict ideal: IDCG from all judged grades of the topic, not only
  the retrieved ones; gain = grade (``dcg='log2'``, trec_eval ``ndcg_cut``) or
  2^grade - 1 (``dcg='exp-log2'``); discount log2(rank + 1); negative grades
  gain 0; value 0 when IDCG = 0.
* **Measures of the whole ranking** (``AP``, ``Rprec``, ``Bpref``, ``RBP``,
  the counts; definitions in ``scoring.measures``): without ``@k`` every
  document the run returned counts, as trec_eval without ``-M``.
  ``numerator`` / ``denominator``: AP = sum of P@rank over the relevant
  retrieved / |R|; Rprec = relevant in the top |R| / |R|; Bpref = sum of the
  preference terms / |R|; RBP and its residual = the value / 1; a count =
  the count / 1. ``AP@k``'s ceiling is mean(min(k, |R|) / |R|).
* **Unjudged documents** are non-relevant for AP, Rprec and RBP; Bpref skips
  them, and skips negative grades too (trec_eval reads them as "in the pool,
  not judged"; |N| counts grades 0 <= g < rel); ``RBP_residual`` is made of
  them: (1 - p) * sum of p^(rank - 1) over the unjudged retrieved, plus p^d
  for the ranks beyond the depth d = min(k, returned). (trec_eval's
  ``rbp_resid`` adds the p^d tail only when some document is unjudged, and
  counts a negative grade as unjudged; here a negative grade is a judgment,
  as for Judged@k and in ir_measures' cwl_eval provider.)
* **Missing topics under "zero"** are scored as an empty ranking: every
  measure of the run is 0, except ``NumRel`` (|R|, a property of the qrels,
  as trec_eval ``-c`` counts it) and ``RBP_residual`` (1: nothing was seen, so
  all of RBP's weight is unknown).
* **Counts** (``NumRelRet``, ``NumRel``, ``NumRet``): macro = the mean per
  topic, micro = the total over the topics (trec_eval's ``all`` line prints
  the total for ``num_rel_ret``, ``num_rel``, ``num_ret``).
* **Numbers.** Full precision, each ``TopicMetric`` with its numerator and
  denominator; rounding happens only in ``workbench.reports``.

Two scorers give the same numbers: this module's columnar one (numpy arrays,
used for files, stored runs and mappings alike) and ``scoring.reference`` (a
small pure-Python implementation kept as a test oracle).

Source:
    trec_eval (usnistgov/trec_eval) ``recall_k``, ``P_k``, ``ndcg_cut``,
    ``recip_rank``, ``success_k``, ``map`` and ``map_cut`` (``m_map.c``,
    ``m_map_cut.c``), ``Rprec`` (``m_Rprec.c``), ``bpref`` (``m_bpref.c``),
    ``rbp`` and ``rbp_resid`` (``m_rbp.c``, ``m_rbp_resid.c``), ``num_rel_ret``,
    ``num_rel``, ``num_ret``; ir_measures ``Judged@k``; RBP: Moffat & Zobel,
    ACM TOIS 2008, doi:10.1145/1416950.1416952; micro/macro averaging after
    Sebastiani, ACM CSUR 2002, doi:10.1145/505282.505283.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar

import numpy as np

from workbench.errors import ValidationError
from workbench.ranking import display_key, natural_key
from workbench.scoring.columns import (
    QrelsColumns,
    RankedRun,
    RunColumns,
    hash_words,
    qrels_columns_from_mapping,
    rank_run,
    run_columns_from_mapping,
    widen,
    with_small_pages,
)
from workbench.scoring.gains import discounts, rbp_powers
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
from workbench.scoring.novelty import NovelDocuments, NoveltyAtK
from workbench.scoring.results import (
    MISSING_HINT,
    MISSING_POLICIES,
    SCORER_ID,
    Aggregate,
    EvaluatedTopics,
    Evaluation,
    MissingPolicy,
    RecallCurve,
    RelevantDoc,
    ValueMetrics,
    ValueRow,
    check_policy,
    check_settings,
    evaluated_topics,
    micro_of,
    value_rows,
)
from workbench.types import Qrels, Run, TopicMetric

__all__ = [
    "MISSING_HINT", "MISSING_POLICIES", "SCORER_ID", "Aggregate", "Evaluation", "Evaluator", "MissingPolicy",
    "RecallCurve", "RelevantDoc", "TopicMetrics", "TopicValues", "ValueRow", "check_policy", "evaluate",
    "topic_values", "value_rows",
]

_V = TypeVar("_V", int, float)

_CHUNK = 1 << 20
"""Rows per step of the join's bucket lookup (bounds temporary memory)."""


class TopicValues(Mapping[str, _V]):
    """A read-only topic_id -> value mapping over an array (built on access, not up front).

    Args:
        topics: the topics, in order.
        position: topic_id -> index into ``values`` (shared between mappings).
        values: one value per topic.
        cast: ``int`` or ``float``, applied to each value read.
    """

    __slots__ = ("_cast", "_position", "_topics", "_values")

    def __init__(self, topics: tuple[str, ...], position: Mapping[str, int], values: np.ndarray,
                 cast: Callable[[Any], _V]) -> None:
        self._topics = topics
        self._position = position
        self._values = values
        self._cast: Callable[[Any], _V] = cast

    def __getitem__(self, topic_id: str) -> _V:
        return self._cast(self._values[self._position[topic_id]])

    def __iter__(self) -> Iterator[str]:
        return iter(self._topics)

    def __len__(self) -> int:
        return len(self._topics)

    def __repr__(self) -> str:
        return repr(dict(self))


class TopicMetrics(ValueMetrics):
    """topic_id -> ``TopicMetric`` of one measure, built on access from the value arrays (``results.ValueMetrics``)."""

    __slots__ = ()

    def values_of(self, topics: Iterable[str]) -> np.ndarray:
        """float64 array of the values of ``topics``, in order (no per-topic objects are built).

        Raises:
            KeyError: a topic that is not evaluated.
        """
        pos = self._position
        idx = np.fromiter((pos[t] for t in topics), dtype=np.int64)
        out: np.ndarray = np.asarray(self._values, dtype=np.float64)[idx]
        return out

    def value_list(self, topics: Iterable[str]) -> list[float]:
        """The values of ``topics`` as a list of floats, in order (``results.topic_value_list``'s fast path).

        Raises:
            KeyError: a topic that is not evaluated.
        """
        out: list[float] = self.values_of(topics).tolist()
        return out

    def arrays(self) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray]:
        """(topics, values, numerators, denominators): float64 arrays in ``topics`` order, no object per topic."""
        idx = np.fromiter((self._position[t] for t in self._topics), dtype=np.int64, count=len(self._topics))
        return (self._topics, np.asarray(self._values, dtype=np.float64)[idx],
                np.asarray(self._num, dtype=np.float64)[idx], np.asarray(self._den, dtype=np.float64)[idx])


def topic_values(e: Evaluation, measure: Measure, topics: Iterable[str]) -> np.ndarray:
    """float64 array of ``measure``'s per-topic values of ``e`` for ``topics``, in order.

    Fast for the columnar scorer's evaluations (no ``TopicMetric`` per topic);
    any other mapping is read value by value.

    Raises:
        KeyError: the measure is not in ``e`` or a topic is not evaluated.
    """
    pt = e.per_topic[measure]
    if isinstance(pt, TopicMetrics):
        return pt.values_of(topics)
    return np.array([pt[t].value for t in topics], dtype=np.float64)


def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, 0 where den == 0."""
    out = np.zeros(len(num), dtype=np.float64)
    with np.errstate(invalid="ignore"):  # inf / inf (overflowed gains) is nan: not finite, reported
        np.divide(num, den, out=out, where=den != 0)
    return out


def _running_count(groups: np.ndarray, flags: np.ndarray | None = None) -> np.ndarray:
    """int64 per row: the ``flags`` (default 1 each) summed from its group's first row through itself.

    ``groups`` holds each row's group; a group's rows are contiguous (the
    judged rows of one topic, in rank order).

    Example:
        >>> _running_count(np.array([3, 3, 1, 1, 1])).tolist()
        [1, 2, 1, 2, 3]
    """
    n = len(groups)
    total = np.cumsum(flags) if flags is not None else np.arange(1, n + 1, dtype=np.int64)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.ones(n, dtype=bool)
    new[1:] = groups[1:] != groups[:-1]
    before = np.concatenate(([0], total))[np.flatnonzero(new)]  # the sum before each group's first row
    out: np.ndarray = total - before[np.cumsum(new) - 1]
    return out


def _gains(grades: np.ndarray, dcg: str) -> np.ndarray:
    """float64 ``gains.gain`` of every grade of an int array (2^g - 1 exact; inf from g >= 1024)."""
    g = grades.astype(np.float64)
    if dcg == "log2":
        return np.where(g > 0, g, 0.0)
    exact = np.ldexp(1.0, np.clip(grades, 0, 1023).astype(np.int32)) - 1.0
    return np.where(grades > 0, np.where(grades >= 1024, np.inf, exact), 0.0)


def _discounts(ranks: np.ndarray) -> np.ndarray:
    """float64 1 / log2(rank + 1) of every 1-based rank, from the shared table ``gains.discounts``."""
    table = np.asarray(discounts(int(ranks.max()) if len(ranks) else 0), dtype=np.float64)
    out: np.ndarray = table[ranks]
    return out


def _aggregate(m: Measure, n_s: int, vals: np.ndarray, num: np.ndarray, den: np.ndarray,
               ceiling_vals: np.ndarray | None) -> Aggregate:
    """The ``Aggregate`` of one measure over ``n_s`` topics."""
    sum_num, sum_den = float(num.sum()), float(den.sum())
    return Aggregate(
        measure=m,
        n_topics=n_s,
        macro=float(np.nanmean(vals)) if n_s else math.nan,
        micro=micro_of(m, sum_num, sum_den) if m.HAS_MICRO and n_s else None,
        ceiling=(float(ceiling_vals.mean()) if n_s else math.nan) if ceiling_vals is not None else None,
        sum_value=float(np.nansum(vals)),
        sum_numerator=sum_num,
        sum_denominator=sum_den,
    )


class _Layout(NamedTuple):
    """The evaluated topics of one evaluation, laid out over the qrels topics.

    Attributes:
        s_q: qrels index of each evaluated topic, natural id order.
        s_arr: ``s_q`` as an int64 array.
        s_index: qrels index -> position among the evaluated topics (-1: not evaluated).
        live: qrels index -> True for evaluated topics whose results count (not zeroed).
        n_ret: documents returned per evaluated topic (0 for zeroed ones).
    """

    s_q: list[int]
    s_arr: np.ndarray
    s_index: np.ndarray
    live: np.ndarray
    n_ret: np.ndarray


class _JudgedRows(NamedTuple):
    """The run results of live topics that have a judgment: one element per (result, judgment) pair.

    Attributes:
        rows: run rows.
        qrels_rows: qrels rows.
        topics: position of each row's topic among the evaluated topics.
        ranks: 1-based ranks.
        grades: grades.
    """

    rows: np.ndarray
    qrels_rows: np.ndarray
    topics: np.ndarray
    ranks: np.ndarray
    grades: np.ndarray


_Unjudged = Callable[[int | None], tuple[np.ndarray, np.ndarray]]
"""depth (None: the whole ranking) -> (topic positions, ranks) of the live topics' unjudged results within it."""

_RANKING_MEASURES = (AP, Rprec, Bpref, RBP, RBPResidual, NumRelRet, NumRel, NumRet)
"""The measures of the whole ranking, or of an optional cutoff (``Evaluator._ranking_fractions``)."""


class Evaluator:
    """Binds qrels, measures and policies once; scores many runs.

    Args:
        qrels: topic_id -> doc_id -> grade, or ``QrelsColumns``.
        measures: measures or their names; default ``default_measures()``.
        rel: inclusive minimum grade of a relevant document (>= 0; default 1).
        missing: ``"fail"`` | ``"zero"`` | ``"exclude"`` (see the module docstring).

    Raises:
        ValidationError: an unknown policy, a bad measure name or a negative ``rel``.
        UnknownNameError: an unknown measure name.

    Example:
        >>> ev = Evaluator({"1": {"d1": 1, "d2": 0}}, ["R@10", "P@1"])
        >>> e = ev.evaluate({"1": {"d1": 2.0, "d3": 1.0}})
        >>> e.aggregates[e.measures[0]].macro, e.aggregates[e.measures[1]].macro
        (1.0, 1.0)
    """

    def __init__(
        self,
        qrels: Qrels | QrelsColumns,
        measures: Iterable[Measure | str] | None = None,
        *,
        rel: int = 1,
        missing: MissingPolicy | str = "fail",
    ) -> None:
        self.measures, self.rel, self.missing = check_settings(measures, rel, missing)
        self.q = qrels if isinstance(qrels, QrelsColumns) else qrels_columns_from_mapping(qrels)
        q = self.q
        self._q_index = {t: i for i, t in enumerate(q.topic_ids)}
        self._nq_topics = len(q.topic_ids)
        thresholds = {rel} | {m.effective_rel(rel) for m in self.measures if m.USES_REL}
        self._thresholds = sorted(thresholds)
        self._nrel = {
            th: np.bincount(q.topic_codes[q.grades >= max(th, 0)], minlength=self._nq_topics)
            for th in self._thresholds
        }
        self._topic_threshold = max(self._thresholds)
        self._nrel_top = dict(zip(q.topic_ids, self._nrel[self._topic_threshold].tolist(), strict=True))
        # Join structures: 63-bit hashes of the packed doc ids, keyed with the topic.
        self._q_hash = hash_words(q.doc_words) >> np.uint64(1)
        qkey = (q.topic_codes.astype(np.uint64) << np.uint64(40)) | (self._q_hash >> np.uint64(23))
        self._q_order = np.argsort(qkey, kind="stable")
        self._qkey_sorted = qkey[self._q_order]
        self._qkey_unique = bool(len(qkey) < 2 or np.all(self._qkey_sorted[1:] != self._qkey_sorted[:-1]))
        n = max(1, len(qkey))
        self._bits = int(min(28, max(16, math.ceil(math.log2(n)) + 4)))  # <= 31 (bucket from the high half)
        table = np.zeros(1 << self._bits, dtype=bool)
        table[(self._q_hash >> np.uint64(63 - self._bits)).astype(np.int64)] = True
        self._table = table
        self._exact: dict[tuple[int, bytes], int] | None = None
        self._idcg: dict[tuple[int, str], np.ndarray] = {}
        self._nnonrel: dict[int, np.ndarray] = {}

    # -- qrels-side helpers -----------------------------------------------------

    def _ideal(self, k: int, dcg: str) -> np.ndarray:
        """IDCG@k per qrels topic (strict ideal over all judged grades)."""
        key = (k, dcg)
        if key not in self._idcg:
            q = self.q
            gains = _gains(q.grades, dcg)
            order = np.lexsort((-gains, q.topic_codes))
            codes = q.topic_codes[order]
            gains = gains[order]
            starts = np.searchsorted(codes, np.arange(self._nq_topics))
            pos = np.arange(len(codes)) - starts[codes]
            keep = pos < k
            disc = _discounts(pos[keep] + 1)
            self._idcg[key] = np.bincount(codes[keep], weights=gains[keep] * disc, minlength=self._nq_topics)
        return self._idcg[key]

    def _join(self, rr: RankedRun, run2q: np.ndarray, doc_hash: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(run rows, qrels rows) of every run result that has a judgment for its topic."""
        q = self.q
        if len(rr.topic_codes) == 0 or len(q.topic_codes) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        # Bucket = the top `bits` bits of the 63-bit hash = high 32-bit half >> (31 - bits).
        halves = np.ascontiguousarray(doc_hash, dtype=np.uint64).view(np.uint32)
        high = halves[1::2] if np.little_endian else halves[0::2]
        shift = np.uint32(31 - self._bits)
        cand = np.concatenate([
            lo + np.flatnonzero(np.take(self._table, high[lo: lo + _CHUNK] >> shift))
            for lo in range(0, len(high), _CHUNK)
        ])
        tq = run2q[rr.topic_codes[cand]]
        ok = tq >= 0
        cand, tq = cand[ok], tq[ok].astype(np.int64)
        rw = rr.doc_words.shape[1]
        qw_full = q.doc_words
        width = max(rw, qw_full.shape[1])
        run_words = widen(rr.doc_words[cand], width)
        q_words = widen(qw_full, width)
        if self._qkey_unique:
            ckey = (tq.astype(np.uint64) << np.uint64(40)) | (doc_hash[cand] >> np.uint64(23))
            pos = np.searchsorted(self._qkey_sorted, ckey)
            pos[pos >= len(self._qkey_sorted)] = 0
            hit = self._qkey_sorted[pos] == ckey
            rows, qi = cand[hit], self._q_order[pos[hit]]
            same = np.all(run_words[hit] == q_words[qi], axis=1)
            return rows[same], qi[same]
        # Hash collision inside one topic's qrels (astronomically rare): exact dictionary.
        if self._exact is None:
            self._exact = {
                (int(c), q_words[i].tobytes()): i for i, c in enumerate(q.topic_codes.tolist())
            }
        rows_l: list[int] = []
        qi_l: list[int] = []
        for j, (r, t) in enumerate(zip(cand.tolist(), tq.tolist(), strict=True)):
            i = self._exact.get((t, run_words[j].tobytes()))
            if i is not None:
                rows_l.append(r)
                qi_l.append(i)
        return np.array(rows_l, dtype=np.int64), np.array(qi_l, dtype=np.int64)

    # -- scoring -------------------------------------------------------------------

    @with_small_pages
    def evaluate(
        self,
        run: Run | RunColumns | RankedRun,
        *,
        run_name: str = "",
        failed_topics: Collection[str] = (),
        topics: Collection[str] | None = None,
    ) -> Evaluation:
        """Score one run.

        Args:
            run: topic_id -> doc_id -> score, or columns from ``formats.columnar``.
            run_name: name shown in reports and errors (default: the columns' name, else "run").
            failed_topics: topics the run's producer reported as empty or
                failed (store status ``empty``/``error``): treated as missing
                even if they have rows.
            topics: restrict the evaluation to these qrels topics (e.g. the
                topics every compared run has); None = all qrels topics.

        Returns:
            The ``Evaluation``.

        Raises:
            MissingTopicsError: policy ``"fail"`` and some evaluated topic has no results.
        """
        if isinstance(run, RankedRun):
            rr = run
        elif isinstance(run, RunColumns):
            rr = rank_run(run)
        else:
            rr = rank_run(run_columns_from_mapping(run, run_name))
        name = run_name or rr.name or "run"
        return self._score(rr, name, set(failed_topics), topics)

    def eligible_topics(self) -> tuple[str, ...]:
        """Qrels topics with |R| > 0 at the strictest threshold of the measures, natural order.

        These are the topics an evaluation averages over when nothing is missing
        (the denominator of completion rates and subset shares).
        """
        nrel_top = self._nrel[self._topic_threshold]
        return tuple(sorted((t for i, t in enumerate(self.q.topic_ids) if nrel_top[i] > 0), key=natural_key))

    def n_relevant(self) -> dict[str, int]:
        """topic_id -> |R| at the evaluator's ``rel``, for every qrels topic."""
        counts = self._nrel[self.rel].tolist()
        return {t: int(counts[i]) for i, t in enumerate(self.q.topic_ids)}

    def relevant_doc_ids(self, topics: Collection[str]) -> list[str]:
        """The doc ids of the relevant (topic, doc) pairs of ``topics`` at ``rel`` (one per pair)."""
        wanted = {self._q_index[t] for t in topics if t in self._q_index}
        th = max(self.rel, 0)
        q = self.q
        return [d for c, g, d in zip(q.topic_codes.tolist(), q.grades.tolist(), q.doc_ids, strict=True)
                if g >= th and c in wanted]

    def missing_topics(self, run: RankedRun, failed_topics: Collection[str] = ()) -> tuple[str, ...]:
        """Qrels topics with |R| > 0 that ``run`` has no results for (or reports failed), natural order.

        Used to find the topics several runs have in common before scoring them
        over one topic set.
        """
        present = {t for t, c in zip(run.topic_ids, np.diff(run.starts).tolist(), strict=True) if c}
        failed = set(failed_topics)
        nrel_top = self._nrel[self._topic_threshold]
        return tuple(sorted(
            (t for i, t in enumerate(self.q.topic_ids) if nrel_top[i] > 0 and (t not in present or t in failed)),
            key=natural_key,
        ))

    def _score(
        self, rr: RankedRun, name: str, failed: set[str], restrict: Collection[str] | None
    ) -> Evaluation:
        """Score a ranked run: choose the topics, join the judgments, then every measure, novelty and curve."""
        run2q = np.array([self._q_index.get(t, -1) for t in rr.topic_ids], dtype=np.int64)
        counts = np.diff(rr.starts)
        chosen = evaluated_topics(self._nrel_top, dict(zip(rr.topic_ids, counts.tolist(), strict=True)),
                                  failed=failed, restrict=restrict, missing=self.missing, run_name=name)
        layout = self._layout(chosen, run2q, counts)
        judged = self._judged(rr, run2q, layout)
        topics = chosen.topics
        position = {t: i for i, t in enumerate(topics)}

        def unjudged(depth: int | None) -> tuple[np.ndarray, np.ndarray]:
            u_rows, u_topics = self._unjudged_rows(rr, run2q, layout.live, layout.s_index, judged.rows, depth)
            return u_topics, rr.rank_at(u_rows)

        per_topic, aggregates = self._score_measures(topics, position, layout, judged, unjudged)
        # Pool-novel documents, R@k bounds, the recall curve and the relevant documents at rel = self.rel.
        nrel_s = self._nrel[self.rel][layout.s_arr].astype(np.float64)
        rel_rows = judged.grades >= max(self.rel, 0)
        kmax = max((m.cutoff for m in self.measures if m.cutoff is not None), default=0)
        return Evaluation(
            run_name=name,
            measures=self.measures,
            rel=self.rel,
            missing=self.missing,
            topics=topics,
            excluded_topics=chosen.excluded,
            missing_topics=chosen.missing,
            ignored_topics=chosen.ignored,
            n_results={t: int(c) for t, c in zip(topics, layout.n_ret.tolist(), strict=True)},
            duplicates=dict(rr.duplicates),
            per_topic=per_topic,
            aggregates=aggregates,
            novelty=self._novelty(topics, position, layout.n_ret, judged, rel_rows, nrel_s),
            novel_documents=self._novel_documents(rr, run2q, layout.live, layout.s_index, topics, judged.rows, kmax),
            curve=self._curve(judged.topics, judged.ranks, rel_rows, nrel_s, layout.n_ret, len(topics)),
            relevant=self._relevant(layout.s_q, layout.live, judged.qrels_rows, judged.ranks),
        )

    def _layout(self, chosen: EvaluatedTopics, run2q: np.ndarray, counts: np.ndarray) -> _Layout:
        """The evaluated topics as qrels indexes, their positions, the live ones and their result counts."""
        nq = self._nq_topics
        s_q = [self._q_index[t] for t in chosen.topics]
        n_s = len(s_q)
        s_arr = np.array(s_q, dtype=np.int64)
        s_index = np.full(nq, -1, dtype=np.int64)
        s_index[s_arr] = np.arange(n_s)
        live = np.zeros(nq, dtype=bool)  # evaluated topics whose rows count
        live[[self._q_index[t] for t in chosen.topics if t not in chosen.zeroed]] = True
        n_ret_q = np.zeros(nq, dtype=np.int64)
        has = run2q >= 0
        n_ret_q[run2q[has]] = counts[has]
        n_ret = np.where(live, n_ret_q, 0)[s_q] if n_s else np.zeros(0, np.int64)
        return _Layout(s_q, s_arr, s_index, live, n_ret)

    def _judged(self, rr: RankedRun, run2q: np.ndarray, layout: _Layout) -> _JudgedRows:
        """The run's results that have a judgment, in live topics only (the join, then the filter)."""
        q = self.q
        doc_hash = rr.doc_hash if rr.doc_hash is not None else hash_words(rr.doc_words) >> np.uint64(1)
        rows, qi = self._join(rr, run2q, doc_hash)
        qt = q.topic_codes[qi]
        keep = layout.live[qt]
        rows, qi, qt = rows[keep], qi[keep], qt[keep]
        return _JudgedRows(rows, qi, layout.s_index[qt], rr.rank_at(rows), q.grades[qi])

    def _score_measures(
        self, topics: tuple[str, ...], position: Mapping[str, int], layout: _Layout, judged: _JudgedRows,
        unjudged: _Unjudged,
    ) -> tuple[dict[Measure, Mapping[str, TopicMetric]], dict[Measure, Aggregate]]:
        """Every measure's per-topic values (``TopicMetrics``) and its ``Aggregate``, measure order."""
        per_topic: dict[Measure, Mapping[str, TopicMetric]] = {}
        aggregates: dict[Measure, Aggregate] = {}
        n_s = len(topics)
        for m in self.measures:
            num, den, ceiling_vals = self._fractions(m, layout, judged, unjudged)
            vals = _div(num, den)  # Judged@k of a topic with no returned document: 0/0 -> 0 (trec_eval -c)
            per_topic[m] = TopicMetrics(str(m), topics, position, vals, num, den)
            aggregates[m] = _aggregate(m, n_s, vals, num, den, ceiling_vals)
        return per_topic, aggregates

    def _fractions(
        self, m: Measure, layout: _Layout, judged: _JudgedRows, unjudged: _Unjudged
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(numerators, denominators, ceiling values or None) of measure ``m``, one per evaluated topic.

        The measures of the top k are here; those of the whole ranking (or of
        an optional cutoff) in ``_ranking_fractions``.
        """
        k = m.cutoff
        if k is None or isinstance(m, _RANKING_MEASURES):
            return self._ranking_fractions(m, layout, judged, unjudged)
        n_s = len(layout.s_q)
        jt, jr, jg = judged.topics, judged.ranks, judged.grades
        in_k = jr <= k
        th = max(m.effective_rel(self.rel), 0)
        if isinstance(m, R | P | Success):
            hits = np.bincount(jt[in_k & (jg >= th)], minlength=n_s).astype(np.float64)
            if isinstance(m, Success):
                return (hits > 0).astype(np.float64), np.ones(n_s), None
            nrel = self._nrel[m.effective_rel(self.rel)][layout.s_arr]
            if isinstance(m, R):
                den = nrel.astype(np.float64)
                return hits, den, _div(np.minimum(k, nrel).astype(np.float64), den)
            return hits, np.full(n_s, float(k)), np.minimum(k, nrel) / float(k)
        if isinstance(m, RR):
            sel = in_k & (jg >= th)
            first = np.full(n_s, np.iinfo(np.int64).max, dtype=np.int64)
            np.minimum.at(first, jt[sel], jr[sel])
            found = first <= k
            return found.astype(np.float64), np.where(found, first, 1).astype(np.float64), None
        if isinstance(m, nDCG):
            gains = _gains(jg[in_k], m.dcg)  # a huge grade: 2^g is inf; reports say so (not finite)
            disc = _discounts(jr[in_k])
            return np.bincount(jt[in_k], weights=gains * disc, minlength=n_s), self._ideal(k, m.dcg)[layout.s_arr], None
        if isinstance(m, Judged):  # ir_measures: min(k, returned)
            return np.bincount(jt[in_k], minlength=n_s).astype(np.float64), np.minimum(k, layout.n_ret).astype(np.float64), None
        raise ValidationError(f"no scorer for measure {m}")  # pragma: no cover - every registered measure is above

    def _novelty(
        self, topics: tuple[str, ...], position: Mapping[str, int], n_ret: np.ndarray, judged: _JudgedRows,
        rel_rows: np.ndarray, nrel_s: np.ndarray,
    ) -> dict[int, NoveltyAtK]:
        """Pool-novel (unjudged) counts and the R@k bounds at every cutoff of the measures (rel = ``self.rel``)."""
        jt, jr = judged.topics, judged.ranks
        n_s = len(topics)
        novelty: dict[int, NoveltyAtK] = {}
        for k in sorted({m.cutoff for m in self.measures if m.cutoff is not None}):
            in_k = jr <= k
            judged_k = np.bincount(jt[in_k], minlength=n_s)
            returned = np.minimum(k, n_ret)
            unj = returned - judged_k
            hits = np.bincount(jt[in_k & rel_rows], minlength=n_s).astype(np.float64)
            low = _div(hits, nrel_s)
            high = _div(hits + unj, nrel_s + unj)
            novelty[k] = NoveltyAtK(
                cutoff=k,
                unjudged=TopicValues(topics, position, unj, int),
                returned=TopicValues(topics, position, returned, int),
                recall_low=TopicValues(topics, position, low, float),
                recall_high=TopicValues(topics, position, high, float),
                macro_low=float(low.mean()) if n_s else math.nan,
                macro_high=float(high.mean()) if n_s else math.nan,
                total_unjudged=int(unj.sum()),
                total_returned=int(returned.sum()),
            )
        return novelty

    def _nonrelevant(self, rel: int) -> np.ndarray:
        """|N| per qrels topic: judged non-relevant documents, 0 <= grade < rel (trec_eval ``bpref``'s)."""
        if rel not in self._nnonrel:
            q = self.q
            self._nnonrel[rel] = np.bincount(q.topic_codes[(q.grades >= 0) & (q.grades < rel)],
                                             minlength=self._nq_topics)
        return self._nnonrel[rel]

    def _ranking_fractions(
        self, m: Measure, layout: _Layout, judged: _JudgedRows, unjudged: _Unjudged
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``_fractions`` of the measures of the whole ranking, or of an optional cutoff (``AP``, ``AP@k``).

        The judged rows are in the run's row order: each topic's rows are
        contiguous and in rank order, which the running counts (AP, Bpref) and
        every ``np.bincount`` sum (in rank order, as the small scorer adds) rely on.
        """
        jt, jr, jg = judged.topics, judged.ranks, judged.grades
        n_s = len(layout.s_q)
        k = m.cutoff
        in_k = jr <= k if k is not None else np.ones(len(jr), dtype=bool)
        th = max(m.effective_rel(self.rel), 0)
        nrel = self._nrel[m.effective_rel(self.rel)][layout.s_arr] if m.USES_REL else np.zeros(n_s, np.int64)
        rel_k = in_k & (jg >= th)
        ones = np.ones(n_s)
        if isinstance(m, NumRelRet):
            return np.bincount(jt[rel_k], minlength=n_s).astype(np.float64), ones, None
        if isinstance(m, AP):
            t, r = jt[rel_k], jr[rel_k]
            precision = _running_count(t) / r  # P@rank at each relevant retrieved document
            den = nrel.astype(np.float64)
            ceiling = _div(np.minimum(k, nrel).astype(np.float64), den) if k is not None else None
            return np.bincount(t, weights=precision, minlength=n_s), den, ceiling
        if isinstance(m, Rprec):
            sel = (jg >= th) & (jr <= nrel[jt])
            return np.bincount(jt[sel], minlength=n_s).astype(np.float64), nrel.astype(np.float64), None
        if isinstance(m, Bpref):
            is_judged = jg >= 0  # a negative grade: in the pool, not judged (trec_eval); skipped
            t, g = jt[is_judged], jg[is_judged]
            is_rel = g >= th
            above = _running_count(t, (~is_rel).astype(np.int64))  # judged non-relevant ranked at or above
            t, above = t[is_rel], above[is_rel]
            r_t = nrel[t]
            n_t = self._nonrelevant(th)[layout.s_arr][t]
            frac = np.minimum(above, r_t) / np.maximum(np.minimum(n_t, r_t), 1)
            term = np.where(above > 0, 1.0 - frac, 1.0)
            return np.bincount(t, weights=term, minlength=n_s), nrel.astype(np.float64), None
        if isinstance(m, RBP):
            r = jr[rel_k]
            table = np.asarray(rbp_powers(m.p, int(r.max()) if len(r) else 0), dtype=np.float64)
            return (1.0 - m.p) * np.bincount(jt[rel_k], weights=table[r], minlength=n_s), ones, None
        depth = layout.n_ret if k is None else np.minimum(k, layout.n_ret)
        if isinstance(m, RBPResidual):
            t, r = unjudged(k)
            table = np.asarray(rbp_powers(m.p, int(depth.max()) + 1 if n_s else 1), dtype=np.float64)
            weight = np.bincount(t, weights=table[r], minlength=n_s)
            return table[depth + 1] + (1.0 - m.p) * weight, ones, None
        if isinstance(m, NumRel):
            return nrel.astype(np.float64), ones, None
        if isinstance(m, NumRet):
            return depth.astype(np.float64), ones, None
        raise ValidationError(f"no scorer for measure {m}")  # pragma: no cover - every registered measure is above

    def _unjudged_rows(
        self,
        rr: RankedRun,
        run2q: np.ndarray,
        live: np.ndarray,
        s_index: np.ndarray,
        judged_rows: np.ndarray,
        depth: int | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(rows, topic positions) of the live topics' results within rank ``depth`` (None: all) that have
        no judgment, in row order (each topic's rows in rank order)."""
        codes = [c for c, i in enumerate(run2q.tolist()) if i >= 0 and live[i]]
        if not codes:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        c_arr = np.array(codes, dtype=np.int64)
        first = rr.starts[c_arr]
        lengths = rr.starts[c_arr + 1] - first
        if depth is not None:
            lengths = np.minimum(lengths, depth)
        total = int(lengths.sum())
        offsets = np.zeros(len(codes), dtype=np.int64)
        np.cumsum(lengths[:-1], out=offsets[1:])
        rows = np.repeat(first - offsets, lengths) + np.arange(total, dtype=np.int64)
        topic_index = np.repeat(s_index[run2q[c_arr]], lengths)
        is_judged = np.zeros(len(rr.topic_codes), dtype=bool)
        is_judged[judged_rows] = True
        keep = ~is_judged[rows]
        return rows[keep], topic_index[keep]

    def _novel_documents(
        self,
        rr: RankedRun,
        run2q: np.ndarray,
        live: np.ndarray,
        s_index: np.ndarray,
        topics: tuple[str, ...],
        judged_rows: np.ndarray,
        kmax: int,
    ) -> NovelDocuments:
        """Rows of live topics within rank kmax that have no judgment."""
        rows, topic_index = self._unjudged_rows(rr, run2q, live, s_index, judged_rows, kmax)
        if len(rows) == 0:
            w = rr.doc_words.shape[1]
            return NovelDocuments(topics, np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros((0, w), np.uint64), kmax)
        return NovelDocuments(topics, topic_index, rr.rank_at(rows), rr.doc_words[rows], kmax)

    def _curve(
        self, jt: np.ndarray, jr: np.ndarray, rel_rows: np.ndarray, nrel_s: np.ndarray, n_ret: np.ndarray, n_s: int
    ) -> RecallCurve:
        depth = int(n_ret.max()) if n_s and len(n_ret) else 0
        if depth == 0:
            return RecallCurve((), (), (), n_s)
        t, r = jt[rel_rows], jr[rel_rows]
        weights = 1.0 / nrel_s[t]
        macro = np.cumsum(np.bincount(r - 1, weights=weights, minlength=depth)[:depth]) / n_s
        micro = np.cumsum(np.bincount(r - 1, minlength=depth)[:depth]) / nrel_s.sum()
        # ceiling(k) = (#{|R| <= k} + k * sum_{|R| > k} 1/|R|) / n_s, via sorted |R|.
        sizes = np.sort(nrel_s)
        inv_suffix = np.concatenate([np.cumsum((1.0 / sizes)[::-1])[::-1], [0.0]])
        ks = np.arange(1, depth + 1)
        n_le = np.searchsorted(sizes, ks, side="right")
        ceiling = (n_le + ks * inv_suffix[n_le]) / n_s
        return RecallCurve(tuple(macro.tolist()), tuple(micro.tolist()), tuple(ceiling.tolist()), n_s)

    def _relevant(self, s_q: list[int], live: np.ndarray, qi: np.ndarray, jr: np.ndarray) -> tuple[RelevantDoc, ...]:
        q = self.q
        th = max(self.rel, 0)
        rank_of = dict(zip(qi.tolist(), jr.tolist(), strict=True))
        pos = {i: p for p, i in enumerate(s_q)}
        # Topic order, then grade descending, then doc id in natural order (d2 before d10): the order
        # the miss lists print, independent of the qrels file's line order.
        entries = [
            (pos[c], -g, display_key(q.doc_ids[i]), i)
            for i, (c, g) in enumerate(zip(q.topic_codes.tolist(), q.grades.tolist(), strict=True))
            if g >= th and c in pos
        ]
        entries.sort()
        out = []
        for _, neg_g, _key, i in entries:
            c = int(q.topic_codes[i])
            r = rank_of.get(i) if live[c] else None
            out.append(RelevantDoc(q.topic_ids[c], q.doc_ids[i], -neg_g, r))
        return tuple(out)


def evaluate(
    qrels: Qrels,
    run: Run,
    measures: Iterable[Measure | str] | None = None,
    *,
    rel: int = 1,
    missing: MissingPolicy | str = "fail",
    failed_topics: Collection[str] = (),
    topics: Collection[str] | None = None,
    run_name: str = "run",
) -> Evaluation:
    """Score one run (mapping) against qrels (mapping).

    Args:
        qrels: topic_id -> doc_id -> grade; defines the topics.
        run: topic_id -> doc_id -> score; ordered by ``workbench.ranking.ranked``.
        measures: measures or names (``"R@100"``); default ``default_measures()``.
        rel: inclusive minimum grade of a relevant document (default 1).
        missing: ``"fail"`` (default), ``"zero"`` or ``"exclude"``.
        failed_topics: topics the producer reported empty/failed (treated as missing).
        topics: restrict to these qrels topics (None = all).
        run_name: the run's name in errors and reports.

    Returns:
        The ``Evaluation`` (see the module docstring for every convention).

    Raises:
        MissingTopicsError: ``missing="fail"`` and a topic with |R| > 0 has no results.
        ValidationError, UnknownNameError: bad measure, ``rel`` or policy.

    Example:
        >>> e = evaluate({"1": {"a": 1, "b": 1}}, {"1": {"a": 0.9, "x": 0.8}}, ["R@2", "P@2"])
        >>> [(str(m), a.macro) for m, a in e.aggregates.items()]
        [('R@2', 0.5), ('P@2', 0.5)]
    """
    return Evaluator(qrels, measures, rel=rel, missing=missing).evaluate(
        run, run_name=run_name, failed_topics=failed_topics, topics=topics
    )
