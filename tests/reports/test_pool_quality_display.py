"""``workbench pool reusability``'s table, TSV and JSON show both taus (issue 26)."""

from __future__ import annotations

import json
import math

import pytest

from pooling.reusability import contributors_at_depth, leave_one_run_out
from workbench.reports.pool_quality import render_reusability
from workbench.services.runs.pool_quality import ReusabilityReport

# Pool depth 1, R@3, one topic with relevant p, q, s: a pools p (and finds q, s below the depth), b pools q,
# c pools s (and finds p below the depth); the hand computation is in tests/pooling/test_reusability.py.
RUNS = {"a": {"t": {"p": 3.0, "q": 2.0, "s": 1.0}},
        "b": {"t": {"q": 3.0, "v": 2.0, "w": 1.0}},
        "c": {"t": {"s": 3.0, "p": 2.0, "u": 1.0}}}
QRELS = {"t": {"p": 1, "q": 1, "s": 1}}


@pytest.fixture
def report():
    rows = leave_one_run_out(QRELS, contributors_at_depth(RUNS, 1), RUNS, "R@3")
    return ReusabilityReport("p1", "q1", "R@3", tuple(rows))


def test_the_table_shows_the_tau_with_the_left_out_run_and_with_every_run_rescored(report):
    lines = render_reusability(report).splitlines()
    head = lines[1]
    for name in ("tau, it rescored", "its place changed", "tau, all rescored", "runs moved"):
        assert name in head
    rows = {line.split()[0]: line for line in lines[2:5]}
    # a left out: a alone rescored keeps its place (tau 1); every run rescored, b and c tie (2 / sqrt 6).
    assert rows["a"].split()[6:11] == ["1.000", "no", f"{2 / math.sqrt(6):.3f}", "c,", "b"]
    # b left out: a and c tie on the reduced qrels, but the order a, c, b stands (ties by name).
    assert rows["b"].split()[6:10] == ["1.000", "no", "0.816", "none"]
    it = next(line for line in lines if line.startswith("  tau, it rescored:"))
    every = next(line for line in lines if line.startswith("  tau, all rescored:"))
    assert "only the left-out run scored" in it and "every run scored on the reduced qrels" in every


def test_json_and_tsv_carry_both_taus_at_full_precision(report):
    rows = {r["run"]: r for r in json.loads(render_reusability(report, "json"))["runs"]}
    a = rows["a"]
    assert (a["tau"], a["order_changed"], a["moved_all"]) == (1.0, False, ["c", "b"])
    assert a["tau_all"] == pytest.approx(2 / math.sqrt(6), abs=1e-15)
    assert a["left_out_all"] == {"a": 1.0, "b": 0.5, "c": 0.5}
    tsv = [line.split("\t") for line in render_reusability(report, "tsv").splitlines()]
    head = tsv[0]
    by_run = {r[0]: dict(zip(head, r, strict=True)) for r in tsv[1:]}
    assert float(by_run["a"]["tau_all"]) == a["tau_all"] and by_run["a"]["moved_all"] == "c,b"
    assert (by_run["b"]["tau"], by_run["b"]["order_changed"], by_run["b"]["moved_all"]) == ("1.0", "false", "")
