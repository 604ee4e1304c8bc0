"""Changing a collection's rubric (QA defects: an unknown collection was
accepted, and a change under off-scale judgments made agreement crash with a
ValueError traceback in the CLI and on the Agreement page)."""

from __future__ import annotations

import pytest

from workbench.cli import main
from workbench.types import Judgment


@pytest.fixture
def db(toy_pool):
    from workbench.store import Store

    path = toy_pool({"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})
    store = Store(path, client="seed")
    store.users.add_user("lead", "lead", token="lead-token")
    store.rubrics.set_collection_rubric("toy", "cranfield", lead="lead")
    for who in ("ann", "bob"):
        store.users.add_user(who, "assessor", token=f"{who}-token", lead="lead")
    for doc, (a, b) in {"d1": (4, 4), "d2": (1, 2), "d3": (0, 4)}.items():
        store.judgments.record_judgment(Judgment("1", doc, "ann", a), collection="toy", pool_version="p1")
        store.judgments.record_judgment(Judgment("1", doc, "bob", b), collection="toy", pool_version="p1")
    return path


def wb(db, *args):
    return main(["--db", str(db), *args])


def test_rubric_of_an_unknown_collection_fails_listing_the_known(db, capsys):
    assert wb(db, "rubric", "nosuch", "default", "--lead", "lead", "--token", "lead-token") == 1
    err = capsys.readouterr().err
    assert "nosuch" in err and "toy" in err and "Traceback" not in err


def test_rubric_change_under_off_scale_judgments_is_refused(db, capsys):
    assert wb(db, "rubric", "toy", "default", "--lead", "lead", "--token", "lead-token") == 1
    err = capsys.readouterr().err
    assert "found grade 4 in 3 current judgment(s)" in err and "Traceback" not in err
    assert wb(db, "agreement", "p1") == 0  # still on cranfield: agreement works


def _force_rubric(db, name):
    """A store from before the check: the rubric was switched under grade-4 judgments."""
    from workbench.store import Store

    with Store(db, client="test").transaction("legacy") as cur:
        cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", ["rubric:toy", name])


def test_agreement_on_off_scale_grades_is_a_clean_error(db, capsys):
    _force_rubric(db, "default")
    assert wb(db, "agreement", "p1") == 1
    err = capsys.readouterr().err
    assert "expected grades in the rubric scale [0, 1, 2, 3], found [4]" in err and "Traceback" not in err


def test_agreement_page_shows_the_error(db, monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from workbench.app import APP_PATH

    _force_rubric(db, "default")
    monkeypatch.setenv("WORKBENCH_DB", str(db))
    st.cache_resource.clear()
    try:
        lead = AppTest.from_file(str(APP_PATH), default_timeout=60).run()
        lead.text_input(key="signin_name").input("lead")
        lead.text_input(key="signin_token").input("lead-token")
        next(b for b in lead.button if b.label == "Sign in").click().run()
        lead.switch_page("app_pages/agreement.py").run()
        assert not lead.exception
        assert "expected grades in the rubric scale [0, 1, 2, 3], found [4]" in lead.error[0].value.replace("\\", "")  # Markdown-escaped
    finally:
        st.cache_resource.clear()
