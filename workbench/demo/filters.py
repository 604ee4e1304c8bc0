"""The demo's filtered scenario: an as-of-year filter per Cranfield topic, pre- versus post-filtered runs.

Each topic gets an eligibility filter over the real document metadata that
``convert cranfield`` derives from ``.B``: ``year <= Y or not has(year)``,
where ``Y`` is the publication year of the topic's most recent relevant
document (the year the question was asked "as of"; documents without a year
stay eligible, so no judged-relevant document becomes ineligible). Topics none
of whose relevant documents has a year get no filter. The filters are stored as
topic metadata ``filter_asof`` (``FILTER_KEY``), not ``filter``, so the rest of
the demo scores unfiltered.

Then BM25 and dense runs are made at K = 10 and K = 50 (depth K), each
pre-filtered (only eligible documents are ranked) and post-filtered (the top
K is retrieved, then the ineligible documents dropped), and scored with the
filters (relevant sets restricted to eligible documents) at R@K against the
full reference judgments. The demo's unfiltered depth-100 runs are scored the
same way, cut at K, to show the leak check. Post-filtering loses recall
whenever eligible relevant documents sit below rank K of the unfiltered list,
and returns fewer than K documents for most topics ("short").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.ranking import natural_key

if TYPE_CHECKING:
    from pooling.retrievers.dense import Encoder
    from workbench.store import Store

Say = Callable[[str], None]

FILTER_KEY = "filter_asof"
"""Topic metadata key of the demo's as-of filters (so the demo's other steps stay unfiltered)."""


def _quiet(_: str) -> None:
    pass


@dataclass(frozen=True)
class FilterDemoRow:
    """One run of the filtered scenario.

    Attributes:
        system: ``bm25`` or ``dense``.
        k: the cutoff K (the run's depth for filtered runs).
        mode: ``pre``, ``post`` or ``none`` (an unfiltered run cut at K).
        run: the stored run.
        recall: macro R@K over the eligible relevant documents.
        n_topics: topics averaged over (|R| > 0 after the filter).
        short: filtered topics with fewer than K results.
        leaks: ineligible documents within the top K, over all filtered topics.
        returned: mean number of documents returned per topic within K.
    """

    system: str
    k: int
    mode: str
    run: str
    recall: float
    n_topics: int
    short: int
    leaks: int
    returned: float


@dataclass
class FilterDemoReport:
    """The filtered scenario's numbers.

    Attributes:
        key: the topic metadata key of the filters.
        n_topics / n_filtered: topics of the collection / with a filter.
        eligible_share: mean share of the collection eligible per filtered topic.
        ineligible_gold: judged-relevant documents that are ineligible (0 by construction).
        examples: (topic_id, filter) of a few topics.
        rows: one per (system, K, mode).
    """

    key: str = FILTER_KEY
    n_topics: int = 0
    n_filtered: int = 0
    eligible_share: float = 0.0
    ineligible_gold: int = 0
    examples: list[tuple[str, str]] = field(default_factory=list)
    rows: list[FilterDemoRow] = field(default_factory=list)

    def row(self, system: str, k: int, mode: str) -> FilterDemoRow:
        """The row of one system, K and mode."""
        return next(r for r in self.rows if (r.system, r.k, r.mode) == (system, k, mode))


def as_of_filters(
    qrels: Mapping[str, Mapping[str, int]], years: Mapping[str, int]
) -> dict[str, str]:
    """topic_id -> ``year <= Y or not has(year)`` with Y the latest year of its relevant documents.

    Args:
        qrels: topic_id -> doc_id -> grade (grade >= 1 is relevant).
        years: doc_id -> publication year (documents without one absent).

    Returns:
        The filter text per topic that has a dated relevant document.

    Example:
        >>> as_of_filters({"1": {"a": 2, "b": 0, "c": 1}, "2": {"x": 1}}, {"a": 1950, "b": 1960, "c": 1955})
        {'1': 'year <= 1955 or not has(year)'}
    """
    out: dict[str, str] = {}
    for topic_id in sorted(qrels, key=natural_key):
        dated = [years[d] for d, g in qrels[topic_id].items() if g >= 1 and d in years]
        if dated:
            out[topic_id] = f"year <= {max(dated)} or not has(year)"
    return out


def filter_step(
    store: Store,
    collection: str,
    qrels_name: str,
    unfiltered_runs: Mapping[str, str],
    *,
    encoder: Encoder | None = None,
    model_path: Path | None = None,
    threads: int | None = None,
    say: Say = _quiet,
) -> FilterDemoReport | None:
    """The demo's step: ``run_filter_demo`` when the collection has ``year`` metadata (else None, said why)."""
    keys = store.metadata.document_metadata_keys(collection)
    if "year" not in keys or keys["year"].types.get("number", 0) == 0:
        say("filtered scenario skipped: the collection has no numeric 'year' document metadata")
        return None
    say("[filtered scenario] as-of-year filters per topic; pre- vs post-filtered runs at K = 10 and 50")
    return run_filter_demo(store, collection, qrels_name, unfiltered_runs=unfiltered_runs, encoder=encoder,
                           model_path=model_path, threads=threads, say=say)


def run_filter_demo(
    store: Store,
    collection: str,
    qrels_name: str,
    *,
    unfiltered_runs: Mapping[str, str],
    ks: Sequence[int] = (10, 50),
    encoder: Encoder | None = None,
    model_path: Path | None = None,
    threads: int | None = None,
    say: Say = _quiet,
) -> FilterDemoReport:
    """Set the as-of filters, make the pre/post runs, score them (idempotent: stored runs are reused).

    Args:
        store: the demo's store.
        collection: the collection (with ``year`` document metadata).
        qrels_name: the full reference qrels version.
        unfiltered_runs: system -> an unfiltered stored run of depth >= max(ks) (the leak check).
        ks: the cutoffs K.
        encoder, model_path, threads: the dense model (as the rest of the demo).
        say: progress lines.

    Returns:
        The ``FilterDemoReport``.
    """
    # One lease on the store for the whole step: its many small reads and writes reuse one
    # connection instead of opening the file for each (the store's nested leases).
    with store.connection("workbench demo: filtered scenario"):
        return _run_filter_demo(store, collection, qrels_name, unfiltered_runs, ks, encoder, model_path,
                                threads, say)


def _run_filter_demo(
    store: Store,
    collection: str,
    qrels_name: str,
    unfiltered_runs: Mapping[str, str],
    ks: Sequence[int],
    encoder: Encoder | None,
    model_path: Path | None,
    threads: int | None,
    say: Say,
) -> FilterDemoReport:
    from workbench.services.evaluation.pipeline import score
    from workbench.services.evaluation.request import Filtering, Output, ScoreEnv, ScoreRequest
    from workbench.services.runs.pooling import DenseRunRequest, make_bm25_run, make_dense_run
    from workbench.services.vectors.eligibility import collection_eligibility

    qrels = store.qrels.get_qrels(qrels_name)
    years: dict[str, int] = {}
    for d, m in store.metadata.document_metadata(collection).items():
        y = m.get("year")
        if isinstance(y, int) and not isinstance(y, bool):
            years[d] = y
    filters = as_of_filters(qrels, years)
    store.metadata.set_topic_metadata(collection, {t: {FILTER_KEY: f} for t, f in filters.items()},
                             source="workbench demo: as-of year of the latest relevant document")
    elig = collection_eligibility(store, collection, key=FILTER_KEY, require=True)
    assert elig is not None
    report = FilterDemoReport(n_topics=len(store.collections.get_topics(collection)), n_filtered=len(elig.eligible))
    report.eligible_share = (sum(len(s) for s in elig.eligible.values()) / (len(elig.eligible) * elig.n_documents)
                             if elig.eligible else 0.0)
    report.examples = [(t, filters[t]) for t in list(filters)[:3]]
    for k in ks:
        for system in ("bm25", "dense"):
            for mode in ("pre", "post"):
                name = f"{system}-asof-{mode}-k{k}"
                if not store.runs.has_run(name):
                    desc = f"{system}, {mode}-filtered by topic metadata {FILTER_KEY!r}, depth {k}"
                    if system == "bm25":
                        make_bm25_run(store, collection, name, depth=k, description=desc, filter_mode=mode,
                                      filter_key=FILTER_KEY, say=say)
                    else:
                        request = DenseRunRequest(collection, name, depth=k, description=desc,
                                                  model_path=model_path, threads=threads, filter_mode=mode,
                                                  filter_key=FILTER_KEY)
                        make_dense_run(store, request, encoder=encoder, say=say)
        names = [f"{s}-asof-{m}-k{k}" for s in ("bm25", "dense") for m in ("pre", "post")]
        names += [unfiltered_runs[s] for s in ("bm25", "dense")]
        scored = score(ScoreRequest(tuple(names), qrels_name, measures=(f"R@{k}",), missing="zero",
                                    filtering=Filtering("on", FILTER_KEY), output=Output(record=False)),
                       ScoreEnv(lambda: store))
        for run_ref, ev, el in zip(scored.runs, scored.evaluations, scored.eligibility, strict=True):
            assert el is not None
            system, _, mode_part = run_ref.name.partition("-asof-")
            mode = mode_part.split("-")[0] if mode_part else "none"
            system = system if mode_part else next(s for s, r in unfiltered_runs.items() if r == run_ref.name)
            agg = ev.aggregates[ev.measures[0]]
            returned = [min(k, ev.n_results.get(t, 0)) for t in ev.topics]
            report.ineligible_gold = el.restricted.n_ineligible_gold
            report.rows.append(FilterDemoRow(system, k, mode, run_ref.name, agg.macro, agg.n_topics, el.n_short,
                                             el.leaks.at_k.get(k, 0), sum(returned) / len(returned) if returned else 0.0))
    say(f"filtered scenario: {report.n_filtered} topics filtered by {FILTER_KEY!r}; "
        f"{len(report.rows)} runs scored with their filters")
    return report
