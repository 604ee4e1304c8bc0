"""`workbench pool build --topics all|judged|judged:QRELS|FILE` (and `pool extend --topics`)."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.store import Store


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path, capsys):
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": f"t {i}"}) + "\n"
                                                 for i in range(1, 7)))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": t, "text": f"q {t}"}) + "\n"
                                                  for t in ("1", "2", "10")))
    (folder / "qrels.reference.txt").write_text("1 0 d1 1\n")  # only topic 1 is judged
    (tmp_path / "r.trec").write_text("".join(f"{t} Q0 d{i} {i} {10 - i} r\n" for t in ("1", "2", "10")
                                             for i in range(1, 4)))
    path = tmp_path / "wb.duckdb"
    assert run(capsys, "--db", path, "ingest", folder)[0] == 0
    assert run(capsys, "--db", path, "run", "import", tmp_path / "r.trec", "--name", "r", "--collection", "toy")[0] == 0
    return path


def test_topics_all_is_the_default(db, capsys):
    code, out, _ = run(capsys, "--db", db, "pool", "build", "r", "--depth", "2")
    assert code == 0 and "6 documents, 3 topics" in out
    assert set(Store(db, client="t").pools.pool_documents("toy-pool-v1")) == {"1", "2", "10"}


def test_topics_judged_leaves_out_topics_nobody_judged(db, capsys):
    code, out, err = run(capsys, "--db", db, "pool", "build", "r", "--depth", "2", "--topics", "judged")
    assert code == 0, err
    assert "2 documents, 1 topics" in out
    assert "topics: judged topics (any qrels version or judgment of the collection): 1 of 3" in err
    assert "not pooled: 2 topic(s) outside --topics judged (2, 10)" in err
    store = Store(db, client="t")
    assert set(store.pools.pool_documents("toy-pool-v1")) == {"1"}
    assert store.pools.get_pool("toy-pool-v1").params["topics"] == \
        "judged topics (any qrels version or judgment of the collection): 1 of 3"
    code, out, err = run(capsys, "--db", db, "pool", "build", "r", "--depth", "2", "--topics", "judged:toy-reference")
    assert code == 0 and "1 topics" in out


def test_topics_from_a_file_and_its_errors(db, tmp_path, capsys):
    f = tmp_path / "topics.txt"
    f.write_text("# smoke set\n10\n2 second topic\n")
    code, out, err = run(capsys, "--db", db, "pool", "build", "r", "--depth", "1", "--topics", f)
    assert code == 0, err
    assert set(Store(db, client="t").pools.pool_documents("toy-pool-v1")) == {"2", "10"}
    f.write_text("2\n99\n")
    code, _, err = run(capsys, "--db", db, "pool", "build", "r", "--depth", "1", "--topics", f)
    assert code == 1 and err.strip().endswith(f"{f}:2: expected a topic of collection 'toy', found '99'. "
                                              "Check the topic ids.")
    code, _, err = run(capsys, "--db", db, "pool", "build", "r", "--depth", "1", "--topics", "some")
    assert code == 1 and "--topics: expected all, judged, judged:QRELS or a file of topic ids, found 'some'" in err


def test_extend_with_topics(db, tmp_path, capsys):
    assert run(capsys, "--db", db, "pool", "build", "r", "--depth", "1")[0] == 0
    (tmp_path / "s.trec").write_text("1 Q0 d5 1 9 s\n2 Q0 d6 1 9 s\n")
    assert run(capsys, "--db", db, "run", "import", tmp_path / "s.trec", "--name", "s", "--collection", "toy")[0] == 0
    code, out, err = run(capsys, "--db", db, "pool", "extend", "s", "--topics", "judged", "--format", "tsv")
    assert code == 0, err
    assert set(Store(db, client="t").pools.pool_documents("toy-pool-v2", with_ancestors=False)) == {"1"}
