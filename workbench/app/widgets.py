"""Small render helpers shared by the pages, and the app's store handle.

Concurrency rules (see ``workbench.store.core`` and ../shared/ENVIRONMENT.md):
the store object is a ``st.cache_resource`` (it holds only a path; every call
takes its own lease and fresh cursor); nothing DB-related is kept in
``st.session_state``; writes happen in button callbacks through the services,
and no ``st.*`` call runs inside a transaction.
"""

from __future__ import annotations

import html
import os
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import streamlit as st

from workbench.config import WorkbenchConfig, resolve
from workbench.judging.queue import highlight_html, query_terms, topic_window
from workbench.scoring.measures import DEFAULT_CUTOFFS

if TYPE_CHECKING:
    from workbench.judging.queue import JudgingView
    from workbench.judging.signin import SignInThrottle
    from workbench.rubric import Rubric
    from workbench.services.evaluation.scoreboard import Scoreboard
    from workbench.services.judging.assessments import QueueState, Session
    from workbench.store import Store
    from workbench.store.qrels import QrelsVersionInfo

LEAD_POOL_KEY = "lead_pool"

BOXES: dict[str, Callable[[], dict[str, Any]]] = {
    "auth": lambda: {"session": None, "sid": None, "expires": 0.0, "notice": "", "cookie": ""},
    "judge": lambda: {"position": None, "shown": None, "flash": None, "undo": [], "drafts": {}, "help": False},
    "adjudicate": lambda: {"msg": None, "at": 0, "clear_why": False, "clear_pick": False},
    "publish": lambda: {"msg": None, "clear": False},
    "pool": lambda: {"msg": None},
}
"""The per-session state of each part of the app, one mutable dict ("box") each.

Why boxes: in Streamlit 1.67 every ``st.session_state`` read or write is a yield
point (``SafeSessionState``): when the next key press is already waiting, the
access raises ``RerunException``, and a widget callback that raises it simply
ends there (Streamlit treats it as the callback's ``st.rerun()``). A callback
that saved to the store and then touched session state could therefore lose
its updates (the position not advanced, the Undo entry missing) while the save
itself stood. So a callback fetches its box (and any widget value) *before* it
writes to the store, and afterwards only mutates the box in place, with no
``st.*`` call: the write and its effects on the screen land together."""


def init_boxes() -> None:
    """Create this browser session's boxes (once; the entrypoint calls it each run)."""
    for name, make in BOXES.items():
        if name not in st.session_state:
            st.session_state[name] = make()


def box(name: str) -> dict[str, Any]:
    """This session's box ``name`` (see ``BOXES``)."""
    return st.session_state[name]  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class PageSpec:
    """One page of the app.

    Attributes:
        key: its address (``/scoreboard``) and status-marker name.
        file: the page script in ``app_pages/``.
        title: the navigation label.
        icon: the navigation icon (Material icons are drawn by the font Streamlit ships).
        lead: lead-only page.
    """

    key: str
    file: str
    title: str
    icon: str
    lead: bool


PAGES: tuple[PageSpec, ...] = (
    PageSpec("judge", "judge.py", "Judge", ":material/gavel:", False),
    PageSpec("my_judgments", "my_judgments.py", "My judgments", ":material/checklist:", False),
    PageSpec("progress", "progress.py", "Progress", ":material/trending_up:", False),
    PageSpec("pool", "pool.py", "Pool", ":material/inventory_2:", True),
    PageSpec("agreement", "agreement.py", "Agreement", ":material/handshake:", True),
    PageSpec("adjudicate", "adjudicate.py", "Adjudicate", ":material/balance:", True),
    PageSpec("publish", "publish.py", "Publish", ":material/publish:", True),
    PageSpec("scoreboard", "scoreboard.py", "Scoreboard", ":material/leaderboard:", True),
    PageSpec("qrels_versions", "qrels_versions.py", "Qrels versions", ":material/account_tree:", True),
)
"""Every page, in navigation order. A new page is one entry here and one file."""


