"""CLI commands: score."""

from __future__ import annotations

from workbench.cli import app  # noqa: F401
