"""ANN-recall: how many of the exact nearest neighbours an approximate index returns.

Two denominators are easily confused in vector search, and this module keeps
them apart:

* ``R@k`` (``workbench.scoring.measures``) is semantic recall: the denominator
  is the topic's judged-relevant documents in a qrels version;
* ``ANN-recall@k`` (this module) is algorithmic recall: the denominator is the
  exact top k of the *same embeddings under the same metric*, found by brute
  force. It tests the index (graph degree, beam, probes), never the
  representation; exact neighbours are a computational oracle, never relevance
  judgments.

Definition, per topic q with a non-empty exact list::

    ANN-recall@k(q) = |A_k(q) ∩ E_k(q)| / |E_k(q)|

where ``E_k(q)`` is the first k documents of the exact run and ``A_k(q)`` the
first k of the approximate run, both ordered by the project's one ordering
rule (``workbench.ranking.ranked``: score desc, doc_id desc). ``|E_k(q)|`` is k
unless the collection holds fewer than k documents. The run's value is the
macro mean over topics (every topic counts once); the micro form (summed
numerators over summed denominators) is kept beside it.

Edge semantics:

* topics are those of the exact run with at least one result; an exact topic
  with no results has no neighbours (``excluded``), never 0 or 1;
* a topic the approximate run lacks or returned nothing for scores 0 and is
  counted in ``n_missing`` (a failed search lost every neighbour);
* approximate topics the exact run lacks are ignored and counted
  (``n_extra``);
* **ties across the k boundary**: when the exact score at rank k equals the
  score at rank k+1, which documents form ``E_k`` is decided by the ordering
  rule (doc_id desc), not by the vectors. Such a topic has
  ``boundary_tie=True``; ``tied_outside`` counts the approximate top-k
  documents that are outside ``E_k`` but score the same as the k-th exact
  document (they are tie-order swaps, not index errors). The tie group is seen
  only as deep as the exact run goes, so the exact run must be at least k+1
  deep to detect a tie (``ann_recall`` refuses a shallower one) and
  ``tied_outside`` is a lower bound when the group runs past its depth.

Source:
    The recall of approximate nearest-neighbour search as used by
    ann-benchmarks (Aumüller, Bernhardsson & Faithfull, Information Systems
    2020, doi:10.1016/j.is.2019.02.006) and faiss's ``knn_intersection_measure``
    ("k-NN intersection"), with the exact list cut by trec_eval's tie rule
    (usnistgov/trec_eval#22).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from workbench.errors import ValidationError
from workbench.ranking import natural_key, ranked

Run = Mapping[str, Mapping[str, float]]

ANN_RECALL = "ANN-recall"


def ann_recall_name(k: int) -> str:
    """The measure's printed name, e.g. ``ANN-recall@10`` (never ``R@10``, which needs qrels)."""
    return f"{ANN_RECALL}@{k}"


def parse_ann_recall_name(name: str) -> int:
    """The k of ``ANN-recall@k``.

    Raises:
        ValidationError: anything else.

    Example:
        >>> parse_ann_recall_name(ann_recall_name(10))
        10
    """
    head, sep, tail = name.partition("@")
    if head != ANN_RECALL or not sep or not tail.isdigit() or int(tail) < 1:
        raise ValidationError(f"expected {ANN_RECALL}@k with k >= 1, e.g. {ANN_RECALL}@10, found {name!r}")
    return int(tail)


TIE_TOLERANCE = 1e-6
"""Relative tolerance of an index's own inner product against the exact k-th score (float32 summation order)."""

DENOMINATOR = "the exact top-k of the same embeddings and metric (brute force), not qrels"
"""What ANN-recall's denominator is, for report labels."""


@dataclass(frozen=True, slots=True)
class AnnRecallTopic:
    """ANN-recall@k of one topic, with its evidence.

    Attributes:
        topic_id: the topic.
        k: the cutoff.
        numerator: |A_k ∩ E_k|, exact neighbours the approximate run returned.
        denominator: |E_k| (k, or fewer when the collection is smaller).
        boundary_tie: the exact k-th and (k+1)-th documents score the same.
        tied_outside: approximate top-k documents outside E_k that score the
            same as the exact k-th (tie-order swaps; a lower bound, see module).
        missing: the approximate run has no results for the topic.
    """

    topic_id: str
    k: int
    numerator: int
    denominator: int
    boundary_tie: bool
    tied_outside: int
    missing: bool = False

    @property
    def value(self) -> float:
        """numerator / denominator."""
        return self.numerator / self.denominator

    @property
    def with_ties(self) -> float:
        """(numerator + tied_outside) / denominator: tie-order swaps counted as found."""
        return (self.numerator + self.tied_outside) / self.denominator


