"""Topics are listed in natural order (1, 2, 10) by `run show`, `pool show` and error messages."""

from __future__ import annotations

import json

from workbench.cli import main
from workbench.errors import MissingTopicsError, UnknownNameError


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_run_show_pool_show_and_missing_topics_in_natural_order(tmp_path, capsys):
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n{"_id": "d2", "text": "y"}\n')
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": t, "text": f"q {t}"}) + "\n"
                                                  for t in ("10", "2", "1", "100")))
    (tmp_path / "r.trec").write_text("10 Q0 d1 1 2 r\n2 Q0 d1 1 2 r\n1 Q0 d2 1 2 r\n")
    (tmp_path / "q.txt").write_text("".join(f"{t} 0 d1 1\n" for t in ("100", "10", "3", "2", "1")))
    db = tmp_path / "wb.duckdb"
    assert run(capsys, "--db", db, "ingest", folder)[0] == 0
    assert run(capsys, "--db", db, "run", "import", tmp_path / "r.trec", "--name", "r", "--collection", "toy")[0] == 0
    code, out, _ = run(capsys, "--db", db, "run", "show", "r", "--format", "tsv")
    assert [line.split("\t")[0] for line in out.splitlines()[1:]] == ["1", "2", "10", "100"]
    assert run(capsys, "--db", db, "pool", "build", "r", "--depth", "1", "--name", "p")[0] == 0
    code, out, _ = run(capsys, "--db", db, "pool", "show", "p", "--format", "tsv")
    assert [line.split("\t")[0] for line in out.splitlines()[1:]] == ["1", "2", "10"]
    code, _, err = run(capsys, "score", tmp_path / "r.trec", "--qrels", tmp_path / "q.txt")
    assert code == 1 and "has no results for 2 qrels topic(s): 3, 100" in err


def test_error_lists_are_in_natural_order():
    assert MissingTopicsError("r", ["10", "9", "100", "a"]).topics == ["9", "10", "100", "a"]
    assert "known: 2, 10, b" in str(UnknownNameError("topic", "x", ["b", "10", "2"]))
