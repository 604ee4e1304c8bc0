"""Evidence the miss rules need beyond the score: a chunk run's chunks, and ranks beyond a run's depth.

Two feeds of ``services.evaluation.misses.categorised_misses``:

* **Chunk runs** (``chunk_run_view``): a run over a chunk collection (one with a
  chunk map, ``store.units.get_chunk_map``) has its misses taken at document level,
  the unit the qrels judge: each document at its best-ranked chunk, before the
  cutoff (``scoring.units.to_documents``). For a missed document, ``chunk_hits``
  gives every chunk of it with the rank the run gave it (None when the run did
  not return it; ``DocumentRanking.chunk_ranks``) and the analysed query terms
  the chunk's text holds, so the ``chunk boundary`` rule can see evidence split
  over chunks none of which reaches k.
* **Beyond the depth** (``rescore``): a BM25 run's retriever is rebuilt from its
  recorded parameters (backend, k1, b, variant, stop words, stemmer; the same
  pre/post filtering) over the run's collection version and the topics that
  need it are retrieved to the whole collection, so a relevant document the run
  cut off at its depth gets the rank it would have had. Other kinds of run
  (dense, fused, imported) are not re-scored: their retriever is not in the
  store (a dense model and its encodings could be, but re-encoding is not done
  here).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.errors import WorkbenchError
from workbench.scoring.misses import ChunkHit

if TYPE_CHECKING:
    from pooling.tokenize import Tokenizer
    from workbench.scoring.evaluate import RelevantDoc
    from workbench.scoring.units import ChunkMap, DocumentRanking
    from workbench.store import Store
    from workbench.types import RunInfo


@dataclass(frozen=True)
class ChunkRunView:
    """A chunk run as its misses see it.

    Attributes:
        chunk_collection: the run's (chunk) collection.
        chunk_version: its version.
        chunk_map: the version's chunk map.
        doc_collection: the collection the chunks were cut from ("" when not known).
        doc_version: its version ("" when not known).
        chunk_lists: topic_id -> chunk ids in rank order (the run as produced).
        documents: the run mapped to documents (best-ranked chunk per document).
    """

    chunk_collection: str
    chunk_version: str
    chunk_map: ChunkMap
    doc_collection: str
    doc_version: str
    chunk_lists: Mapping[str, Sequence[str]]
    documents: DocumentRanking


def chunk_run_view(store: Store, collection: str, version: str,
                   chunk_lists: Mapping[str, Sequence[str]]) -> ChunkRunView | None:
    """The chunk view of a run over ``collection``/``version``, or None when it is not a chunk collection.

    Raises:
        UnknownNameError: unknown collection or version.
        ValidationError: a run id that is not a chunk of the map.
    """
    from workbench.scoring.units import to_documents

    cmap = store.units.get_chunk_map(collection, version or None)
    if cmap is None:
        return None
    source = store.units.get_chunk_source(collection, version or None)
    doc_collection = source.source_collection if source is not None else ""
    doc_version = source.source_version if source is not None and source.source_collection else ""
    if doc_collection and not doc_version:
        doc_version = store.collections.latest_collection_version(doc_collection)
    return ChunkRunView(collection, version, cmap, doc_collection, doc_version, chunk_lists,
                        to_documents(chunk_lists, cmap))


def chunk_hits(store: Store, view: ChunkRunView, misses: Sequence[RelevantDoc], analyser: Tokenizer,
               query_terms: Mapping[str, Sequence[str]]) -> dict[tuple[str, str], tuple[ChunkHit, ...]]:
    """(topic_id, doc_id) -> every chunk of the missed document with its rank and the query terms it holds.

    Args:
        store: the store (the chunks' texts).
        view: the chunk run.
        misses: the document-level misses.
        analyser: the analyser of the chunks' text (the run's).
        query_terms: topic_id -> the topic's distinct analysed query terms.

    Returns:
        One entry per miss whose document has chunks in the map, chunks in
        document order (their start offset); a document the map does not know is absent.
    """
    wanted = {c.chunk_id for m in misses for c in view.chunk_map.chunks_of(m.doc_id)}
    texts = {c: d.content for c, d in store.collections.documents_by_id(view.chunk_collection, view.chunk_version,
                                                              wanted).items()}
    terms_of: dict[str, frozenset[str]] = {}
    ranks: dict[str, dict[str, int]] = {}
    out: dict[tuple[str, str], tuple[ChunkHit, ...]] = {}
    for m in misses:
        chunks = sorted(view.chunk_map.chunks_of(m.doc_id), key=lambda c: (c.start, c.end))
        if not chunks:
            continue
        if m.topic_id not in ranks:
            ranks[m.topic_id] = {c: r for r, c in enumerate(view.chunk_lists.get(m.topic_id, ()), 1)}
        q = set(query_terms.get(m.topic_id, ()))
        hits = []
        for c in chunks:
            if c.chunk_id not in terms_of:
                terms_of[c.chunk_id] = frozenset(analyser(texts.get(c.chunk_id, "")))
            hits.append(ChunkHit(c.chunk_id, ranks[m.topic_id].get(c.chunk_id), terms_of[c.chunk_id] & q))
        out[m.topic_id, m.doc_id] = tuple(hits)
    return out


@dataclass(frozen=True)
class Rescored:
    """Ranks of a run's retriever taken to the whole collection version.

    Attributes:
        ranks: topic_id -> id -> 1-based rank (ids at the run's unit: chunks for a chunk run).
        by: how, in words, e.g. ``bm25 (bm25s, k1=1.2, b=0.75, okapi) over 1,400 documents``.
        reproduces: topic_id -> True when the re-scored top-depth equals the stored run's list.
    """

    ranks: Mapping[str, Mapping[str, int]]
    by: str
    reproduces: Mapping[str, bool]


def rescore(store: Store, info: RunInfo, topics: Collection[str],
            stored_lists: Mapping[str, Sequence[str]]) -> Rescored | None:
    """Re-run a stored BM25 run's retriever over its collection version, to every document that matches.

    Args:
        store: the store (the run's collection version, its topics and, for a
            filtered run, the topics' filters).
        info: the stored run (kind ``bm25`` with its recorded parameters).
        topics: the topics to re-score (others are skipped).
        stored_lists: topic_id -> the stored run's ids in rank order (to check the re-run reproduces it).

    Returns:
        The ``Rescored`` ranks, or None when the run cannot be re-scored: not a
        BM25 run, parameters missing, or a retriever setting this version does not know.

    Source:
        BM25 retrieves every document sharing an analysed term with the query
        (``pooling.retrievers.bm25``); ranks by ``ranking.ranked`` (score desc, doc_id desc, trec_eval).
    """
    from pooling.retrievers.bm25 import Bm25Retriever
    from workbench.ranking import ranked
    from workbench.services.runs.pooling import collection_queries

    p = info.params
    if info.kind != "bm25" or not topics or any(key not in p for key in ("backend", "k1", "b")):
        return None
    try:
        retriever = Bm25Retriever(backend=str(p["backend"]), k1=float(p["k1"]), b=float(p["b"]),  # type: ignore[arg-type]
                                  variant=str(p.get("variant", "okapi")), stemmer=p.get("stemmer"),  # type: ignore[arg-type]
                                  stopwords=str(p.get("stopwords", "english")))
    except (WorkbenchError, TypeError, ValueError):
        return None
    documents = store.collections.get_documents(info.collection, info.collection_version or None)
    retriever.index({d: doc.content for d, doc in documents.items()})
    queries = {t: q for t, q in collection_queries(store.collections, info.collection).items() if t in set(topics)}
    eligible = None
    mode = "pre"
    f = p.get("filter")
    if isinstance(f, dict) and f.get("mode") in ("pre", "post"):
        from workbench.services.vectors.eligibility import collection_eligibility

        elig = collection_eligibility(store, info.collection, info.collection_version or None,
                                      key=str(f.get("key", "filter")), require=True)
        eligible, mode = (dict(elig.eligible) if elig is not None else None), str(f["mode"])
    result = retriever.retrieve(queries, max(len(documents), 1), eligible=eligible, filter_mode=mode)  # type: ignore[arg-type]
    ranks = {t: {sd.doc_id: sd.rank for sd in ranked(scores)} for t, scores in result.run.items()}
    reproduces = {}
    for t, r in ranks.items():
        top = sorted(r, key=r.__getitem__)[:info.depth]
        reproduces[t] = list(stored_lists.get(t, ())) == top
    by = (f"bm25 ({p['backend']}, k1={p['k1']}, b={p['b']}, {p.get('variant', 'okapi')}) over "
          f"{len(documents):,} documents")
    return Rescored(ranks, by, reproduces)


def deeper_ranks(rescored: Rescored, misses: Sequence[RelevantDoc],
                 view: ChunkRunView | None = None) -> dict[tuple[str, str], int]:
    """(topic_id, doc_id) -> the re-scored rank of each miss the retriever retrieves (a chunk run: best chunk's)."""
    out: dict[tuple[str, str], int] = {}
    for m in misses:
        r = rescored.ranks.get(m.topic_id, {})
        ids = [c.chunk_id for c in view.chunk_map.chunks_of(m.doc_id)] if view is not None else [m.doc_id]
        found = [r[i] for i in ids if i in r]
        if found:
            out[m.topic_id, m.doc_id] = min(found)
    return out
