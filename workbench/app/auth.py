"""Sign-in, sign-out and the session that survives a reload (edge).

The token is checked once (``services.judging.sign_in``, throttled per user
name); the server then keeps the session (``services.sessions``) and the
browser keeps only its random id in a cookie (``SameSite=Strict``, expiring
with the session, set by a one-line script since Streamlit cannot set cookies
from Python). A reload or a deep link (``/scoreboard``) sends the cookie with
the page's first request (``st.context.cookies``), and the entrypoint resumes
the session before it builds the navigation, so the same page opens again.
Tokens never appear in a URL or a cookie.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import streamlit as st

from workbench.app import widgets
from workbench.errors import WorkbenchError
from workbench.services import judging as svc
from workbench.services import sessions

if TYPE_CHECKING:
    from workbench.judging.signin import SessionRegistry

SID_KEY = "auth_sid"
"""Session key: the server-side session id of this browser session (None when signed out)."""
EXPIRES_KEY = "auth_expires"
"""Session key: when the session ends, on ``widgets.clock()``."""
NOTICE_KEY = "auth_notice"
"""Session key: a message for the sign-in page (e.g. "your session expired")."""
COOKIE_KEY = "auth_cookie"
"""Session key: the cookie script rendered in every run (sets the session id
after sign-in or resume, clears it after sign-out)."""


@st.cache_resource(show_spinner=False)
def registry() -> SessionRegistry:
    """The server process's session registry (thread-safe; shared by every browser session)."""
    from workbench.judging.signin import SessionRegistry

    return SessionRegistry()


def cookie_name() -> str:
    """The session cookie's name: one per store, so two UIs on one host (cookies
    ignore ports) do not overwrite each other's session."""
    digest = hashlib.sha256(str(widgets.config().db_path).encode()).hexdigest()[:12]
    return f"wb_session_{digest}"


def _cookie_script(value: str, max_age: int) -> str:
    # The value is a URL-safe random id (or empty): nothing to escape.
    return (f"<script>document.cookie = '{cookie_name()}={value}; Max-Age={max_age}; Path=/; "
            "SameSite=Strict';</script>")


def _begin(session: svc.Session) -> None:
    sid, expires = sessions.open_session(widgets.store(), registry(), session, now=widgets.clock())
    st.session_state[widgets.SESSION_KEY] = session
    st.session_state[SID_KEY] = sid
    st.session_state[EXPIRES_KEY] = expires
    st.session_state[COOKIE_KEY] = _cookie_script(sid, int(registry().ttl_s))
    st.session_state[NOTICE_KEY] = ""
    for key in ("judge_position", "judge_shown"):
        st.session_state[key] = None


def _on_sign_in() -> None:
    name = st.session_state.get("signin_name") or ""
    token = st.session_state.get("signin_token") or ""
    try:
        session = svc.sign_in(widgets.store(), name, token, throttle=widgets.throttle(), now=widgets.clock())
    except WorkbenchError as e:
        st.session_state[NOTICE_KEY] = f"error:{e}"
        return
    st.session_state["signin_token"] = ""
    _begin(session)


def sign_out(notice: str = "") -> None:
    """End this browser session's sign-in (server side and cookie); ``notice``
    is shown on the sign-in page."""
    sessions.close_session(registry(), st.session_state.get(SID_KEY))
    for key in (widgets.SESSION_KEY, SID_KEY, EXPIRES_KEY, "judge_position", "judge_shown", widgets.LEAD_POOL_KEY):
        st.session_state[key] = None
    st.session_state["judge_flash"] = None
    st.session_state[COOKIE_KEY] = _cookie_script("", 0)
    st.session_state[NOTICE_KEY] = notice


def resume() -> svc.Session | None:
    """The signed-in user of this browser session: from session state, else from
    the session cookie (a reload or a deep link). Signs an expired session out."""
    current = widgets.session()
    now = widgets.clock()
    if current is not None:
        if now >= float(st.session_state.get(EXPIRES_KEY) or 0.0):
            sign_out("Your session expired: sign in again.")
            return None
        return current
    sid = st.context.cookies.get(cookie_name())
    if not isinstance(sid, str) or not sid or st.session_state.get(NOTICE_KEY):  # signed out in this tab: ignore the old cookie
        return None
    resumed = sessions.resume_session(widgets.store(), registry(), sid, now=now)
    if resumed is None:
        return None
    session, expires = resumed
    st.session_state[widgets.SESSION_KEY] = session
    st.session_state[SID_KEY] = sid
    st.session_state[EXPIRES_KEY] = expires
    st.session_state[COOKIE_KEY] = _cookie_script(sid, max(0, int(expires - now)))
    return session


def sign_in_page(target: str = "") -> None:
    """The sign-in form; ``target`` names the page a deep link asked for (it
    opens after sign-in, for users allowed to see it)."""
    st.title("Sign in")  # the store's path is shown to leads only, after sign-in
    if target:
        st.caption(f"Sign in to open {widgets.md_escape(target)}.")
    notice = st.session_state.get(NOTICE_KEY) or ""
    with st.form("signin_form"):
        st.text_input("User name", key="signin_name")
        st.text_input("Access token", type="password", key="signin_token")
        st.form_submit_button("Sign in", type="primary", on_click=_on_sign_in)
    if notice.startswith("error:"):
        st.error(widgets.md_escape(notice[len("error:"):]))
    elif notice:
        st.info(widgets.md_escape(notice))


def refused_page(title: str) -> None:
    """What an assessor sees on a lead page's address."""
    session = widgets.session()
    st.title(title)
    who = f" {widgets.md_escape(session.user)} is an {session.role}." if session else ""
    st.error(f"{widgets.md_escape(title)} is for leads.{who}")
    st.page_link(widgets.page_path("judge"), label="Back to Judge", icon="⚖️")
    widgets.signal(refused="yes")


def render_cookie() -> None:
    """Render the cookie script (the same in every run until the sign-in state
    changes, so the browser runs it once per change)."""
    script = st.session_state.get(COOKIE_KEY) or _cookie_script("", 0)
    st.html(f"<div class='wb-status'>{script}</div>", unsafe_allow_javascript=True)
