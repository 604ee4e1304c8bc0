"""Fixtures of the app tests: a seeded store in a temporary folder, the
environment the app reads, and AppTest helpers.

AppTest cannot run in parallel threads and ``st.cache_resource`` survives
between tests, so every test clears it in teardown (../shared/ENVIRONMENT.md).
"""

from __future__ import annotations

import pytest
from app_helpers import CHROMIUM_ARGS, SIGNAL_TIMEOUT_MS, running_ui, seed_store

try:  # Playwright's expect() waits 5 s by default: a time, not a signal. Use the failure bound of
    # the status-marker waits instead (expect returns as soon as the element is there).
    from playwright.sync_api import expect

    expect.set_options(timeout=SIGNAL_TIMEOUT_MS)
except ImportError:  # pragma: no cover - browser tests are skipped without Playwright
    pass


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


# -- real browser ---------------------------------------------------------------

@pytest.fixture(scope="session")
def browser_type_launch_args():
    """Debian's chromium, headless, with every background lookup disabled."""
    return {"executable_path": "/usr/bin/chromium", "headless": True, "args": CHROMIUM_ARGS}


@pytest.fixture
def ui_server(seeded, tmp_path):
    """`workbench ui` on a free port over the seeded store; yields (url, db, queues, log path, process)."""
    db, queues = seeded
    log_path = tmp_path / "server.log"
    with running_ui(db, log_path) as (url, proc):
        yield url, db, queues, log_path, proc
