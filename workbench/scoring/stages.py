"""Stage-named recall for two-stage pipelines: rows, the decomposition checks and the diagnosis.

A pipeline is a candidate run (BM25, dense, hybrid) whose top D documents per
topic a reranker reorders; the top k of the result is what a user or a
generator sees. Each number is named by the stage it measures:

* ``R@D [candidates: bm25]``: recall at the candidate depth, the ceiling of
  everything after it (a reranker cannot promote a document it never got);
* ``R@k [candidates: bm25]`` and ``R@k [final: bm25+minilm]``: what the top k
  held before and after reranking;
* ``nDCG@k [final: bm25+minilm]``: the ordering of that top k (strict ideal
  over every judged grade of the topic, as ``scoring.evaluate``).

The decomposition, checked:

* **Permutation.** Reordering a list cannot change what is in it, so the
  reranked run's R@D equals its candidate run's R@D, topic by topic. A topic
  where they differ means the rerank is not a permutation of the candidates'
  top D (it holds documents the candidates did not, or dropped some); the
  report lists those topics and, when the runs are given, the documents.
* **Reranker contribution** = R@k(final) - R@k(candidates).
* **Stock** = R@D(candidates) - R@k(candidates): the relevant documents ranked
  between k+1 and D, all that any reordering could promote into the top k.

The diagnosis, per run and per topic, from (R@D, nDCG@k) against two
thresholds (``Thresholds``), in the vocabulary of the design note on recall and
nDCG (shared/seeds/002):

=========  ==========  ==============================  ================================================
R@D        nDCG@k      label                           what moves it
=========  ==========  ==============================  ================================================
high       low         ranking problem                 a reranker or better fusion weights
low        high        candidate generation problem    not reranking: analyzer, chunking, query
                                                       expansion, a dense retriever
low        low         check ingestion                 first check the documents are in the index
high       high        stop                            nothing to fix at this depth
=========  ==========  ==============================  ================================================

"High" is inclusive (value >= threshold). The run's label uses its macro R@D
and macro nDCG@k; the per-topic counts use each topic's own values.

Topics, missing topics and |R| = 0 follow the ``Evaluation`` s given: both
stages must be evaluated over the same topics (one ``Evaluator``, one topic
set), which ``services.runs.stages`` guarantees.

Source:
    R@k: trec_eval ``recall_k``; nDCG@k: Järvelin & Kekäläinen, ACM TOIS 2002,
    doi:10.1145/582415.582418 (trec_eval ``ndcg_cut``); the two-stage
    candidates-then-rerank pipeline: Nogueira & Cho, arXiv:1901.04085 (2019).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np

from workbench.errors import ValidationError
from workbench.ranking import natural_key, ranked
from workbench.scoring.columns import RankedRun, hash_words, unpack_ids, widen
from workbench.scoring.evaluate import Aggregate, Evaluation
from workbench.scoring.measures import Measure, R, nDCG
from workbench.types import Run

Stage = Literal["candidates", "final"]
"""Which stage of a pipeline a number measures."""

Diagnosis = Literal["ranking problem", "candidate generation problem", "check ingestion", "stop"]
"""The four labels of the diagnosis (see the module docstring)."""

DIAGNOSES: tuple[Diagnosis, ...] = ("ranking problem", "candidate generation problem", "check ingestion", "stop")

ADVICE: Mapping[Diagnosis, str] = {
    "ranking problem": "the relevant documents are in the candidates but ranked low: a reranker or better "
                       "fusion weights will move it",
    "candidate generation problem": "the candidates miss relevant documents and no reranking will touch it: "
                                    "look at the analyzer, chunking, query expansion or add a dense retriever",
    "check ingestion": "both low: check that the relevant documents are in the index at all before tuning retrieval",
    "stop": "both high: nothing to fix at this depth",
}
"""What each label means for the next step."""

RECALL_THRESHOLD = 0.8
"""Default: R@D >= 0.8 is high (the candidates hold at least four in five relevant documents)."""

NDCG_THRESHOLD = 0.5
"""Default: nDCG@k >= 0.5 is high (half the gain of the best ordering the judgments allow)."""

TOLERANCE = 1e-12
"""Per-topic R@D values closer than this count as equal (they are ratios of small integers)."""


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Where "high" starts for the diagnosis (inclusive).

    Attributes:
        recall: R@D at or above it is high (0..1; default 0.8).
        ndcg: nDCG@k at or above it is high (0..1; default 0.5).

    Raises:
        ValidationError: a threshold outside 0..1.
    """

    recall: float = RECALL_THRESHOLD
    ndcg: float = NDCG_THRESHOLD

    def __post_init__(self) -> None:
        for name, v in (("recall", self.recall), ("nDCG", self.ndcg)):
            if not (isinstance(v, int | float) and 0.0 <= float(v) <= 1.0):
                raise ValidationError(f"expected a {name} threshold between 0 and 1, found {v!r}")


