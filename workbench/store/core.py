"""Connection handling of the store: short-lived leases, a fair hand-over
between processes, one transaction per multi-row change.

Concurrency model (measured facts in ../shared/ENVIRONMENT.md, section 4):

* DuckDB lets one *process* open a file; a second process fails at once with
  ``IOException: Could not set lock on file`` (even read-only).
* Threads of one process share one database instance; each must use its own
  ``cursor()``. A cursor kept across Streamlit reruns breaks, so none is kept.

Hence every operation takes a *lease*: ``Gateway.connection()`` /
``Gateway.transaction()``. Leases of one process share one connection (one
DuckDB instance); each lease gets a fresh cursor. The connection is closed,
and the file lock released, as soon as the last lease of the process ends
(or, with a linger, when the process has been idle that long).

Hand-over between processes is a first-come, first-served queue of *intent*
files, ``<db>.waiting/<ticket>-<pid>.json`` (ticket = the wall clock in ns when
the process first asked). A process that cannot get the file at once (it is
held, or others are queued) writes its intent and waits its turn:

* only the process at the head of the queue (the oldest live intent) tries to
  open the file; the others wait without touching it, so nobody snatches the
  file out of turn and two waiters never wait for each other;
* a holder that sees a foreign intent grants no *new* lease once it has held
  the file for ``min_turn_s``; its running leases drain, it closes the file,
  and if it still has work it queues behind the waiters it saw (a new, later
  ticket). An idle holder (lingering) closes for a waiter within 50 ms;
* a waiter at the head polls every few milliseconds, so the file changes
  hands without a gap; the yield of a process lasts exactly as long as the
  turns of the processes queued before it, never a fixed time.

Intents of processes that are gone (dead, a zombie not yet reaped, or a reused
pid: the process start time is recorded) are removed by every scan and when a
store is opened, with the holder note of a gone holder and the queue's folder
once empty; an intent not refreshed for ``STALE_INTENT_S`` (a stopped process)
is skipped, not obeyed. A live process's notes are never removed
(``_process_gone`` decides only on proof).

Only ``workbench.store`` imports duckdb.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from workbench.errors import StoreError, StoreLockedError
from workbench.store.schema import MIGRATIONS, SCHEMA_VERSION

WaitCallback = Callable[[str], None]
"""Receives a human-readable line while a lease waits (e.g. printed to stderr)."""

STALE_INTENT_S = 10.0
"""An intent whose file was not refreshed for this long (seconds) is skipped: its
process is alive but not waiting (stopped, hung). Waiters refresh every second."""

RECHECK_S = 0.25
"""Seconds between two checks that a queued process is alive and still waiting."""

IDLE_HANDOVER_S = 0.05
"""A holder with no running lease closes for a waiting process after this idle time."""

HEAD_POLL_MAX_S = 0.002
"""The longest pause (seconds, before jitter) of the waiter at the head of the queue between two
tries: it notices a released file within about 1 ms, so the file changes hands without a gap
(one try is a directory listing and a lock probe, about 0.1 ms)."""

BEHIND_POLL_S = 0.01
"""Pause of a waiter behind others between two looks at the queue: its turn is at least one
lease away (a lease holds the file for 15 to 30 ms), so it need not look more often."""

ALIAS = "wb"
"""The catalog name of the attached store file; every lease's cursor runs ``USE wb`` first."""

