"""The DuckDB-backed store (the only package that imports duckdb)."""

from workbench.store.schema import SCHEMA_VERSION
from workbench.store.store import LabelStore

__all__ = ["LabelStore", "SCHEMA_VERSION"]