def diagnose(recall_at_depth: float, ndcg_at_k: float, thresholds: Thresholds = Thresholds()) -> Diagnosis:
    """The label of one (R@D, nDCG@k) pair.

    Args:
        recall_at_depth: R@D, 0..1.
        ndcg_at_k: nDCG@k, 0..1.
        thresholds: where "high" starts (inclusive).

    Returns:
        ``ranking problem`` (R high, nDCG low), ``candidate generation problem``
        (R low, nDCG high), ``check ingestion`` (both low) or ``stop`` (both high).

    Example:
        >>> diagnose(0.93, 0.30), diagnose(0.63, 0.88), diagnose(0.2, 0.1), diagnose(0.9, 0.9)
        ('ranking problem', 'candidate generation problem', 'check ingestion', 'stop')
    """
    high_r = recall_at_depth >= thresholds.recall
    high_n = ndcg_at_k >= thresholds.ndcg
    if high_r:
        return "stop" if high_n else "ranking problem"
    return "candidate generation problem" if high_n else "check ingestion"


@dataclass(frozen=True)
class RunDiagnosis:
    """The diagnosis of one run: its label from the macro values and the per-topic labels.

    Attributes:
        name: the pipeline name (``bm25`` or ``bm25+minilm``).
        run: the stored run.
        depth: D of the R@D used.
        k: k of the nDCG@k used.
        recall: macro R@D.
        ndcg: macro nDCG@k.
        label: ``diagnose(recall, ndcg)``.
        per_topic: topic_id -> label, one per evaluated topic.
        thresholds: the thresholds applied.
    """

    name: str
    run: str
    depth: int
    k: int
    recall: float
    ndcg: float
    label: Diagnosis
    per_topic: Mapping[str, Diagnosis]
    thresholds: Thresholds

    @property
    def counts(self) -> dict[Diagnosis, int]:
        """label -> number of topics, every label present (in ``DIAGNOSES`` order)."""
        out: dict[Diagnosis, int] = {d: 0 for d in DIAGNOSES}
        for label in self.per_topic.values():
            out[label] += 1
        return out


def diagnose_run(e: Evaluation, depth: int, k: int, *, name: str = "",
                 thresholds: Thresholds = Thresholds()) -> RunDiagnosis:
    """Diagnose a run from its R@depth and nDCG@k (both must be measures of ``e``).

    Raises:
        ValidationError: ``e`` lacks R@depth or nDCG@k.

    Example:
        >>> from workbench.scoring.evaluate import evaluate
        >>> e = evaluate({"1": {"a": 1}}, {"1": {"x": 2.0, "a": 1.0}}, ["R@2", "nDCG@1"])
        >>> d = diagnose_run(e, 2, 1)
        >>> d.label, d.counts["ranking problem"]
        ('ranking problem', 1)
    """
    r, n = _find(e, R(depth)), _find(e, nDCG(k))
    per_r, per_n = e.per_topic[r], e.per_topic[n]
    labels: dict[str, Diagnosis] = {t: diagnose(per_r[t].value, per_n[t].value, thresholds) for t in e.topics}
    rm, nm = e.aggregates[r].macro, e.aggregates[n].macro
    label = diagnose(rm, nm, thresholds) if e.topics else "check ingestion"
    return RunDiagnosis(name or e.run_name, e.run_name, depth, k, rm, nm, label, labels, thresholds)


