"""The judging CLI: users, assign, agreement, publish and qrels diff, through
``workbench.cli.main`` (exit codes, stdout data, stderr messages)."""

from __future__ import annotations

import json

import pytest
from sklearn.metrics import cohen_kappa_score

from workbench.cli import main
from workbench.types import Judgment


@pytest.fixture
def db(toy_pool):
    return toy_pool({"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "2": {"d4": 2.0, "d5": 1.0}})


def wb(db, *args):
    return main(["--db", str(db), *args])


def test_users_assign_agreement_publish_diff(db, capsys):
    assert wb(db, "users", "add", "boss", "--role", "lead", "--token", "boss-token") == 0
    assert capsys.readouterr().out.strip() == "boss-token"
    assert wb(db, "users", "add", "ann", "--lead", "boss", "--lead-token", "boss-token") == 0
    ann_token = capsys.readouterr().out.strip()
    assert len(ann_token) >= 20
    assert wb(db, "users", "add", "bob", "--token", "bob-token", "--lead", "boss", "--lead-token", "nope") == 1
    assert "wrong token" in capsys.readouterr().err
    assert wb(db, "users", "add", "bob", "--token", "bob-token") == 1  # a lead exists now
    assert "only a lead can add users" in capsys.readouterr().err
    assert wb(db, "users", "add", "bob", "--token", "bob-token", "--lead", "boss", "--lead-token", "boss-token") == 0
    capsys.readouterr()

    assert wb(db, "assign", "p1", "--assessors", "ann,bob", "--overlap", "2", "--lead", "ann", "--token", ann_token) == 1
    assert "only a lead" in capsys.readouterr().err
    assert wb(db, "assign", "p1", "--assessors", "ann,bob", "--overlap", "2", "--lead", "boss",
              "--token", "boss-token") == 0
    assert capsys.readouterr().out.splitlines() == ["ann\t5 assigned\t0 already in queue",
                                                    "bob\t5 assigned\t0 already in queue"]

    from workbench.store import Store

    store = Store(db, client="test")
    ann = {("1", "d1"): 2, ("1", "d2"): 0, ("1", "d3"): 1, ("2", "d4"): 3, ("2", "d5"): 0}
    bob = {("1", "d1"): 2, ("1", "d2"): 1, ("1", "d3"): 1, ("2", "d4"): 3, ("2", "d5"): 2}
    for who, grades in (("ann", ann), ("bob", bob)):
        for (t, d), g in grades.items():
            store.judgments.record_judgment(Judgment(t, d, who, g), collection="toy", pool_version="p1")

    assert wb(db, "agreement", "p1", "--weights", "quadratic") == 0
    lines = [ln.split("\t") for ln in capsys.readouterr().out.splitlines()]
    assert lines[0] == ["figure", "scope", "value", "n_items", "note"]
    keys = sorted(ann)
    kappa = cohen_kappa_score([ann[k] for k in keys], [bob[k] for k in keys], weights="quadratic",
                              labels=[0, 1, 2, 3])
    assert lines[1][:2] == ["kappa_quadratic", "ann|bob"] and lines[1][3] == "5"
    assert float(lines[1][2]) == pytest.approx(kappa)
    assert [ln[:2] for ln in lines[2:]] == [["alpha_ordinal", "topic 1"], ["alpha_ordinal", "topic 2"],
                                            ["alpha_ordinal", "all"]]

    assert wb(db, "publish", "p1", "--name", "v1", "--lead", "boss", "--token", "boss-token", "--rule", "max",
              "--format", "json") == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["entries"], out["added"], out["rule"]) == (5, 5, "adjudicated>unanimous>max")
    assert (db.parent / "v1.qrels").read_text().splitlines() == [
        "1 0 d1 2", "1 0 d2 1", "1 0 d3 1", "2 0 d4 3", "2 0 d5 2"]

    store.judgments.record_judgment(Judgment("1", "d2", "bob", 0), collection="toy", pool_version="p1")
    assert wb(db, "publish", "p1", "--name", "v2", "--parent", "v1", "--lead", "boss", "--token", "boss-token",
              "--rule", "max", "--no-export") == 0
    table = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())  # the default: a table
    assert (table["name"], table["parent"], table["changed"], table["file"]) == ("v2", "v1", "1", "-")
    assert not (db.parent / "v2.qrels").exists()
    assert wb(db, "qrels", "diff", "v1", "v2") == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["~\t1\td2\t1\t0"]
    assert "v1 -> v2: +0 ~1 -0" in captured.err
    assert wb(db, "publish", "p1", "--name", "v2", "--lead", "boss", "--token", "boss-token") == 1
    assert "already exists" in capsys.readouterr().err


def test_users_list_never_prints_tokens(db, capsys):
    assert wb(db, "users", "add", "boss", "--role", "lead", "--token", "boss-token") == 0
    capsys.readouterr()
    assert wb(db, "users", "list") == 0
    out = capsys.readouterr().out
    assert out.startswith("boss\tlead\t") and "boss-token" not in out