_LOCK_RE = re.compile(r"PID (\d+)")
_INTENT_RE = re.compile(r"^(\d+)-(\d+)\.json$")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _proc_stat(pid: int) -> tuple[str, int | None] | None:
    """(state, start time in clock ticks since boot) of a process from Linux ``/proc``, or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # after "pid (comm) ": state is field 3, start time field 22
    if not fields:
        return None
    try:
        return fields[0], int(fields[19])
    except (ValueError, IndexError):
        return fields[0], None


def _start_time(pid: int) -> int | None:
    """The process start time in clock ticks since boot (Linux ``/proc``), or None."""
    stat = _proc_stat(pid)
    return stat[1] if stat else None


def _process_gone(pid: int, start: object = None) -> bool:
    """True when the process that wrote a note (an intent, the holder note) provably no longer exists.

    Gone: no process has ``pid``; or its process is a zombie (killed or exited, and
    not yet reaped by its parent: ``kill(pid, 0)`` still succeeds on it); or ``pid``
    now belongs to a process started at another time than the recorded ``start``
    (a reused pid). Never gone when unsure: another user's process, no ``/proc``,
    no recorded start time and a live process under the pid.

    Args:
        pid: the process id the note names.
        start: the start time the note recorded (``_start_time`` of its writer), or None.
    """
    if not _pid_alive(pid):
        return True
    stat = _proc_stat(pid)
    if stat is None:
        return False
    state, started = stat
    if state in ("Z", "X"):  # zombie or dead: it holds no lock and writes nothing any more
        return True
    return isinstance(start, int) and started is not None and started != start


_MY_START: int | None = _start_time(os.getpid())


def _lock_holder(path: Path) -> int | None:
    """The pid of another process holding DuckDB's lock on ``path``, 0 if none, None if unknown.

    DuckDB locks the whole file with a POSIX record lock (``fcntl(F_SETLK)``);
    ``F_GETLK`` asks who holds it without taking it, in about a microsecond,
    where a failed ``duckdb.connect`` costs 12-14 ms of CPU. Called only while
    this process has the file closed: closing the probe's descriptor drops
    every POSIX lock of the process on the file, and it then holds none.
    """
    try:
        import fcntl
        import struct

        fd = os.open(path, os.O_RDONLY)
    except (ImportError, OSError):
        return None
    try:
        query = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        l_type, _whence, _start, _len, pid = struct.unpack("hhqqi4x", fcntl.fcntl(fd, fcntl.F_GETLK, query))
    except (OSError, struct.error):
        return None
    finally:
        os.close(fd)
    return 0 if l_type == fcntl.F_UNLCK else (pid or None)


@dataclass(frozen=True)
class Intent:
    """One waiting process, as its intent file says.

    Attributes:
        ticket: its place in the queue (ns since the epoch when it first asked).
        pid: the process id.
        client: who it is (``workbench score``, ``workbench ui``).
        purpose: what it wants the store for.
    """

    ticket: int
    pid: int
    client: str = "?"
    purpose: str = ""

    def describe(self) -> str:
        return f"{self.client} (pid {self.pid}{', ' + self.purpose if self.purpose else ''})"


class IntentQueue:
    """The first-come, first-served queue of processes waiting for one store file."""

    def __init__(self, path: Path) -> None:
        self.dir = path.with_name(path.name + ".waiting")
        self._cache: dict[str, tuple[int | None, Intent]] = {}  # file name -> (start time, intent)
        self._checked: dict[str, tuple[float, bool]] = {}  # file name -> (when, live and waiting)

    def _file(self, ticket: int) -> Path:
        return self.dir / f"{ticket:020d}-{os.getpid()}.json"

    def add(self, client: str, purpose: str) -> int:
        """Queue this process; returns its ticket."""
        ticket = time.time_ns()
        final = self._file(ticket)
        tmp = final.with_suffix(".tmp")
        for attempt in range(3):
            self.dir.mkdir(parents=True, exist_ok=True)
            try:
                tmp.write_text(json.dumps({"pid": os.getpid(), "start": _MY_START, "client": client,
                                           "purpose": purpose, "since": time.time()}))
                break
            except FileNotFoundError:  # another process removed the empty folder in between
                if attempt == 2:
                    raise
        os.replace(tmp, final)
        return ticket

    def refresh(self, ticket: int) -> None:
        """Mark this process's intent as still waiting (mtime = now)."""
        with contextlib.suppress(OSError):
            os.utime(self._file(ticket))

    def remove(self, ticket: int) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._file(ticket).unlink()

    def _read(self, name: str, pid: int, ticket: int) -> tuple[int | None, Intent]:
        hit = self._cache.get(name)
        if hit is None:
            try:
                info = json.loads((self.dir / name).read_text())
            except (OSError, ValueError):
                info = {}
            start = info.get("start")
            hit = (start if isinstance(start, int) else None,
                   Intent(ticket, pid, str(info.get("client", "?")), str(info.get("purpose", ""))))
            if info:
                self._cache[name] = hit
        return hit

    def waiting(self, *, sweep_only: bool = False) -> list[Intent]:
        """Live intents of other processes, oldest first. Deletes those of dead processes.

        A scan is a directory listing; whether an intent's process is alive (and
        is the process that wrote it) and still refreshes it is checked at most
        every ``RECHECK_S`` per file, so waiters can scan every few milliseconds.
        """
        try:
            names = os.listdir(self.dir)
        except OSError:
            return []
        me = os.getpid()
        now = time.monotonic()
        found: list[Intent] = []
        if len(self._cache) > 64 or len(self._checked) > 64:  # forget intents that are gone
            present = set(names)
            self._cache = {n: v for n, v in self._cache.items() if n in present}
            self._checked = {n: v for n, v in self._checked.items() if n in present}
        for name in names:
            m = _INTENT_RE.match(name)
            if m is None:
                self._sweep_other(name)
                continue
            ticket, pid = int(m.group(1)), int(m.group(2))
            if pid == me:
                continue
            start, intent = self._read(name, pid, ticket)
            checked = self._checked.get(name)
            if sweep_only or checked is None or now - checked[0] >= RECHECK_S:
                if _process_gone(pid, start):
                    with contextlib.suppress(OSError):
                        (self.dir / name).unlink()
                    self._cache.pop(name, None)
                    self._checked.pop(name, None)
                    continue
                try:  # alive but not refreshed (a stopped process): not obeyed
                    fresh = time.time() - os.stat(self.dir / name).st_mtime <= STALE_INTENT_S
                except OSError:
                    continue
                checked = (now, fresh)
                self._checked[name] = checked
            if checked[1] and not sweep_only:
                found.append(intent)
        found.sort(key=lambda i: (i.ticket, i.pid))
        return found

    def _sweep_other(self, name: str) -> None:
        """Remove an older workbench's ``<pid>.json`` or a ``.tmp`` left by a process that is gone
        (``_process_gone``: the start time it wrote, if any, tells a reused pid)."""
        stem = name.rsplit(".", 1)[0]
        pid_text = stem if name.endswith(".json") else stem.rsplit("-", 1)[-1]
        if not (name.endswith((".json", ".tmp")) and pid_text.isdigit()):
            return
        if _process_gone(int(pid_text), _recorded_start(self.dir / name)):
            with contextlib.suppress(OSError):
                (self.dir / name).unlink()

    def remove_folder_if_empty(self) -> None:
        """Remove the queue's folder when no intent is left in it (a store at rest is one file).

        ``rmdir`` removes only an empty folder, so a process that queues at the same
        moment keeps its intent: ``add`` makes the folder again if it went away.
        """
        with contextlib.suppress(OSError):
            self.dir.rmdir()


