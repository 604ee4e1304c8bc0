"""Leases, migrations and transactions of Gateway."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

from workbench.errors import StoreError, StoreLockedError
from workbench.store import SCHEMA_VERSION, Store
from workbench.store.schema import MIGRATIONS


def test_new_store_is_migrated_to_the_current_schema(store):
    assert store.schema_version() == SCHEMA_VERSION == max(MIGRATIONS) + 1


def test_transaction_rolls_back_every_row_on_error(store):
    with store.transaction() as cur:
        cur.execute("CREATE TABLE t (i INTEGER PRIMARY KEY)")
    with pytest.raises(StoreError, match="rolled back"):
        with store.transaction("insert") as cur:
            cur.execute("INSERT INTO t VALUES (1)")
            cur.execute("INSERT INTO t VALUES (1)")  # duplicate key
    with store.connection() as cur:
        assert cur.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_threads_each_get_their_own_cursor_and_lose_nothing(store):
    with store.transaction() as cur:
        cur.execute("CREATE TABLE t (who VARCHAR, i INTEGER)")

    def work(who: str) -> None:
        for i in range(50):
            with store.transaction() as cur:
                cur.execute("INSERT INTO t VALUES (?, ?)", [who, i])

    threads = [threading.Thread(target=work, args=(f"t{j}",)) for j in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with store.connection() as cur:
        assert cur.execute("SELECT count(*), count(DISTINCT who) FROM t").fetchone() == (300, 6)


HOLDER = textwrap.dedent(
    """
    import sys, time
    from workbench.store import Store
    s = Store(sys.argv[1], client="holder")
    with s.connection("hold") as cur:
        print("holding", flush=True)
        time.sleep(float(sys.argv[2]))
    """
)


def test_a_second_process_waits_and_says_for_what(tmp_path):
    db = tmp_path / "wb.duckdb"
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), "1.5"], stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None and p.stdout.readline().strip() == "holding"
    messages: list[str] = []
    s = Store(db, client="waiter", lock_timeout_s=30, on_wait=messages.append, wait_report_s=0.2)
    assert s.schema_version() == SCHEMA_VERSION
    p.wait(timeout=30)
    assert messages and "holder" in messages[0] and "hold" in messages[0]


def test_lock_timeout_raises_store_locked_error(tmp_path):
    db = tmp_path / "wb.duckdb"
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), "3"], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "holding"
        s = Store(db, client="waiter", lock_timeout_s=0.3)
        with pytest.raises(StoreLockedError, match="holder"):
            s.schema_version()
    finally:
        p.wait(timeout=30)


def test_lingering_connection_is_handed_over_to_a_waiting_process(tmp_path):
    db = tmp_path / "wb.duckdb"
    ui = Store(db, client="ui", linger_s=60)
    assert ui.schema_version() == SCHEMA_VERSION  # the file now stays open for up to 60 s
    # A second process registers an intent; the idle holder closes within ~50 ms.
    p = subprocess.run([sys.executable, "-c", HOLDER, str(db), "0"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "holding"
    assert ui.schema_version() == SCHEMA_VERSION  # and the UI reopens it afterwards
    ui.release_file()


def test_a_foreign_duckdb_file_is_refused_and_left_untouched(tmp_path):
    import duckdb

    path = tmp_path / "other.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE meta (x INTEGER)")
        con.execute("CREATE TABLE sales (id INTEGER)")
    with pytest.raises(StoreError, match=r"not a workbench store: its meta table is not the workbench's"):
        Store(path).schema_version()
    path2 = tmp_path / "other2.duckdb"
    with duckdb.connect(str(path2)) as con:
        con.execute("CREATE TABLE sales (id INTEGER)")
    with pytest.raises(StoreError, match=r"it holds other tables \(sales\) and no workbench schema"):
        Store(path2).schema_version()
    with duckdb.connect(str(path2)) as con:  # nothing was added to it
        assert con.execute("SELECT count(*) FROM information_schema.tables").fetchone() == (1,)


def test_a_sqlite_file_is_refused_without_fetching_an_extension(tmp_path):
    import sqlite3

    path = tmp_path / "x.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE a (x)")
    with pytest.raises(StoreError, match="cannot open it as a workbench store"):
        Store(path).schema_version()
