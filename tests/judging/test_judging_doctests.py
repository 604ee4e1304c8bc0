"""The examples in the judging modules' docstrings run and print what they say."""

from __future__ import annotations

import doctest

import pytest

import workbench.judging.adjudication
import workbench.judging.agreement
import workbench.judging.queue


@pytest.mark.parametrize(
    "module",
    [workbench.judging.adjudication, workbench.judging.agreement, workbench.judging.queue],
)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
