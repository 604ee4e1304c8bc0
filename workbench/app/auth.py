"""Sign-in, sign-out and the session that survives a reload (edge).

The token is checked once (``services.judging.assessments.sign_in``, throttled per user
name); the server then keeps the session (``services.judging.sessions``) and the
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
from workbench.services.judging import assessments as svc
from workbench.services.judging import sessions

if TYPE_CHECKING:
    from workbench.judging.signin import SessionRegistry

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


def _begin(auth: dict, judge: dict, session: svc.Session) -> None:
    sid, expires = sessions.open_session(widgets.store().users, registry(), session, now=widgets.clock())
    auth.update(session=session, sid=sid, expires=expires, notice="",
                cookie=_cookie_script(sid, int(registry().ttl_s)))
    judge.update(position=None, shown=None, flash=None, undo=[], drafts={})


def _on_sign_in() -> None:
    # Boxes and widget values first: no session-state access after the store is used.
    auth, judge = widgets.box("auth"), widgets.box("judge")
    name = st.session_state.get("signin_name") or ""
    token = st.session_state.get("signin_token") or ""
    store, throttle, now = widgets.store(), widgets.throttle(), widgets.clock()
    try:
        session = svc.sign_in(store.users, name, token, throttle=throttle, now=now)
    except WorkbenchError as e:
        auth["notice"] = f"error:{e}"
        return
    _begin(auth, judge, session)


def sign_out(notice: str = "") -> None:
    """End this browser session's sign-in (server side and cookie); ``notice``
    is shown on the sign-in page."""
    auth, judge = widgets.box("auth"), widgets.box("judge")
    sessions.close_session(registry(), auth["sid"])
    auth.update(session=None, sid=None, expires=0.0, notice=notice, cookie=_cookie_script("", 0))
    judge.update(position=None, shown=None, flash=None, undo=[], drafts={})
    st.session_state[widgets.LEAD_POOL_KEY] = None


def resume() -> svc.Session | None:
    """The signed-in user of this browser session: from session state, else from
    the session cookie (a reload or a deep link). Signs an expired session out."""
    auth = widgets.box("auth")
    now = widgets.clock()
    if auth["session"] is not None:
        if now >= float(auth["expires"] or 0.0):
            sign_out("Your session expired: sign in again.")
            return None
        return auth["session"]  # type: ignore[no-any-return]
    sid = st.context.cookies.get(cookie_name())
    if not isinstance(sid, str) or not sid or auth["notice"]:  # signed out in this tab: ignore the old cookie
        return None
    resumed = sessions.resume_session(widgets.store().users, registry(), sid, now=now)
    if resumed is None:
        return None
    session, expires = resumed
    auth.update(session=session, sid=sid, expires=expires, cookie=_cookie_script(sid, max(0, int(expires - now))))
    return session


def sign_in_page(target: str = "") -> None:
    """The sign-in form; ``target`` names the page a deep link asked for (it
    opens after sign-in, for users allowed to see it)."""
    st.title("Sign in")  # the store's path is shown to leads only, after sign-in
    if target:
        st.caption(f"Sign in to open {widgets.md_escape(target)}.")
    notice = widgets.box("auth")["notice"] or ""
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
    script = widgets.box("auth")["cookie"] or _cookie_script("", 0)
    st.html(f"<div class='wb-status'>{script}</div>", unsafe_allow_javascript=True)
