"""Findings of the robustness trial and of a fresh user (issue 9 leftovers), one test each.

groups import errors name the file as typed and the line; ``--filter-key`` a key no topic has is a
usage error; output files: missing parent folders are created by every writing option alike, and a
bad target is refused before the first write; R@k deeper than a run warns once; the positives-only
warning claims Judged@k = P@k only where it holds; ``misses`` prints the provenance lines of
``score``; document ids listed in natural order (d2 before d10).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.cli.test_failing_writes_nothing import snapshot
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


def test_groups_import_names_the_path_as_typed_and_the_line_of_an_unknown_member(project, capsys):
    work, db = project
    (work / "data").mkdir()
    (work / "data" / "groups.tsv").write_text("group_id\tdoc_id\ng1\td1\ng1\td2\ng2\td3\ng2\tnope\n")
    code, _, err = run(capsys, db, "groups", "import", "data/groups.tsv", "--collection", "tiny")
    assert code == 1
    assert err.startswith("workbench: error: data/groups.tsv:5: expected documents of collection 'tiny'"), err
    assert "'nope'" in err and "Traceback" not in err
    code, out, _ = run(capsys, db, "groups", "import", "data/groups.tsv", "--collection", "tiny")
    (work / "data" / "ok.tsv").write_text("g1\td1\ng1\td2\n")
    code, out, err = run(capsys, db, "groups", "import", "data/ok.tsv", "--collection", "tiny")
    assert code == 0, err
    assert out.startswith("1 group(s) from data/ok.tsv: 2 row(s) added"), out


def test_filter_key_no_topic_has_is_refused_listing_the_known_keys(project, capsys):
    work, db = project
    (work / "topic_meta.csv").write_text("topic_id,priority,filter\n1,high,\n2,low,\n")
    assert run(capsys, db, "metadata", "import-topics", "topic_meta.csv", "--collection", "tiny")[0] == 0
    before = snapshot(db)
    code, out, err = run(capsys, db, "score", "bm25", "--qrels", "tiny-reference", "--filter-key", "nosuch")
    assert code == 2, err
    assert "--filter-key: unknown topic metadata key of collection 'tiny' 'nosuch'; known: priority" in err, err
    assert out == "" and snapshot(db) == before
    # A key the topics carry is taken; the default key may be absent (no filters, as before).
    assert run(capsys, db, "score", "bm25", "--qrels", "tiny-reference", "-m", "R@3", "--no-record")[0] == 0


def test_filter_key_of_run_files_without_a_collection_is_a_usage_error(project, capsys):
    work, db = project
    (work / "r.trec").write_text("1 Q0 d1 1 1.0 r\n2 Q0 d5 1 1.0 r\n3 Q0 d4 1 1.0 r\n")
    code, _, err = run(capsys, db, "score", "r.trec", "--qrels", "tiny/qrels.reference.txt", "--filter-key", "x")
    assert code == 2 and "--filter-key 'x': the filters are topic metadata of a collection" in err, err


@pytest.mark.parametrize("argv", [
    ["score", "bm25", "--qrels", "tiny-reference", "-m", "R@3", "--out", "{new}/scores.txt"],
    ["score", "bm25", "--qrels", "tiny-reference", "-m", "R@3", "--plot", "{new}/curve.json"],
    ["run", "export", "bm25", "--out", "{new}/bm25.trec"],
    ["qrels", "export", "tiny-reference", "--out", "{new}/ref.qrels"],
    ["judgments", "export", "tiny-pool-v1", "--out", "{new}/judgments.csv"],
], ids=lambda a: " ".join(a[:2] + [a[-2]]))
def test_every_output_option_creates_missing_parent_folders_alike(project, capsys, argv):
    """The convention the CLI follows (every file-writing option, as ``atomic_write`` does): a missing
    parent folder is created; what cannot be created is refused before the first write (next test)."""
    work, db = project
    new = work / "out" / "deeper"
    code, _, err = run(capsys, db, *[a.replace("{new}", str(new)) for a in argv])
    assert code == 0, err
    assert Path(argv[-1]).name in [p.name for p in new.iterdir()]


def test_an_output_under_a_file_is_refused_naming_it_before_anything_is_recorded(project, capsys):
    work, db = project
    (work / "a-file").write_text("x")
    before = snapshot(db)
    code, out, err = run(capsys, db, "score", "bm25", "--qrels", "tiny-reference", "--out", "a-file/dir/x.txt")
    assert code == 1 and "--out a-file/dir/x.txt: a-file is a file, not a folder" in err, err
    assert out == "" and snapshot(db) == before


def test_scoring_deeper_than_a_run_says_once_per_run_that_r_at_k_equals_r_at_depth(project, capsys):
    work, db = project
    code, _, err = run(capsys, db, "score", "bm25", "imp", "--qrels", "tiny-reference", "--no-record",
                       "-m", "R@2", "-m", "R@10", "-m", "R@100", "-m", "nDCG@10")
    assert code == 0, err
    notes = [line for line in err.splitlines() if "equals R@" in line]
    # imp returns at most 2 documents per topic, bm25 at most 4 (the tiny collection matches no more)
    assert notes == [
        "workbench: note: run 'bm25' returns at most 4 document(s) per topic: R@k for k > 4 equals R@4 for it "
        "(R@10, R@100); a deeper run is needed to measure them",
        "workbench: note: run 'imp' returns at most 2 document(s) per topic: R@k for k > 2 equals R@2 for it "
        "(R@10, R@100); a deeper run is needed to measure them",
    ]
    code, _, err = run(capsys, db, "score", "imp", "--qrels", "tiny-reference", "--no-record", "-m", "R@2")
    assert "equals R@" not in err


def test_positives_only_warning_does_not_claim_judged_equals_p_for_a_run_shorter_than_k(project, capsys):
    work, db = project
    (work / "pos.qrels").write_text("1 0 d1 1\n2 0 d5 1\n3 0 d4 1\n")
    (work / "short.trec").write_text("1 Q0 d1 1 2.0 s\n1 Q0 d3 2 1.0 s\n2 Q0 d5 1 1.0 s\n3 Q0 d4 1 1.0 s\n")
    deep = "".join(f"{t} Q0 {d} {i} {10 - i}.0 deep\n" for t in "123"
                   for i, d in enumerate(["d1", "d2", "d3", "d4", "d5", "d6"], 1))
    (work / "deep.trec").write_text(deep)
    code, out, err = run(capsys, db, "score", "deep.trec", "--qrels", "pos.qrels", "-m", "Judged@5", "-m", "P@5")
    assert code == 0, err
    assert "Judged@k equals P@k, and every non-relevant document" in out  # deep returns 6 >= 5: it holds
    code, out, err = run(capsys, db, "score", "deep.trec", "short.trec", "--qrels", "pos.qrels", "-m", "Judged@5",
                         "-m", "P@5")
    assert code == 0, err
    assert "Judged@k equals P@k, and" not in out
    assert ("Judged@k equals P@k only where a run returns at least k documents, and s returns at most 2 "
            "(Judged@5): there Judged@k = P@k * k / documents returned") in out, out


def test_misses_prints_the_same_provenance_lines_as_score(project, capsys):
    work, db = project
    code, score_out, err = run(capsys, db, "score", "bm25", "--qrels", "tiny-reference", "-m", "R@3")
    assert code == 0, err
    code, misses_out, err = run(capsys, db, "misses", "bm25", "--qrels", "tiny-reference", "--k", "1")
    assert code == 0, err

    def provenance(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.split("  ")[0].strip() in ("qrels", "run", "evaluator")]

    assert provenance(misses_out) == provenance(score_out)
    assert any(line.startswith("evaluator") for line in provenance(misses_out))


def test_misses_lists_document_ids_in_natural_order_within_a_grade(project, capsys):
    work, db = project
    (work / "q.txt").write_text("1 0 d10 1\n1 0 d2 1\n1 0 d1 1\n1 0 d100 2\n1 0 d9 2\n")
    (work / "a.trec").write_text("1 Q0 d5 1 9 a\n")
    code, out, err = run(capsys, db, "misses", "a.trec", "--qrels", "q.txt", "--k", "1")
    assert code == 0, err
    listed = [line.split()[1] for line in out.splitlines() if line.startswith("1 ")]
    assert listed == ["d9", "d100", "d1", "d2", "d10"]  # grade 2 first, then grade 1; ids in natural order
