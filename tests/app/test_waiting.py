"""While another process (e.g. a lead's CLI command) holds the store, the UI
waits for it and says what it is waiting for, instead of failing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from app_helpers import new_app, sign_in

# Holds the store until the UI has said that it waits (the test's hook on the
# UI's wait callback creates the file argv[2]): a condition, not a time, so the
# UI's sign-in waits and reports however slow the machine is.
HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from workbench.store import Store
    reported = Path(sys.argv[2])
    s = Store(sys.argv[1], client="workbench pool extend")
    with s.connection("extend pool p1"):
        print("holding", flush=True)
        deadline = time.monotonic() + 120
        while not reported.exists():
            if time.monotonic() > deadline:
                sys.exit("the UI never said it was waiting")
            time.sleep(0.02)
    """
)


def test_ui_waits_for_a_cli_command_and_says_so(seeded, tmp_path, monkeypatch):
    from workbench.app import widgets

    db, queues = seeded
    reported = tmp_path / "ui-reported-waiting"
    original = widgets._on_wait

    def on_wait(message: str) -> None:
        original(message)
        reported.touch()

    monkeypatch.setattr(widgets, "_on_wait", on_wait)  # read when the store handle is created
    at = new_app()  # the sign-in page needs no store access
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), str(reported)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "holding"
        sign_in(at, "ann")  # authenticating needs the store: waits for the holder
    finally:
        p.wait(timeout=180)
    assert p.returncode == 0
    assert not at.exception
    toasts = [t.value for t in at.toast]
    assert any("waiting for the store" in t and "workbench pool extend" in t and "extend pool p1" in t
               for t in toasts), toasts
    assert at.session_state["auth"]["session"].user == "ann"
    assert at.session_state["judge"]["shown"]["doc"] == queues["ann"][0]
