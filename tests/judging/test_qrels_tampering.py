"""Exported qrels files edited by hand are noticed (issue 26, "Consistency and integrity", item 2).

Scoring a qrels file that the ``manifest.json`` beside it records under another sha256 is
refused (``--allow-edited-qrels`` scores it, with a warning); ``workbench qrels verify``
checks every exported file and the manifest against the store; a re-export says what it
replaced instead of overwriting an edited file or manifest entry silently.

The published version ``v9``: topic 1 d1=2 d2=0, topic 2 d3=1 d4=0. The run ``r`` ranks
d1 before d2 and d3 before d4, so R@1 = (1/1 + 1/1) / 2 on ``v9``; with d2 edited to
grade 1 topic 1 has two relevant documents and R@1 = (1/2 + 1/1) / 2.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.judging.test_qrels_export_unit import EXPORTED, assert_complete, publish, run
from tests.judging.test_qrels_export_unit import db as db  # noqa: F401 - the fixture

EDITED = EXPORTED.replace("1 0 d2 0", "1 0 d2 1")


def r_at_1(out: str) -> float:
    return json.loads(out)["runs"][0]["measures"]["R@1"]["macro"]


@pytest.fixture
def published(db, capsys):  # noqa: F811 - the imported fixture
    code, _, err = publish(capsys, db)
    assert code == 0, err
    assert_complete(db)
    return db


def test_scoring_an_edited_exported_file_is_refused_unless_allowed(published, capsys):
    qrels_file = published.parent / "v9.qrels"
    code, out, _ = run(capsys, published, "score", "r", "--qrels", qrels_file, "-m", "R@1", "--format", "json")
    assert code == 0 and r_at_1(out) == (1 / 1 + 1 / 1) / 2  # the file as exported: scored, no question asked
    assert json.loads(out)["header"]["warnings"] == []

    qrels_file.write_text(EDITED)
    edited_sha = hashlib.sha256(EDITED.encode()).hexdigest()
    exported_sha = hashlib.sha256(EXPORTED.encode()).hexdigest()
    code, out, err = run(capsys, published, "score", "r", "--qrels", qrels_file, "-m", "R@1", "--format", "json")
    assert code == 1 and out == ""
    assert err.strip() == (
        f"workbench: error: {qrels_file} is recorded in {published.parent / 'manifest.json'} as qrels version v9 "
        f"with sha256 {exported_sha[:12]}, but its bytes now have sha256 {edited_sha[:12]}: it was edited after its "
        "export, so it is not qrels version v9. Nothing was scored. Score the stored version by name (--qrels v9), "
        "restore the file with `workbench qrels export v9`, or copy the edited file to a name the manifest does not "
        "record and score the copy (pass --allow-edited-qrels to `workbench score` to score it anyway, with a "
        "warning)")

    code, out, err = run(capsys, published, "score", "r", "--qrels", qrels_file, "-m", "R@1", "--format", "json",
                         "--allow-edited-qrels")
    assert code == 0, err
    assert r_at_1(out) == (1 / 2 + 1 / 1) / 2  # the edit is what was scored, and the report says so first
    assert json.loads(out)["header"]["warnings"][0].startswith(
        f"qrels {qrels_file} is recorded in {published.parent / 'manifest.json'} as qrels version v9")
    copy = published.parent.parent / "v9-edited.qrels"  # a copy outside the manifest's folder is a plain file
    copy.write_text(EDITED)
    code, out, _ = run(capsys, published, "score", "r", "--qrels", copy, "-m", "R@1", "--format", "json")
    assert code == 0 and r_at_1(out) == (1 / 2 + 1 / 1) / 2
    (copy.parent / "manifest.json").write_text('{"name": "another tool\'s manifest"}')  # not the workbench's
    code, out, _ = run(capsys, published, "score", "r", "--qrels", copy, "-m", "R@1", "--format", "json")
    assert code == 0 and r_at_1(out) == (1 / 2 + 1 / 1) / 2 and json.loads(out)["header"]["warnings"] == []


def test_verify_names_every_mismatch_and_re_export_says_what_it_replaced(published, capsys):
    manifest = published.parent / "manifest.json"
    qrels_file = published.parent / "v9.qrels"
    code, out, err = run(capsys, published, "qrels", "verify", "v9")
    assert code == 0 and out.strip() == (f"verified: 1 exported qrels file(s) and their entries in {manifest} "
                                         "agree with the store")

    # an edited file: named by its sha256 and, read, by its entries
    qrels_file.write_text(EDITED)
    code, out, err = run(capsys, published, "qrels", "verify", "--all")
    assert code == 1
    assert out.startswith("qrels version v9: ")
    assert f"{qrels_file} has sha256 {hashlib.sha256(EDITED.encode()).hexdigest()[:12]}, the manifest records" in out
    assert f"{qrels_file} holds other entries than the stored version" in out
    assert "1 of 1 qrels version(s) disagree with the store" in err
    code, out, _ = run(capsys, published, "qrels", "list", "--format", "jsonl")
    assert json.loads(out)["file"] == "edited file"
    code, out, err = run(capsys, published, "qrels", "export", "v9")
    assert code == 0
    assert f"[warning] replaced {qrels_file}, which had changed since its export" in err
    assert_complete(published)

    # the file and its recorded sha256 edited together: reading the file still finds it
    document = json.loads(manifest.read_text())
    document["qrels_versions"]["v9"]["file_sha256"] = hashlib.sha256(EDITED.encode()).hexdigest()
    manifest.write_text(json.dumps(document))
    qrels_file.write_text(EDITED)
    code, out, _ = run(capsys, published, "qrels", "verify")
    assert code == 1 and f"{qrels_file} holds other entries than the stored version" in out
    assert run(capsys, published, "qrels", "export", "v9")[0] == 0

    # an edited manifest entry: each differing field named; the re-export says what it replaced
    document = json.loads(manifest.read_text())
    document["qrels_versions"]["v9"]["n_entries"] = 5
    document["qrels_versions"]["v9"]["rule"] = "majority"
    manifest.write_text(json.dumps(document))
    code, out, _ = run(capsys, published, "qrels", "verify", "v9")
    assert code == 1
    assert (f"its entry in {manifest} differs from the stored version: n_entries: manifest 5, store 4; "
            "rule: manifest 'majority', store 'adjudicated>unanimous>median'") in out
    code, _, err = run(capsys, published, "qrels", "export", "v9")
    assert code == 0
    assert (f"[warning] replaced the entry of v9 in {manifest}, which differed from the stored version: "
            "n_entries: manifest 5, store 4; rule: manifest 'majority', store 'adjudicated>unanimous>median'") in err
    assert_complete(published)
    assert run(capsys, published, "qrels", "verify")[0] == 0

    # a manifest entry naming a version this store does not hold; a name nobody knows
    document = json.loads(manifest.read_text())
    document["qrels_versions"]["ghost"] = {"file": "ghost.qrels"}
    manifest.write_text(json.dumps(document))
    code, out, _ = run(capsys, published, "qrels", "verify", "--all")
    assert code == 1 and "qrels version ghost: " in out and "which this store does not hold" in out
    code, _, err = run(capsys, published, "qrels", "verify", "nope")
    assert code == 1 and "unknown qrels version 'nope'; known: v9" in err
    assert run(capsys, published, "qrels", "verify", "--all", "v9")[0] == 2  # names or --all, not both

    # a manifest that is not JSON any more: named by verify; qrels list still lists, naming it per version
    manifest.write_text('{"qrels_versions": {\n  "v9": }')
    code, out, err = run(capsys, published, "qrels", "verify")
    assert code == 1 and out.startswith(f"{manifest}:2: expected JSON, found invalid JSON")
    assert "and the manifest cannot be read" in err
    code, out, err = run(capsys, published, "qrels", "list", "--format", "jsonl")
    assert code == 0 and json.loads(out)["file"] == "unreadable manifest"
    assert f"Mend it: fix or delete {manifest}, then run `workbench qrels export v9`" in err


def test_verify_asks_a_named_version_to_be_exported(db, capsys):  # noqa: F811 - the imported fixture
    code, _, err = run(capsys, db, "publish", "p1", "--name", "v8", "--lead", "boss", "--token", "boss-token",
                       "--no-export")
    assert code == 0, err
    code, out, _ = run(capsys, db, "qrels", "verify", "--all")
    assert code == 0 and out.strip() == (f"verified: 0 exported qrels file(s) and their entries in "
                                         f"{db.parent / 'manifest.json'} agree with the store (1 version(s) not "
                                         "exported: v8)")
    code, out, _ = run(capsys, db, "qrels", "verify", "v8")
    assert code == 1 and "qrels version v8: it was never exported" in out
    assert json.loads(run(capsys, db, "qrels", "list", "--format", "jsonl")[1])["file"] == "-"
