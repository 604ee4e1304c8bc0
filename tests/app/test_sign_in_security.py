"""Sign-in page and `workbench ui` exposure (issue 9, security):

* the store's absolute path is shown to leads after sign-in only (QA defect:
  the sign-in page showed it to anyone who could reach it);
* failed sign-ins slow down per user: the right token right after failures is
  refused (QA defect: 30 wrong tokens in 2 s, then the right one worked); the
  app's clock is set by the test, never waited for;
* ``workbench ui --host 0.0.0.0`` is refused unless ``--allow-remote``, which
  then warns that tokens travel in clear text.
"""

from __future__ import annotations

import pytest
from app_helpers import TOKENS, new_app, page_text, sign_in


def test_store_path_is_shown_to_leads_after_sign_in_only(seeded):
    from workbench.app.widgets import md_escape

    db, _queues = seeded
    at = new_app()
    assert db.name not in page_text(at) and "Store:" not in page_text(at)  # the name survives escaping
    ann = sign_in(new_app(), "ann")
    assert db.name not in page_text(ann) + "\n".join(c.value for c in ann.sidebar.caption)
    lead = sign_in(new_app(), "lead")
    assert any(md_escape(db) in c.value for c in lead.sidebar.caption)


def test_right_token_right_after_failures_is_refused_until_the_delay_passed(seeded, monkeypatch):
    from workbench.app import widgets

    now = [1000.0]
    monkeypatch.setattr(widgets, "clock", lambda: now[0])
    at = new_app()
    for _ in range(3):
        sign_in(at, "ann", "wrong-token")
    assert "wrong token; wait" in at.error[0].value or "too many failed sign-ins" in at.error[0].value
    sign_in(at, "ann")  # the right token, still at the same instant
    assert at.session_state["auth"]["session"] is None
    assert "too many failed sign-ins for 'ann'" in at.error[0].value
    now[0] += 300.0  # past any delay after three failures (1 + 2 + 4 s)
    sign_in(at, "ann")
    assert not at.exception
    assert at.session_state["auth"]["session"].user == "ann"
    lead = sign_in(new_app(), "lead", TOKENS["lead"])  # another user was never slowed
    assert lead.session_state["auth"]["session"].user == "lead"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.org"])
def test_ui_refuses_a_host_other_machines_can_reach(host, capsys):
    from workbench.cli import main

    assert main(["ui", "--host", host, "--port", "1"]) == 2
    err = capsys.readouterr().err
    assert "expected a loopback address" in err and "--allow-remote" in err and "clear text" in err


def test_ui_allow_remote_warns_that_tokens_travel_in_clear_text(tmp_path, monkeypatch, capsys):
    import os

    from app_helpers import free_port

    from workbench.cli import judging as ui_cli
    from workbench.cli import main

    started: list[list[str]] = []

    def fake_execve(exe, cmd, env):  # stands in for becoming the Streamlit server
        started.append(list(cmd))
        raise SystemExit(0)

    monkeypatch.setattr(os, "execve", fake_execve)
    assert ui_cli.is_loopback("127.0.0.1") and ui_cli.is_loopback("::1") and ui_cli.is_loopback("localhost")
    port = free_port()
    assert main(["--db", str(tmp_path / "wb.duckdb"), "ui", "--host", "0.0.0.0", "--port", str(port),
                 "--allow-remote"]) == 0
    err = capsys.readouterr().err
    assert "[warning] the UI listens on 0.0.0.0" in err and "clear text" in err
    assert started and started[0][started[0].index("--server.address") + 1] == "0.0.0.0"
    assert main(["--db", str(tmp_path / "wb.duckdb"), "ui", "--port", str(port)]) == 0  # loopback: no warning
    assert "[warning]" not in capsys.readouterr().err
