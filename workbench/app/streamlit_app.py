"""Entrypoint of the judging app: configuration, sign-in, navigation, progress.

Run with ``workbench ui`` (``streamlit run`` on this file, ``WORKBENCH_DB`` in
the environment). Assessors see only their own queue (Judge, Progress); leads
also get the Pool, Agreement, Adjudicate, Publish, Scoreboard and Qrels
versions pages.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from workbench.app import widgets
from workbench.errors import WorkbenchError
from workbench.services import judging as svc

HERE = Path(__file__).parent

st.set_page_config(page_title="IR workbench: judging", layout="wide")
st.html(widgets.CSS)

# Namespaced session keys, initialised once per browser session.
for key, default in {
    widgets.SESSION_KEY: None,
    widgets.LEAD_POOL_KEY: None,
    "judge_position": None,
    "judge_shown": None,
    "judge_flash": "",
    "judge_error": "",
    "adjudicate_msg": None,
    "publish_msg": None,
    widgets.SCOREBOARD_QRELS_KEY: None,
    widgets.QRELS_VERSIONS_KEY: None,
}.items():
    st.session_state.setdefault(key, default)


def _sign_in() -> None:
    st.title("Sign in")  # the store's path is shown to leads only, after sign-in
    with st.form("signin_form"):
        name = st.text_input("User name", key="signin_name")
        token = st.text_input("Access token", type="password", key="signin_token")
        submitted = st.form_submit_button("Sign in", type="primary")
    if submitted:
        try:
            st.session_state[widgets.SESSION_KEY] = svc.sign_in(widgets.store(), name, token,
                                                                throttle=widgets.throttle(), now=widgets.clock())
        except WorkbenchError as e:
            st.error(widgets.md_escape(e))
        else:
            st.session_state["judge_position"] = None
            st.session_state["judge_shown"] = None
            st.rerun()


def _sign_out() -> None:
    for key in (widgets.SESSION_KEY, "judge_position", "judge_shown", widgets.LEAD_POOL_KEY):
        st.session_state[key] = None
    st.session_state["judge_flash"] = ""
    st.session_state["judge_error"] = ""


def _sidebar_progress(session: svc.Session) -> None:
    try:
        state = svc.queue_state(widgets.store(), session)
    except WorkbenchError as e:
        st.sidebar.error(str(e))
        return
    sb = st.sidebar
    sb.markdown(f"**{widgets.md_escape(session.user)}** · {session.role}")
    if session.is_lead:
        sb.caption(f"Store: {widgets.md_escape(widgets.config().db_path)}")
    if not state.n_total:
        sb.caption("No documents assigned to you yet.")
    else:
        sb.progress(state.n_done / state.n_total, text=f"Overall: {widgets.percent(state.n_done, state.n_total)} judged")
        pos = st.session_state.get("judge_position") or state.resume
        current = state.entries[min(pos, state.n_total) - 1].topic_id
        lines = []
        for topic_id, (done, total) in state.progress.items():
            mark = "▶ " if topic_id == current else ""
            lines.append(f"{mark}topic {topic_id}: {done}/{total}")
        sb.caption("Per topic (judged/assigned):")
        sb.text("\n".join(lines))
    widgets.refresh_button(sb)
    sb.button("Sign out", key="signout", on_click=_sign_out)


session = widgets.session()
if session is None:
    pg = st.navigation([st.Page(_sign_in, title="Sign in", icon=":material/login:", url_path="signin")])
else:
    pages = [
        st.Page(HERE / "app_pages" / "judge.py", title="Judge", icon=":material/gavel:", default=True),
        st.Page(HERE / "app_pages" / "progress.py", title="Progress", icon=":material/trending_up:"),
    ]
    if session.is_lead:
        pages += [
            st.Page(HERE / "app_pages" / "pool.py", title="Pool", icon=":material/inventory_2:"),
            st.Page(HERE / "app_pages" / "agreement.py", title="Agreement", icon=":material/handshake:"),
            st.Page(HERE / "app_pages" / "adjudicate.py", title="Adjudicate", icon=":material/balance:"),
            st.Page(HERE / "app_pages" / "publish.py", title="Publish", icon=":material/publish:"),
            st.Page(HERE / "app_pages" / "scoreboard.py", title="Scoreboard", icon=":material/leaderboard:"),
            st.Page(HERE / "app_pages" / "qrels_versions.py", title="Qrels versions",
                    icon=":material/account_tree:"),
        ]
    pg = st.navigation(pages)
    # Saves run in button callbacks, before this script body: the counts include them.
    _sidebar_progress(session)
try:
    pg.run()
except widgets.PageStop:
    pass
widgets.status_marker(pg.url_path or "home")
