"""Findings of a new user's trial on an unseen SMART collection (CACM; issue 26), one test each, on the
tiny project (``tests.cli.tiny``): ``--by`` keys checked before any run is read; per-topic rows with their
own ``topic_id`` column.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from workbench.cli import main


@pytest.fixture
def project(tiny_template, tmp_path):
    folder, db = tiny_template
    work = tmp_path / "project"
    shutil.copytree(folder, work, ignore=shutil.ignore_patterns("*.waiting", "*.holder.json"))
    cwd = os.getcwd()
    os.chdir(work)
    yield work, work / db.relative_to(folder)
    os.chdir(cwd)


def run(capsys, db: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--db", str(db), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_by_a_document_metadata_key_is_refused_before_any_run_is_read(project, capsys):
    work, db = project
    (work / "doc_meta.csv").write_text("doc_id,year\nd1,1958\nd2,1960\n")
    assert run(capsys, db, "metadata", "import-documents", "doc_meta.csv", "--collection", "tiny")[0] == 0
    (work / "topic_meta.csv").write_text("topic_id,intent\n1,nav\n2,info\n")
    assert run(capsys, db, "metadata", "import-topics", "topic_meta.csv", "--collection", "tiny")[0] == 0
    code, out, err = run(capsys, db, "score", "bm25", "--qrels", "tiny-reference", "--by", "year")
    assert code == 2 and out == ""
    assert err.strip() == (
        "workbench: error: --by: unknown slice key (derived, or a topic-metadata key) 'year'; known: intent, "
        "n_relevant, pool_coverage, query_length. 'year' is a document metadata key of 'tiny'; --by slices topics: "
        "topic metadata keys, or query_length, n_relevant, pool_coverage (a document value per topic is not "
        "defined: a topic's documents differ)")
    assert "reading run" not in err  # refused before the run was read, not after scoring
    code, out, err = run(capsys, db, "score", "bm25", "--qrels", "tiny-reference", "--by", "nosuch")
    assert code == 2 and "'nosuch'; known: intent, n_relevant" in err and "reading run" not in err
    code, out, err = run(capsys, db, "score", "bm25", "--qrels", "tiny-reference", "--by", "intent", "-m", "R@5")
    assert code == 0, err
    assert "run bm25 by intent" in out


def test_the_slice_keys_text_names_the_derived_keys():
    from workbench.scoring.slices import DERIVED_KEYS
    from workbench.services.evaluation.restrict import SLICE_KEYS_TEXT

    assert SLICE_KEYS_TEXT == "topic metadata keys, or " + ", ".join(DERIVED_KEYS)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_per_topic_rows_name_their_topic_in_topic_id_so_a_topic_named_macro_is_not_the_mean(
        capsys, write, tmp_path, monkeypatch, fmt):
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "nodb" / "wb.duckdb"))
    qrels = write("q.txt", "macro 0 a 1\nmacro 0 b 1\n2 0 c 1\n")
    run_file = write("r.run", "macro Q0 a 1 3 r\nmacro Q0 x 2 2 r\n2 Q0 c 1 3 r\n")
    target = tmp_path / "s.parquet"
    code, out, err = main_out(capsys, "score", run_file, "--qrels", qrels, "-m", "R@2", "--per-topic",
                              "--format", fmt, *(["--out", target] if fmt == "parquet" else []))
    assert code == 0, err
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
    elif fmt == "jsonl":
        rows = [json.loads(x) for x in out.splitlines()]
    else:
        import pyarrow.parquet as pq

        rows = pq.read_table(target).to_pylist()
    assert list(rows[0])[:5] == ["run", "measure", "aggregate", "topic_id", "value"]
    # R@2: topic "macro" finds a of {a, b} = 1/2; topic 2 finds c of {c} = 1; the macro mean is (1/2 + 1) / 2
    macro = [r for r in rows if r["aggregate"] == "macro"]
    assert len(macro) == 1 and float(macro[0]["value"]) == (1 / 2 + 1) / 2 and macro[0]["topic_id"] == ""
    topic = [r for r in rows if r["topic_id"] == "macro"]
    assert len(topic) == 1 and float(topic[0]["value"]) == 1 / 2 and topic[0]["aggregate"] == ""
    assert {r["topic_id"] for r in rows if not r["aggregate"]} == {"macro", "2"}


def main_out(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_stages_reports_title_only_documents_apart_from_documents_without_text(tmp_path, capsys):
    # CACM's trial: "0 without text" where 81 of 389 missed relevant documents had a title and no abstract.
    src = tmp_path / "c"
    src.mkdir()
    docs = [("d1", "wing lift", "lift of a wing"), ("d2", "flutter of panels", ""), ("d3", "", ""),
            ("d4", "heat", "heat transfer in slabs"), ("d5", "boundary layer", "a boundary layer"),
            ("d6", "transition", "transition of flow")]
    (src / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": t, "text": x}) + "\n" for d, t, x in docs))
    (src / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "boundary layer transition"}) + "\n")
    # the relevant documents d2 (title only), d3 (neither title nor text) and d4 (text) share no term with the query
    (src / "qrels.reference.txt").write_text("1 0 d2 1\n1 0 d3 1\n1 0 d4 1\n1 0 d5 0\n")
    db = tmp_path / "labels" / "wb.duckdb"
    for step in (["ingest", str(src)], ["run", "bm25", "--collection", "c", "--name", "bm25", "--depth", "3"]):
        assert main(["--db", str(db), "-q", *step]) == 0, step
    capsys.readouterr()
    code, out, err = run(capsys, db, "stages", "bm25", "--qrels", "c-reference", "--final-k", "1", "--depth", "3")
    assert code == 0, err
    line = next(x for x in out.splitlines() if "ingestion checked for bm25" in x)
    assert ("3 relevant documents are not in the top 3: 0 not in the collection version, 1 in it without text (no "
            "title, no text), 1 with a title only, 1 indexed with text; ingestion explains 1 (e.g. topic 1 document "
            "d3)") in line
    assert "1 have a title only (e.g. topic 1 document d2): indexed by the title alone" in line
