"""Rendering of the miss list of one run (``workbench misses``): the judged-relevant documents it did not return within k."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench import jsonout
from workbench.scoring.results import RelevantDoc

if TYPE_CHECKING:
    pass
from workbench.reports.format import _delimited, check_format, table
from workbench.reports.scores import _header_lines


def render_misses(header: Mapping[str, Any], run_name: str, misses: Sequence[RelevantDoc], k: int,
                  fmt: str = "table") -> str:
    """Render the relevant documents a run missed within k (with the rank beyond k, or none).

    Raises:
        ValidationError: unknown format.
    """
    f = check_format(fmt)
    rows = [{"run": run_name, "topic_id": d.topic_id, "doc_id": d.doc_id, "grade": d.grade, "rank": d.rank, "k": k}
            for d in misses]
    if f == "json":
        return jsonout.dumps({"header": dict(header), "k": k, "run": run_name, "misses": rows}, indent=2,
                          ensure_ascii=False) + "\n"
    if f == "jsonl":
        return "".join(jsonout.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if f in ("csv", "tsv"):
        return _delimited(rows, "," if f == "csv" else "\t", ["run", "topic_id", "doc_id", "grade", "rank", "k"])
    lines = _header_lines(header, [])
    n_topics = len({d.topic_id for d in misses})
    beyond = sum(1 for d in misses if d.rank is not None)
    lines.append("")
    lines.append(f"run {run_name}: {len(misses):,} relevant documents not in the top {k} "
                 f"({n_topics:,} topics; {beyond:,} found deeper, {len(misses) - beyond:,} not retrieved)")
    lines.append(table(["topic", "doc_id", "grade", "rank"],
                       [[d.topic_id, d.doc_id, str(d.grade), "-" if d.rank is None else str(d.rank)] for d in misses]))
    return "\n".join(lines) + "\n"