@dataclass(frozen=True)
class IngestionCheck:
    """Are the relevant documents a run missed on its "check ingestion" topics in the index at all?

    Attributes:
        name: the pipeline name of the run checked.
        depth: D.
        n_topics: topics labelled ``check ingestion``.
        n_missed: their relevant documents not in the run's top D.
        absent: (topic_id, doc_id) of those not in the collection version.
        empty: (topic_id, doc_id) of those in it without text: neither title nor text.
        title_only: (topic_id, doc_id) of those in it with a title and no text (indexed by the title alone).
    """

    name: str
    depth: int
    n_topics: int
    n_missed: int
    absent: tuple[tuple[str, str], ...]
    empty: tuple[tuple[str, str], ...]
    title_only: tuple[tuple[str, str], ...] = ()

    @property
    def n_indexed(self) -> int:
        """Missed relevant documents that are in the index with text: neither absent, empty nor title-only."""
        return self.n_missed - len(self.absent) - len(self.empty) - len(self.title_only)


def ingestion_check(e: Evaluation, diagnosis: RunDiagnosis, absent_docs: Collection[str],
                    empty_docs: Collection[str], title_only_docs: Collection[str] = ()) -> IngestionCheck:
    """Check the "check ingestion" topics of a diagnosis against what the index holds.

    Args:
        e: the run's ``Evaluation`` (its ``relevant`` documents with their ranks).
        diagnosis: the run's ``RunDiagnosis`` (``diagnose_run(e, ...)``).
        absent_docs: relevant doc_ids that are not in the collection version.
        empty_docs: doc_ids in the collection version with empty title and text.
        title_only_docs: doc_ids in the collection version with a title and an empty text.

    Returns:
        The ``IngestionCheck`` (pairs in topic then grade order).

    Example:
        >>> from workbench.scoring.evaluate import evaluate
        >>> e = evaluate({"1": {"a": 1, "b": 1}}, {"1": {"x": 1.0}}, ["R@1", "nDCG@1"])
        >>> c = ingestion_check(e, diagnose_run(e, 1, 1), {"a"}, set())
        >>> c.n_topics, c.n_missed, c.absent, c.n_indexed
        (1, 2, (('1', 'a'),), 1)
    """
    topics = {t for t, label in diagnosis.per_topic.items() if label == "check ingestion"}
    missed = [d for d in e.relevant if d.topic_id in topics and (d.rank is None or d.rank > diagnosis.depth)]
    absent = set(absent_docs)
    empty = set(empty_docs) - absent
    title_only = set(title_only_docs) - absent - empty
    return IngestionCheck(diagnosis.name, diagnosis.depth, len(topics), len(missed),
                          tuple((d.topic_id, d.doc_id) for d in missed if d.doc_id in absent),
                          tuple((d.topic_id, d.doc_id) for d in missed if d.doc_id in empty),
                          tuple((d.topic_id, d.doc_id) for d in missed if d.doc_id in title_only))


def _find(e: Evaluation, wanted: Measure) -> Measure:
    """The measure of ``e`` equal to ``wanted`` (its default parameters), else a clear error."""
    for m in e.measures:
        if m == wanted:
            return m
    raise ValidationError(f"run {e.run_name!r} was not scored with {wanted}; score it with "
                          f"{wanted} to report its stages (measures: {', '.join(str(m) for m in e.measures)})")


def stage_label(measure: Measure | str, stage: Stage, name: str) -> str:
    """A number's name with its stage: ``R@50 [candidates: bm25]``.

    Example:
        >>> stage_label(R(10), "final", "bm25+minilm")
        'R@10 [final: bm25+minilm]'
    """
    return f"{measure} [{stage}: {name}]"