def _recorded_start(path: Path) -> object:
    """The ``start`` a note (intent, holder note, or their ``.tmp``) recorded, or None if unreadable."""
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return info.get("start") if isinstance(info, dict) else None


def _who(intents: list[Intent]) -> str:
    shown = ", ".join(i.describe() for i in intents[:3])
    return shown + (f" and {len(intents) - 3} more" if len(intents) > 3 else "")


class _SharedConnection:
    """The one DuckDB connection of this process for one database file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.instance: duckdb.DuckDBPyConnection | None = None  # in-memory DuckDB, kept for the process
        self.conn: duckdb.DuckDBPyConnection | None = None      # = instance while the file is attached
        self.leases = 0
        self.migrated = False
        self.opened_at = 0.0
        self.min_turn_s = 0.25  # hold at least this long before yielding to a waiter
        self.linger_s = 0.0     # keep the file open this long after the last lease (UI)
        self.last_release = 0.0
        self.reaper: threading.Thread | None = None
        self.local = threading.local()   # per-thread lease depth: nested leases never wait
        self.queue = IntentQueue(path)
        self.ticket: int | None = None   # this process's place in the queue while it waits
        self.waiters = 0                 # threads of this process waiting for a lease
        self.last_refresh = 0.0
        self.holder_file = path.with_name(path.name + ".holder.json")
        self.swept = False

    # -- the queue -----------------------------------------------------------
    def _enqueue(self, client: str, purpose: str) -> None:
        if self.ticket is None:
            self.ticket = self.queue.add(client, purpose)
            self.last_refresh = time.monotonic()
        elif time.monotonic() - self.last_refresh >= 1.0:
            self.queue.refresh(self.ticket)
            self.last_refresh = time.monotonic()

    def _dequeue(self) -> None:
        if self.ticket is not None:
            self.queue.remove(self.ticket)
            self.ticket = None
            self.queue.remove_folder_if_empty()

    def sweep(self) -> None:
        """Remove what processes that are gone left behind (done once, at the first lease).

        Their intents, the holder note ``<db>.holder.json`` and its ``.tmp`` (a writer killed
        while writing it), and the queue's folder once empty. A note is removed only when
        its writer provably no longer exists (``_process_gone``: no such pid, a zombie, or
        a pid reused by a process started later); a live process's note is never touched.
        """
        self.queue.waiting(sweep_only=True)
        for note in (self.holder_file, self.holder_file.with_suffix(".tmp")):
            with contextlib.suppress(OSError, ValueError):
                info = json.loads(note.read_text())
                pid = info.get("pid")
                if isinstance(pid, int) and pid != os.getpid() and _process_gone(pid, info.get("start")):
                    note.unlink()
        self.queue.remove_folder_if_empty()
        self.swept = True

    def holder(self) -> dict[str, Any] | None:
        try:
            info: dict[str, Any] = json.loads(self.holder_file.read_text())
        except (OSError, ValueError):
            return None
        pid = info.get("pid")
        if not isinstance(pid, int) or pid == os.getpid() or _process_gone(pid, info.get("start")):
            return None
        return info

    def _turn_over(self) -> bool:
        return time.monotonic() - self.opened_at >= self.min_turn_s

    # -- leases ------------------------------------------------------------
    def try_acquire(self, client: str, purpose: str) -> tuple[duckdb.DuckDBPyConnection | None, str, bool]:
        """One attempt. Returns (connection, "", _) or (None, why-we-wait, at-the-head)."""
        with self.lock:
            if not self.swept:
                self.sweep()
            if self.conn is not None and getattr(self.local, "depth", 0) > 0:
                self.leases += 1  # nested lease of a thread that already holds one
                self.local.depth += 1
                return self.conn, "", True
            if self.conn is not None:
                others = self.queue.waiting() if self._turn_over() else []
                if not others:
                    self.leases += 1
                    self.local.depth = getattr(self.local, "depth", 0) + 1
                    self._dequeue()  # it has the file: not waiting any more
                    return self.conn, "", True
                if self.leases > 0:  # drain, then queue behind them
                    self._enqueue(client, purpose)
                    return None, f"letting {_who(others)} use the store first", False
                self._close()
            queued = self.queue.waiting()
            ahead = [i for i in queued if self.ticket is None or (i.ticket, i.pid) < (self.ticket, os.getpid())]
            if ahead:
                self._enqueue(client, purpose)
                return None, f"waiting for its turn after {_who(ahead)}", False
            busy = _lock_holder(self.path) if self.path.exists() else 0
            if busy:  # held by another process: do not pay for a failed connect
                self._enqueue(client, purpose)
                info = self.holder()
                who = (f"{info.get('client', '?')} (pid {info.get('pid')}, {info.get('purpose', '')})" if info
                       else f"another process (pid {busy})")
                return None, f"{self.path} is in use by {who}", True
            try:
                # No extension is ever fetched or loaded implicitly (no network at run time;
                # a SQLite file given as --db must fail, not trigger a download).
                conn = self._attach()
            except duckdb.IOException as e:
                if "lock" not in str(e).lower():
                    raise StoreError(
                        f"{self.path}: cannot open it as a workbench store (a DuckDB file): "
                        f"{str(e).splitlines()[0]}. Use a new --db path or an existing workbench store."
                    ) from e
                self._enqueue(client, purpose)
                info = self.holder()
                m = _LOCK_RE.search(str(e))
                if info:
                    who = f"{info.get('client', '?')} (pid {info.get('pid')}, {info.get('purpose', '')})"
                else:
                    who = f"another process (pid {m.group(1) if m else '?'})"
                return None, f"{self.path} is in use by {who}", True
            except duckdb.Error as e:
                raise StoreError(f"{self.path}: cannot open the store: {e}") from e
            self.conn = conn
            self.opened_at = time.monotonic()
            self.leases = 1
            self.local.depth = getattr(self.local, "depth", 0) + 1
            self._dequeue()
            with contextlib.suppress(OSError):
                tmp = self.holder_file.with_suffix(".tmp")
                tmp.write_text(json.dumps({"pid": os.getpid(), "start": _MY_START, "client": client,
                                           "purpose": purpose}))
                os.replace(tmp, self.holder_file)
            if not self.migrated:
                try:
                    with contextlib.closing(conn.cursor()) as cur:
                        cur.execute(f"USE {ALIAS}")
                        migrate(cur)
                        check_schema(cur)
                except StoreError as e:
                    self.leases = 0
                    self.local.depth -= 1
                    self._close()
                    raise StoreError(f"{self.path}: {e}") from e
                except BaseException:
                    self.leases = 0
                    self.local.depth -= 1
                    self._close()
                    raise
                self.migrated = True
            return conn, "", True

    def stop_waiting(self) -> None:
        """A thread leaves the wait loop without a lease; the last one takes the intent back."""
        with self.lock:
            self.waiters -= 1
            if self.waiters <= 0 and self.conn is None:
                self._dequeue()

    def release(self) -> None:
        with self.lock:
            self.local.depth = max(0, getattr(self.local, "depth", 1) - 1)
            self.leases -= 1
            if self.leases <= 0:
                self.leases = 0
                if self.linger_s <= 0 or (self._turn_over() and self.queue.waiting()):
                    self._close()
                else:
                    self.last_release = time.monotonic()
                    if self.reaper is None:
                        self.reaper = threading.Thread(target=self._reap, name="store-linger", daemon=True)
                        self.reaper.start()

    def _reap(self) -> None:
        """Close the idle connection after ``linger_s``, or soon when another process waits."""
        while True:
            time.sleep(0.02)
            with self.lock:
                if self.conn is None:
                    self.reaper = None
                    return
                if self.leases:
                    continue
                idle = time.monotonic() - self.last_release
                if idle >= self.linger_s or (
                        (idle >= IDLE_HANDOVER_S or self._turn_over()) and self.queue.waiting()):
                    self._close()
                    self.reaper = None
                    return

    def close_idle(self) -> None:
        """Close the connection now if no lease is active (tests, shutdown)."""
        with self.lock:
            if self.leases == 0:
                self._close()

    def _attach(self) -> duckdb.DuckDBPyConnection:
        """Attach the store file to this process's DuckDB instance (created once, in memory).

        Opening a DuckDB database builds its function catalog (about 15 ms of CPU);
        attaching a file to an instance that lives on costs about 2 ms, detaching
        it about 2 ms. A hand-over between processes is then a detach and an
        attach, and the file lock is held only while the file is attached.
        """
        if self.instance is None:
            # No extension is ever fetched or loaded implicitly (no network at run time;
            # a SQLite file given as --db must fail, not trigger a download).
            self.instance = duckdb.connect(":memory:", config={
                "autoload_known_extensions": False, "autoinstall_known_extensions": False})
            # _close decides when to checkpoint (never implicitly at DETACH).
            with contextlib.suppress(duckdb.Error):  # DuckDB < 1.4: DETACH checkpoints, as before
                self.instance.execute("SET checkpoint_on_detach = 'disabled'")
        try:  # the folder is made at the first lease, not when a command merely names the store
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StoreError(f"{self.path}: cannot create its folder ({e.strerror or e}); use another --db path") from e
        path = str(self.path).replace("'", "''")
        self.instance.execute(f"ATTACH '{path}' AS {ALIAS}")
        return self.instance

    def _close(self) -> None:
        if self.waiters <= 0:
            self._dequeue()  # no thread of this process waits: it is not in the queue
        if self.conn is not None:
            try:
                try:
                    # Every close checkpoints, also when handing the file to a waiting process: a
                    # log left behind is replayed by every attach until someone checkpoints, which
                    # made hand-overs 5x slower (bench/store_handover.py: 8 -> 38 ms p50).
                    with contextlib.suppress(duckdb.Error):  # the WAL stays; the next close retries
                        self.conn.execute(f"CHECKPOINT {ALIAS}")
                    self.conn.execute(f"DETACH {ALIAS}")
                except duckdb.Error:  # never keep the file locked: drop the whole instance
                    self.conn.close()
                    self.instance = None
            finally:
                self.conn = None
                with contextlib.suppress(OSError, ValueError):
                    info = json.loads(self.holder_file.read_text())
                    if info.get("pid") == os.getpid():
                        self.holder_file.unlink()


_SHARED: dict[Path, _SharedConnection] = {}
_SHARED_LOCK = threading.Lock()


def _close_all_at_exit() -> None:
    """Close every idle connection and take back every intent before the interpreter shuts down.

    A lingering connection must not be left to a daemon thread at exit: DuckDB's
    destructor running during interpreter teardown can abort the process
    ("FATAL: exception not rethrown").
    """
    with _SHARED_LOCK:
        shared = list(_SHARED.values())
    for sc in shared:
        with contextlib.suppress(Exception):
            with sc.lock:
                sc.linger_s = 0.0
                if sc.leases == 0:
                    sc._close()
                    if sc.instance is not None:  # its worker threads end here, not at teardown
                        sc.instance.close()
                        sc.instance = None
                sc._dequeue()


atexit.register(_close_all_at_exit)


def _shared_for(path: Path) -> _SharedConnection:
    key = path.resolve()
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = _SharedConnection(key)
        return _SHARED[key]


def schema_version(conn: duckdb.DuckDBPyConnection) -> int:
    """The schema version stored in ``meta`` (0 for an empty database)."""
    has_meta = conn.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta' "
        "AND table_catalog = current_database()"
    ).fetchone()
    if not has_meta or not has_meta[0]:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


_OBJECT_RE = re.compile(r"\b(CREATE|DROP)\s+(?:OR\s+REPLACE\s+)?(TABLE|VIEW)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?"
                        r"([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)


def expected_objects() -> dict[str, str]:
    """name -> ``table`` | ``view`` of every object the migrations leave in a store."""
    objects: dict[str, str] = {}
    for version in sorted(MIGRATIONS):
        for stmt in MIGRATIONS[version]:
            for verb, kind, name in _OBJECT_RE.findall(stmt):
                if verb.upper() == "CREATE":
                    objects[name.lower()] = kind.lower()
                else:
                    objects.pop(name.lower(), None)
    return objects


def check_schema(conn: duckdb.DuckDBPyConnection) -> None:
    """Check that every table and view of the schema is there (done once per process, at open).

    A store whose view was dropped or whose table is missing would otherwise
    fail later, in the middle of a command, with a driver traceback.

    Raises:
        StoreError: objects are missing (named, with how to recover).
    """
    present = {r[0].lower() for r in conn.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = current_database() "
        "AND NOT internal").fetchall()}
    missing = sorted((kind, name) for name, kind in expected_objects().items() if name not in present)
    if missing:
        shown = ", ".join(f"{kind} {name}" for kind, name in missing[:8]) + (" ..." if len(missing) > 8 else "")
        raise StoreError(
            f"the store is damaged: expected the workbench's tables and views, found {len(missing)} missing "
            f"({shown}); it was changed outside the workbench. Restore it from a backup.")


def migrate(conn: duckdb.DuckDBPyConnection) -> int:
    """Bring a database to ``SCHEMA_VERSION``, one transaction per step.

    Returns:
        The version after migrating.

    Raises:
        StoreError: the database is newer than this code (downgrades are refused).
    """
    try:
        version = schema_version(conn)
    except duckdb.Error as e:
        raise StoreError(f"not a workbench store: its meta table is not the workbench's ({e})") from e
    if version == 0:
        foreign = sorted(r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
            "AND table_catalog = current_database()").fetchall())
        if foreign:
            shown = ", ".join(foreign[:8]) + (" ..." if len(foreign) > 8 else "")
            raise StoreError(
                f"not a workbench store: it holds other tables ({shown}) and no workbench schema; "
                "use a new --db path (the workbench never adds its tables to another database)"
            )
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"store schema version {version} is newer than this workbench's {SCHEMA_VERSION}; "
            "upgrade the workbench"
        )
    while version < SCHEMA_VERSION:
        conn.execute("BEGIN TRANSACTION")
        try:
            for stmt in MIGRATIONS[version]:
                conn.execute(stmt)
            conn.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(version + 1)]
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        version += 1
    return version


def _driver_error(path: Path, purpose: str, e: BaseException) -> str:
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    damaged = isinstance(e, duckdb.IOException | duckdb.CatalogException | duckdb.InternalException |
                         duckdb.SerializationException)
    hint = (" The store file is damaged (truncated?) or was changed outside the workbench; restore it from a "
            "backup." if damaged else "")
    return f"{path}: {purpose or 'store operation'} failed: {first}.{hint}"


class Gateway:
    """Leases on the workbench database: the single gateway every part of ``Store`` shares.

    One ``Gateway`` per ``Store``; its parts (``store.runs``, ``store.judgments``, ...)
    each take their leases through it, and leases of one process share one DuckDB
    instance whatever gateway they come from (``_shared_for``).

    Args:
        path: the DuckDB file (created with its folder at the first lease).
        client: who this process is, shown to other processes that wait
            (e.g. ``"workbench ui"``, ``"workbench score"``).
        lock_timeout_s: how long a lease waits for another process, seconds.
        on_wait: called with a message at most every ``wait_report_s`` while
            waiting (the CLI prints it to stderr; the UI shows it).
        wait_report_s: seconds between two ``on_wait`` messages.
        linger_s: keep the file open this many seconds after the last lease ends
            (0 = close at once). A long-lived process with many short operations
            (the UI) lingers to avoid reopening the file for each one (about 60 ms
            per open and close on a 200k-row store, against 4 ms per operation
            on an open file); it still closes within 50 ms when another process
            registers an intent.
        min_turn_s: once it has the file, this process keeps granting new leases
            for at least this long before yielding to a waiting process (0.25 s by
            default). A command made of many short leases (the CLI) uses a longer
            turn with a linger, so it is not handed back and forth at every lease.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        client: str = "workbench",
        lock_timeout_s: float = 300.0,
        on_wait: WaitCallback | None = None,
        wait_report_s: float = 2.0,
        linger_s: float = 0.0,
        min_turn_s: float | None = None,
    ) -> None:
        self.path = Path(path)
        self.client = client
        self.lock_timeout_s = lock_timeout_s
        self.on_wait = on_wait
        self.wait_report_s = wait_report_s
        self._shared = _shared_for(self.path)
        self._shared.linger_s = max(self._shared.linger_s, linger_s)
        if min_turn_s is not None:
            self._shared.min_turn_s = min_turn_s

    @contextlib.contextmanager
    def connection(self, purpose: str = "") -> Iterator[duckdb.DuckDBPyConnection]:
        """A lease on the process's connection, yielding a fresh cursor.

        Waits while another process holds the file or is queued before this one
        (first come, first served; see the module docstring).

        Raises:
            StoreLockedError: still not available after ``lock_timeout_s``.
            StoreError: the file cannot be opened for another reason.
        """
        shared = self._shared
        start = time.monotonic()
        last_report = start
        reported = False
        delay = 0.001
        with shared.lock:
            shared.waiters += 1
        try:
            while True:
                conn, why, at_head = shared.try_acquire(self.client, purpose)
                if conn is not None:
                    break
                now = time.monotonic()
                if now - start > self.lock_timeout_s:
                    raise StoreLockedError(
                        f"gave up after {self.lock_timeout_s:.0f} s waiting: {why}. "
                        "Retry when it has finished, or raise --lock-timeout / WORKBENCH_LOCK_TIMEOUT."
                    )
                if self.on_wait and (now - last_report >= self.wait_report_s or not reported):
                    if now - start >= 0.5 or reported:
                        self.on_wait(f"waiting for the store ({now - start:.0f} s): {why}")
                        reported = True
                        last_report = now
                # At the head of the queue: retry every few ms, so the file changes hands without
                # a gap. Behind others: look at the queue again soon, never at the file.
                time.sleep((delay if at_head else BEHIND_POLL_S) * (0.5 + random.random()))
                delay = min(delay * 1.2, HEAD_POLL_MAX_S) if at_head else 0.001
        finally:
            shared.stop_waiting()
        try:
            cur = conn.cursor()
            cur.execute(f"USE {ALIAS}")
        except BaseException:
            shared.release()
            raise
        try:
            yield cur
        except duckdb.Error as e:  # a driver error is one line naming the store, never a traceback
            raise StoreError(_driver_error(self.path, purpose, e)) from e
        finally:
            try:
                cur.close()
            finally:
                shared.release()

    @contextlib.contextmanager
    def transaction(self, purpose: str = "") -> Iterator[duckdb.DuckDBPyConnection]:
        """A lease whose work is one transaction: all of it commits, or none.

        Driver errors are re-raised as ``StoreError``; ``WorkbenchError``s raised
        inside the block roll back and propagate unchanged.
        """
        with self.connection(purpose) as cur:
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
            except BaseException as e:
                with contextlib.suppress(duckdb.Error):
                    cur.execute("ROLLBACK")
                if isinstance(e, duckdb.Error):
                    raise StoreError(f"{self.path}: {purpose or 'write'} failed and was rolled back: {e}") from e
                raise
            try:
                cur.execute("COMMIT")
            except duckdb.Error as e:
                raise StoreError(f"{self.path}: {purpose or 'write'} could not commit: {e}") from e

    def release_file(self) -> None:
        """Close the file now if this process has no active lease (ends a linger)."""
        self._shared.close_idle()

    def schema_version(self) -> int:
        """The store's schema version (``SCHEMA_VERSION`` once opened)."""
        with self.connection("read schema version") as cur:
            return schema_version(cur)