def test_reset_token_and_rubric(db, capsys):
    assert wb(db, "users", "add", "boss", "--role", "lead", "--token", "boss-token") == 0
    assert wb(db, "users", "add", "ann", "--token", "ann-token-0", "--lead", "boss", "--lead-token", "boss-token") == 0
    capsys.readouterr()
    assert wb(db, "users", "reset-token", "ann", "--lead", "ann", "--lead-token", "ann-token-0") == 1
    assert "has role 'assessor', expected 'lead'" in capsys.readouterr().err
    assert wb(db, "users", "reset-token", "ann", "--lead", "boss", "--lead-token", "boss-token") == 0
    new = capsys.readouterr().out.strip()
    from workbench.errors import PermissionDeniedError
    from workbench.store import Store

    store = Store(db, client="test")
    assert store.users.authenticate("ann", new).name == "ann"
    with pytest.raises(PermissionDeniedError):
        store.users.authenticate("ann", "ann-token-0")

    assert wb(db, "rubric", "toy") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("rubric\tdefault\t") and [ln.split("\t")[0] for ln in lines[1:]] == ["0", "1", "2", "3"]
    assert wb(db, "rubric", "toy", "cranfield", "--lead", "boss", "--token", "boss-token") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("rubric\tcranfield\t") and len(lines) == 6
    assert wb(db, "rubric", "toy", "nope", "--lead", "boss", "--token", "boss-token") == 1
    assert "unknown rubric 'nope'; known: binary, cranfield, default" in capsys.readouterr().err


def test_publish_warns_when_pooled_documents_have_no_grade_or_nothing_changed(db, capsys):
    from workbench.store import Store

    assert wb(db, "users", "add", "boss", "--role", "lead", "--token", "boss-token") == 0
    store = Store(db, client="test")
    store.judgments.record_judgment(Judgment("1", "d1", "boss", 2), collection="toy", pool_version="p1")
    store.judgments.record_judgment(Judgment("2", "d4", "boss", 0), collection="toy", pool_version="p1")
    capsys.readouterr()
    assert wb(db, "publish", "p1", "--name", "v1", "--lead", "boss", "--token", "boss-token", "--format", "jsonl") == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert (out["pooled"], out["pooled_with_grade"]) == (5, 2)  # p1 pools d1-d5, two are graded
    assert "[warning] only 2 of 5 pooled documents (40.0%) have a final grade; the other 3" in captured.err
    assert wb(db, "publish", "p1", "--name", "v2", "--parent", "v1", "--lead", "boss", "--token", "boss-token") == 0
    assert "[warning] v2 has the same entries as its parent v1" in capsys.readouterr().err


def test_publish_says_how_many_final_grades_the_fallback_decided_and_by_which_rule(db, capsys):
    # Issue 26: a trial published 774 grades by fallback and the command did not say so.
    from workbench.store import Store

    assert wb(db, "users", "add", "boss", "--role", "lead", "--token", "boss-token") == 0
    store = Store(db, client="test")
    ann = {("1", "d1"): 2, ("1", "d2"): 0, ("1", "d3"): 1, ("2", "d4"): 3, ("2", "d5"): 0}
    bob = {("1", "d1"): 2, ("1", "d2"): 1, ("1", "d3"): None, ("2", "d4"): 1, ("2", "d5"): 2}
    for who, grades in (("ann", ann), ("bob", bob)):
        store.users.add_user(who, role="assessor", token=f"{who}-token-0", lead="boss")
        for (t, d), g in grades.items():
            store.judgments.record_judgment(Judgment(t, d, who, g, unsure=g is None), collection="toy",
                                            pool_version="p1")
    store.judgments.record_judgment(Judgment("1", "d3", "ann", None, unsure=True), collection="toy", pool_version="p1")
    capsys.readouterr()
    # d1 unanimous (2, 2); d3 unsure only: unresolved; d2 (0, 1), d4 (3, 1), d5 (0, 2) disagree: the
    # lower median decides d2 -> 0, d4 -> 1, d5 -> 0 unless a lead adjudicates. The lead decides d4.
    assert wb(db, "adjudicate", "p1", "--topic", "2", "--doc", "d4", "--grade", "3", "--rationale", "complete",
              "--lead", "boss", "--token", "boss-token") == 0
    capsys.readouterr()
    assert wb(db, "publish", "p1", "--name", "v1", "--lead", "boss", "--token", "boss-token", "--format", "json") == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert (out["unanimous"], out["adjudicated"], out["by_fallback"], out["unresolved"]) == (1, 1, 2, 1)
    assert out["fallback"] == "median"
    assert store.qrels.get_qrels("v1") == {"1": {"d1": 2, "d2": 0}, "2": {"d4": 3, "d5": 0}}
    assert ("decided: 1 unanimous, 1 adjudicated, 2 by the fallback median (lower median of the grades: the "
            "assessors disagreed and no lead adjudicated), 1 unresolved (unsure only)") in captured.err
    assert wb(db, "publish", "p1", "--name", "v2", "--lead", "boss", "--token", "boss-token", "--rule", "max") == 0
    captured = capsys.readouterr()
    table = dict(line.split(None, 1) for line in captured.out.splitlines())
    assert (table["unanimous"], table["adjudicated"], table["by_fallback"], table["fallback"]) == ("1", "1", "2", "max")
    assert "2 by the fallback max (highest grade (lenient): the assessors disagreed" in captured.err
    assert store.qrels.get_qrels("v2") == {"1": {"d1": 2, "d2": 1}, "2": {"d4": 3, "d5": 2}}


def test_ui_on_a_taken_port_says_so_and_names_the_remedy(db, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert wb(db, "ui", "--port", str(port)) == 1
    err = capsys.readouterr().err
    assert f"port {port} on 127.0.0.1 is in use" in err and "--port" in err