@dataclass(frozen=True, slots=True)
class StageRow:
    """One measure at one stage, with its averages.

    Attributes:
        label: ``stage_label(measure, stage, name)``.
        stage: ``candidates`` | ``final``.
        name: the pipeline name in the label.
        run: the stored run the numbers come from.
        measure: the measure.
        macro, micro, ceiling: as ``scoring.evaluate.Aggregate`` (micro and
            ceiling None where not meaningful, e.g. nDCG@k has no ceiling row).
        n_topics: topics averaged over.
        sum_numerator, sum_denominator: the micro average's evidence.
    """

    label: str
    stage: Stage
    name: str
    run: str
    measure: Measure
    macro: float
    micro: float | None
    ceiling: float | None
    n_topics: int
    sum_numerator: float
    sum_denominator: float


def _row(e: Evaluation, m: Measure, stage: Stage, name: str) -> StageRow:
    a: Aggregate = e.aggregates[_find(e, m)]
    return StageRow(stage_label(m, stage, name), stage, name, e.run_name, m, a.macro, a.micro, a.ceiling,
                    a.n_topics, a.sum_numerator, a.sum_denominator)


@dataclass(frozen=True)
class PermutationCheck:
    """Whether the final top D holds exactly the candidates' top D.

    Attributes:
        depth: D.
        candidate_macro, final_macro: macro R@D of the candidate and the final run.
        candidate_micro, final_micro: micro R@D of both.
        differing: (topic_id, candidate R@D, final R@D) for every topic where
            they differ, natural topic order.
        new_documents: topic_id -> documents in the final top D that are not in
            the candidates' top D (only topics with some); None when the runs
            themselves were not compared.
        n_dropped: candidates' top-D documents missing from the final top D,
            summed over topics; None when not compared.
    """

    depth: int
    candidate_macro: float
    final_macro: float
    candidate_micro: float
    final_micro: float
    differing: tuple[tuple[str, float, float], ...]
    new_documents: Mapping[str, tuple[str, ...]] | None = None
    n_dropped: int | None = None

    @property
    def recall_equal(self) -> bool:
        """True when R@D is equal on every topic (the numeric check)."""
        return not self.differing

    @property
    def n_new(self) -> int:
        """Documents in the final top D that the candidates' top D lacks (0 when not compared)."""
        return sum(len(d) for d in (self.new_documents or {}).values())

    @property
    def is_permutation(self) -> bool:
        """R@D equal on every topic and, when compared, the same document sets."""
        return self.recall_equal and self.n_new == 0 and not self.n_dropped


@dataclass(frozen=True, slots=True)
class Decomposition:
    """The reranker's contribution and the stock it worked with.

    Attributes:
        depth: D; k: the final cutoff.
        contribution_macro / contribution_micro: R@k(final) - R@k(candidates);
            None for a single-stage run.
        stock_macro / stock_micro: R@D(candidates) - R@k(candidates).
    """

    depth: int
    k: int
    contribution_macro: float | None
    contribution_micro: float | None
    stock_macro: float
    stock_micro: float

    @property
    def realised(self) -> float | None:
        """contribution / stock (macro): the share of the promotable stock the reranker promoted.

        None for a single-stage run, nan when the stock is 0.
        """
        if self.contribution_macro is None:
            return None
        return self.contribution_macro / self.stock_macro if self.stock_macro else math.nan


@dataclass(frozen=True)
class StageReport:
    """One pipeline, stage by stage.

    Attributes:
        name: the pipeline name (``bm25+minilm``; the run's name for a single stage).
        final_run: the stored run whose top k is the output.
        candidate_run: the run that produced the candidates (the same run for a
            single-stage run).
        reranker: the reranker's short name (None for a single-stage run).
        depth: D, the candidate depth.
        k: the final cutoff.
        topics: the topics every number is averaged over.
        rows: ``R@D [candidates]``, ``R@k [candidates]``, ``nDCG@k [candidates]``
            then (two stages) ``R@D [final]``, ``R@k [final]``, ``nDCG@k [final]``.
        check: the permutation check (None for a single-stage run).
        decomposition: contribution and stock.
        diagnoses: the candidate run's, then (two stages) the final run's.
        ingestion: the ``IngestionCheck`` of each diagnosis (same order), or
            empty when the index was not consulted.
    """

    name: str
    final_run: str
    candidate_run: str
    reranker: str | None
    depth: int
    k: int
    topics: tuple[str, ...]
    rows: tuple[StageRow, ...]
    check: PermutationCheck | None
    decomposition: Decomposition
    diagnoses: tuple[RunDiagnosis, ...] = field(default=())
    ingestion: tuple[IngestionCheck, ...] = field(default=())

    @property
    def two_stage(self) -> bool:
        """True for a rerank run (a candidate stage and a final stage)."""
        return self.reranker is not None

    def row(self, measure: Measure | str, stage: Stage) -> StageRow:
        """The row of ``measure`` (or its name) at ``stage``.

        Raises:
            KeyError: no such row.
        """
        for r in self.rows:
            if str(r.measure) == str(measure) and r.stage == stage:
                return r
        raise KeyError((str(measure), stage))


