"""Publishing checks its export target before the commit (QA defect: a folder
at ``<db dir>/v9.qrels`` or a corrupt manifest.json failed *after* the version
was committed, and a retry then said the name exists)."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.types import Judgment


@pytest.fixture
def db(toy_pool):
    from workbench.store import Store

    path = toy_pool({"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
    store = Store(path, client="seed")
    store.users.add_user("boss", "lead", token="boss-token")
    store.judgments.record_judgment(Judgment("1", "d1", "boss", 2), collection="toy", pool_version="p1")
    return path


def publish(db, name="v9"):
    return main(["--db", str(db), "publish", "p1", "--name", name, "--lead", "boss", "--token", "boss-token"])


def versions(db):
    from workbench.store import Store

    return [v.name for v in Store(db, client="test").qrels.list_qrels_versions()]


def test_a_folder_at_the_qrels_path_refuses_before_the_commit(db, capsys):
    (db.parent / "v9.qrels").mkdir()
    assert publish(db) == 1
    err = capsys.readouterr().err
    assert "v9.qrels: expected a file path for the exported qrels, found a folder" in err
    assert "Traceback" not in err and versions(db) == []
    (db.parent / "v9.qrels").rmdir()
    assert publish(db) == 0  # the retry works: the name was never taken
    assert (db.parent / "v9.qrels").read_text() == "1 0 d1 2\n" and versions(db) == ["v9"]


@pytest.mark.parametrize(
    "content, message",
    [("{not json", "manifest.json:1: expected JSON, found invalid JSON"),
     ("[1, 2]", "manifest.json: expected an object with 'qrels_versions'")],
)
def test_a_bad_manifest_refuses_before_the_commit(db, capsys, content, message):
    (db.parent / "manifest.json").write_text(content)
    assert publish(db) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert versions(db) == []


def test_an_export_failing_after_the_commit_says_published_and_how_to_export(db, capsys, monkeypatch):
    from workbench.services.judging import assessments as svc

    def broken(store, name, labels_dir):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(svc, "export_qrels", broken)
    assert publish(db) == 1
    err = capsys.readouterr().err
    assert "published v9; exporting it failed: [Errno 28] No space left on device; " in err
    assert "export it with `workbench qrels export v9`" in err and "Traceback" not in err
    assert versions(db) == ["v9"]
    monkeypatch.undo()
    assert main(["--db", str(db), "qrels", "export", "v9"]) == 0
    assert json.loads((db.parent / "manifest.json").read_text())["qrels_versions"]["v9"]["file"] == "v9.qrels"
