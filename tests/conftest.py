"""Shared fixtures: temporary stores and inline TREC text.

Each domain's tests add their own fixtures in their folder's conftest.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_corpus" / "cranfield"
RAW_CRANFIELD = ROOT.parent / "shared" / "data" / "cranfield"


@pytest.fixture
def store(tmp_path):
    """A fresh Store in a temporary folder."""
    from workbench.store import Store

    return Store(tmp_path / "wb.duckdb", client="pytest", lock_timeout_s=30)


@pytest.fixture
def write(tmp_path):
    """write(name, text) -> Path: a file with exactly that text (bytes preserved)."""

    def _write(name: str, text: str | bytes) -> Path:
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_bytes(text.encode("utf-8"))
        return p

    return _write