@dataclass(frozen=True)
class AnnRecall:
    """ANN-recall@k of an approximate run against an exact run.

    Attributes:
        k: the cutoff.
        topics: one ``AnnRecallTopic`` per scored topic, in natural topic order.
        excluded: exact-run topics with no results (no neighbours to find).
        n_extra: approximate-run topics that the exact run lacks (ignored).
    """

    k: int
    topics: tuple[AnnRecallTopic, ...]
    excluded: tuple[str, ...] = ()
    n_extra: int = 0
    name: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", ann_recall_name(self.k))

    @property
    def n_topics(self) -> int:
        """Topics averaged over."""
        return len(self.topics)

    @property
    def macro(self) -> float:
        """Mean of the per-topic values (NaN with no topics)."""
        if not self.topics:
            return math.nan
        return math.fsum(t.value for t in self.topics) / len(self.topics)

    @property
    def macro_with_ties(self) -> float:
        """Mean of ``AnnRecallTopic.with_ties`` (NaN with no topics)."""
        if not self.topics:
            return math.nan
        return math.fsum(t.with_ties for t in self.topics) / len(self.topics)

    @property
    def sum_numerator(self) -> int:
        """Summed numerators."""
        return sum(t.numerator for t in self.topics)

    @property
    def sum_denominator(self) -> int:
        """Summed denominators."""
        return sum(t.denominator for t in self.topics)

    @property
    def micro(self) -> float:
        """sum numerator / sum denominator (NaN with no topics)."""
        return self.sum_numerator / self.sum_denominator if self.topics else math.nan

    @property
    def n_boundary_ties(self) -> int:
        """Topics whose exact list has a tie across the k boundary."""
        return sum(1 for t in self.topics if t.boundary_tie)

    @property
    def n_tied_outside(self) -> int:
        """Approximate documents, over all topics, that are tie-order swaps (see ``AnnRecallTopic``)."""
        return sum(t.tied_outside for t in self.topics)

    @property
    def n_missing(self) -> int:
        """Topics the approximate run has no results for (scored 0)."""
        return sum(1 for t in self.topics if t.missing)


def ann_recall_topic(topic_id: str, approx: Mapping[str, float], exact: Mapping[str, float], k: int,
                     ) -> AnnRecallTopic:
    """ANN-recall@k of one topic (see the module docstring for the definition and ties).

    Args:
        topic_id: the topic.
        approx: doc_id -> score of the approximate run (any depth; cut at k here).
        exact: doc_id -> score of the exact run, non-empty.
        k: cutoff, >= 1.

    Raises:
        ValidationError: k < 1 or an empty exact list.

    Example:
        >>> t = ann_recall_topic("1", {"a": .9, "c": .7}, {"a": .9, "b": .8, "c": .7}, 2)
        >>> (t.numerator, t.denominator, t.boundary_tie)
        (1, 2, False)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValidationError(f"expected k >= 1 for {ANN_RECALL}@k, found {k!r}")
    if not exact:
        raise ValidationError(f"topic {topic_id}: the exact run has no neighbours; exclude the topic")
    e = ranked(exact)
    top = e[:k]
    top_ids = {d.doc_id for d in top}
    a_top = ranked(approx)[:k]
    common = sum(1 for d in a_top if d.doc_id in top_ids)
    tie = len(e) > k and e[k].score == e[k - 1].score
    tied_outside = 0
    if tie:
        kth = e[k - 1].score
        for d in a_top:
            if d.doc_id in top_ids:
                continue
            if d.doc_id in exact:  # seen by the exact run: its exact score decides
                tied_outside += exact[d.doc_id] == kth
            else:  # tie group deeper than the exact run: the index's own (exact, flat) inner product
                tied_outside += math.isclose(d.score, kth, rel_tol=TIE_TOLERANCE, abs_tol=TIE_TOLERANCE)
    return AnnRecallTopic(str(topic_id), k, common, len(top), tie, tied_outside, missing=not approx)


def ann_recall(approx: Run, exact: Run, k: int, *, exact_depth: int | None = None,
               topics: Iterable[str] | None = None) -> AnnRecall:
    """ANN-recall@k of an approximate run against the exact run of the same embeddings and metric.

    Args:
        approx: topic_id -> doc_id -> score of the approximate run.
        exact: topic_id -> doc_id -> score of the exact (brute-force) run.
        k: cutoff, >= 1.
        exact_depth: the depth the exact run was produced at. It must be at least
            k + 1, so that a tie across the k boundary can be seen; None skips
            the check (the caller vouches for the depth).
        topics: restrict to these topics (default: every topic of ``exact``).

    Returns:
        ``AnnRecall`` (macro, micro, boundary-tie counts, per-topic evidence).

    Raises:
        ValidationError: k < 1, or an exact run shallower than k + 1.

    Example:
        >>> r = ann_recall({"1": {"a": 1.0, "x": .5}}, {"1": {"a": 1.0, "b": .9, "c": .1}}, 2)
        >>> (r.name, r.macro, r.n_boundary_ties)
        ('ANN-recall@2', 0.5, 0)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValidationError(f"expected k >= 1 for {ANN_RECALL}@k, found {k!r}")
    if exact_depth is not None and exact_depth < k + 1:
        raise ValidationError(
            f"the exact run is {exact_depth} deep; {ann_recall_name(k)} needs it at least {k + 1} deep "
            "to see ties across the k boundary; build the exact reference deeper")
    wanted = set(exact) if topics is None else {str(t) for t in topics}
    rows: list[AnnRecallTopic] = []
    excluded: list[str] = []
    for topic_id in sorted(wanted, key=natural_key):
        e = exact.get(topic_id) or {}
        if not e:
            excluded.append(topic_id)
            continue
        rows.append(ann_recall_topic(topic_id, approx.get(topic_id) or {}, e, k))
    extra = sum(1 for t in approx if t not in exact)
    return AnnRecall(k, tuple(rows), tuple(excluded), extra)


