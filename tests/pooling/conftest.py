"""Fixtures of the pooling tests: a tiny deterministic encoder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # retriever_contract.py, encoder_stub.py

from encoder_stub import StubEncoder  # noqa: E402


@pytest.fixture
def stub_encoder() -> StubEncoder:
    return StubEncoder()
