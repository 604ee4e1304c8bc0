"""The demo's retrieval-unit step: a chunked collection scored at chunk and document level side by side.

``units_step`` cuts the demo collection into ``size``-token passages (overlap
``overlap``), stores them as the chunk collection ``<collection>-p<size>``
(its chunk map part of the version), runs BM25 over the passages (run
``bm25-p<size>``, depth ``depth`` passages) and scores it against the full
reference judgments twice: at chunk level (the document judgments taken down
to chunks, each chunk inheriting its document's grade: ``--qrels-to-chunks``)
and at document level (each document at its best-ranked passage, before the
cut-off: ``--unit doc``), beside the document-level BM25 run. Equivalent
commands::

    workbench convert chunk cranfield --size 64 --overlap 16 --name cranfield-p64 --out out/cranfield-p64
    workbench ingest out/cranfield-p64
    workbench run bm25 --collection cranfield-p64 --name bm25-p64 --depth 500
    workbench score bm25-p64 --qrels cranfield-reference --unit chunk --unit doc --qrels-to-chunks

Every step reuses what is stored, so the step is idempotent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.errors import UnknownNameError

if TYPE_CHECKING:
    from workbench.scoring.evaluate import Evaluation
    from workbench.services.evaluation.units import UnitReport
    from workbench.store import Store


@dataclass(frozen=True)
class UnitsDemo:
    """What ``units_step`` made and measured.

    Attributes:
        collection: the document collection.
        chunk_collection: the chunk collection's name.
        size, overlap: the chunking (tokens).
        n_documents, n_chunks: documents chunked, chunks made.
        chunk_run: the BM25 run over the chunks.
        doc_run: the document-level BM25 run it is compared with.
        qrels: the qrels version scored against.
        report: the chunk and document views of the chunk run.
        doc_evaluation: the document run's evaluation on the same qrels.
        commands: the CLI commands that reproduce the table.
    """

    collection: str
    chunk_collection: str
    size: int
    overlap: int
    n_documents: int
    n_chunks: int
    chunk_run: str
    doc_run: str
    qrels: str
    report: UnitReport
    doc_evaluation: Evaluation
    commands: tuple[str, ...]


def units_step(
    store: Store,
    collection: str,
    doc_run: str,
    qrels: str,
    *,
    size: int = 64,
    overlap: int = 16,
    depth: int = 500,
    cutoffs: tuple[int, ...] = (5, 10, 20, 50, 100),
    say: Callable[[str], None] = lambda _m: None,
) -> UnitsDemo:
    """Chunk ``collection``, run BM25 over the chunks and score it at chunk and document level.

    Raises:
        WorkbenchError: the collection, the document run or the qrels are missing.
    """
    from workbench.scoring.evaluate import Evaluator
    from workbench.services.collections.chunking import chunk_collection, load_source
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest, UnitOptions
    from workbench.services.evaluation.units import score_units
    from workbench.services.runs.pooling import make_bm25_run
    from workbench.store.units import ChunkSource

    name = f"{collection[:56]}-p{size}"
    src = load_source(collection, lambda: store)
    docs, cmap = chunk_collection(src, size=size, overlap=overlap, unit="tokens")
    chunk_meta = {c.chunk_id: src.doc_metadata[c.doc_id] for c in cmap.spans.values() if src.doc_metadata.get(c.doc_id)}
    ingested = store.collections.ingest_collection(
        name, docs, src.topics, source=f"workbench convert chunk {collection} --size {size} --overlap {overlap}",
        description=f"{size}-token passages of {collection}", metadata=chunk_meta, topic_metadata=src.topic_metadata,
        chunk_map=cmap, chunk_source=ChunkSource(collection, src.version, "tokens", size, overlap))
    say(f"[units] chunk collection {name}: {len(cmap):,} chunks of {len(src.documents):,} documents ({ingested.status})")
    run = f"bm25-p{size}"
    try:
        store.runs.get_run_info(run)
        say(f"run {run}: already stored, reused")
    except UnknownNameError:
        make_bm25_run(store, name, run, depth=depth, say=say,
                      description=f"BM25 (k1=1.2, b=0.75) over {size}-token passages of {collection}")
    measures = [f"R@{k}" for k in cutoffs] + ["nDCG@10", "P@10"]
    opener = lambda: store  # noqa: E731 - the store is already open
    report = score_units(ScoreRequest((run,), qrels, measures=tuple(measures), missing="zero",
                                      units=UnitOptions(units=("chunk", "doc"), qrels_to_chunks=True)),
                         ScoreEnv(opener))
    doc_eval = Evaluator(store.qrels.get_qrels(qrels), measures, missing="zero").evaluate(store.runs.get_run(doc_run),
                                                                                    run_name=doc_run)
    commands = (
        f"workbench convert chunk {collection} --size {size} --overlap {overlap} --name {name} --out out/{name}",
        f"workbench ingest out/{name}",
        f"workbench run bm25 --collection {name} --name {run} --depth {depth}",
        f"workbench score {run} --qrels {qrels} --unit chunk --unit doc --qrels-to-chunks --missing zero",
    )
    return UnitsDemo(collection, name, size, overlap, len(src.documents), len(cmap), run, doc_run, qrels, report,
                     doc_eval, commands)
