"""Fixtures of the CLI tests."""

from __future__ import annotations

import pytest

from tests.cli.tiny import build_project


@pytest.fixture(scope="session")
def tiny_template(tmp_path_factory):
    """The tiny project (``tests.cli.tiny``), built once: (folder, store path). Copy it before changing it."""
    folder = tmp_path_factory.mktemp("tiny-project")
    return folder, build_project(folder)
