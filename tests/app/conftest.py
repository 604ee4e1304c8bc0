"""Fixtures of the app tests: a seeded store in a temporary folder, the
environment the app reads, and AppTest helpers.

AppTest cannot run in parallel threads and ``st.cache_resource`` survives
between tests, so every test clears it in teardown (../shared/ENVIRONMENT.md).
"""

from __future__ import annotations

import contextlib

import pytest
from app_helpers import CHROMIUM_ARGS, free_port, seed_store


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


@contextlib.contextmanager
def running_ui(db, log_path):
    """`workbench ui` over ``db`` on a free port; yields (url, process). Stopped with
    SIGTERM to its process group (SIGKILL if it does not stop)."""
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    port = free_port()
    exe = Path(sys.executable).with_name("workbench")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [str(exe), "--db", str(db), "ui", "--port", str(port)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # a failure bound: the loop ends as soon as the server answers
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().decode() == "ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"UI did not start (rc={proc.poll()}): {Path(log_path).read_text()}")
            time.sleep(0.2)
        yield url, proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


@pytest.fixture
def ui_server(seeded, tmp_path):
    """`workbench ui` on a free port over the seeded store; yields (url, db, queues, log path, process)."""
    db, queues = seeded
    log_path = tmp_path / "server.log"
    with running_ui(db, log_path) as (url, proc):
        yield url, db, queues, log_path, proc
