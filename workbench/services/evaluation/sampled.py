"""Scoring against a sample's qrels version: the judged sample as the estimators read it, checked against its design.

A qrels version published from a sample pool (``workbench pool sample``)
records its design. The restrict step asks ``load_sample`` for it: the
sampled documents with their strata and inclusion probabilities, the strata
counts and the frame are read from the store (``store.pools.read_sample``)
and **checked**: every inclusion probability must be ``n_h / N_h`` of its
stratum, and every ``n_h`` what the design draws from ``N_h``
(``pooling.sample.sample_problems``); a sample that disagrees (the store was
changed outside the workbench) is refused before anything is scored. The
qrels version's grades become the judged sample (``scoring.estimate.SampledQrels``):

* an entry for a document outside the sample is **ignored** by the estimators
  (it was not drawn at random; the pooled values still count it) and counted;
* a sampled document without an entry (the sample judged partially) is
  **missing at random within its stratum**: the judged documents of the
  stratum stand for it (inclusion probability ``judged / N_h``), never read as
  non-relevant; a non-empty stratum with no judged document leaves its topic
  undefined (listed, left out of the means).

The evaluate step then estimates each run (``scoring.estimate_run``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.errors import StoreError
from workbench.ranking import natural_key

if TYPE_CHECKING:
    from pooling.sample import Sample, SampleDesign
    from workbench.scoring.columns import RankedRun
    from workbench.scoring.estimate import SampledQrels
    from workbench.scoring.estimate_run import RunEstimate
    from workbench.scoring.results import Evaluation
    from workbench.store import Store
    from workbench.store.pools import PoolInfo

ESTIMATOR = ("Horvitz-Thompson over the stratified sample: R̂ = sum of 1/pi over judged relevant documents, "
             "R̂@k = R̂_k / R̂ (macro: mean of per-topic ratios; micro: combined ratio sum R̂_k / sum R̂), "
             "P̂@k = R̂_k / k; xinfAP and infNDCG (Yilmaz, Kanoulas & Aslam 2008); infAP as trec_eval's on qrels "
             "marking the frame's unjudged documents -1; 95% intervals from the design variance (stratified, "
             "linearised ratio; topics fixed), none for xinfAP, infNDCG, infAP; R̂@k (EB, model-based): the "
             "empirical-Bayes macro, each stratum's per-topic relevance rate shrunk toward all topics' "
             "(beta-binomial), posterior mean of the mean of per-topic ratios, 95% interval by a bootstrap of the "
             "model over topics")
"""The estimator, as the report's header names it (``docs/sampling.md`` gives the formulas)."""


@dataclass(frozen=True)
class SampleScope:
    """The judged sample a qrels version holds, ready for the estimators.

    Attributes:
        qrels_version: the qrels version.
        pool_version: the sample pool it was published from.
        design: the design the sample was drawn under (rates in force).
        runs: the runs whose depth-D pool is the frame.
        sq: what the estimators read.
        topics: the sampled topics (natural order).
        n_sampled: documents drawn.
        n_judged: drawn documents with a grade in the qrels version.
        unjudged: drawn documents without one (missing at random within their stratum).
        unjudged_topics: topics with such documents.
        ignored: qrels entries of documents outside the sample (not used by the estimators).
    """

    qrels_version: str
    pool_version: str
    design: SampleDesign
    runs: tuple[str, ...]
    sq: SampledQrels
    topics: tuple[str, ...]
    n_sampled: int
    n_judged: int
    unjudged: int
    unjudged_topics: int
    ignored: int

    def header(self) -> dict[str, Any]:
        """The report header's ``sample`` block (JSON-ready)."""
        return {"pool_version": self.pool_version, "design": self.design.as_dict(),
                "design_text": self.design.describe(), "runs": list(self.runs), "estimator": ESTIMATOR,
                "topics": len(self.topics), "sampled": self.n_sampled, "judged": self.n_judged,
                "unjudged": self.unjudged, "unjudged_topics": self.unjudged_topics,
                "ignored_entries": self.ignored}