def page_path(key: str) -> str:
    """The script path of a page (for ``st.switch_page`` and ``st.page_link``)."""
    return "app_pages/" + next(p.file for p in PAGES if p.key == key)

CSS = """
<style>
.wb-doc {white-space: pre-wrap; line-height: 1.55; font-size: 1.02rem; padding: 0.8rem 1rem;
         border: 1px solid rgba(128,128,128,0.35); border-radius: 0.5rem;
         max-height: max(12rem, calc(100vh - 30rem)); overflow-y: auto;}
.wb-doc h3 {margin: 0 0 0.6rem 0; font-size: 1.15rem; white-space: normal;}
.wb-topic {padding: 0.4rem 0.8rem; border-left: 4px solid #4a7bd0; margin-bottom: 0.2rem;}
.wb-topic.wb-new {border-left-color: #d08a4a;}
.wb-topic p {margin: 0.2rem 0;}
.wb-badge {background: #d08a4a; color: #fff; border-radius: 0.6rem; padding: 0 0.5rem; margin-left: 0.5rem;
           font-size: 0.8rem;}
.wb-doc mark, .wb-topic mark {background: #ffe08a; padding: 0 0.1rem; border-radius: 0.15rem;}
[data-testid="stElementContainer"]:has(.wb-status) {display: none;}
/* The status line keeps its height whether or not a message is shown: nothing moves. */
.st-key-judge_status, .st-key-adjudicate_status {min-height: 3.6rem;}
.st-key-judge_status [data-testid="stAlert"], .st-key-adjudicate_status [data-testid="stAlert"] {padding: 0;}
/* The grade bar stays at the bottom of the window while the page scrolls (sticky on
   the layout wrapper Streamlit puts around the container, which has its height). */
[data-testid="stLayoutWrapper"]:has(> .st-key-judge_bar),
[data-testid="stLayoutWrapper"]:has(> .st-key-adjudicate_bar) {position: sticky; bottom: 0; z-index: 99;}
.st-key-judge_bar, .st-key-adjudicate_bar {background: var(--wb-bar-bg, #ffffff); padding: 0.45rem 0 0.55rem 0;
    border-top: 1px solid rgba(128,128,128,0.35); box-shadow: 0 -0.4rem 0.6rem -0.5rem rgba(0,0,0,0.25);}
/* The bar's labels are never cut (1024 px with the sidebar open: six buttons of about 100 px): a label
   wraps at spaces, and the key hint goes under it when both do not fit on one line. */
.st-key-judge_bar button, .st-key-adjudicate_bar button {padding-left: 0.4rem; padding-right: 0.4rem;
    height: auto; min-height: 2.5rem;}
.st-key-judge_bar button [data-testid="stMarkdownContainer"],
.st-key-adjudicate_bar button [data-testid="stMarkdownContainer"] {white-space: normal; overflow: visible;
    text-overflow: clip;}
.st-key-judge_bar button p, .st-key-adjudicate_bar button p {white-space: normal; line-height: 1.2;}
.st-key-judge_bar button span[data-has-shortcut], .st-key-adjudicate_bar button span[data-has-shortcut] {
    flex-wrap: wrap; justify-content: center; row-gap: 0.1rem;}
/* Less padding around the page: room for the bar's labels and for wide tables at 1024 px. */
[data-testid="stMainBlockContainer"] {padding-top: 3.5rem; padding-left: 2rem; padding-right: 2rem;}
/* Adjudicate: the document scrolls in what the desk leaves of the window (the judgments above it and
   the bar with the rationale below it stay in view at 1400 x 900). */
.st-key-adjudicate_doc .wb-doc {max-height: max(8rem, calc(100vh - 41rem));}
/* "Topics near you": the marker has a column of its own, so every topic starts at the same x. */
.wb-topics {font-size: 0.95rem; line-height: 1.6; margin-bottom: 0.6rem;}
.wb-topics .wb-mark {display: inline-block; width: 1.3em;}
</style>
"""


