"""`workbench run ...` and `workbench pool ...` end to end through `main(argv)` on the Cranfield sample.

The dense model is replaced by a tiny stub encoder (the real MiniLM is covered in
tests/pooling/test_dense.py); everything else is the real CLI over a temporary store.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.ranking import ranked_ids
from workbench.store import Store

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_corpus" / "cranfield"


class _Stub:
    """Hashed bag of words (64 dims), normalised; stands in for MiniLM."""

    model_key = "stub@sha256:cli"

    def __init__(self, *args, **kwargs) -> None:
        pass

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(token.encode()).hexdigest(), 16) % 64] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A store with the sample corpus and three runs (bm25, dense stub, RRF hybrid)."""
    mp = pytest.MonkeyPatch()
    mp.setattr("pooling.retrievers.dense.SentenceTransformerEncoder", _Stub)
    db = tmp_path_factory.mktemp("cli") / "wb.duckdb"
    assert main(["--db", str(db), "-q", "ingest", str(SAMPLE)]) == 0
    assert main(["--db", str(db), "run", "bm25", "--collection", "cranfield", "--name", "bm25"]) == 0
    assert main(["--db", str(db), "run", "dense", "--collection", "cranfield", "--name", "dense"]) == 0
    assert main(["--db", str(db), "run", "fuse", "bm25", "dense", "--name", "hybrid"]) == 0
    yield db
    mp.undo()


def test_runs_are_stored_with_kind_params_depth_and_statuses(project, capsys):
    code, out, err = run(capsys, "--db", project, "run", "list", "--format", "jsonl")
    assert code == 0, err
    rows = {r["name"]: r for r in map(json.loads, out.splitlines())}
    assert set(rows) == {"bm25", "dense", "hybrid"}
    assert [rows[n]["kind"] for n in ("bm25", "dense", "hybrid")] == ["bm25", "dense", "fusion"]
    assert all(rows[n]["depth"] == 100 and rows[n]["ok"] == 225 and rows[n]["error"] == 0 for n in rows)
    assert json.loads(rows["bm25"]["params"])["k1"] == 1.2
    assert json.loads(rows["hybrid"]["params"]) == {"method": "rrf", "k": 60.0, "depth": None,
                                                     "runs": ["bm25", "dense"]}
    store = Store(project)
    assert max(len(docs) for docs in store.runs.get_run("bm25").values()) == 100
    assert all(len(docs) == 100 for docs in store.runs.get_run("dense").values())  # cosine ranks every document
    assert rows["bm25"]["entries"] == sum(len(d) for d in store.runs.get_run("bm25").values())


def test_pool_build_is_stored_with_provenance_and_rerunning_gives_the_identical_pool(project, capsys):
    code, out, err = run(capsys, "--db", project, "pool", "build", "bm25", "dense", "hybrid", "--depth", "20")
    assert code == 0, err
    assert out.startswith("pool cranfield-pool-v1 stored:")
    store = Store(project)
    info = store.pools.get_pool("cranfield-pool-v1")
    assert (info.depth, info.runs, info.n_topics) == (20, ("bm25", "dense", "hybrid"), 225)
    expected: dict[str, set[str]] = {}
    for name in ("bm25", "dense", "hybrid"):
        for topic_id, scores in store.runs.get_run(name).items():
            expected.setdefault(topic_id, set()).update(ranked_ids(scores, 20))
    assert store.pools.pool_documents("cranfield-pool-v1") == expected
    prov = store.pools.pool_provenance("cranfield-pool-v1")
    assert {(c.topic_id, c.doc_id) for c in prov} == {(t, d) for t, ds in expected.items() for d in ds}
    assert all(1 <= c.rank <= 20 for c in prov)
    code, out, err = run(capsys, "--db", project, "pool", "build", "bm25", "dense", "hybrid", "--depth", "20")
    assert code == 0 and "unchanged (identical pool exists)" in out and info.content_hash[:12] in out
    code, out, err = run(capsys, "--db", project, "pool", "build", "hybrid", "bm25", "dense", "--depth", "20",
                         "--name", "again")
    assert code == 0
    assert store.pools.get_pool("again").content_hash == info.content_hash
    assert store.pools.pool_entries("again") == store.pools.pool_entries("cranfield-pool-v1")


