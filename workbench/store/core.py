"""Connection handling of the store: short-lived leases, a fair hand-over
between processes, one transaction per multi-row change.

Concurrency model (measured facts in ../shared/ENVIRONMENT.md, section 4):

* DuckDB lets one *process* open a file; a second process fails at once with
  ``IOException: Could not set lock on file`` (even read-only).
* Threads of one process share one database instance; each must use its own
  ``cursor()``. A cursor kept across Streamlit reruns breaks, so none is kept.

Hence every operation takes a *lease*: ``StoreCore.cursor()`` /
``StoreCore.transaction()``. Leases of one process share one connection (one
DuckDB instance); each lease gets a fresh cursor. The connection is closed,
and the file lock released, as soon as the last lease of the process ends.

A process that finds the file locked writes an *intent* file
(``<db>.waiting/<pid>.json``) and retries with jittered backoff, reporting what
it waits for through ``on_wait``. A process holding the file that sees a live
foreign intent grants no *new* lease until it has closed the file, so its
running leases drain and the waiter gets in: the UI (many threads, many short
leases) and a CLI command (one process) take turns instead of one starving the
other. After closing for waiters, the process does not reopen the file while
those waiters' intents remain (for at most 5 s), so a busy UI cannot snatch the
file back before the CLI gets in. A waiter otherwise holding nothing only
yields to the processes it closed for, and only for 5 s, so two waiters cannot
deadlock. Stale intents of dead processes are removed.

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
from pathlib import Path
from typing import Any

import duckdb

from workbench.errors import StoreError, StoreLockedError
from workbench.store.schema import MIGRATIONS, SCHEMA_VERSION

WaitCallback = Callable[[str], None]
"""Receives a human-readable line while a lease waits (e.g. printed to stderr)."""

_LOCK_RE = re.compile(r"PID (\d+)")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _SharedConnection:
    """The one DuckDB connection of this process for one database file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.conn: duckdb.DuckDBPyConnection | None = None
        self.leases = 0
        self.migrated = False
        self.opened_at = 0.0
        self.min_turn_s = 0.25  # hold at least this long before yielding to a waiter
        self.linger_s = 0.0     # keep the file open this long after the last lease (UI)
        self.last_release = 0.0
        self.reaper: threading.Thread | None = None
        # After closing the file for waiting processes, do not reopen it while
        # they still wait (up to ``yield_s``): the hand-over is real, not a race.
        self.yield_to: set[int] = set()
        self.yield_until = 0.0
        self.yield_s = 5.0
        self.local = threading.local()   # per-thread lease depth: nested leases never wait
        self.waiting_dir = path.with_name(path.name + ".waiting")
        self.holder_file = path.with_name(path.name + ".holder.json")

    # -- intents ---------------------------------------------------------
    def _intent_path(self) -> Path:
        return self.waiting_dir / f"{os.getpid()}.json"

    def register_intent(self, client: str, purpose: str) -> None:
        self.waiting_dir.mkdir(parents=True, exist_ok=True)
        p = self._intent_path()
        if not p.exists():
            tmp = p.with_suffix(".tmp")
            tmp.write_text(json.dumps({"pid": os.getpid(), "client": client, "purpose": purpose,
                                       "since": time.time()}))
            os.replace(tmp, p)

    def clear_intent(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._intent_path().unlink()

    def foreign_intents(self) -> list[dict[str, Any]]:
        """Live intents of other processes (stale ones are deleted)."""
        if not self.waiting_dir.is_dir():
            return []
        found = []
        me = os.getpid()
        for f in self.waiting_dir.glob("*.json"):
            try:
                pid = int(f.stem)
            except ValueError:
                continue
            if pid == me:
                continue
            if not _pid_alive(pid):
                with contextlib.suppress(FileNotFoundError):
                    f.unlink()
                continue
            try:
                found.append(json.loads(f.read_text()))
            except (OSError, ValueError):
                found.append({"pid": pid, "client": "?", "purpose": "?"})
        return found

    def holder(self) -> dict[str, Any] | None:
        try:
            info: dict[str, Any] = json.loads(self.holder_file.read_text())
        except (OSError, ValueError):
            return None
        pid = info.get("pid")
        if not isinstance(pid, int) or pid == os.getpid() or not _pid_alive(pid):
            return None
        return info

    # -- leases ------------------------------------------------------------
    def try_acquire(self, client: str, purpose: str) -> tuple[duckdb.DuckDBPyConnection | None, str]:
        """One attempt. Returns (connection, "") or (None, why-we-wait)."""
        with self.lock:
            if self.conn is not None and getattr(self.local, "depth", 0) > 0:
                self.leases += 1  # nested lease of a thread that already holds one
                self.local.depth += 1
                return self.conn, ""
            if self.conn is not None:
                turn_over = time.monotonic() - self.opened_at >= self.min_turn_s
                intents = self.foreign_intents() if turn_over else []
                if intents and self.leases > 0:
                    who = ", ".join(f"{i.get('client')} (pid {i.get('pid')})" for i in intents)
                    return None, f"letting {who} use the store first"
                if intents and self.leases == 0:
                    self._close_for(intents)
                else:
                    self.leases += 1
                    self.local.depth = getattr(self.local, "depth", 0) + 1
                    return self.conn, ""
            if self.yield_to and time.monotonic() < self.yield_until:
                waiting = [i for i in self.foreign_intents() if i.get("pid") in self.yield_to]
                if waiting:
                    self.register_intent(client, purpose)
                    who = ", ".join(f"{i.get('client')} (pid {i.get('pid')})" for i in waiting)
                    return None, f"letting {who} use the store first"
            self.yield_to = set()
            try:
                # No extension is ever fetched or loaded implicitly (no network at run time;
                # a SQLite file given as --db must fail, not trigger a download).
                conn = duckdb.connect(str(self.path), config={
                    "autoload_known_extensions": False, "autoinstall_known_extensions": False})
            except duckdb.IOException as e:
                if "lock" not in str(e).lower():
                    raise StoreError(
                        f"{self.path}: cannot open it as a workbench store (a DuckDB file): "
                        f"{str(e).splitlines()[0]}. Use a new --db path or an existing workbench store."
                    ) from e
                self.register_intent(client, purpose)
                info = self.holder()
                m = _LOCK_RE.search(str(e))
                if info:
                    who = f"{info.get('client', '?')} (pid {info.get('pid')}, {info.get('purpose', '')})"
                else:
                    who = f"another process (pid {m.group(1) if m else '?'})"
                return None, f"{self.path} is in use by {who}"
            except duckdb.Error as e:
                raise StoreError(f"{self.path}: cannot open the store: {e}") from e
            self.conn = conn
            self.opened_at = time.monotonic()
            self.leases = 1
            self.local.depth = getattr(self.local, "depth", 0) + 1
            self.clear_intent()
            with contextlib.suppress(OSError):
                tmp = self.holder_file.with_suffix(".tmp")
                tmp.write_text(json.dumps({"pid": os.getpid(), "client": client, "purpose": purpose}))
                os.replace(tmp, self.holder_file)
            if not self.migrated:
                try:
                    migrate(conn)
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
            return conn, ""

    def release(self) -> None:
        with self.lock:
            self.local.depth = max(0, getattr(self.local, "depth", 1) - 1)
            self.leases -= 1
            if self.leases <= 0:
                self.leases = 0
                if self.linger_s <= 0:
                    self._close_for(self.foreign_intents())
                else:
                    self.last_release = time.monotonic()
                    if self.reaper is None:
                        self.reaper = threading.Thread(target=self._reap, name="store-linger", daemon=True)
                        self.reaper.start()

    def _reap(self) -> None:
        """Close the idle connection after ``linger_s``, or at once when another process waits."""
        while True:
            time.sleep(0.05)
            with self.lock:
                if self.conn is None:
                    self.reaper = None
                    return
                intents = self.foreign_intents()
                if self.leases == 0 and (time.monotonic() - self.last_release >= self.linger_s or intents):
                    self._close_for(intents)
                    self.reaper = None
                    return

    def close_idle(self) -> None:
        """Close the connection now if no lease is active (tests, shutdown)."""
        with self.lock:
            if self.leases == 0:
                self._close()

    def _close_for(self, intents: list[dict[str, Any]]) -> None:
        """Close the file; if processes wait for it, let them in before reopening."""
        self._close()
        pids = {i.get("pid") for i in intents if isinstance(i.get("pid"), int)}
        if pids:
            self.yield_to = pids  # type: ignore[assignment]
            self.yield_until = time.monotonic() + self.yield_s

    def _close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            finally:
                self.conn = None
                with contextlib.suppress(OSError):
                    info = json.loads(self.holder_file.read_text())
                    if info.get("pid") == os.getpid():
                        self.holder_file.unlink()


_SHARED: dict[Path, _SharedConnection] = {}
_SHARED_LOCK = threading.Lock()


def _close_all_at_exit() -> None:
    """Close every idle connection before the interpreter shuts down.

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
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta'"
    ).fetchone()
    if not has_meta or not has_meta[0]:
        return 0
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


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
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall())
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


class StoreCore:
    """Leases on the workbench database: the base of ``LabelStore``.

    Args:
        path: the DuckDB file (created with its folder on first use).
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._shared = _shared_for(self.path)
        self._shared.linger_s = max(self._shared.linger_s, linger_s)
        if min_turn_s is not None:
            self._shared.min_turn_s = min_turn_s

    @contextlib.contextmanager
    def connection(self, purpose: str = "") -> Iterator[duckdb.DuckDBPyConnection]:
        """A lease on the process's connection, yielding a fresh cursor.

        Waits (with jittered backoff from 5 ms to 100 ms) while another process
        holds the file or has asked for it.

        Raises:
            StoreLockedError: still not available after ``lock_timeout_s``.
            StoreError: the file cannot be opened for another reason.
        """
        start = time.monotonic()
        last_report = start
        delay = 0.005
        reported = False
        while True:
            conn, why = self._shared.try_acquire(self.client, purpose)
            if conn is not None:
                break
            now = time.monotonic()
            if now - start > self.lock_timeout_s:
                self._shared.clear_intent()
                raise StoreLockedError(
                    f"gave up after {self.lock_timeout_s:.0f} s waiting: {why}. "
                    "Retry when it has finished, or raise --lock-timeout / WORKBENCH_LOCK_TIMEOUT."
                )
            if self.on_wait and (now - last_report >= self.wait_report_s or not reported):
                if now - start >= 0.5 or reported:
                    self.on_wait(f"waiting for the store ({now - start:.0f} s): {why}")
                    reported = True
                    last_report = now
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 1.6, 0.1)
        cur = conn.cursor()
        try:
            yield cur
        finally:
            try:
                cur.close()
            finally:
                self._shared.release()

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