def load_sample(store: Store, qrels_version: str,
                judged: Callable[[], Mapping[str, Mapping[str, int]]]) -> SampleScope | None:
    """The judged sample of a qrels version published from a sample pool; None for any other version.

    Args:
        store: the store.
        qrels_version: the qrels version.
        judged: returns its entries (topic_id -> doc_id -> grade), as the load step read them (hash checked);
            called for a sample only.

    Raises:
        StoreError: the sample's inclusion probabilities or counts disagree with its design, the
            version's recorded design is not its pool's, the recorded design or the pool's params are not
            JSON, or the sample's rows no longer hash to the pool's content hash (a frame or sampled row
            deleted, a sampled doc id swapped): the store was changed outside the workbench.
    """
    from pooling.sample import sample_problems
    from workbench.scoring.estimate import SampledQrels

    info = store.qrels.get_qrels_info(qrels_version)
    if not info.is_sample:
        return None
    try:
        recorded = json.loads(info.sample_design)
    except ValueError as e:
        recorded = e
    if not isinstance(recorded, dict):
        raise StoreError(f"{store.path}: qrels version {qrels_version!r} records a sample design that is not a JSON "
                         f"object ({_why(recorded)}): the store was changed outside the workbench. Nothing was "
                         "scored; restore the store from a backup, or publish the sample's judgments again.")
    pool_version = str(recorded.get("pool_version") or info.pool_version)
    try:
        pool, sample = store.pools.read_sample(pool_version)
    except ValueError as e:  # json.JSONDecodeError: pools.params or pools.runs is not JSON
        raise StoreError(f"{store.path}: sample pool {pool_version!r}: its stored params or runs are not JSON "
                         f"({_why(e)}): the store was changed outside the workbench. Nothing was scored; restore the "
                         "store from a backup, or draw and judge a new sample.") from None
    if recorded.get("design") != pool.params.get("design"):
        raise StoreError(f"{store.path}: qrels version {qrels_version!r} records a design that is not its sample "
                         f"pool {pool_version!r}'s: the store was changed outside the workbench. Nothing was scored.")
    problems = sample_problems(sample.design, sample.docs, sample.counts)
    if problems:
        raise StoreError(
            f"{store.path}: sample pool {pool_version!r}: the stored inclusion probabilities do not match its "
            f"design ({'; '.join(problems)}): the store was changed outside the workbench. Nothing was scored; "
            "restore the store from a backup, or draw and judge a new sample.")
    _check_content_hash(store, pool, sample)  # last: the checks above name what changed, this only that it did
    drawn: dict[str, dict[str, str]] = {}
    for d in sample.docs:
        drawn.setdefault(d.topic_id, {})[d.doc_id] = d.stratum
    entries = judged()
    graded = {t: {d: int(g) for d, g in entries.get(t, {}).items() if d in docs} for t, docs in drawn.items()}
    n_judged = sum(len(v) for v in graded.values())
    ignored = sum(len(v) for v in entries.values()) - n_judged
    unjudged_topics = sum(1 for t, docs in drawn.items() if len(graded.get(t, {})) < len(docs))
    populations: dict[str, dict[str, int]] = {}
    for c in sample.counts:
        populations.setdefault(c.topic_id, {})[c.stratum] = c.population
    sq = SampledQrels(graded, sample.frame, populations, drawn, outside=sample.design.outside_rate > 0)
    return SampleScope(qrels_version, pool_version, sample.design, pool.runs, sq,
                       tuple(sorted(populations, key=natural_key)), len(sample.docs), n_judged,
                       len(sample.docs) - n_judged, unjudged_topics, ignored)


def _why(value: object) -> str:
    """What was found instead of JSON (an error's message, or the value's type), for the refusals above."""
    if isinstance(value, ValueError):
        return str(value)
    return f"found {type(value).__name__}"


def _check_content_hash(store: Store, pool: PoolInfo, sample: Sample) -> None:
    """Recompute the sample pool's content hash from its stored rows; refuse when it is not the recorded one.

    ``pooling.sample.sample_content_hash`` of the pool's entries and provenance (as a ``pooling.pool.Pool``)
    and of the stored sample (sampled documents, strata counts, frame): a row deleted from ``sample_frame``
    or ``sample_entries``, or a sampled document's id swapped, changes it, which ``sample_problems`` (counts
    and inclusion probabilities only) does not always see.

    Raises:
        StoreError: the hashes differ (the store was changed outside the workbench).
    """
    from pooling.pool import Pool
    from pooling.sample import sample_content_hash

    as_pool = Pool(pool.depth, pool.runs, tuple(store.pools.pool_entries(pool.pool_version)),
                   tuple(store.pools.pool_provenance(pool.pool_version)), pool.strategy, pool.params)
    found = sample_content_hash(as_pool.content_hash, sample)
    if found != pool.content_hash:
        raise StoreError(
            f"{store.path}: sample pool {pool.pool_version!r}: its stored rows (sampled documents, strata, frame, "
            f"entries) hash to {found[:12]}, but the pool records {pool.content_hash[:12]}: the store was changed "
            "outside the workbench. Nothing was scored; restore the store from a backup, or draw and judge a new "
            "sample.")