def stage_report(
    candidate: Evaluation,
    final: Evaluation | None,
    *,
    depth: int,
    k: int,
    candidate_name: str,
    final_name: str | None = None,
    reranker: str | None = None,
    new_documents: Mapping[str, tuple[str, ...]] | None = None,
    n_dropped: int | None = None,
    thresholds: Thresholds = Thresholds(),
    absent_docs: Collection[str] | None = None,
    empty_docs: Collection[str] = (),
    title_only_docs: Collection[str] = (),
) -> StageReport:
    """Rows, checks and diagnosis of one pipeline from the evaluations of its runs.

    Args:
        candidate: the candidate run's ``Evaluation``, with R@depth, R@k and nDCG@k.
        final: the rerank run's ``Evaluation`` over the same topics and measures,
            or None for a single-stage run (its own top D are the candidates).
        depth: D, the candidate depth (>= 1).
        k: the final cutoff (1 <= k).
        candidate_name: the candidate stage's name in labels (``bm25``).
        final_name: the final stage's name (``bm25+minilm``); default: the
            final run's name, or ``candidate_name`` for a single stage.
        reranker: the reranker's short name (two stages).
        new_documents, n_dropped: the document-level comparison of the two top
            D (``top_set_difference``), if computed.
        thresholds: of the diagnosis.
        absent_docs: relevant doc_ids not in the collection version; when given
            (with ``empty_docs``: doc_ids without text), every diagnosis gets an
            ``IngestionCheck``; None = the index was not consulted.
        empty_docs: doc_ids of the collection version with no text (neither title nor text).
        title_only_docs: doc_ids of the collection version with a title and no text.

    Returns:
        The ``StageReport``.

    Raises:
        ValidationError: a missing measure, depth or k < 1, or the two
            evaluations cover different topics.

    Example:
        >>> from workbench.scoring.evaluate import Evaluator
        >>> ev = Evaluator({"1": {"a": 1, "b": 1}}, ["R@3", "R@1", "nDCG@1"])
        >>> c = ev.evaluate({"1": {"x": 3.0, "a": 2.0, "b": 1.0}}, run_name="bm25")
        >>> f = ev.evaluate({"1": {"a": 3.0, "x": 2.0, "b": 1.0}}, run_name="bm25+ce")
        >>> rep = stage_report(c, f, depth=3, k=1, candidate_name="bm25", reranker="ce")
        >>> rep.check.recall_equal, rep.decomposition.contribution_macro, rep.decomposition.stock_macro
        (True, 0.5, 1.0)
    """
    if depth < 1 or k < 1:
        raise ValidationError(f"expected a depth D >= 1 and a cutoff k >= 1, found D = {depth}, k = {k}")
    if final is not None and final.topics != candidate.topics:
        raise ValidationError(f"runs {candidate.run_name!r} and {final.run_name!r} were evaluated over different "
                              "topics; score both with one evaluator over one topic set")
    r_d, r_k, n_k = R(depth), R(k), nDCG(k)
    cname = candidate_name
    fname = final_name or (final.run_name if final is not None else cname)
    rows = [_row(candidate, m, "candidates", cname) for m in (r_d, r_k, n_k)]
    diagnoses = [diagnose_run(candidate, depth, k, name=cname, thresholds=thresholds)]
    c_rd, c_rk = candidate.aggregates[_find(candidate, r_d)], candidate.aggregates[_find(candidate, r_k)]
    check: PermutationCheck | None = None
    contribution_macro = contribution_micro = None
    if final is not None:
        rows += [_row(final, m, "final", fname) for m in (r_d, r_k, n_k)]
        diagnoses.append(diagnose_run(final, depth, k, name=fname, thresholds=thresholds))
        f_rd, f_rk = final.aggregates[_find(final, r_d)], final.aggregates[_find(final, r_k)]
        per_c, per_f = candidate.per_topic[_find(candidate, r_d)], final.per_topic[_find(final, r_d)]
        differing = tuple((t, per_c[t].value, per_f[t].value) for t in candidate.topics
                          if abs(per_c[t].value - per_f[t].value) > TOLERANCE)
        check = PermutationCheck(depth, c_rd.macro, f_rd.macro, c_rd.micro or 0.0, f_rd.micro or 0.0, differing,
                                 new_documents, n_dropped)
        contribution_macro = f_rk.macro - c_rk.macro
        contribution_micro = (f_rk.micro or 0.0) - (c_rk.micro or 0.0)
    decomposition = Decomposition(depth, k, contribution_macro, contribution_micro, c_rd.macro - c_rk.macro,
                                  (c_rd.micro or 0.0) - (c_rk.micro or 0.0))
    evals = [candidate] + ([final] if final is not None else [])
    ingestion = (tuple(ingestion_check(ev, dg, absent_docs, empty_docs, title_only_docs)
                       for ev, dg in zip(evals, diagnoses, strict=True))
                 if absent_docs is not None else ())
    return StageReport(fname, final.run_name if final is not None else candidate.run_name, candidate.run_name,
                       reranker if final is not None else None, depth, k, candidate.topics, tuple(rows), check,
                       decomposition, tuple(diagnoses), ingestion)