def test_extending_with_a_fourth_run_stores_exactly_its_novel_documents(project, capsys):
    code, out, err = run(capsys, "--db", project, "run", "bm25", "--collection", "cranfield", "--name", "bm25-k09",
                         "--k1", "0.9", "--b", "0.4", "--stemmer", "english")
    assert code == 0, err
    store = Store(project)
    parent = store.pools.latest_pool("cranfield").pool_version
    pooled = store.pools.pool_documents(parent)
    top = {t: set(ranked_ids(s, 20)) for t, s in store.runs.get_run("bm25-k09").items()}
    novel = {t: docs - pooled.get(t, set()) for t, docs in top.items()}
    # Two root pools (cranfield-pool-v1 and "again") are two lineages: --from says which (issue 9).
    code, out, err = run(capsys, "--db", project, "pool", "extend", "bm25-k09", "--format", "tsv")
    assert code == 1 and "has 2 pool lineages" in err and "--from" in err
    code, out, err = run(capsys, "--db", project, "pool", "extend", "bm25-k09", "--format", "tsv", "--from", parent)
    assert code == 0, err
    child = store.pools.latest_pool("cranfield")
    assert child.parent_version == parent and child.depth == 20 and child.runs == ("bm25-k09",)
    assert store.pools.pool_documents(child.pool_version, with_ancestors=False) == {t: d for t, d in novel.items() if d}
    lines = [line.split("\t") for line in out.splitlines()]
    assert lines[0] == ["topic", "bm25-k09", "new_in_pool"]
    per_topic = {row[0]: int(row[1]) for row in lines[1:] if row[0] not in ("total", "unique")}
    assert per_topic == {t: len(d) for t, d in novel.items()}
    assert lines[-2][:2] == ["total", str(sum(len(d) for d in novel.values()))]
    assert f"child of {parent}" in err


def test_stats_list_show_and_export(project, capsys, tmp_path):
    code, out, err = run(capsys, "--db", project, "pool", "stats", "cranfield-pool-v1", "--table", "overlap",
                         "--format", "tsv")
    assert code == 0, err
    header, *rows = [line.split("\t") for line in out.splitlines()]
    assert header == ["run", "bm25", "dense", "hybrid"]
    matrix = {r[0]: dict(zip(header[1:], map(int, r[1:]), strict=True)) for r in rows}
    assert matrix["bm25"]["dense"] == matrix["dense"]["bm25"]
    assert matrix["bm25"]["bm25"] == 225 * 20
    code, out, _ = run(capsys, "--db", project, "pool", "stats", "cranfield-pool-v1", "--format", "jsonl")
    runs = {r["run"]: r for r in map(json.loads, out.splitlines())}
    assert runs["bm25"]["contributed"] == 4500 and runs["hybrid"]["unique"] >= 0
    code, out, _ = run(capsys, "--db", project, "pool", "list", "--format", "tsv")
    assert "cranfield-pool-v1\tcranfield\t\t20\t225" in out
    code, out, _ = run(capsys, "--db", project, "pool", "show", "cranfield-pool-v1", "--topic", "1",
                       "--format", "tsv")
    first = out.splitlines()[1].split("\t")
    assert first[0] == "1" and first[1] == "1" and ":" in first[-1]
    code, out, _ = run(capsys, "--db", project, "run", "export", "bm25")
    n_entries = sum(len(d) for d in Store(project).runs.get_run("bm25").values())
    assert code == 0 and out.splitlines()[0].split()[-1] == "bm25" and len(out.splitlines()) == n_entries
    path = tmp_path / "bm25.trec"
    path.write_text(out)
    code, out, err = run(capsys, "--db", project, "run", "import", path, "--name", "bm25-copy", "--collection",
                         "cranfield", "--description", "round trip")
    assert code == 0, err
    store = Store(project)
    assert store.runs.get_run("bm25-copy") == store.runs.get_run("bm25")
    code, out, _ = run(capsys, "--db", project, "run", "show", "bm25-copy", "--format", "tsv")
    assert out.splitlines()[1].split("\t")[1] == "ok"


def test_user_errors_are_one_line_and_exit_1_bad_option_values_2(project, capsys):
    code, out, err = run(capsys, "--db", project, "pool", "build", "bm25", "nope")
    assert code == 1 and err.startswith("workbench: error: unknown run 'nope'") and "Traceback" not in err
    code, out, err = run(capsys, "--db", project, "run", "bm25", "--collection", "cranfield", "--name", "bm25")
    assert code == 1 and "already exists" in err
    code, out, err = run(capsys, "--db", project, "run", "bm25", "--collection", "cranfield", "--name", "x",
                         "--variant", "lucene", "--backend", "rank_bm25")
    assert code == 2 and "not available in backend 'rank_bm25'" in err  # a combination of options: usage
    code, out, err = run(capsys, "--db", project, "run", "fuse", "bm25", "--name", "y", "--method", "borda")
    assert code == 2 and "'--method': unknown fusion method 'borda'; known: combmnz, combsum, rrf" in err


def test_help_lists_every_registered_choice(capsys):
    from pooling.fusion import FUSION_METHODS
    from pooling.retrievers.bm25 import BM25_VARIANTS

    code, out, _ = run(capsys, "run", "bm25", "--help")
    text = " ".join(out.split())
    assert all(v in text for v in BM25_VARIANTS)
    code, out, _ = run(capsys, "run", "fuse", "--help")
    assert all(m in " ".join(out.split()) for m in FUSION_METHODS)


def test_bare_pool_is_short_for_pool_build(project, capsys):
    code, out, err = run(capsys, "--db", project, "pool", "--depth", "3", "bm25", "dense", "--name", "short")
    assert code == 0, err
    assert out.startswith("pool short stored:")
    assert Store(project).pools.get_pool("short").depth == 3
