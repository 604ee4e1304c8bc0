"""Findings of a new user's trial on an unseen SMART collection (CACM; issue 26), one test each, on the
tiny project (``tests.cli.tiny``): ``--by`` keys checked before any run is read; per-topic rows with their
own ``topic_id`` column.
"""

from __future__ import annotations

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
