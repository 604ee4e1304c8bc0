"""Helpers of the app tests: test data (a tiny collection, two runs, a pool,
users and assignments, written through the public store API, no SQL), AppTest
drivers and the browser settings."""

from __future__ import annotations

import contextlib
from pathlib import Path

from workbench.types import Document, RunInfo, Topic

COLLECTION = "toy"
TOKENS = {"lead": "lead-token-1", "ann": "ann-token-1", "bob": "bob-token-1"}

DOCUMENTS = [
    Document("d1", "Laminar flow over a plate", "Laminar boundary layer flow over a flat plate at low speed."),
    Document("d2", "Shock waves", "Normal shock waves in supersonic flow and their pressure jump."),
    Document("d3", "Evil markup", 'Flow data <script>alert("pwned")</script> <b>bold</b> & more flow.'),
    Document("d4", "Heat transfer", "Heat transfer in a laminar boundary layer with suction."),
    Document("d5", "Wing flutter", "Flutter of swept wings at transonic speed."),
    Document("d6", "Unrelated", "Nothing about aerodynamics at all."),
]
TOPICS = [
    Topic("1", "laminar boundary layer flow", "How does a laminar boundary layer develop?"),
    Topic("2", "shock waves supersonic", "Pressure jump across shocks.", "Relevant: shock relations."),
]
RUNS = {
    "bm25-secret-run": {"1": {"d1": 3.0, "d4": 2.0, "d3": 1.0}, "2": {"d2": 3.0, "d5": 2.0}},
    "dense-secret-run": {"1": {"d4": 0.9, "d1": 0.8, "d6": 0.1}, "2": {"d5": 0.7, "d2": 0.6}},
}


def seed_store(db: Path, *, assessors: tuple[str, ...] = ("ann", "bob"), overlap: int = 2,
               pool: str = "p1", depth: int = 3) -> dict[str, list[tuple[str, str]]]:
    """Collection, runs, one pool version, lead + assessors, assignments.

    Returns:
        assessor -> queue (topic_id, doc_id) in judging order.
    """
    from pooling.pool import build_pool
    from workbench.services.judging import assessments as svc
    from workbench.store import Store

    store = Store(db, client="seed", lock_timeout_s=60)
    store.collections.ingest_collection(COLLECTION, DOCUMENTS, TOPICS)
    version = store.collections.latest_collection_version(COLLECTION)
    for name, run in RUNS.items():
        store.runs.save_run(RunInfo(name, "imported", {}, 10, COLLECTION, version), run)
    store.pools.save_pool(pool, build_pool(RUNS, depth), collection=COLLECTION, collection_version=version)
    store.users.add_user("lead", "lead", token=TOKENS["lead"])
    for a in assessors:
        store.users.add_user(a, "assessor", token=TOKENS.get(a, f"{a}-token-1"), lead="lead")
    lead = svc.sign_in(store.users, "lead", TOKENS["lead"])
    svc.assign_pool(store, lead, pool, list(assessors), overlap=overlap, seed=11, band_size=2)
    return {a: [(q.topic_id, q.doc_id) for q in store.judging.assessor_queue(a)] for a in assessors}


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
    return tuple(at.session_state["judge"]["shown"]["doc"])  # type: ignore[return-value]


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
    for d in at.dataframe:
        parts.append(d.value.to_csv())
    return "\n".join(parts)


ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "screenshots"

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-default-apps", "--disable-extensions", "--metrics-recording-only", "--no-default-browser-check",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
    "--disable-features=AutofillServerCommunication,OptimizationHints,MediaRouter,Translate",
    "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--no-pings",
]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- deterministic signals of the real browser ----------------------------------

STATUS = "[data-testid='wb-status']"
SIGNAL_TIMEOUT_MS = 60_000
"""Upper bound for a signal to appear (a failure bound, not a wait: the tests
return as soon as the signal is there)."""


def status(pw_page, **fields) -> dict[str, str]:
    """Wait for the status marker of a finished run with these fields
    (``status(page, position=3)``) and return all its fields.

    The app renders the marker last in every run (``widgets.status_marker``), so
    when it carries the fields, the run that produced them has finished.
    """
    sel = STATUS + "".join(f"[data-{k}='{v}']" for k, v in fields.items())
    loc = pw_page.locator(sel).last
    loc.wait_for(state="attached", timeout=SIGNAL_TIMEOUT_MS)
    return loc.evaluate("e => Object.assign({}, e.dataset)")


def sync(page) -> dict[str, str]:
    """Press Refresh and wait until the run it causes has finished; return the
    marker's fields. The app handles one run per session at a time
    (``--runner.fastReruns false``) in the order the browser sent them, so after
    this every earlier key press and click has been handled."""
    before = int(page.locator(STATUS).last.get_attribute("data-sync", timeout=SIGNAL_TIMEOUT_MS) or 0)
    page.locator(".st-key-wb_refresh button:visible").first.click(timeout=SIGNAL_TIMEOUT_MS)
    return status(page, sync=before + 1)


def browser_sign_in(page, user: str, token: str | None = None) -> None:
    """Fill the sign-in form and submit it (the caller waits for the status marker)."""
    page.get_by_label("User name").fill(user)
    page.get_by_label("Access token").fill(token if token is not None else TOKENS[user])
    page.get_by_role("button", name="Sign in").click()


KEY_BUTTONS = ".st-key-judge_bar button, .st-key-judge_prev_end button, .st-key-adjudicate_bar button"
"""The buttons whose key bindings (Streamlit's ``shortcut=``) the judging and adjudication pages use."""


def wait_for_keys(page) -> None:
    """Wait until the bar's buttons, and so their key bindings, are mounted.

    Streamlit loads a widget's code lazily, so in a fresh browser the run's status
    marker can be on screen while the grade buttons (and their key bindings) are
    not yet mounted; a key pressed then is lost (all eight presses of the rapid
    key test once, under load). A button binds its key when it mounts."""
    page.locator(KEY_BUTTONS).first.wait_for(state="visible", timeout=SIGNAL_TIMEOUT_MS)


def press_key(page, key: str) -> None:
    """Press a key with the focus on the page (the topic card), not in a field, once the keys are bound."""
    wait_for_keys(page)
    page.locator("[data-testid='wb-topic']").first.click()
    page.keyboard.press(key)


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
