"""While another process (e.g. a lead's CLI command) holds the store, the UI
waits for it and says what it is waiting for, instead of failing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from app_helpers import new_app, sign_in

HOLDER = textwrap.dedent(
    """
    import sys, time
    from workbench.store import LabelStore
    s = LabelStore(sys.argv[1], client="workbench pool extend")
    with s.connection("extend pool p1"):
        print("holding", flush=True)
        time.sleep(2.5)
    """
)


def test_ui_waits_for_a_cli_command_and_says_so(seeded):
    db, queues = seeded
    at = new_app()  # the sign-in page needs no store access
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "holding"
        sign_in(at, "ann")  # authenticating needs the store: waits for the holder
    finally:
        p.wait(timeout=60)
    assert not at.exception
    toasts = [t.value for t in at.toast]
    assert any("waiting for the store" in t and "workbench pool extend" in t and "extend pool p1" in t
               for t in toasts), toasts
    assert at.session_state["auth_session"].user == "ann"
    assert at.session_state["judge_shown"]["doc"] == queues["ann"][0]
