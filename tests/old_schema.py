"""A store file as an older schema version left it, for the migration tests."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import duckdb

from workbench.store.schema import MIGRATIONS


@contextlib.contextmanager
def store_at_schema(path: Path, version: int) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB file at ``path`` holding schema ``version`` (migration steps 0 .. version-1, and the
    ``meta`` row naming the version); yields the open connection for the rows a test adds, then closes it."""
    con = duckdb.connect(str(path))
    try:
        for step in range(version):
            for stmt in MIGRATIONS[step]:
                con.execute(stmt)
        con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(version)])
        yield con
    finally:
        con.close()