def estimate_ranked_run(rr: RankedRun, name: str, scope: SampleScope, topics: tuple[str, ...] | None, *,
                        recall_ks: tuple[int, ...], precision_ks: tuple[int, ...], ndcg_ks: tuple[int, ...],
                        rel: int, skip: frozenset[str] = frozenset()) -> RunEstimate:
    """One run's estimates (``scoring.estimate_run``) from its ranked lists.

    Args:
        rr: the run, canonically ranked.
        name: its name.
        scope: the judged sample.
        topics: the topics scored (a topic set, exclusions); None = every sampled topic.
        recall_ks, precision_ks, ndcg_ks: the cut-offs of R̂@k, P̂@k and infNDCG@k.
        rel: inclusive minimum grade of a relevant document.
        skip: topics left out (the missing-topic policy ``exclude``).
    """
    from workbench.scoring.columns import unpack_ids
    from workbench.scoring.estimate_run import estimate_run

    wanted = [t for t in (topics if topics is not None else scope.topics) if t not in skip]
    want = set(wanted)
    ranked: dict[str, list[str]] = {}
    for code, topic_id in enumerate(rr.topic_ids):
        if topic_id in want:
            lo, hi = int(rr.starts[code]), int(rr.starts[code + 1])
            ranked[topic_id] = unpack_ids(rr.doc_words[lo:hi]) if hi > lo else []
    return estimate_run(name, ranked, scope.sq, wanted, recall_ks=recall_ks, precision_ks=precision_ks,
                        ndcg_ks=ndcg_ks, rel=rel)


def sample_warnings(scope: SampleScope, *, filtered: bool = False) -> list[str]:
    """What a reader of the estimates should know: unjudged sampled documents, entries outside the sample,
    filters that do not apply to the estimates."""
    out = []
    if scope.unjudged:
        out.append(f"sample {scope.pool_version}: {scope.unjudged:,} of {scope.n_sampled:,} sampled documents are "
                   f"not judged ({scope.unjudged_topics:,} topic(s)): the estimates take them as missing at random "
                   "within their stratum (the judged ones stand for them), never as non-relevant; a topic with a "
                   "stratum that has no judged document is undefined and left out of the estimates (listed)")
    if scope.ignored:
        out.append(f"sample {scope.pool_version}: {scope.ignored:,} entries of qrels {scope.qrels_version} are "
                   "documents outside the sample: the pooled values count them, the estimates do not (they were "
                   "not drawn at random)")
    if filtered:
        out.append(f"sample {scope.pool_version}: the estimates are over every sampled document; the eligibility "
                   "filters restrict the pooled values only")
    return out


def with_pooled(est: RunEstimate, e: Evaluation) -> RunEstimate:
    """The run's estimates with the pooled (judged-only) values of the usual table beside them: R@k macro and
    micro beside R̂@k, P@k beside P̂@k, nDCG@k beside infNDCG@k (NaN where the report has no such measure)."""
    from workbench.scoring.measures import P, R, nDCG

    def pooled(name: str, aggregate: str) -> float:
        head, _, k = name.partition("@")
        cls = {"Rhat": R, "Phat": P, "infNDCG": nDCG}.get(head)
        if cls is None:
            return math.nan
        m = next((m for m in e.measures if type(m) is cls and m.cutoff == int(k) and not m.params()), None)
        if m is None:
            return math.nan
        a = e.aggregates[m]
        value = a.micro if aggregate == "micro" else a.macro
        return math.nan if value is None else float(value)

    return dataclasses.replace(est, values=tuple(dataclasses.replace(v, pooled=pooled(v.name, v.aggregate))
                                                 for v in est.values))
