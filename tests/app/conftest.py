"""Fixtures of the app tests: a seeded store in a temporary folder, the
environment the app reads, and AppTest helpers.

AppTest cannot run in parallel threads and ``st.cache_resource`` survives
between tests, so every test clears it in teardown (../shared/ENVIRONMENT.md).
"""

from __future__ import annotations

import pytest

from app_seed import TOKENS, seed_store


@pytest.fixture
def seeded(tmp_path, monkeypatch):
    """(db path, assessor -> queue) with WORKBENCH_DB pointing at it."""
    import streamlit as st

    db = tmp_path / "labels" / "wb.duckdb"
    db.parent.mkdir()
    queues = seed_store(db)
    monkeypatch.setenv("WORKBENCH_DB", str(db))
    monkeypatch.setenv("WORKBENCH_LOCK_TIMEOUT", "60")
    st.cache_resource.clear()
    yield db, queues
    st.cache_resource.clear()


def new_app():
    from streamlit.testing.v1 import AppTest

    from workbench.app import APP_PATH

    return AppTest.from_file(str(APP_PATH), default_timeout=60).run()


def sign_in(at, user: str, token: str | None = None):
    at.text_input(key="signin_name").input(user)
    at.text_input(key="signin_token").input(token if token is not None else TOKENS[user])
    next(b for b in at.button if b.label == "Sign in").click().run()
    return at


def button(at, prefix: str):
    """The button whose label starts with ``prefix`` (grade buttons are '2 · ...')."""
    found = [b for b in at.button if b.label.startswith(prefix)]
    assert len(found) == 1, [b.label for b in at.button]
    return found[0]


def shown(at) -> tuple[str, str]:
    """(topic_id, doc_id) on the judging screen."""
    return tuple(at.session_state["judge_shown"]["doc"])  # type: ignore[return-value]


def page_text(at) -> str:
    """Every visible string of the last run (for blindness checks)."""
    parts: list[str] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "text", "success", "info", "warning",
                 "error", "metric"):
        for el in getattr(at, kind, []):
            parts.append(str(getattr(el, "value", "")) + " " + str(getattr(el, "label", "")))
    parts.extend(h.proto.body for h in at.html)
    parts.extend(b.label for b in at.button)
    for t in at.table:
        parts.append(t.value.to_csv())
    return "\n".join(parts)
