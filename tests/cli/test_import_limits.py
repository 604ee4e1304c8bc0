"""Length limits: names (NAME_MAX = 200 characters) and run tags; `--out -` means standard output."""

from __future__ import annotations

import pytest

from tests.cli.helpers import copy_project, run


@pytest.fixture
def project(tiny_template, tmp_path):
    return copy_project(tiny_template, tmp_path / "p")



def test_a_name_over_200_characters_is_refused_and_200_is_accepted(project, capsys):
    folder, db = project
    qrels = folder / "tiny" / "qrels.reference.txt"
    code, _out, err = run(capsys, db, "qrels", "import", qrels, "--name", "q" * 5000, "--collection", "tiny")
    assert code == 2  # a bad option value: a usage error, refused while the command line is parsed (cli.options)
    assert err.strip().endswith(f"Invalid value for '--name': qrels version name {'q' * 40!r}… (5,000 characters): "
                                "expected at most 200 characters; use a shorter name (put the details in the "
                                "description).")
    assert "q" * 41 not in err
    code, _out, err = run(capsys, db, "qrels", "import", qrels, "--name", "q" * 200, "--collection", "tiny")
    assert code == 0, err


def test_a_run_tag_over_200_characters_is_refused_with_file_and_line(project, capsys):
    folder, db = project
    f = folder / "long.trec"
    f.write_text(f"1 Q0 d1 1 2.0 {'t' * 201}\n")
    code, _out, err = run(capsys, db, "run", "import", f, "--name", "long", "--collection", "tiny")
    assert code == 1
    assert err.strip().startswith(f"workbench: error: {f}:1: run tag 'tttt")
    assert err.strip().endswith("(201 characters): expected at most 200 characters; shorten the tag (column 6).")
    code, out, _err = run(capsys, db, "run", "list")
    assert "long" not in out


def test_out_dash_is_standard_output_for_text_and_refused_for_parquet(project, capsys, monkeypatch, tmp_path):
    folder, db = project
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, db, "run", "export", "imp", "--out", "-")
    assert code == 0, err
    assert out.splitlines()[0].split()[:3] == ["1", "Q0", "d1"] and len(out.splitlines()) == 4
    code, out, err = run(capsys, db, "qrels", "export", "tiny-reference", "--out", "-")
    assert code == 0, err
    assert sorted(out.splitlines()) == ["1 0 d1 2", "1 0 d2 0", "2 0 d2 1", "2 0 d5 3", "3 0 d4 2"]
    code, out, err = run(capsys, db, "score", "imp", "--qrels", "tiny-reference", "--out", "-", "--format", "tsv")
    assert code == 0, err
    assert out.startswith("#") or "\t" in out
    # Binary output to standard output is a usage error (exit 2), refused before any work.
    code, out, err = run(capsys, db, "judgments", "export", "tiny-pool-v1", "--format", "parquet", "--out", "-")
    assert (code, out) == (2, "")
    assert err.strip().endswith("--format parquet writes a binary file: give --out FILE.parquet "
                                "(standard output takes text only)")
    code, out, err = run(capsys, db, "score", "imp", "--qrels", "tiny-reference", "--format", "parquet", "--out", "-")
    assert (code, out) == (2, "")
    assert "[starting]" not in err and err.strip().endswith("(standard output takes text only).")
    assert not (tmp_path / "-").exists()
