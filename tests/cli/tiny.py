"""A tiny project for CLI tests: 6 documents, 3 topics, reference qrels, two BM25 runs, an
imported run, a pool, a lead and an assessor with an assignment (built through ``main(argv)``)."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.cli import main

LEAD_TOKEN = "lead-token-123"
CORPUS = [
    ("d1", "laminar flow", "laminar boundary layer on a flat plate"),
    ("d2", "heat", "heat transfer in supersonic flow"),
    ("d3", "wedge", "shock waves at a wedge"),
    ("d4", "plates", "buckling of plates under load"),
    ("d5", "jets", "noise of supersonic jets"),
    ("d6", "cones", "pressure on cones in hypersonic flow"),
]
TOPICS = [("1", "laminar boundary layer"), ("2", "supersonic flow"), ("3", "plates under load")]
QRELS = "1 0 d1 2\n1 0 d2 0\n2 0 d2 1\n2 0 d5 3\n3 0 d4 2\n"


def build_project(folder: Path) -> Path:
    """Build the project under ``folder``; returns the store path (``folder/labels/wb.duckdb``)."""
    src = folder / "tiny"
    src.mkdir()
    (src / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n"
                                              for d, t, x in CORPUS))
    (src / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": x}) + "\n" for q, x in TOPICS))
    (src / "qrels.reference.txt").write_text(QRELS)
    db = folder / "labels" / "wb.duckdb"
    run_file = folder / "imported.trec"
    run_file.write_text("1 Q0 d1 1 2.0 imp\n1 Q0 d3 2 1.0 imp\n2 Q0 d5 1 3.0 imp\n3 Q0 d4 1 1.0 imp\n")
    steps = [
        ["ingest", str(src)],
        ["run", "bm25", "--collection", "tiny", "--name", "bm25", "--depth", "5"],
        ["run", "bm25", "--collection", "tiny", "--name", "bm25b", "--depth", "5", "--k1", "0.9"],
        ["run", "import", str(run_file), "--name", "imp", "--collection", "tiny"],
        ["pool", "build", "--depth", "3", "bm25"],
        ["users", "add", "lead", "--role", "lead", "--token", LEAD_TOKEN],
        ["users", "add", "ann", "--token", "ann-token-123", "--lead", "lead", "--lead-token", LEAD_TOKEN],
        ["assign", "tiny-pool-v1", "--assessors", "ann", "--lead", "lead", "--token", LEAD_TOKEN],
    ]
    for step in steps:
        assert main(["--db", str(db), "-q", *step]) == 0, step
    return db
