"""`workbench ingest` of a Parquet collection folder and of an ir_datasets dataset from the local cache.

The ir_datasets tests run the CLI in a subprocess whose IR_DATASETS_HOME is a
temporary folder holding a tiny ``cranfield`` cache (ir_datasets fixes its
cache paths when it is imported); nothing may be downloaded.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from workbench.cli import main
from workbench.store import Store

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def parquet_folder(root: Path, qrels: dict) -> Path:
    folder = root / "pq"
    (folder / "qrels").mkdir(parents=True)
    pq.write_table(pa.table({"_id": ["d1", "d2", "d3"], "title": ["wing", "drag", None],
                             "text": ["lift of a wing", "drag at speed", "heat in slabs"], "year": [1958, 1960, 1961]}),
                   folder / "corpus.parquet")
    pq.write_table(pa.table({"_id": ["1", "2"], "text": ["wing lift", "drag"]}), folder / "queries.parquet")
    pq.write_table(pa.table(qrels), folder / "qrels" / "test.parquet")
    return folder


def test_parquet_folder_is_ingested(capsys, tmp_path):
    db = tmp_path / "wb.duckdb"
    folder = parquet_folder(tmp_path, {"query-id": ["1", "1", "2"], "corpus-id": ["d1", "d3", "d2"],
                                       "score": [2, 0, 1]})
    code, out, err = run(capsys, "--db", db, "ingest", folder)
    assert code == 0, err
    assert "collection created 'pq': 3 documents" in out
    assert "qrels created: 'pq-test' (2 topics, 3 entries, 2 with grade >= 1" in out
    store = Store(db, client="pytest")
    assert store.qrels.get_qrels("pq-test") == {"1": {"d1": 2, "d3": 0}, "2": {"d2": 1}}
    assert store.collections.get_documents("pq")["d3"].title == ""


def test_parquet_qrels_unknown_doc_names_the_row(capsys, tmp_path):
    db = tmp_path / "wb.duckdb"
    folder = parquet_folder(tmp_path, {"query-id": ["1", "2"], "corpus-id": ["d1", "d9"], "score": [1, 1]})
    code, out, err = run(capsys, "--db", db, "ingest", folder)
    assert code == 1 and out == ""
    assert err.strip().splitlines()[-1].startswith(
        f"workbench: error: {folder / 'qrels' / 'test.parquet'}: row 2: expected a document of collection 'pq', "
        "found doc id 'd9'")


def _cli(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, IR_DATASETS_HOME=str(home), PYTHONPATH=str(ROOT))
    code = "import sys; from workbench.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def irds_home(tmp_path) -> Path:
    """A cache holding a tiny 'cranfield' (the files ir_datasets' Cache objects look for)."""
    home = tmp_path / "irds"
    (home / "cranfield").mkdir(parents=True)
    (home / "cranfield" / "docs.txt").write_text(
        ".I 1\n.T\nwing lift\n.A\nsmith\n.B\nj. ae. 1958\n.W\nlift of a wing .\n"
        ".I 2\n.T\ndrag\n.A\njones\n.B\nj. ae. 1960\n.W\ndrag at speed .\n")
    (home / "cranfield" / "queries.txt").write_text(".I 001\n.W\nwing lift .\n.I 004\n.W\ndrag .\n")
    (home / "cranfield" / "qrels.txt").write_text("1 1 2\n2 2 -1\n")
    return home


def test_ir_datasets_dataset_is_read_from_the_local_cache(tmp_path, irds_home):
    db = tmp_path / "wb.duckdb"
    r = _cli(["--db", str(db), "ingest", "irds:cranfield", "--name", "cran-irds"], irds_home)
    assert r.returncode == 0, r.stderr
    assert "collection created 'cran-irds': 2 documents" in r.stdout
    assert "qrels created: 'cran-irds-reference' (2 topics, 2 entries, 1 with grade >= 1" in r.stdout
    store = Store(db, client="pytest")
    topics = store.collections.get_topics("cran-irds")
    assert [(t, topics[t].title) for t in sorted(topics)] == [("1", "wing lift ."), ("2", "drag .")]
    assert store.qrels.get_qrels("cran-irds-reference") == {"1": {"1": 2}, "2": {"2": -1}}
    assert "Download failed" not in r.stderr


def test_ir_datasets_dataset_not_in_the_cache_is_an_error_not_a_download(tmp_path, irds_home):
    r = _cli(["--db", str(tmp_path / "wb.duckdb"), "ingest", "irds:vaswani"], irds_home)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(f"workbench: error: irds:vaswani: a file of this dataset is not in the local "
                           f"ir_datasets cache ({irds_home}; needed: RequestsDownload(")
    assert "the workbench never downloads" in last and "Download failed" not in r.stderr
    assert not (irds_home / "vaswani" / "npl.tar.gz").exists()
