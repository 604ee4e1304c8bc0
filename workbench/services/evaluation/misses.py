"""The categorised miss list: evidence from the store, causes from ``workbench.scoring.misses``.

``categorised_misses`` scores the run at R@k (``services.evaluation.pipeline.find_misses``),
gathers for every miss the evidence the store holds (is the document in the
run's collection version, is its text empty, its rank within the run's depth,
the analysed query and document terms) and lets the pure rules assign the
causes. When the score is filtered (topic filters, ``scoring.eligibility``),
the judged-relevant documents a topic's filter excludes, which filtered scoring
takes out of the relevant sets, are added back as misses (unless the run
returned them within k: those are leaks) and get ``filtered out`` with the
topic's filter; never dropped silently. The query and the documents are analysed with the run's own analyser
when it is a BM25 run (its stop words and stemmer, recorded in its params),
else with ``pooling.tokenize.Tokenizer()`` (Lucene's stop words, no stemming);
the analyser used is recorded with the list.

The list is kept per run, qrels version, k and threshold (``miss_lists``), under
a fingerprint of its evidence sources (run and qrels content hashes, collection
version, analyser, rules version): asking again reads the stored causes back
instead of redoing them. Lists are kept for stored runs against stored qrels
versions only (a file can change under the same name).

The lead's causes (``set_miss_causes``, append-only, each with a note) win over
the rules'; the latest cause a lead set on the same (topic, document) miss of
another run of the collection is offered as a suggestion, which a lead can
accept (``accept_suggestions``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.errors import ValidationError
from workbench.ranking import natural_key
from workbench.scoring.misses import (
    RULES_VERSION,
    Categorised,
    LeadCause,
    MissEvidence,
    MissList,
    categorise,
    check_cause,
    count,
    evidence_from_json,
    evidence_json,
    resolve,
    row_dict,
    with_ineligible,
)
from workbench.services.evaluation.pipeline import find_misses
from workbench.services.evaluation.refs import Progress, RunRef, StoreOpener
from workbench.services.evaluation.report import ScoreReport
from workbench.services.evaluation.request import Output, ScoreEnv, ScoreRequest

if TYPE_CHECKING:
    from pooling.tokenize import Tokenizer
    from workbench.scoring.evaluate import RelevantDoc
    from workbench.services.evaluation.miss_evidence import ChunkRunView
    from workbench.services.judging.assessments import Session
    from workbench.store import Store
    from workbench.store.misses import StoredMissEntry
    from workbench.types import RunInfo


@dataclass(frozen=True)
class MissReport:
    """A categorised miss list with the score report it came from.

    Attributes:
        score: the R@k score report (lineage header, warnings).
        misses: the categorised list.
        kept: the stored list id (None: not kept, e.g. a run file).
        reused: True when the causes were read back from a list stored earlier.
        collection: the collection whose documents and topics gave the evidence.
    """

    score: ScoreReport
    misses: MissList
    kept: int | None
    reused: bool
    collection: str

    def header(self) -> dict[str, object]:
        """The score report's lineage header plus the list's own lineage."""
        return {**self.score.header(), "miss_list": dict(self.misses.extra), "analyser": dict(self.misses.analyser)}


def run_analyser(kind: str, params: Mapping[str, Any]) -> Tokenizer:
    """The analyser a run's misses are examined with: a BM25 run's own, else ``Tokenizer()``.

    Raises:
        UnknownNameError: a BM25 run recorded a stop-word list or stemmer this version does not know.
    """
    from pooling.tokenize import Tokenizer

    if kind == "bm25" and "stopwords" in params:
        return Tokenizer(stopwords=str(params["stopwords"]), stemmer=params.get("stemmer")).validate()
    return Tokenizer()


def _distinct(tokens: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(tokens))


def _by_frequency(tokens: Sequence[str]) -> tuple[str, ...]:
    c = Counter(tokens)
    return tuple(sorted(c, key=lambda t: (-c[t], t)))


def gather_evidence(store: Store, collection: str, collection_version: str, misses: Sequence[RelevantDoc],
                    depth: int, analyser: Tokenizer, *, filters: Mapping[str, str] | None = None,
                    ineligible: Collection[tuple[str, str]] = (), doc_texts: Mapping[str, str] | None = None,
                    topics_collection: str | None = None) -> list[MissEvidence]:
    """The evidence the store holds for each miss, in input order.

    Args:
        store: the store.
        collection: the collection (its topics give the query text, ``Topic.query``).
        collection_version: the run's collection version (documents are looked up in it).
        misses: the run's misses (``Evaluation.misses``).
        depth: the run's depth.
        analyser: the analyser of query and document text.
        filters: topic_id -> the topic's filter (canonical text), for the filtered
            topics of the score (None or absent: the topic is unfiltered).
        ineligible: the (topic_id, doc_id) misses the topic's filter excludes.
        doc_texts: doc_id -> text, instead of the collection version's documents
            (a chunk run whose source collection is not in the store: its chunks' texts joined).
        topics_collection: the collection whose topics give the query text (default ``collection``).

    Raises:
        UnknownNameError: unknown collection or version.
    """
    from workbench.types import Document

    topics = store.collections.get_topics(topics_collection or collection)
    docs = (store.collections.documents_by_id(collection, collection_version, {m.doc_id for m in misses}) if doc_texts is None
            else {m.doc_id: Document(m.doc_id, "", doc_texts[m.doc_id]) for m in misses if m.doc_id in doc_texts})
    query_terms: dict[str, tuple[str, ...]] = {}
    doc_terms: dict[str, tuple[str, ...]] = {}
    out: list[MissEvidence] = []
    for m in misses:
        if m.topic_id not in query_terms:
            t = topics.get(m.topic_id)
            query_terms[m.topic_id] = _distinct(analyser(t.query)) if t is not None else ()
        doc = docs.get(m.doc_id)
        if doc is not None and m.doc_id not in doc_terms:
            doc_terms[m.doc_id] = _by_frequency(analyser(doc.content))
        filter_text = (filters or {}).get(m.topic_id)
        out.append(MissEvidence(
            m.topic_id, m.doc_id, m.grade, m.rank, depth, indexed=doc is not None,
            empty_text=doc is not None and not doc.content.strip(), query_terms=query_terms[m.topic_id],
            doc_terms=doc_terms.get(m.doc_id, ()),
            eligible=None if filter_text is None else (m.topic_id, m.doc_id) not in ineligible,
            filter_text=filter_text or "", collection_version=collection_version))
    return out


def _filtered_out(store: Store, report: ScoreReport, collection: str,
                  ) -> tuple[dict[str, str], set[tuple[str, str]], dict[str, object] | None]:
    """(topic_id -> filter text, the ineligible judged-relevant (topic, doc) pairs, the sources for the fingerprint).

    The ineligible gold is the filtered score's (``ScoreReport.eligibility``):
    judged-relevant documents a topic's filter excludes, which the scorer took
    out of the relevant sets. Kept: those of the evaluated topics, and of topics
    left out because every relevant document is ineligible (|R| = 0 after the
    filter); not those of topics the missing-topic policy dropped.
    """
    el = report.eligibility[0] if report.eligibility else None
    if el is None:
        return {}, set(), None
    from workbench.services.vectors.eligibility import collection_filters

    texts = {t: f.canonical for t, f in collection_filters(store.metadata, collection, el.filter_key).filters.items()}
    evaluated = set(report.evaluations[0].topics)
    restricted = el.restricted
    pairs: set[tuple[str, str]] = set()
    for topic_id, gold in restricted.ineligible_gold.items():
        no_eligible = not any(g >= max(restricted.rel, 0) for g in restricted.qrels.get(topic_id, {}).values())
        if topic_id in evaluated or no_eligible:
            pairs.update((topic_id, d) for d, _ in gold)
    return texts, pairs, {"filter_key": el.filter_key, "filters_sha256": el.filters_digest,
                          "collection_version": el.collection_version, "ineligible_gold": len(pairs)}


def _chunk_run_misses(run_ref: str, qrels_ref: str, k: int, view: ChunkRunView, given_run: RunRef, *,
                      open_store: StoreOpener, rel: int, missing: str, progress: Progress | None,
                      ) -> tuple[ScoreReport, list[RelevantDoc]]:
    """A chunk run's misses at document level: each document at its best-ranked chunk, before the cutoff.

    Chunk-level qrels are taken to documents (highest grade of a document's
    chunks, ``scoring.units.qrels_to_documents``); document qrels are used as given.
    """
    from workbench.scoring.columns import qrels_columns_from_mapping
    from workbench.scoring.units import qrels_to_documents, ranked_run_of
    from workbench.services.evaluation.load import load_qrels, qrels_mapping
    from workbench.services.evaluation.pipeline import score

    qref, qcols = load_qrels(qrels_ref, open_store)
    given = qrels_mapping(qcols)
    ids = {d for g in given.values() for d in g}
    if ids and all(d in view.chunk_map.spans for d in ids):
        qcols = qrels_columns_from_mapping(qrels_to_documents(given, view.chunk_map))
    mapped = dataclasses.replace(
        given_run, origin="mapping", collection=view.doc_collection, collection_version=view.doc_version,
        location=f"{given_run.location} (chunks -> documents, best-ranked chunk per document, before the cut-off)")
    doc_rr = ranked_run_of(view.documents.lists, given_run.name)
    report = score(ScoreRequest((run_ref,), qrels_ref, measures=(f"R@{k}",), rel=rel, missing=missing,
                                output=Output(record=False)),
                   ScoreEnv(open_store, progress, run_sources=(lambda: (mapped, doc_rr),), qrels=(qref, qcols)))
    report = dataclasses.replace(report, runs=(given_run,))  # the list belongs to the run as stored
    return report, report.evaluations[0].misses(k)


def _texts_from_chunks(store: Store, view: ChunkRunView) -> dict[str, str]:
    """doc_id -> its chunks' texts joined in offset order (a chunk collection without a known source)."""
    texts = store.collections.documents_by_id(view.chunk_collection, view.chunk_version, view.chunk_map.spans)
    out: dict[str, str] = {}
    for doc_id in view.chunk_map.doc_ids:
        chunks = sorted(view.chunk_map.chunks_of(doc_id), key=lambda c: (c.start, c.end))
        out[doc_id] = " ".join(texts[c.chunk_id].content for c in chunks if c.chunk_id in texts)
    return out


def _deeper_evidence(store: Store, info: RunInfo | None, evidence: Sequence[MissEvidence],
                     misses: Sequence[RelevantDoc], run_lists: Mapping[str, Sequence[str]], view: ChunkRunView | None,
                     analyser: Tokenizer, progress: Progress | None,
                     ) -> tuple[list[MissEvidence], dict[str, object] | None]:
    """The evidence with what the run itself says: results returned per topic, a chunk run's chunks, and the
    ranks beyond the depth of a re-scored BM25 run (``services.evaluation.miss_evidence``).

    Returns:
        (the evidence, in input order; what the re-scoring did, None when nothing was re-scored).
    """
    from workbench.services.evaluation.miss_evidence import chunk_hits, deeper_ranks, rescore

    say = progress or (lambda _m: None)
    out = [dataclasses.replace(e, n_returned=len(run_lists.get(e.topic_id, ()))) for e in evidence]
    if view is not None:
        hits = chunk_hits(store, view, misses, analyser, {e.topic_id: e.query_terms for e in out})
        out = [dataclasses.replace(e, chunks=hits.get((e.topic_id, e.doc_id), ())) for e in out]
    need = sorted({e.topic_id for e in out if e.rank is None and e.indexed and not e.empty_text
                   and e.eligible is not False and e.shared_terms})
    if info is None or not need:
        return out, None
    say(f"[starting] re-scoring run {info.name} ({info.kind}) to the whole collection for {len(need):,} topic(s): "
        "the ranks beyond its depth")
    rescored = rescore(store, info, need, run_lists)
    if rescored is None:
        say(f"[finished] run {info.name} cannot be re-scored (only a stored BM25 run's retriever is rebuilt)")
        return out, None
    wanted = set(need)
    deeper = deeper_ranks(rescored, [m for m in misses if m.topic_id in wanted], view)
    out = [dataclasses.replace(e, deeper_rank=deeper.get((e.topic_id, e.doc_id)), rescored_by=rescored.by)
           if e.topic_id in wanted and e.rank is None else e for e in out]
    not_reproduced = sorted((t for t, ok in rescored.reproduces.items() if not ok), key=natural_key)
    say(f"[finished] re-scored {len(need):,} topic(s) by {rescored.by}; the re-run reproduces the stored top "
        f"{info.depth} of {len(need) - len(not_reproduced):,} of them")
    return out, {"by": rescored.by, "topics": len(need), "reproduced": len(need) - len(not_reproduced),
                 "not_reproduced": not_reproduced}


def _fingerprint(parts: Mapping[str, object]) -> str:
    return hashlib.sha256(json.dumps(dict(parts), sort_keys=True).encode()).hexdigest()


def _categorised_from(entries: Sequence[StoredMissEntry]) -> list[Categorised]:
    return [Categorised(evidence_from_json(e.evidence), e.cause, e.detail) for e in entries]


def categorised_misses(
    run_ref: str,
    qrels_ref: str,
    k: int,
    *,
    open_store: StoreOpener | None,
    rel: int = 1,
    missing: str = "fail",
    trust_file_order: bool = False,
    progress: Progress | None = None,
    keep: bool = True,
    collection: str | None = None,
) -> MissReport:
    """Every miss of a run at cutoff k with its cause, the lead's decisions and inherited suggestions.

    Args:
        run_ref: a stored run name or a run file.
        qrels_ref: a stored qrels version or a qrels file.
        k: the cutoff, >= 1.
        open_store: the store (required: the evidence is in it).
        rel: minimum grade counted as relevant (inclusive).
        missing: missing-topic policy (as ``score``).
        trust_file_order: order a run file by its rank column.
        progress: receives progress messages.
        keep: store the list (stored run and qrels version only) or read it back when stored.
        collection: the collection a run file was produced over (default: the qrels').

    Returns:
        The ``MissReport``; its counts add up to the number of misses.

    Raises:
        ValidationError: no store, or no collection to examine a file run against.
        As ``services.evaluation.pipeline.score``.
    """
    if open_store is None:
        raise ValidationError("misses --categorise reads the documents and topics of the workbench store, and "
                              "there is none here: give --db, or ingest the collection first")
    if collection is not None:  # an unknown name is an error before anything is computed or stored
        open_store().collections.latest_collection_version(collection)
    from workbench.scoring.units import ranked_lists
    from workbench.services.evaluation.load import load_run
    from workbench.services.evaluation.miss_evidence import chunk_run_view

    store = open_store()
    given_run, rr = load_run(run_ref, open_store, trust_file_order=trust_file_order)
    run_lists = ranked_lists(rr)
    del rr
    info = store.runs.get_run_info(given_run.name) if given_run.origin == "stored" else None
    if info is not None and collection is not None and collection != info.collection:
        raise ValidationError(f"misses --categorise: run {info.name!r} is a run of collection "
                              f"{info.collection!r}, not {collection!r}; leave out --collection "
                              "(it names the collection of a run file)")
    if info is not None:
        view = chunk_run_view(store, info.collection, info.collection_version, run_lists)
    elif collection is not None:
        view = chunk_run_view(store, collection, store.collections.latest_collection_version(collection), run_lists)
    else:
        view = None
    if view is None:
        report, misses = find_misses(ScoreRequest((run_ref,), qrels_ref, rel=rel, missing=missing,
                                                  trust_file_order=trust_file_order), k, ScoreEnv(open_store, progress))
    else:
        report, misses = _chunk_run_misses(run_ref, qrels_ref, k, view, given_run, open_store=open_store, rel=rel,
                                           missing=missing, progress=progress)
    run, qrels = report.runs[0], report.qrels
    if info is not None:
        name, version, depth = info.collection, info.collection_version, info.depth
        analyser = run_analyser(info.kind, info.params)
    else:
        name = collection or qrels.collection
        if not name:
            raise ValidationError(f"misses --categorise: run file {run.location} names no collection; give "
                                  "--collection NAME (the collection it was produced over)")
        version = qrels.collection_version if collection is None and qrels.collection_version else \
            store.collections.latest_collection_version(name)
        depth = max((len(v) for v in run_lists.values()), default=0)
        analyser = run_analyser("", {})
    doc_collection, doc_version = name, version
    if view is not None:
        doc_collection, doc_version = view.doc_collection or name, view.doc_version or version
    filter_texts, ineligible, eligibility_sources = _filtered_out(store, report, doc_collection)
    unit = "doc (chunk run: each document at its best-ranked chunk)" if view is not None else "as produced"
    sources = {"rules": RULES_VERSION, "run": run.content_hash or run.location, "qrels": qrels.content_hash,
               "collection_version": version, "analyser": analyser.params, "depth": depth, "missing": missing,
               "eligibility": eligibility_sources, "unit": unit,
               "documents": [doc_collection, doc_version] if view is not None else None}
    fingerprint = _fingerprint(sources)
    keepable = keep and run.origin == "stored" and qrels.origin == "stored"
    stored = store.misses.find_miss_list(run.name, qrels.name, k, rel, fingerprint) if keepable else None
    leaks_within_k: int | None = None
    rescore_facts: dict[str, object] | None = None
    if stored is not None:
        categorised, list_id, reused = _categorised_from(stored.entries), stored.list_id, True
    else:
        leaks_within_k = 0
        if ineligible:
            gold = {t: tuple(g for g in gs if (t, g[0]) in ineligible)
                    for t, gs in report.eligibility[0].restricted.ineligible_gold.items()}  # type: ignore[union-attr]
            ranks = view.documents.lists if view is not None else run_lists
            misses, leaks_within_k = with_ineligible(
                misses, gold, {t: {d: i for i, d in enumerate(ranks.get(t, ()), 1)} for t in gold}, k)
        doc_texts = _texts_from_chunks(store, view) if view is not None and not view.doc_collection else None
        evidence = gather_evidence(store, doc_collection, doc_version, misses, depth, analyser, filters=filter_texts,
                                   ineligible=ineligible, doc_texts=doc_texts,
                                   topics_collection=doc_collection if view is None or view.doc_collection else name)
        evidence, rescore_facts = _deeper_evidence(store, info, evidence, misses, run_lists, view, analyser,
                                                   progress)
        categorised = [categorise(e, k) for e in evidence]
        list_id, reused = None, False
        if keepable:
            from workbench.store.misses import StoredMissEntry

            entries = [StoredMissEntry(c.evidence.topic_id, c.evidence.doc_id, c.evidence.grade, c.evidence.rank,
                                       c.cause, c.detail, evidence_json(c.evidence)) for c in categorised]
            list_id = store.misses.save_miss_list(run.name, qrels.name, k, rel, fingerprint, RULES_VERSION,
                                           {**sources, "collection": name}, entries)
    extra: dict[str, object] = {"list_id": list_id, "reused": reused, "rules_version": RULES_VERSION,
                                "eligibility": eligibility_sources, "ineligible_within_k": leaks_within_k,
                                "unit": unit, "rescored": rescore_facts,
                                "collection": name, "collection_version": version, "depth": depth,
                                "fingerprint": fingerprint}
    ml = MissList(run.name, qrels.name, k, (), count(()), analyser.params, extra)
    return with_decisions(store, MissReport(report, ml, list_id, reused, name), categorised)


def with_decisions(store: Store, report: MissReport,
                   categorised: Sequence[Categorised] | None = None) -> MissReport:
    """``report`` with the lead's current decisions and the inherited suggestions read again from the store.

    Args:
        store: the store.
        report: a miss report.
        categorised: the rules' causes (default: those of ``report``'s rows).
    """
    ml = report.misses
    cats = list(categorised) if categorised is not None else [r.categorised for r in ml.rows]
    stored_qrels = report.score.qrels.origin == "stored"
    decisions = store.misses.current_miss_causes(ml.run_name, ml.qrels_version) if stored_qrels else {}
    rows = resolve(cats, decisions, store.misses.inherited_miss_causes(report.collection, ml.run_name))
    return dataclasses.replace(report, misses=dataclasses.replace(ml, rows=tuple(rows), counts=count(rows)))


def _require_stored(report: MissReport) -> None:
    run, qrels = report.score.runs[0], report.score.qrels
    if run.origin != "stored" or qrels.origin != "stored":
        raise ValidationError("a miss cause is set on a stored run's misses against a stored qrels version; "
                              f"found run {run.origin} {run.name!r} and qrels {qrels.origin} {qrels.name!r} "
                              "(import the run with `workbench run import` first)")


def set_miss_causes(
    store: Store,
    session: Session,
    run_name: str,
    qrels_version: str,
    k: int,
    items: Sequence[tuple[str, str, str, str]],
    *,
    rel: int = 1,
    missing: str = "fail",
) -> tuple[list[int], MissReport]:
    """A lead sets (or overrides) the cause of misses, each with a note (append-only, one transaction).

    Args:
        store: the store.
        session: the signed-in lead.
        run_name: a stored run.
        qrels_version: a stored qrels version.
        k: the cutoff of the miss list the items belong to.
        items: (topic_id, doc_id, cause, note) each; the pair must be a miss of the list.
        rel, missing: as ``categorised_misses``.

    Returns:
        (the decision ids, the list after the change).

    Raises:
        PermissionDeniedError: not a lead.
        ValidationError: an item that is not a miss of the list, an empty note, a file run.
        UnknownNameError: an unknown cause (the message lists them).
    """
    from workbench.errors import PermissionDeniedError

    if not session.is_lead:  # checked again in the store's transaction
        raise PermissionDeniedError(f"set a miss cause: user {session.user!r} has role {session.role!r}, "
                                    "expected 'lead'")
    for topic_id, doc_id, cause, note in items:  # the cheap checks before the list is computed
        check_cause(cause)
        if not note.strip():
            raise ValidationError(f"topic {topic_id} document {doc_id}: a miss cause needs a note saying why "
                                  "(--note)")
    # The items are checked against the list computed WITHOUT keeping it: a refused item stores nothing
    # (not even the list); the list is kept only once every item is a miss of it.
    probe = categorised_misses(run_name, qrels_version, k, open_store=lambda: store, rel=rel, missing=missing,
                               keep=False)
    _require_stored(probe)
    known = {(r.evidence.topic_id, r.evidence.doc_id) for r in probe.misses.rows}
    decisions = []
    for topic_id, doc_id, cause, note in items:
        if (topic_id, doc_id) not in known:
            raise ValidationError(f"topic {topic_id} document {doc_id} is not a miss of run {run_name} at "
                                  f"k = {k} against {qrels_version} (`workbench misses {run_name} --qrels "
                                  f"{qrels_version} --k {k} --categorise` lists them)")
        decisions.append(LeadCause(topic_id, doc_id, check_cause(cause), note, session.user, run_name,
                                   qrels_version))
    before = categorised_misses(run_name, qrels_version, k, open_store=lambda: store, rel=rel, missing=missing)
    ids = store.misses.record_miss_causes(before.collection, decisions)
    return ids, with_decisions(store, before)


def accept_suggestions(
    store: Store,
    session: Session,
    run_name: str,
    qrels_version: str,
    k: int,
    *,
    rel: int = 1,
    missing: str = "fail",
) -> tuple[list[int], MissReport]:
    """Accept every cause inherited from another run's identical miss as this run's (the note names the source).

    Returns:
        (the decision ids, the list after the change); no ids when there was no suggestion.

    Raises:
        As ``set_miss_causes``.
    """
    from workbench.errors import PermissionDeniedError

    if not session.is_lead:  # before the list is computed and kept
        raise PermissionDeniedError(f"accept miss causes: user {session.user!r} has role {session.role!r}, "
                                    "expected 'lead'")
    before = categorised_misses(run_name, qrels_version, k, open_store=lambda: store, rel=rel, missing=missing)
    _require_stored(before)
    items = [(r.evidence.topic_id, r.evidence.doc_id, s.cause,
              f"accepted from run {s.run_name} ({s.qrels_version}, {s.lead}): {s.note}")
             for r in before.misses.rows if (s := r.suggestion) is not None]
    if not items:
        return [], before
    decisions = [LeadCause(t, d, check_cause(c), note, session.user, run_name, qrels_version)
                 for t, d, c, note in items]
    ids = store.misses.record_miss_causes(before.collection, decisions)
    return ids, with_decisions(store, before)


def scoreboard_misses(
    run_names: Sequence[str],
    qrels_version: str,
    k: int,
    *,
    open_store: StoreOpener,
    missing: str = "exclude",
) -> list[MissReport]:
    """The categorised miss list of each run at k against a stored qrels version (the Scoreboard's section).

    Raises:
        As ``categorised_misses``.
    """
    return [categorised_misses(r, qrels_version, k, open_store=open_store, missing=missing) for r in run_names]


def cause_count_rows(reports: Sequence[MissReport]) -> list[dict[str, object]]:
    """One row per run: the misses per cause (precedence order), total, set by a lead, residue, closed."""
    from workbench.scoring.misses import CAUSES

    rows: list[dict[str, object]] = []
    for r in reports:
        c = r.misses.counts
        rows.append({"run": r.misses.run_name, **{cause: c.per_cause[cause] for cause in CAUSES},
                     "total": c.total, "set by lead": c.by_lead, "residue": c.residue,
                     "closed": "yes" if c.closed else "no"})
    return rows


def miss_rows(report: MissReport, cause: str | None = None) -> list[dict[str, object]]:
    """The misses of one run (only those of effective ``cause`` when given) as flat records.

    Raises:
        UnknownNameError: an unknown cause.
    """
    wanted = check_cause(cause) if cause is not None else None
    ml = report.misses
    return [row_dict(ml.run_name, ml.k, r) for r in ml.rows if wanted is None or r.cause == wanted]
