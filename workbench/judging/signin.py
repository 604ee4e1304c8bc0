"""Sign-in throttling and server-side UI sessions (pure: no I/O; time is passed in).

Sessions: ``SessionRegistry`` keeps the signed-in browser sessions of one UI
server; the browser holds only a random id (in a cookie), which expires
(12 h by default) and ends at sign-out or when the user's token changes.

Throttling: a per-user delay that grows with failed attempts.

Rule: after ``n`` consecutive failed sign-ins for one user name, the next
attempt for that name is accepted for checking only ``delay(n)`` seconds after
the last failure, with ``delay(n) = min(cap_s, base_s * 2 ** (n - 1))``
(1 s, 2 s, 4 s, ... up to 5 minutes by default). An attempt inside the delay
is refused *without checking the token*, so the right token does not help a
guesser either; a success clears the name's failures; failures older than
``forget_after_s`` are forgotten. Unknown names are throttled exactly like
known ones, so the refusal tells nothing about who exists. Only one attempt
per name is checked at a time (``begin``/``finish``), so parallel attempts
cannot slip through between a check and the failure it records.

Timing: the throttle is kept by the process that serves sign-ins (the UI
server); the CLI needs the store file itself and is not throttled.

Source:
    Exponential back-off per account as in OWASP Authentication Cheat Sheet
    ("Login Throttling") and NIST SP 800-63B §5.2.2 (rate limiting: at most
    100 consecutive failed attempts per account).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ThrottlePolicy:
    """How fast the delay grows.

    Attributes:
        base_s: delay after the first failure, seconds (> 0).
        cap_s: the longest delay, seconds (>= base_s).
        forget_after_s: failures are forgotten this long after the last one.
        max_names: names remembered at most (the oldest are dropped first), so
            guessing random names cannot grow memory without bound.
    """

    base_s: float = 1.0
    cap_s: float = 300.0
    forget_after_s: float = 3600.0
    max_names: int = 10_000

    def delay_s(self, failures: int) -> float:
        """Seconds the next attempt waits after ``failures`` consecutive failures.

        Example:
            >>> [ThrottlePolicy().delay_s(n) for n in range(5)]
            [0.0, 1.0, 2.0, 4.0, 8.0]
        """
        if failures <= 0:
            return 0.0
        return min(self.cap_s, self.base_s * 2.0 ** min(failures - 1, 64))


class SignInThrottle:
    """Per-name failure memory, safe to share between threads (one per server process).

    ``now`` is always passed in (seconds on a monotonic clock), so callers and
    tests decide the time.

    Example:
        >>> t = SignInThrottle()
        >>> t.begin("ann", now=0.0), t.finish("ann", ok=False, now=0.0)
        (0.0, 1.0)
        >>> t.begin("ann", now=0.5)   # 0.5 s left of the 1 s delay
        0.5
        >>> t.begin("ann", now=1.0), t.finish("ann", ok=True, now=1.0)
        (0.0, 0.0)
    """

    def __init__(self, policy: ThrottlePolicy | None = None) -> None:
        self.policy = policy or ThrottlePolicy()
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[int, float]] = {}  # name -> (count, time of the last failure)
        self._checking: set[str] = set()

    def _count(self, name: str, now: float) -> tuple[int, float]:
        count, last = self._failures.get(name, (0, 0.0))
        if count and now - last > self.policy.forget_after_s:
            self._failures.pop(name, None)
            return 0, 0.0
        return count, last

    def wait_s(self, name: str, now: float) -> float:
        """Seconds until an attempt for ``name`` is checked again (0.0: now)."""
        with self._lock:
            count, last = self._count(name, now)
            return max(0.0, last + self.policy.delay_s(count) - now) if count else 0.0

    def begin(self, name: str, now: float) -> float:
        """Start checking an attempt for ``name``.

        Returns:
            0.0 when the attempt may be checked now (then call ``finish``), else
            the seconds to wait; an attempt while another one for the same name
            is being checked waits ``base_s``.
        """
        with self._lock:
            if name in self._checking:
                return self.policy.base_s
            count, last = self._count(name, now)
            wait = max(0.0, last + self.policy.delay_s(count) - now) if count else 0.0
            if wait > 0:
                return wait
            self._checking.add(name)
            return 0.0

    def finish(self, name: str, *, ok: bool, now: float) -> float:
        """End the check started by ``begin``; record its outcome.

        Returns:
            The delay the next attempt for ``name`` now waits (0.0 after a success).
        """
        with self._lock:
            self._checking.discard(name)
            if ok:
                self._failures.pop(name, None)
                return 0.0
            count, _last = self._count(name, now)
            self._failures.pop(name, None)  # re-insert: the dict keeps the most recent last
            self._failures[name] = (count + 1, now)
            while len(self._failures) > self.policy.max_names:
                self._failures.pop(next(iter(self._failures)))
            return self.policy.delay_s(count + 1)

    def abandon(self, name: str) -> None:
        """End the check started by ``begin`` without an outcome (e.g. the store
        could not be read): the failures stay as they were."""
        with self._lock:
            self._checking.discard(name)

    def failures(self, name: str, now: float) -> int:
        """Consecutive failed attempts remembered for ``name``."""
        with self._lock:
            return self._count(name, now)[0]


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """A signed-in browser session held by the server (never sent to the browser
    except as its random id).

    Attributes:
        user: the user name.
        role: ``assessor`` or ``lead`` at sign-in (re-read from the store on resume).
        fingerprint: identifies the user's token at sign-in; a token reset
            changes it and so ends the user's sessions.
        expires_at: end of the session, on the registry's monotonic clock (seconds).
    """

    user: str
    role: str
    fingerprint: str
    expires_at: float


class SessionRegistry:
    """Server-side sessions of the judging UI: random ids that expire.

    The browser keeps only the id (a cookie); the id's SHA-256 is the key here,
    so the registry never holds a usable id. Thread-safe; one per server process.

    Example:
        >>> r = SessionRegistry(ttl_s=60.0)
        >>> sid = r.open("ann", "assessor", "fp", now=0.0)
        >>> r.resolve(sid, now=30.0).user, r.resolve(sid, now=61.0)
        ('ann', None)
    """

    def __init__(self, *, ttl_s: float = 12 * 3600.0, max_sessions: int = 10_000) -> None:
        self.ttl_s = ttl_s
        self.max_sessions = max_sessions
        self._lock = threading.Lock()
        self._by_key: dict[str, SessionEntry] = {}

    @staticmethod
    def _key(sid: str) -> str:
        return hashlib.sha256(sid.encode("utf-8", "surrogatepass")).hexdigest()

    def open(self, user: str, role: str, fingerprint: str, *, now: float) -> str:
        """A new session; returns its id (32 random bytes, URL-safe, 43 characters)."""
        sid = secrets.token_urlsafe(32)
        with self._lock:
            for key in [k for k, e in self._by_key.items() if e.expires_at <= now]:
                del self._by_key[key]
            while len(self._by_key) >= self.max_sessions:
                self._by_key.pop(next(iter(self._by_key)))
            self._by_key[self._key(sid)] = SessionEntry(user, role, fingerprint, now + self.ttl_s)
        return sid

    def resolve(self, sid: str, *, now: float) -> SessionEntry | None:
        """The live session with this id, or None (unknown or expired; expired ones are dropped)."""
        if not sid:
            return None
        key = self._key(sid)
        with self._lock:
            entry = self._by_key.get(key)
            if entry is not None and entry.expires_at <= now:
                del self._by_key[key]
                return None
            return entry

    def close(self, sid: str) -> None:
        """End a session (sign-out); an unknown id is ignored."""
        with self._lock:
            self._by_key.pop(self._key(sid), None)

    def close_user(self, user: str) -> int:
        """End every session of a user; returns how many were open."""
        with self._lock:
            keys = [k for k, e in self._by_key.items() if e.user == user]
            for k in keys:
                del self._by_key[k]
        return len(keys)
