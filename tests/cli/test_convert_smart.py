"""`workbench convert smart` end to end, and `convert cranfield` (its preset) byte-identical to the sample.

The "any SMART collection" example of docs/formats.md is run here command by command:
convert, ingest, a BM25 run, score against the reference qrels.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_corpus" / "cranfield"


def _raw_cranfield() -> Path | None:
    """The raw Cranfield folder ``<ancestor>/shared/data/cranfield`` (main or a worktree)."""
    for parent in ROOT.parents:
        candidate = parent / "shared" / "data" / "cranfield"
        if (candidate / "cran.all.1400").is_file():
            return candidate
    return None


RAW = _raw_cranfield()

DOCS = (
    ".I 1\n.T\nwing lift\n.A\nsmith, j.\n.W\nlift of a wing\nin a slipstream .\n.X\n1 5 1\n"
    ".I 2\n.T\ndrag at speed\n.A\njones, k.\n.W\ndrag of bodies at high speed .\n"
    ".I 3\n.T\nheat transfer\n.W\nheat transfer in slabs .\n"
    ".I 4\n.T\nwing flutter\n.W\nflutter of a thin wing .\n"
    ".I 5\n.T\ncompressor stall\n.W\nstall of compressor blades .\n"
)
QUERIES = ".I 1\n.W\nwing lift .\n.I 2\n.W\ndrag at high speed .\n.I 3\n.W\nbuckling of plates .\n"
QRELS = "1 1 0 0.000000\n1 4 0 0.000000\n2 2 0 0.000000\n"


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def toy(tmp_path) -> Path:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "toy.all").write_text(DOCS)
    (raw / "toy.qry").write_text(QUERIES)
    (raw / "toy.rel").write_text(QRELS)
    return raw


@pytest.mark.skipif(RAW is None, reason="raw Cranfield files not present")
def test_convert_cranfield_is_byte_identical_to_the_sample_corpus(capsys, tmp_path, monkeypatch):
    assert RAW is not None
    # The README names the source folder as given; the sample was made with ../shared/data/cranfield.
    monkeypatch.chdir(RAW.parents[1])
    code, out, err = run(capsys, "convert", "cranfield", "../shared/data/cranfield", tmp_path / "cran")
    assert code == 0, err
    written = sorted(p.name for p in (tmp_path / "cran").iterdir())
    assert written == sorted(p.name for p in SAMPLE.iterdir())
    for name in written:
        assert (tmp_path / "cran" / name).read_bytes() == (SAMPLE / name).read_bytes(), name


def test_readme_example_raw_smart_files_to_scored_runs(capsys, tmp_path, toy):
    db = tmp_path / "labels" / "wb.duckdb"
    code, out, err = run(capsys, "--db", db, "convert", "smart", "--docs", toy / "toy.all", "--queries",
                         toy / "toy.qry", "--qrels", toy / "toy.rel", tmp_path / "toy", "--field", "authors=.A")
    assert code == 0, err
    assert "5 documents, 3 topics, 3 judgments over 2 topics" in out
    assert "qrels columns: 4 columns, doc ids in column 2: query doc ignore grade (SMART layout)" in out
    assert "query numbering: qrels queries named by .I value (detected" in out
    assert "[warning] 1 of 3 topics have no judgments (3)" in err
    assert json.loads((tmp_path / "toy" / "qrels.meta.json").read_text())["rubric"] == "binary"

    code, out, err = run(capsys, "--db", db, "ingest", tmp_path / "toy")
    assert code == 0, err
    assert "qrels created: 'toy-reference' (2 topics, 3 entries, 3 with grade >= 1" in out
    # positives-only qrels are said at import, and a 0/1 scale suggests the 'binary' rubric
    assert "  warning: the qrels hold no non-relevant judgments (every grade >= 1): Judged@k equals P@k" in out
    assert "judge toy on 'binary' with `workbench rubric toy binary --lead LEAD --token TOKEN`" in out

    code, out, err = run(capsys, "--db", db, "run", "bm25", "--collection", "toy", "--name", "bm25", "--depth", "10")
    assert code == 0, err
    code, out, err = run(capsys, "--db", db, "score", "bm25", "--qrels", "toy-reference", "--format", "json",
                         "-m", "R@2", "-m", "P@1")
    assert code == 0, err
    doc = json.loads(out)
    measures = doc["runs"][0]["measures"]
    # topic 1 "wing lift": documents 1 (wing, lift) and 4 (wing) match, 1 first (BM25 idf of "wing" is
    # log((5 - 2 + 0.5) / (2 + 0.5)) > 0 with 5 documents).
    # topic 2 "drag at high speed": document 2 is the only match. So R@2 = (2/2 + 1/1) / 2, P@1 = (1 + 1) / 2.
    assert measures["R@2"]["macro"] == pytest.approx(1.0)
    assert measures["P@1"]["macro"] == pytest.approx(1.0)


def test_convert_smart_errors_are_one_line_with_file_and_line(capsys, tmp_path, toy):
    (toy / "bad.rel").write_text("1 1 0 0.000000\n9 2 0 0.000000\n")
    code, out, err = run(capsys, "convert", "smart", "--docs", toy / "toy.all", "--queries", toy / "toy.qry",
                         "--qrels", toy / "bad.rel", tmp_path / "out")
    assert code == 1 and out == ""
    assert err.strip().splitlines()[-1].startswith(
        f"workbench: error: {toy / 'bad.rel'}:2: expected each qrels query to be a .I value or a position 1..3")
    assert not (tmp_path / "out").exists()
    code, _, err = run(capsys, "convert", "smart", "--docs", toy / "toy.all", "--queries", toy / "toy.qry",
                       "--qrels", toy / "toy.rel", tmp_path / "out", "--field", "authors")
    assert code == 1 and "--field: expected NAME=.MARKER such as title=.T or authors=.A, found 'authors'" in err


def test_convert_smart_options_grade_map_numbering_columns(capsys, tmp_path, toy):
    (toy / "graded.rel").write_text("3 1 1\n3 2 -1\n")
    code, out, err = run(capsys, "convert", "smart", "--docs", toy / "toy.all", "--queries", toy / "toy.qry",
                         "--qrels", toy / "graded.rel", tmp_path / "out", "--grade-map", "1=4",
                         "--grade-map", "-1=0", "--query-numbering", "position", "--qrels-columns", "query doc grade",
                         "--skip", "none")
    assert code == 0, err
    assert (tmp_path / "out" / "qrels.reference.txt").read_text() == "3 0 1 4\n3 0 2 0\n"
    corpus = [json.loads(x) for x in (tmp_path / "out" / "corpus.jsonl").read_text().splitlines()]
    assert "metadata" not in corpus[0]
    # no --field names .A or .X: kept under their letters in the side file (--skip none keeps .X too)
    side = [json.loads(x) for x in (tmp_path / "out" / "doc_metadata.jsonl").read_text().splitlines()]
    assert side[0] == {"doc_id": "1", "A": "smith, j.", "X": "1 5 1"} and side[2] == {"doc_id": "3"}
    assert "grades: grade map -1->0, 1->4" in out


@pytest.mark.skipif(RAW is None, reason="raw Cranfield files not present")
def test_general_converter_detects_cranfields_numbering_by_position(capsys, tmp_path):
    assert RAW is not None
    code, out, err = run(capsys, "convert", "smart", "--docs", RAW / "cran.all.1400", "--queries", RAW / "cran.qry",
                         "--qrels", RAW / "cranqrel", tmp_path / "cran", "--text-to-end")
    assert code == 0, err
    # cranqrel names query 3, which is no .I value of cran.qry (001, 002, 004, ...): the qrels count positions
    assert ("query numbering: qrels queries numbered by position 1..225 in the query file (detected: 73 of 225 "
            "qrels query ids are not .I values, e.g. '3'; all are positions)") in out
    ours = (tmp_path / "cran" / "queries.jsonl").read_bytes()
    assert ours == (SAMPLE / "queries.jsonl").read_bytes()