@dataclass(frozen=True)
class SweepDiagnosis:
    """The reading of an ANN sweep, after the design note on vector-search recall (shared/seeds/004).

    Attributes:
        verdicts: one per setting, in the order given: ``index holds`` (ANN-recall
            >= target) or ``tune the index`` (below it).
        lost: per setting, semantic R@k of the exact run minus that of the
            approximate run (what the index costs in judged-relevant documents).
        representation_low: the exact run's R@k is below ``semantic_floor`` of
            its ceiling: the exact neighbours themselves miss relevant documents.
        lines: the diagnosis as sentences, for reports.
    """

    verdicts: tuple[str, ...]
    lost: tuple[float, ...]
    representation_low: bool
    lines: tuple[str, ...]


def diagnose_sweep(
    rows: Iterable[tuple[str, float, float]],
    exact_recall: float,
    exact_ceiling: float = 1.0,
    *,
    target: float = 0.95,
    semantic_floor: float = 0.5,
) -> SweepDiagnosis:
    """Which layer to fix, from ANN-recall and semantic recall of each setting.

    The rule (shared/seeds/004, "Separate ANN recall from semantic recall"):
    if ANN-recall falls while the exact run's semantic recall holds, tune the
    index (its beam, probes, graph degree or lists); if both the exact and the
    approximate runs return the wrong content, the index is not the problem:
    look at the embeddings, preprocessing, labels or the query.

    Args:
        rows: (setting label, ANN-recall@k macro, semantic R@k macro of the approximate run). Give
            ``AnnRecall.macro_with_ties`` so that tie-order swaps do not read as index errors.
        exact_recall: semantic R@k macro of the exact run of the same embeddings.
        exact_ceiling: the mean achievable R@k, mean of min(k, |R|)/|R| (1.0 if unknown).
        target: ANN-recall at or above which an index "holds" (inclusive).
        semantic_floor: the exact run's R@k / ceiling below which the
            representation is called the problem (inclusive: below, not at).

    Returns:
        ``SweepDiagnosis``.

    Example:
        >>> d = diagnose_sweep([("efSearch=8", 0.80, 0.50), ("efSearch=64", 0.99, 0.55)], 0.56)
        >>> d.verdicts
        ('tune the index', 'index holds')
    """
    rows = list(rows)
    verdicts = tuple("index holds" if ann >= target else "tune the index" for _, ann, _ in rows)
    lost = tuple(exact_recall - r for _, _, r in rows)
    share = exact_recall / exact_ceiling if exact_ceiling > 0 else math.nan
    low = bool(share < semantic_floor)
    lines: list[str] = []
    below = [label for (label, _, _), v in zip(rows, verdicts, strict=True) if v == "tune the index"]
    holds = [label for (label, _, _), v in zip(rows, verdicts, strict=True) if v == "index holds"]
    if below:
        worst = max(lost)
        lines.append(
            f"ANN-recall falls below {target:g} at {', '.join(below)} while the exact run's semantic recall stays "
            f"{exact_recall:.4f} (it does not depend on the index): tune the index there (raise the search beam or "
            f"probes, or the graph degree or lists); it costs up to {worst:+.4f} R@k against exact search.")
    if holds:
        lines.append(f"ANN-recall >= {target:g} at {', '.join(holds)}: the index returns (almost) the exact "
                     "neighbours there; recall lost beyond that is not the index's.")
    if low:
        lines.append(
            f"The exact run itself reaches only {share:.0%} of the achievable R@k ({exact_recall:.4f} of "
            f"{exact_ceiling:.4f}): both the exact and the approximate runs return the wrong content, which no "
            "index setting fixes; look at the embeddings, preprocessing, labels or the query.")
    else:
        lines.append(f"The exact run reaches {share:.0%} of the achievable R@k ({exact_recall:.4f} of "
                     f"{exact_ceiling:.4f}); the representation is not the first suspect.")
    lines.append("Exact neighbours are the oracle of the index only, never relevance judgments.")
    return SweepDiagnosis(verdicts, lost, low, tuple(lines))