_MD_INLINE = re.compile(r"([\\`*_\[\]#!|~<>$])")
_MD_LINE_START = re.compile(r"^(\s*)([-+=]|\d{1,9}(?=[.)](?:\s|$)))", re.MULTILINE)


def md_escape(text: object) -> str:
    r"""A corpus- or user-provided string made inert for ``st.markdown`` and every
    element that renders Markdown (captions, alerts, ``st.table`` cells, titles).

    Backslash-escapes the characters that open Markdown and Streamlit syntax
    (images and links ``![x](u)`` via ``!``/``[``/``]``, emphasis, code,
    ``:red[...]`` directives via ``[``, ``$`` math, HTML, table pipes) and
    list/heading markers at a line start, so the text is shown literally and
    never fetches a URL. Parentheses, colons and dots are left alone (they
    open nothing once ``[`` is escaped), so messages read the same raw.

    Args:
        text: any value; ``str(text)`` is escaped.

    Returns:
        The escaped string (displays as the original text).

    Source:
        CommonMark 0.31 §2.4 (any ASCII punctuation may be backslash-escaped).

    Example:
        >>> print(md_escape("![p](u) **b**"))
        \!\[p\](u) \*\*b\*\*
    """
    escaped = _MD_INLINE.sub(r"\\\1", str(text))
    # a list item, heading underline or ordered-list number at a line start
    return _MD_LINE_START.sub(
        lambda m: m.group(1) + ("\\" + m.group(2) if not m.group(2)[0].isdigit() else m.group(2) + "\\"),
        escaped,
    )


