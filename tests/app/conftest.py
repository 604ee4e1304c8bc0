"""Fixtures of the app tests: a seeded store in a temporary folder, the
environment the app reads, and AppTest helpers.

AppTest cannot run in parallel threads and ``st.cache_resource`` survives
between tests, so every test clears it in teardown (../shared/ENVIRONMENT.md).
"""

from __future__ import annotations

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


@pytest.fixture
def ui_server(seeded, tmp_path):
    """`workbench ui` on a free port over the seeded store; yields (url, db, queues, log path).

    Stopped with SIGTERM to its process group; the test reads the server log for tracebacks.
    """
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    db, queues = seeded
    port = free_port()
    log_path = tmp_path / "server.log"
    exe = Path(sys.executable).with_name("workbench")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [str(exe), "--db", str(db), "ui", "--port", str(port)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().decode() == "ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"UI did not start (rc={proc.poll()}): {log_path.read_text()}")
            time.sleep(0.2)
        yield url, db, queues, log_path, proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)
