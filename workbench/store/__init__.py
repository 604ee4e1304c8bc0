"""The DuckDB-backed store (the only package that imports duckdb): ``Store`` and its parts."""

from workbench.store.schema import SCHEMA_VERSION
from workbench.store.store import Store

__all__ = ["SCHEMA_VERSION", "Store"]