def stage_measures(depth: int, k: int) -> tuple[Measure, ...]:
    """The measures a stage report needs: R@D, R@k and nDCG@k (R@k once when k = D).

    Example:
        >>> [str(m) for m in stage_measures(50, 10)]
        ['R@50', 'R@10', 'nDCG@10']
    """
    ms: list[Measure] = [R(depth)]
    if k != depth:
        ms.append(R(k))
    ms.append(nDCG(k))
    return tuple(ms)


def top_set_difference(candidate: RankedRun, final: RankedRun, depth: int,
                       topics: Sequence[str] | None = None) -> tuple[dict[str, tuple[str, ...]], int]:
    """Compare the two runs' top D per topic, document by document.

    Args:
        candidate: the candidate run (canonical order).
        final: the rerank run (canonical order).
        depth: D.
        topics: compare only these topics (None = every topic of either run).

    Returns:
        (topic_id -> documents in the final top D absent from the candidates'
        top D, only topics with some, documents in rank order; the number of
        candidates' top-D documents absent from the final top D, summed over
        topics). A topic the final run lacks drops all its candidates.

    Example:
        >>> from workbench.scoring.columns import rank_run, run_columns_from_mapping as cols
        >>> c = rank_run(cols({"1": {"a": 2.0, "b": 1.0}}))
        >>> f = rank_run(cols({"1": {"a": 1.0, "z": 2.0}}))
        >>> top_set_difference(c, f, 2)
        ({'1': ('z',)}, 1)
    """
    wanted = set(topics) if topics is not None else None
    codes: dict[str, int] = {}
    for t in (*candidate.topic_ids, *final.topic_ids):
        codes.setdefault(t, len(codes))
    width = max(candidate.doc_words.shape[1], final.doc_words.shape[1])

    def top_rows(rr: RankedRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, topic codes, widened words) of the top D of ``rr`` (topics in ``wanted``)."""
        rows = np.flatnonzero(rr.rank_at(np.arange(len(rr.topic_codes))) <= depth) if len(rr.topic_codes) else \
            np.zeros(0, np.int64)
        if wanted is not None and len(rows):
            ok = np.array([t in wanted for t in rr.topic_ids], dtype=bool)
            rows = rows[ok[rr.topic_codes[rows]]]
        remap = np.array([codes[t] for t in rr.topic_ids] or [0], dtype=np.uint64)
        return rows, remap[rr.topic_codes[rows]], widen(rr.doc_words[rows], width)

    c_rows, c_codes, c_words = top_rows(candidate)
    f_rows, f_codes, f_words = top_rows(final)
    # Keys: topic code (high 24 bits) and 40 bits of the doc id's hash; equality is confirmed on the words.
    c_key = (c_codes << np.uint64(40)) | (hash_words(c_words) >> np.uint64(24))
    f_key = (f_codes << np.uint64(40)) | (hash_words(f_words) >> np.uint64(24))
    order = np.argsort(c_key, kind="stable")
    c_sorted = c_key[order]
    if len(codes) < (1 << 24) and not (len(c_sorted) > 1 and bool(np.any(c_sorted[1:] == c_sorted[:-1]))):
        pos = np.searchsorted(c_sorted, f_key)
        pos[pos >= len(c_sorted)] = 0
        hit = (c_sorted[pos] == f_key) if len(c_sorted) else np.zeros(len(f_key), dtype=bool)
        if hit.any():
            hit[hit] = np.all(c_words[order[pos[hit]]] == f_words[hit], axis=1)
        matched = np.zeros(len(c_key), dtype=bool)
        matched[order[pos[hit]]] = True
        new_mask, n_dropped = ~hit, int((~matched).sum())
    else:  # a hash collision among one topic's candidates (or 16M topics): compare the full keys
        def packed(cd: np.ndarray, words: np.ndarray) -> np.ndarray:
            out = np.empty((len(cd), width + 1), dtype=np.uint64)
            out[:, 0], out[:, 1:] = cd, words
            return np.ascontiguousarray(out).view(np.dtype((np.void, 8 * (width + 1)))).ravel()

        ck, fk = packed(c_codes, c_words), packed(f_codes, f_words)
        new_mask, n_dropped = ~np.isin(fk, ck), int((~np.isin(ck, fk)).sum())
    new: dict[str, list[str]] = {}
    sel = f_rows[new_mask]
    for t_code, doc in zip(final.topic_codes[sel].tolist(), unpack_ids(final.doc_words[sel]), strict=True):
        new.setdefault(final.topic_ids[t_code], []).append(doc)
    return {t: tuple(d) for t, d in new.items()}, n_dropped


class Violation(NamedTuple):
    """A document in a reranked run's top D that its candidates' top D did not hold.

    Attributes:
        topic_id: the topic.
        doc_id: the document.
        rank: its 1-based rank in the reranked run.
    """

    topic_id: str
    doc_id: str
    rank: int


def rerank_violations(candidates: Mapping[str, Sequence[str]], reranked: Run, depth: int) -> list[Violation]:
    """Check that each topic's top D of ``reranked`` is a permutation of a subset of its candidates.

    Args:
        candidates: topic_id -> the candidate run's top D doc ids (any order).
        reranked: topic_id -> doc_id -> score, ordered by ``workbench.ranking.ranked``.
        depth: D; documents ranked below D in ``reranked`` are not checked.

    Returns:
        Every (topic, document, rank) of the reranked top D whose document is not
        among that topic's candidates (a topic with no candidates: all of its
        top D), in topic (natural) then rank order. Empty when the check holds.

    Example:
        >>> rerank_violations({"1": ["a", "b"]}, {"1": {"b": 2.0, "z": 1.0}, "2": {"a": 1.0}}, 2)
        [Violation(topic_id='1', doc_id='z', rank=2), Violation(topic_id='2', doc_id='a', rank=1)]
    """
    out: list[Violation] = []
    for topic_id in sorted(reranked, key=natural_key):
        allowed = set(candidates.get(topic_id, ()))
        for row in ranked(reranked[topic_id])[:depth]:
            if row.doc_id not in allowed:
                out.append(Violation(topic_id, row.doc_id, row.rank))
    return out
