"""What a killed writer leaves beside the store is cleaned up by the next command, and what a
live process left is never touched (issue 26, "Consistency and integrity", item 3).

A writer killed with SIGKILL leaves its holder note ``<db>.holder.json`` (or, killed while
writing it, ``<db>.holder.tmp``) and, killed while queued, its intent in ``<db>.waiting/``.
The killed children are left unreaped until the end of each test: a killed process whose
parent has not yet waited for it is a zombie, which ``kill(pid, 0)`` still reports alive
(as it stays under a container init that never reaps); its notes are stale all the same.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from workbench.store import Store

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process states come from Linux /proc")

HOLDER = textwrap.dedent(
    """
    import os, signal, sys
    from workbench.store import Store
    s = Store(sys.argv[1], client="writer", lock_timeout_s=120)
    with s.transaction("write") as cur:
        cur.execute("INSERT INTO t VALUES (1)")
        print("holding", flush=True)
        if sys.stdin.readline().strip() == "die":
            os.kill(os.getpid(), signal.SIGKILL)
    """
)

WAITER = textwrap.dedent(
    """
    import sys
    from workbench.store import Store
    s = Store(sys.argv[1], client="waiter", lock_timeout_s=120)
    with s.transaction("append") as cur:
        cur.execute("INSERT INTO t VALUES (2)")
    """
)

KILLED_WHILE_NOTING = textwrap.dedent(
    """
    import os, signal, sys
    from workbench.store import Store
    replace = os.replace
    def die_at_the_holder_note(src, dst):  # the holder note's .tmp is written; killed before it is renamed
        if str(dst).endswith(".holder.json"):
            os.kill(os.getpid(), signal.SIGKILL)
        return replace(src, dst)
    os.replace = die_at_the_holder_note
    Store(sys.argv[1], client="noting writer").schema_version()
    """
)

NEXT_COMMAND = [sys.executable, "-m", "workbench", "--db"]


def _store(tmp_path: Path) -> Path:
    db = tmp_path / "wb.duckdb"
    store = Store(db)
    with store.transaction() as cur:
        cur.execute("CREATE TABLE t (x INTEGER)")
    store.release_file()
    return db


def _queued(db: Path, pid: int) -> bool:
    folder = db.with_name(db.name + ".waiting")
    return folder.is_dir() and any(f.name.endswith(f"-{pid}.json") for f in folder.iterdir())


def _wait_queued(db: Path, proc: subprocess.Popen) -> None:
    """Until ``proc`` has written its intent (a condition, not a time: the deadline only ends a hung test)."""
    deadline = time.monotonic() + 120
    while not _queued(db, proc.pid):
        assert proc.poll() is None and time.monotonic() < deadline, "the waiter never queued"
        time.sleep(0.01)


def _exited_unreaped(proc: subprocess.Popen) -> None:
    """Block until ``proc`` has exited, leaving it a zombie (``WNOWAIT``: not reaped)."""
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    assert Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def _start_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def test_the_next_command_removes_what_killed_writers_left(tmp_path):
    db = _store(tmp_path)
    holder_note, holder_tmp = db.with_name(db.name + ".holder.json"), db.with_name(db.name + ".holder.tmp")
    queue = db.with_name(db.name + ".waiting")
    writer = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    waiter = None
    noting = None
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "holding"
        assert json.loads(holder_note.read_text())["pid"] == writer.pid
        waiter = subprocess.Popen([sys.executable, "-c", WAITER, str(db)])
        _wait_queued(db, waiter)
        waiter.send_signal(signal.SIGKILL)  # killed while queued: its intent stays
        _exited_unreaped(waiter)
        assert writer.stdin is not None
        writer.stdin.write("die\n")  # killed inside its transaction: its holder note stays
        writer.stdin.flush()
        _exited_unreaped(writer)
        assert holder_note.exists() and _queued(db, waiter.pid)

        nxt = subprocess.run([*NEXT_COMMAND, str(db), "qrels", "list"], capture_output=True, text=True, timeout=300)
        assert nxt.returncode == 0, nxt.stderr
        assert not holder_note.exists()
        assert not _queued(db, waiter.pid)  # (a zombie's intent was obeyed as a live waiter's, until stale)
        assert not queue.exists()  # the intent went, and the queue's folder with it: a store at rest is one file
        assert sorted(p.name for p in tmp_path.iterdir()) == ["wb.duckdb"]

        noting = subprocess.Popen([sys.executable, "-c", KILLED_WHILE_NOTING, str(db)])
        _exited_unreaped(noting)
        assert json.loads(holder_tmp.read_text())["pid"] == noting.pid  # killed between writing and renaming it
        nxt = subprocess.run([*NEXT_COMMAND, str(db), "qrels", "list"], capture_output=True, text=True, timeout=300)
        assert nxt.returncode == 0, nxt.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["wb.duckdb"]
    finally:
        for p in (writer, waiter, noting):
            if p is not None:
                p.kill()
                p.wait(timeout=120)
    with Store(db).connection() as cur:  # the killed transaction left nothing; the store opens as usual
        assert cur.execute("SELECT count(*) FROM t").fetchall() == [(0,)]


def test_a_live_writer_s_notes_are_never_removed_and_a_reused_pid_s_are(tmp_path):
    db = _store(tmp_path)
    holder_note = db.with_name(db.name + ".holder.json")
    queue = db.with_name(db.name + ".waiting")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    writer = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    waiter = None
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "holding"
        waiter = subprocess.Popen([sys.executable, "-c", WAITER, str(db)])
        _wait_queued(db, waiter)
        note = holder_note.read_text()
        # the sleeper's pid under two start times: its own (a live process: kept) and another (a reused pid)
        own = queue / f"{time.time_ns():020d}-{sleeper.pid}.json"
        own.write_text(json.dumps({"pid": sleeper.pid, "start": _start_of(sleeper.pid), "client": "live"}))
        reused = queue / f"{time.time_ns():020d}-{sleeper.pid}.json"
        reused.write_text(json.dumps({"pid": sleeper.pid, "start": _start_of(sleeper.pid) - 1, "client": "gone"}))

        nxt = subprocess.run([*NEXT_COMMAND, str(db), "--lock-timeout", "1", "qrels", "list"],
                             capture_output=True, text=True, timeout=300)
        assert nxt.returncode == 1 and "gave up after 1 s waiting" in nxt.stderr  # the live holder holds the file
        assert holder_note.read_text() == note  # the live holder's note: untouched
        assert _queued(db, waiter.pid) and own.exists()
        assert not reused.exists()
    finally:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
        assert writer.wait(timeout=120) == 0
        if waiter is not None:
            assert waiter.wait(timeout=120) == 0
        sleeper.kill()
        sleeper.wait(timeout=120)
    with Store(db).connection() as cur:
        assert cur.execute("SELECT x FROM t ORDER BY x").fetchall() == [(1,), (2,)]
