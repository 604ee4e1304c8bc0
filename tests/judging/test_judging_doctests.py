"""The examples in the judging modules' docstrings run and print what they say."""

from __future__ import annotations

import doctest

import pytest

import workbench.judging.adjudication
import workbench.judging.agreement
import workbench.judging.prefill
import workbench.judging.queue
import workbench.judging.signin
import workbench.judging.stopping
import workbench.judging.strategies
import workbench.judging.strategies.bandit
import workbench.judging.strategies.base
import workbench.judging.strategies.mtf
import workbench.judging.strategies.rank


@pytest.mark.parametrize(
    "module",
    [workbench.judging.adjudication, workbench.judging.agreement, workbench.judging.prefill, workbench.judging.queue, workbench.judging.signin,
     workbench.judging.stopping, workbench.judging.strategies, workbench.judging.strategies.bandit,
     workbench.judging.strategies.base, workbench.judging.strategies.mtf, workbench.judging.strategies.rank],
)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
