"""Entrypoint of the judging app: configuration, sign-in, navigation, sidebar.

Run with ``workbench ui`` (``streamlit run`` on this file, ``WORKBENCH_DB`` in
the environment). Assessors see their own queue (Judge, My judgments,
Progress); leads also get Pool, Agreement, Adjudicate, Publish, Scoreboard and
Qrels versions. Every page has its own address (``/scoreboard``, ...): a
reload or a deep link opens it again after the session is resumed from its
cookie, or after sign-in; an assessor on a lead page's address is refused.

Every run ends with the status marker (``widgets.status_marker``), the signal
the browser tests wait on.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import streamlit as st

from workbench.app import auth, widgets
from workbench.errors import WorkbenchError
from workbench.services.judging import assessments as svc

HERE = Path(__file__).parent

# page_icon: an emoji is drawn locally (an SVG data URL); a Material icon here
# or as the favicon would be fetched from fonts.gstatic.com.
st.set_page_config(page_title="IR workbench: judging", page_icon="⚖️", layout="wide")
st.html(widgets.CSS)
widgets.begin_run()

# Namespaced session keys and the per-part state boxes (widgets.BOXES), initialised
# once per browser session.
widgets.init_boxes()
for key, default in {widgets.LEAD_POOL_KEY: None, widgets.SCOREBOARD_QRELS_KEY: None,
                     widgets.QRELS_VERSIONS_KEY: None}.items():
    st.session_state.setdefault(key, default)


def _page(spec: widgets.PageSpec, *, default: bool = False) -> st.Page:
    return st.Page(HERE / "app_pages" / spec.file, title=spec.title, icon=spec.icon, url_path=spec.key,
                   default=default)


def _stand_in(spec: widgets.PageSpec, render: Callable[[str], None]) -> st.Page:
    """A hidden page at ``spec``'s address that renders something else (the
    sign-in form, or the refusal for assessors)."""
    return st.Page(partial(render, spec.title), title=spec.title, url_path=spec.key, visibility="hidden")


def _sidebar(session: svc.Session) -> None:
    sb = st.sidebar
    sb.markdown(f"**{widgets.md_escape(session.user)}** · {session.role}")
    try:
        state = widgets.queue_state()
    except WorkbenchError as e:
        sb.error(widgets.md_escape(e))
        state = None
    if state is not None:
        widgets.sidebar_progress(state)
    if session.is_lead:
        sb.caption(f"Store: {widgets.md_escape(widgets.config().db_path)}")
    c1, c2 = sb.columns(2)
    widgets.refresh_button(c1)
    c2.button("Sign out", key="signout", on_click=auth.sign_out)


session = auth.resume()
if session is None:
    signin = st.Page(auth.sign_in_page, title="Sign in", icon="🔑", url_path="signin", default=True)
    pg = st.navigation([signin] + [_stand_in(s, auth.sign_in_page) for s in widgets.PAGES if s.key != "judge"],
                       position="hidden")
else:
    pages = [_page(s, default=s.key == "judge") for s in widgets.PAGES if session.is_lead or not s.lead]
    if not session.is_lead:
        pages += [_stand_in(s, auth.refused_page) for s in widgets.PAGES if s.lead]
    pg = st.navigation(pages)
    # Saves run in button callbacks, before this script body: the counts include them.
    _sidebar(session)
    if widgets.box("judge").pop("goto", False) and pg.title != "Judge":
        st.switch_page(HERE / "app_pages" / "judge.py")
try:
    pg.run()
except widgets.PageStop:
    pass
auth.render_cookie()
widgets.signal(user=session.user if session else "")
widgets.status_marker(pg.title.lower().replace(" ", "_"))