def md_cells(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows for ``st.table`` with every string cell passed through ``md_escape``
    (``st.table`` renders Markdown in cells); numbers are kept as they are."""
    return [{k: md_escape(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]


def config() -> WorkbenchConfig:
    """The app's configuration: ``WORKBENCH_DB`` (else labels/workbench.duckdb)."""
    return resolve(env=os.environ)


def _on_wait(message: str) -> None:
    # Called by a lease that waits for another process (e.g. a CLI command).
    # Only shows a toast in a script thread; never inside a transaction.
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx() is not None:
        st.toast(f"⏳ {message}")


@st.cache_resource(show_spinner=False)
def _store(path: str, lock_timeout_s: float) -> Store:
    from workbench.app import STORE_LINGER_S
    from workbench.store import Store

    return Store(
        path, client="workbench ui", lock_timeout_s=lock_timeout_s, on_wait=_on_wait, linger_s=STORE_LINGER_S
    )


@st.cache_resource(show_spinner=False)
def throttle() -> SignInThrottle:
    """The server process's sign-in throttle (thread-safe; shared by every session)."""
    from workbench.judging.signin import SignInThrottle

    return SignInThrottle()


def clock() -> float:
    """The monotonic clock of the sign-in throttle and session expiry, seconds."""
    return time.monotonic()


def store() -> Store:
    """The process-wide store handle (cached per database path)."""
    cfg = config()
    return _store(str(cfg.db_path), cfg.lock_timeout_s)


def session() -> Session | None:
    """The signed-in user, or None."""
    auth = st.session_state.get("auth")
    return None if auth is None else auth["session"]  # type: ignore[no-any-return]


class PageStop(Exception):  # noqa: N818 - a control-flow signal, like StopIteration
    """Raised by ``stop()``: ends the current page early; the entrypoint catches it
    and still renders the status marker (``st.stop()`` would end the whole run)."""


def stop() -> NoReturn:
    """End the current page here (instead of ``st.stop()``, which would also skip
    the status marker the tests wait on)."""
    raise PageStop


STATUS_KEY = "wb_status"
"""Session key: the fields of the status marker of the run in progress."""
RUNS_KEY = "wb_runs"
"""Session key: completed script runs of this browser session."""
SYNC_KEY = "wb_sync"
"""Session key: how often the Refresh button was pressed (echoed by the marker)."""


def signal(**fields: object) -> None:
    """Add fields to this run's status marker (e.g. ``position=3, saved=2``)."""
    st.session_state.setdefault(STATUS_KEY, {}).update({k: str(v) for k, v in fields.items()})


RUN_ID_KEY = "wb_run_id"
"""Session key: an id of the script run in progress (new at the top of every run,
after the callbacks), for values read once per run."""


def begin_run() -> None:
    """Start a script run: a fresh run id (call at the top of the entrypoint)."""
    st.session_state[RUN_ID_KEY] = uuid.uuid4().hex


def per_run(name: str, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per script run (the sidebar and the page share it)."""
    run = st.session_state.get(RUN_ID_KEY)
    memo = st.session_state.get(f"wb_memo_{name}")
    if memo is None or memo[0] != run:
        memo = (run, compute())
        st.session_state[f"wb_memo_{name}"] = memo
    return memo[1]


def queue_state() -> QueueState:
    """The signed-in user's queue, read once per run (after this run's saves)."""
    from workbench.services.judging import assessments as svc

    s = session()
    assert s is not None  # only called for a signed-in user
    return per_run("queue", lambda: svc.queue_state(store().judging, s))  # type: ignore[no-any-return]


def current_position(state: QueueState) -> int:
    """The Judge page's position (or where it will resume), within 1..n."""
    pos = box("judge")["position"] or state.resume
    return max(1, min(int(pos), max(1, state.n_total)))


def _jump_to_topic() -> None:
    topic_id = st.session_state.get("sidebar_jump")
    judge = box("judge")
    st.session_state["sidebar_jump"] = None
    if topic_id is None:
        return
    state = queue_state()
    entries = [e for e in state.entries if e.topic_id == topic_id]
    if entries:
        target = next((e for e in entries if not e.judged), entries[0])
        judge.update(position=target.position, shown=None, flash=None, goto=True)


def sidebar_progress(state: QueueState) -> None:
    """Overall progress (unsure apart), the current topic with its neighbours
    (the other topics collapsed) and a jump-to-topic box."""
    sb = st.sidebar
    if not state.n_total:
        sb.caption("No documents assigned to you yet.")
        return
    sb.progress(state.n_done / state.n_total,
                text=f"Judged {state.n_graded} · unsure {state.n_unsure} · of {state.n_total} "
                     f"({100 * state.n_done / state.n_total:.0f}%)")
    current = state.entries[current_position(state) - 1].topic_id
    sb.caption("Topics near you (judged/assigned):")
    sb.html(topics_near_html(state.progress, current))
    sb.selectbox("Jump to topic", list(state.progress), index=None, key="sidebar_jump", on_change=_jump_to_topic,
                 placeholder=f"topic id ({len(state.progress)} topics)")
    if sb.toggle(f"All {len(state.progress)} topics", key="sidebar_all_topics"):  # drawn only when asked for
        sb.dataframe([{"topic": t, "judged": d, "assigned": n} for t, (d, n) in state.progress.items()],
                     hide_index=True, height=240)


def topics_near_html(progress: Mapping[str, tuple[int, int]], current: str) -> str:
    """The sidebar's "Topics near you": the current topic (marked ▶) and its neighbours
    (``queue.topic_window``), one line each, ``topic ID: judged/assigned``. The marker sits in a
    fixed-width column, so every line's text starts at the same x (``st.text`` strips the first
    line's leading space, which put it out of line); ids are HTML-escaped."""
    lines = []
    for topic_id in topic_window(list(progress), current):
        done, total = progress[topic_id]
        mark, cls = ("▶", " wb-current") if topic_id == current else ("", "")
        lines.append(f"<div class='wb-topic-line{cls}'><span class='wb-mark'>{mark}</span>"
                     f"<span class='wb-topic-text'>topic {html.escape(topic_id)}: {done}/{total}</span></div>")
    return f"<div class='wb-topics' data-testid='wb-topics'>{''.join(lines)}</div>"


def status_marker(page: str) -> None:
    """The deterministic signal that a run finished: a hidden element, rendered
    last, carrying the completed-run count, the Refresh count, the page and the
    fields pages added with ``signal``. Browser tests wait for its attributes
    (``[data-testid=wb-status][data-position="3"]``), never for elapsed time."""
    st.session_state[RUNS_KEY] = int(st.session_state.get(RUNS_KEY) or 0) + 1
    fields = {"run": st.session_state[RUNS_KEY], "sync": st.session_state.get(SYNC_KEY) or 0, "page": page,
              **st.session_state.get(STATUS_KEY, {})}
    st.session_state[STATUS_KEY] = {}
    attrs = " ".join(f'data-{html.escape(k)}="{html.escape(str(v), quote=True)}"' for k, v in fields.items())
    st.html(f"<div data-testid='wb-status' class='wb-status' {attrs}></div>")


def _on_refresh() -> None:
    st.session_state[SYNC_KEY] = int(st.session_state.get(SYNC_KEY) or 0) + 1


def refresh_button(where: Any) -> None:
    """A Refresh button (re-reads the store; also the tests' sync point: the
    status marker shows how often it was pressed once the run it caused ends)."""
    where.button("Refresh", key="wb_refresh", on_click=_on_refresh, icon=":material/refresh:",
                 help="Re-read the store (e.g. after a CLI command).")


def require_session(*, lead: bool = False) -> Session:
    """The signed-in user; stops the page when nobody is signed in (or not a lead)."""
    s = session()
    if s is None:
        st.warning("Sign in first.")
        stop()
    if lead and not s.is_lead:
        st.error("This page is for leads.")
        stop()
    return s


def pool_picker(page: str) -> str | None:
    """A pool version select box shared across the lead pages (remembered in
    ``lead_pool``); None when the store has no pool."""
    pools = store().pools.judging_pools()
    names = [p["pool_version"] for p in pools]
    if not names:
        st.info("No pool version yet: create one with `workbench pool` first.")
        return None
    current = st.session_state.get(LEAD_POOL_KEY)
    index = names.index(current) if current in names else 0
    labels = {p["pool_version"]: f"{p['pool_version']}  ({p['collection']}, {p['n_entries']} documents)" for p in pools}
    chosen = st.selectbox("Pool version", names, index=index, key=f"{page}_pool", format_func=lambda v: labels[v])
    st.session_state[LEAD_POOL_KEY] = chosen
    return chosen


KEY_GUARD = """<div class='wb-status'><script>
(function () {
  if (window.__wbKeyGuard) { return; }
  window.__wbKeyGuard = true;
  const inBar = (t) => t && t.closest && t.closest('.st-key-judge_bar, .st-key-adjudicate_bar');
  const typing = (t) => t && (t.tagName === 'TEXTAREA' || t.tagName === 'INPUT' || t.isContentEditable);
  const press = (key) => { const b = document.querySelector('.st-key-' + key + ' button'); if (b) { b.click(); } };
  document.addEventListener('keydown', (e) => {
    // Enter and Space never press a grade-bar button: only a click or the grade's own key saves.
    if ((e.key === 'Enter' || e.key === ' ') && inBar(e.target) && !typing(e.target)) {
      e.preventDefault(); e.stopImmediatePropagation(); return;
    }
    if (typing(e.target) || e.altKey) { return; }
    if (e.key === '?') { e.preventDefault(); press('judge_help'); }
    else if ((e.ctrlKey || e.metaKey) && (e.key === 'z' || e.key === 'Z')) {
      e.preventDefault(); press('judge_undo_btn'); press('adjudicate_undo');
    }
  }, true);
  document.addEventListener('keyup', (e) => {
    if (e.key === ' ' && inBar(e.target) && !typing(e.target)) { e.preventDefault(); e.stopImmediatePropagation(); }
  }, true);
})();
</script></div>"""


def key_guard() -> None:
    """The page's key guard (once per page load): Enter and Space never press a
    grade-bar button; ``?`` opens the keys, Ctrl+Z undoes (outside text fields)."""
    st.html(KEY_GUARD, unsafe_allow_javascript=True)


def render_topic(view: JudgingView, *, new_topic: bool = False) -> None:
    """The topic: title (query terms marked), description and narrative when present;
    ``new_topic`` marks the first document of a topic."""
    t = view.topic
    terms = query_terms(t)
    badge = "<span class='wb-badge'>new topic</span>" if new_topic else ""
    parts = [f"<p><b>Topic {html.escape(t.topic_id)}:</b> {highlight_html(t.title, terms)}{badge}</p>"]
    if t.description:
        parts.append(f"<p><i>Description:</i> {html.escape(t.description)}</p>")
    if t.narrative:
        parts.append(f"<p><i>Narrative:</i> {html.escape(t.narrative)}</p>")
    st.html(f"<div class='wb-topic{' wb-new' if new_topic else ''}' data-testid='wb-topic'>{''.join(parts)}</div>")


def render_document(view: JudgingView) -> None:
    """The document with the topic's query terms marked; all corpus text is
    HTML-escaped before ``<mark>`` tags are added (no markup from a corpus runs)."""
    terms = query_terms(view.topic)
    d = view.document
    title = f"<h3>{highlight_html(d.title, terms)}</h3>" if d.title else ""
    body = highlight_html(d.text, terms) if d.text else "<i>(this document has no text)</i>"
    st.html(
        f"<div class='wb-doc' data-testid='wb-doc'>{title}"
        f"<div class='wb-doc-id'><small>document {html.escape(d.doc_id)}</small></div>{body}</div>"
    )


def render_rubric(rubric: Rubric) -> None:
    """The grade scale with each grade's key and definition."""
    lines = [f"- **{g.grade} {g.label}**" + (f" (key {g.key})" if g.key != str(g.grade) else "")
             + f": {g.definition}" for g in rubric.grades]
    with st.expander(f"Rubric: {rubric.name}", expanded=True):
        st.markdown("\n".join(lines))
        st.caption(rubric.source)


def percent(done: int, total: int) -> str:
    """'3/10 (30%)'."""
    return f"{done}/{total} ({(100 * done / total) if total else 0:.0f}%)"


def figure_text(value: float | None, reason: str = "") -> str:
    """An agreement figure for display: 3 decimals, or 'undefined: reason'."""
    if value is None:
        return f"undefined: {reason}"
    return f"{value:.3f}"


def grade_text(grade: int | None, rubric: Rubric) -> str:
    """'2 highly relevant', or 'unsure' for None."""
    return "unsure" if grade is None else f"{grade} {rubric.label(grade)}"


def keys_help(rubric: Rubric, extra: Sequence[tuple[str, str]]) -> str:
    """One line documenting the keyboard shortcuts."""
    grades = " · ".join(f"{g.key} = {g.label}" for g in rubric.grades)
    rest = " · ".join(f"{k} = {what}" for k, what in extra)
    return f"Keys: {grades} · {rest}. Keys are ignored while typing in the note (press Tab to leave it)."


# -- scoreboard and qrels-versions pages ------------------------------------------

SCOREBOARD_QRELS_KEY = "scoreboard_qrels"
"""Session key: the qrels version last chosen on the Scoreboard page."""
QRELS_VERSIONS_KEY = "qrels_versions_current"
"""Session key: the qrels version last chosen on the Qrels versions page."""
MISSING_HELP = (
    "Topics with |R| > 0 that a run has no results for (or that the run's producer reported empty/failed). "
    "exclude: left out of every run's averages (listed below); zero: scored 0 for that run; "
    "fail: refuse to score."
)


@st.cache_resource(max_entries=16, show_spinner="Scoring the runs ...")
def _scoreboard(
    db_path: str, qrels_version: str, content_hash: str, run_names: tuple[str, ...], missing: str, rel: int,
    cutoffs: tuple[int, ...],
) -> Scoreboard:
    # Keyed by the database path and the qrels content hash (qrels versions and
    # runs are immutable); an immutable value shared read-only (no copy per hit).
    from workbench.services.evaluation.scoreboard import scoreboard

    return scoreboard(store(), qrels_version, run_names=run_names, cutoffs=cutoffs, rel=rel, missing=missing)


def cached_scoreboard(
    qrels_version: str, run_names: Sequence[str], *, missing: str, rel: int = 1,
    cutoffs: Sequence[int] = DEFAULT_CUTOFFS,
) -> Scoreboard:
    """``services.evaluation.scoreboard.scoreboard`` through ``st.cache_resource`` (bounded; the
    board is immutable and only read), keyed by (database path, qrels version and
    content hash, run names, policy, rel, cutoffs).

    Raises:
        WorkbenchError: as ``scoreboard`` (errors are not cached).
    """
    info = store().qrels.get_qrels_info(qrels_version)
    return _scoreboard(str(config().db_path), qrels_version, info.content_hash, tuple(run_names), missing, rel,
                       tuple(cutoffs))


@st.cache_resource(max_entries=16, show_spinner=False)
def _recall_chart(db_path: str, qrels_version: str, content_hash: str, run_names: tuple[str, ...], missing: str,
                  rel: int, cutoffs: tuple[int, ...], title: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from workbench.reports.charts import recall_curve_spec

    board = _scoreboard(db_path, qrels_version, content_hash, run_names, missing, rel, cutoffs)
    spec = recall_curve_spec(list(board.evaluations.values()), title=title)  # plain JSON: no altair import
    values = spec.pop("data")["values"]
    return values, spec


def recall_chart(qrels_version: str, run_names: Sequence[str], *, missing: str, title: str, rel: int = 1,
                 cutoffs: Sequence[int] = DEFAULT_CUTOFFS) -> None:
    """The board's recall-vs-k chart (``reports.charts.recall_curve_spec``: the CLI's altair chart as
    plain Vega-Lite JSON, made without importing altair, which with its schema validation took
    about 1.8 s of the Scoreboard's first visit on Cranfield); built once per board."""
    import pandas as pd

    info = store().qrels.get_qrels_info(qrels_version)
    values, spec = _recall_chart(str(config().db_path), qrels_version, info.content_hash, tuple(run_names), missing,
                                 rel, tuple(cutoffs), title)
    # theme=None: Vega's category palette, one distinct colour per run
    st.vega_lite_chart(pd.DataFrame(values), spec, theme=None)


@st.cache_resource(max_entries=64, show_spinner=False)
def _titles(db_path: str, collection: str, version: str, doc_ids: tuple[str, ...]) -> dict[str, str]:
    from workbench.services.evaluation.scoreboard import document_titles

    return document_titles(store(), collection, doc_ids, version or None)


def cached_titles(collection: str, version: str, doc_ids: Sequence[str]) -> dict[str, str]:
    """``services.evaluation.scoreboard.document_titles`` through ``st.cache_resource``, keyed by
    (database path, collection, collection version, doc ids); "" = the latest version."""
    return _titles(str(config().db_path), collection, version, tuple(doc_ids))


def qrels_versions() -> list[QrelsVersionInfo]:
    """The store's qrels versions, oldest first; when there is none, an info box says how to make one
    (the caller then stops or returns)."""
    versions = store().qrels.list_qrels_versions()
    if not versions:
        st.info("No qrels version yet: publish one on the Publish page or `workbench qrels import` a file.")
    return versions


def qrels_version_picker(versions: Sequence[QrelsVersionInfo], *, key: str, remember: str,
                         default: str | None = None) -> str:
    """A qrels version select box; the choice is remembered in ``st.session_state[remember]``.

    Args:
        versions: the versions offered (non-empty), in display order.
        key: the widget key.
        remember: a non-widget session key (kept across page switches).
        default: the version chosen when nothing is remembered (None = the last one).
    """
    names = [v.name for v in versions]
    current = st.session_state.get(remember)
    if current not in names:
        current = default if default in names else names[-1]
    labels = {
        v.name: f"{v.name}  ({v.collection}, {v.origin}, {v.n_entries:,} judgments, {v.n_relevant:,} relevant)"
        for v in versions
    }
    chosen = st.selectbox("Qrels version", names, index=names.index(current), key=key,
                          format_func=lambda n: labels[n])
    st.session_state[remember] = chosen
    return str(chosen)


def missing_policy_picker(key: str) -> str:
    """The missing-topic policy radio (exclude | zero | fail), exclude first."""
    return str(st.radio("Missing topics", ["exclude", "zero", "fail"], horizontal=True, key=key,
                        help=MISSING_HELP))


def topic_list(ids: Sequence[str], limit: int = 20) -> str:
    """'1, 2, 5' or '1, 2, ... (+8 more)', each id Markdown-escaped (``md_escape``)."""
    shown = ", ".join(md_escape(t) for t in ids[:limit])
    return shown + (f" ... (+{len(ids) - limit} more)" if len(ids) > limit else "")


def float_columns(rows: Sequence[Mapping[str, object]], fmt: str = "%.4f") -> dict[str, Any]:
    """``column_config`` showing every float column of ``rows`` with ``fmt`` (values stay full precision)."""
    cols = {c for r in rows for c, v in r.items() if isinstance(v, float)}
    return {c: st.column_config.NumberColumn(c, format=fmt) for c in sorted(cols)}


def measure_columns(rows: Sequence[Mapping[str, object]], fmt: str = "%.4f") -> dict[str, Any]:
    """``column_config`` for a runs x measures table that fits a 1400 px screen:
    numbers (``fmt``, 4 decimals by default) in small columns, the run name wider (values stay
    full precision)."""
    cols: dict[str, Any] = {}
    for c in dict.fromkeys(k for r in rows for k in r):
        values = [r.get(c) for r in rows if r.get(c) is not None]
        if c == "run":
            cols[c] = st.column_config.TextColumn(c, width="medium", pinned=True)
        elif values and all(isinstance(v, float) for v in values):
            cols[c] = st.column_config.NumberColumn(c, format=fmt, width="small")
        elif values and all(isinstance(v, int) for v in values):
            cols[c] = st.column_config.NumberColumn(c, width="small")
    return cols


def qrels_versions_table(versions: Sequence[QrelsVersionInfo], *, key: str,
                         exported: Mapping[str, str] | None = None) -> None:
    """Qrels versions in a layout that fits the page from 1024 px with the sidebar open: one row per
    version with its lineage and counts (fixed column widths, about 600 px, widened to the page), then,
    in an expander, each version's provenance and long fields (origin, creation, collection, content
    hash, rule, note) in a table whose cells wrap to the page's width. Used by the Qrels versions and
    Publish pages. ``exported``: version -> the state of its exported file (``ok``, ``not exported`` when not
    exported, or what disagrees with the store), shown as an ``exported file`` column of the details
    when given (the first table keeps its width at 1024 px)."""
    text, number = st.column_config.TextColumn, st.column_config.NumberColumn
    st.dataframe(
        [{"name": v.name, "parent": v.parent_version or "", "pool version": v.pool_version or "",
          "topics": v.n_topics, "entries": v.n_entries, "relevant": v.n_relevant} for v in versions],
        hide_index=True, height="content", key=key,
        column_config={"name": text("name", width=150, pinned=True), "parent": text("parent", width=140),
                       "pool version": text("pool version", width=140), "topics": number("topics", width=60),
                       "entries": number("entries", width=70), "relevant": number("relevant", width=70)},
    )
    with st.expander("Details: origin, creation, collection, content hash, rule and note of each version"):
        st.table(md_cells([
            {"name": v.name, "origin": v.origin, "created": f"{v.created_at:%Y-%m-%d %H:%M}",
             "created by": v.created_by, "collection": v.collection, "content hash": v.content_hash[:12],
             "rule": v.rule, "note": v.note}
            | ({"exported file": exported.get(v.name, "not exported")} if exported is not None else {}) for v in versions
        ]))
