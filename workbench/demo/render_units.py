"""The demo's "Retrieval units" section: a passage run at chunk and at document level beside BM25 over documents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.reports.units import _f, measure_label

if TYPE_CHECKING:
    from workbench.demo.units import UnitsDemo


def units_demo_lines(demo: UnitsDemo) -> list[str]:
    """The demo's "Retrieval units" section (``demo.units.UnitsDemo``): chunk and document level side by side."""
    views = {v.unit: v for v in demo.report.views}
    chunk, doc = views["chunk"], views["doc"]
    ce, de = chunk.report.evaluations[0], doc.report.evaluations[0]
    lines = [f"Retrieval units: {demo.collection} in {demo.size}-token passages (overlap {demo.overlap}): "
             f"{demo.n_chunks:,} chunks of {demo.n_documents:,} documents (collection {demo.chunk_collection}, "
             "chunk map part of its version)",
             f"  {demo.chunk_run} = BM25 over the passages, scored against {demo.qrels} ({len(de.topics):,} topics) "
             f"at chunk and at document level; {demo.doc_run} = BM25 over the whole documents"]
    rows = [["chunk level", "", "document level", "", f"{demo.doc_run} (documents)", ""]]
    for m in chunk.report.measures:
        rows.append([measure_label(chunk, m), _f(ce.aggregates[m].macro), measure_label(doc, m),
                     _f(de.aggregates[m].macro), str(m), _f(demo.doc_evaluation.aggregates[m].macro)])
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    for r in rows:
        cells = [c.ljust(w) if i % 2 == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        lines.append("  " + "   |   ".join("  ".join(cells[i:i + 2]) for i in range(0, 6, 2)).rstrip())
    lines.append(f"  chunk level: {chunk.qrels_mapping}: the denominator counts chunks, so a relevant document cut into "
                 "six chunks is six relevant items")
    lines.append(f"  document level: {doc.run_mapping}; {doc.n_collapsed.get(demo.chunk_run, 0):,} chunk lines were a "
                 "second chunk of a document already placed")
    lines.append("  commands: " + " && ".join(demo.commands))
    return lines
