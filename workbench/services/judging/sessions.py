"""Signed-in sessions: who is signed in (``Session``), what a lead may do (``require_lead``), and the
sessions of the judging UI that survive a reload (server side).

Sign-in checks the token once (``services.judging.assessments.sign_in``); ``open_session``
then registers a server-side session and returns its random id, which the
browser keeps in a cookie (never the token, never in the URL). A reload or a
deep link (``/scoreboard``) brings the id back; ``resume_session`` turns it
into the signed-in user again when the session is live (not expired, not
signed out) and the user's token has not been reset since; the user's role is
read from the store each time, so a lead demoted to assessor loses the lead
pages at the next reload.

The sessions live in the UI server's memory (``SessionRegistry``): restarting
the server signs everybody out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.errors import PermissionDeniedError, UnknownNameError
from workbench.judging.signin import SessionRegistry

if TYPE_CHECKING:
    from workbench.store.users import Users


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in user (what the UI keeps in ``st.session_state``: no DB handle).

    Attributes:
        user: user name.
        role: ``assessor`` or ``lead``.
    """

    user: str
    role: str

    @property
    def is_lead(self) -> bool:
        """True for a lead."""
        return self.role == "lead"


def require_lead(session: Session, action: str) -> None:
    """Raise PermissionDeniedError unless the session is a lead's."""
    if not session.is_lead:
        raise PermissionDeniedError(f"{action}: only a lead may do this; {session.user!r} is an {session.role}")


def open_session(users: Users, registry: SessionRegistry, session: Session, *, now: float) -> tuple[str, float]:
    """Register a signed-in user's session.

    Args:
        users: the store's users (reads the user's token fingerprint).
        registry: the UI server's session registry.
        session: the user just signed in.
        now: the registry's clock (seconds, monotonic).

    Returns:
        (session id for the browser's cookie, expiry time on the same clock).
    """
    fingerprint = users.token_fingerprint(session.user) or ""
    sid = registry.open(session.user, session.role, fingerprint, now=now)
    return sid, now + registry.ttl_s


def resume_session(users: Users, registry: SessionRegistry, sid: str | None, *,
                   now: float) -> tuple[Session, float] | None:
    """The signed-in user of a session id from the browser, or None.

    None when the id is missing, unknown, expired or signed out, when the user
    no longer exists, or when their token was reset after the session opened
    (the session is then closed).

    Returns:
        (the user with their current role, the session's expiry time).
    """
    if not sid:
        return None
    entry = registry.resolve(sid, now=now)
    if entry is None:
        return None
    try:
        user = users.get_user(entry.user)
    except UnknownNameError:
        registry.close(sid)
        return None
    if (users.token_fingerprint(entry.user) or "") != entry.fingerprint:
        registry.close(sid)
        return None
    return Session(user.name, user.role), entry.expires_at


def close_session(registry: SessionRegistry, sid: str | None) -> None:
    """Sign a session out (an unknown or empty id is ignored)."""
    if sid:
        registry.close(sid)
