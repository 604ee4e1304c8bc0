"""Regression tests (QA defects): depth limits and identical run re-imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_ingest import beir_folder, run, table_counts
from workbench.errors import DuplicateNameError, ValidationError
from workbench.services.runs.pooling import MAX_DEPTH, build_pool, check_depth, pool_from_files
from workbench.store import Store


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "labels" / "wb.duckdb"


@pytest.fixture
def toy(capsys, db, tmp_path) -> Path:
    code, _, err = run(capsys, "--db", db, "ingest", beir_folder(tmp_path, name="toy"))
    assert code == 0, err
    return db


@pytest.mark.parametrize("depth", [0, -1, MAX_DEPTH + 1, 99999999999])
def test_check_depth_limits(depth):
    with pytest.raises(ValidationError, match=f"expected a depth between 1 and 1,000,000, found {depth}"):
        check_depth(depth)


def test_check_depth_accepts_the_limits():
    check_depth(1)
    check_depth(MAX_DEPTH)


def test_huge_depth_is_a_clear_error_in_the_cli(capsys, toy, tmp_path):
    before = table_counts(toy)
    code, _, err = run(capsys, "--db", toy, "run", "bm25", "--collection", "toy", "--name", "b", "--depth", "99999999999")
    assert code != 0 and "Conversion Error" not in err and "INT32" not in err
    assert "expected a depth between 1 and 1,000,000, found 99999999999" in err
    code, _, err = run(capsys, "--db", toy, "run", "bm25", "--collection", "toy", "--name", "b", "--depth", "2")
    assert code == 0, err
    before = table_counts(toy)
    code, _, err = run(capsys, "--db", toy, "pool", "build", "b", "--depth", "99999999999")
    assert code != 0 and "Conversion Error" not in err
    assert "expected a depth between 1 and 1,000,000, found 99999999999" in err
    assert table_counts(toy) == before


def test_pool_files_depth_checked(tmp_path):
    f = tmp_path / "a.trec"
    f.write_text("1 Q0 d1 1 1.0 t\n")
    with pytest.raises(ValidationError, match="between 1 and 1,000,000"):
        pool_from_files([f], 99999999999)


def test_build_pool_checks_depth_before_reading_runs(store):
    with pytest.raises(ValidationError, match="between 1 and 1,000,000"):
        build_pool(store.pools, store.runs, ["no-such-run"], depth=2**40)


def test_identical_run_reimport_is_unchanged(capsys, toy, tmp_path):
    good = tmp_path / "good.trec"
    good.write_text("1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n2 Q0 d3 1 0.5 t\n")
    code, out, err = run(capsys, "--db", toy, "run", "import", good, "--name", "g", "--collection", "toy")
    assert code == 0, err
    before = table_counts(toy)
    code, out, err = run(capsys, "--db", toy, "run", "import", good, "--name", "g", "--collection", "toy")
    assert code == 0, err
    assert "unchanged" in out + err
    assert table_counts(toy) == before
    other = tmp_path / "other.trec"
    other.write_text("1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.5 t\n")
    code, _, err = run(capsys, "--db", toy, "run", "import", other, "--name", "g", "--collection", "toy")
    assert code != 0 and "run 'g' already exists" in err
    assert table_counts(toy) == before


def test_store_import_run_file_reports_unchanged(toy, tmp_path):
    good = tmp_path / "good.trec"
    good.write_text("1 Q0 d1 1 2.0 t\n")
    store = Store(toy, client="pytest")
    first = store.runs.import_run_file(good, "g", collection="toy")
    again = store.runs.import_run_file(good, "g", collection="toy")
    assert again == first
    good.write_text("1 Q0 d1 1 3.0 t\n")
    with pytest.raises(DuplicateNameError, match="run 'g' already exists"):
        store.runs.import_run_file(good, "g", collection="toy")


def test_run_import_cuts_a_long_unknown_doc_id(toy, tmp_path):
    from workbench.errors import InputFormatError

    long = "w" * 2_000_000
    bad = tmp_path / "bad.trec"
    bad.write_text(f"1 Q0 {long} 1 2.0 t\n")
    store = Store(toy, client="pytest")
    with pytest.raises(InputFormatError) as e:
        store.runs.import_run_file(bad, "b", collection="toy")
    assert f"bad.trec:1: document id {'w' * 60!r}\u2026 (2000000 characters): expected at most 1,000" in str(e.value)
    assert len(str(e.value)) < 500
