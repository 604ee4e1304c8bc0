"""The examples in the scoring modules' docstrings run and print what they say."""

from __future__ import annotations

import doctest

import pytest

import pooling.sample
import workbench.metadata
import workbench.reports.format
import workbench.scoring.columns
import workbench.scoring.compare
import workbench.scoring.depth
import workbench.scoring.estimate
import workbench.scoring.estimate_compare
import workbench.scoring.estimate_eb
import workbench.scoring.estimate_run
import workbench.scoring.evaluate
import workbench.scoring.filters
import workbench.scoring.gains
import workbench.scoring.groups
import workbench.scoring.measures
import workbench.scoring.novelty
import workbench.scoring.qrels_checks
import workbench.scoring.results
import workbench.scoring.small
import workbench.scoring.units
import workbench.services.evaluation.load
import workbench.services.evaluation.pipeline
import workbench.services.evaluation.request


@pytest.mark.parametrize(
    "module",
    [workbench.scoring.columns, workbench.scoring.compare, workbench.scoring.evaluate,
     workbench.scoring.measures, workbench.scoring.novelty, workbench.reports.format, workbench.services.evaluation.load,
     workbench.services.evaluation.pipeline, workbench.services.evaluation.request,
     workbench.scoring.filters, workbench.metadata, workbench.scoring.qrels_checks,
     workbench.scoring.units, workbench.scoring.groups, workbench.scoring.small, workbench.scoring.gains,
     workbench.scoring.results, workbench.scoring.depth,
     workbench.scoring.estimate, workbench.scoring.estimate_run, workbench.scoring.estimate_compare,
     workbench.scoring.estimate_eb, pooling.sample],
)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
