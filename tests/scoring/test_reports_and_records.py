"""Rendering rounds only for people; stored evaluations keep every number with its evidence."""

from __future__ import annotations

import json
import math

import pytest

from workbench.errors import StoreError, UnknownNameError, ValidationError
from workbench.reports.charts import recall_curve_chart, save_chart
from workbench.reports.format import number
from workbench.reports.scores import render_scores
from workbench.scoring.evaluate import evaluate, value_rows
from workbench.store.evaluations import EvaluationRow

QRELS = {"1": {"a": 1, "b": 1, "c": 1}, "2": {"d": 1}}
RUN = {"1": {"a": 3.0, "x": 2.0, "b": 1.0}, "2": {"d": 1.0}}
HEADER = {"qrels": {"name": "q", "origin": "file", "content_hash": "ab" * 32, "n_topics": 2, "n_entries": 4},
          "runs": [{"name": "r", "origin": "file", "location": "r.run", "n_lines": 4}],
          "evaluator_version": "workbench test", "rel": 1, "missing": "exclude", "evaluation_ids": [], "warnings": []}


@pytest.fixture
def e():
    return evaluate(QRELS, RUN, ["R@2", "RR@1"], run_name="r", missing="exclude")


def test_table_rounds_to_four_decimals_and_json_keeps_full_precision(e):
    text = render_scores(HEADER, [e], "table")
    line = next(x for x in text.splitlines() if x.startswith("R@2 "))
    assert line.split()[1:4] == ["0.6667", "0.5000", "0.8333"]   # (1/3 + 1)/2, 2/4, (2/3 + 1)/2
    assert "missing    exclude" in text
    doc = json.loads(render_scores(HEADER, [e], "json"))
    assert doc["runs"][0]["measures"]["R@2"]["macro"] == (1 / 3 + 1) / 2
    assert doc["runs"][0]["measures"]["RR@1"]["micro"] is None      # RR has no micro average


def test_nan_is_shown_as_dash_and_null():
    empty = evaluate({"1": {"a": 1}}, {}, ["R@5"], missing="exclude")
    assert number(float("nan")) == "-" and number(None) == "-"
    line = next(x for x in render_scores(HEADER, [empty], "table").splitlines() if x.startswith("R@5 "))
    assert line.split() == ["R@5", "-", "-", "-", "0", "(0.0%)", "-"]
    assert json.loads(render_scores(HEADER, [empty], "json"))["runs"][0]["measures"]["R@5"]["macro"] is None


def test_value_rows_carry_numerators_and_denominators(e):
    rows = {(r.measure, r.aggregate): r for r in value_rows(e)}
    assert rows[("R@2", "macro")][2:] == (pytest.approx((1 / 3 + 1) / 2), pytest.approx(1 / 3 + 1), 2, 2)
    assert rows[("R@2", "micro")][2:] == (pytest.approx(2 / 4), 2.0, 4.0, 2)
    assert rows[("R@2", "1")][2:] == (pytest.approx(1 / 3), 1.0, 3.0, 1)
    assert rows[("R@2", "unjudged")][2:] == (pytest.approx(1 / 3), 1, 3, 2)   # x; of a, x and d
    assert rows[("R@2", "optimistic")].value == pytest.approx(((1 + 1) / (3 + 1) + 1) / 2)
    assert ("RR@1", "micro") not in rows


def test_unknown_format_and_chart_suffix(e, tmp_path):
    with pytest.raises(ValidationError, match="--format"):
        render_scores(HEADER, [e], "xml")
    with pytest.raises(ValidationError, match="expected a chart file"):
        save_chart(recall_curve_chart([e]), tmp_path / "c.pdf")
    p = save_chart(recall_curve_chart([e]), tmp_path / "c.json")
    spec = json.loads(p.read_text())
    values = [v for v in spec["data"]["values"] if v["run"] == e.run_name]
    ceiling = [v["R@k"] for v in spec["data"]["values"] if v["run"].startswith("ceiling")]
    # mean over topics of min(k, |R|) / |R|, |R| = 3 and 1
    assert ceiling == [pytest.approx((1 / 3 + 1) / 2), pytest.approx((2 / 3 + 1) / 2), 1.0]
    assert [(v["k"], v["R@k"]) for v in values] == [(1, pytest.approx((1 / 3 + 1) / 2)),
                                                     (2, pytest.approx((1 / 3 + 1) / 2)),
                                                     (3, pytest.approx((2 / 3 + 1) / 2))]


def test_the_plain_recall_curve_spec_is_the_altair_charts(e):
    """Issue 26: the app draws the recall curve from a spec made without altair (its import and
    schema validation cost about 1.8 s of the Scoreboard's first visit); it is the altair chart's JSON."""
    from workbench.reports.charts import recall_curve_spec

    other = evaluate(QRELS, {"1": {"a": 1.0}}, ["R@2"], run_name="other's run", missing="zero")
    for evaluations in ([e], [e, other], []):
        made = recall_curve_chart(evaluations, title="R@k on q1").to_dict()
        made.pop("$schema")
        made.pop("config")
        assert recall_curve_spec(evaluations, title="R@k on q1") == made


def test_record_and_read_back_an_evaluation(store, e):
    rows = [EvaluationRow(*r) for r in value_rows(e)]
    eid = store.evaluations.record_evaluation("r", "q1", rows, evaluator_version="v", params={"rel": 1})
    (summary,) = store.evaluations.list_evaluations()
    assert (summary.evaluation_id, summary.run_name, summary.qrels_version, summary.n_rows) == (eid, "r", "q1", len(rows))
    assert summary.params == {"rel": 1}
    back = {(r.measure, r.aggregate): r for r in store.evaluations.get_evaluation_rows(eid)}
    assert back[("R@2", "1")] == EvaluationRow("R@2", "1", 1 / 3, 1.0, 3.0, 1)
    assert store.evaluations.list_evaluations(run_name="other") == []
    with pytest.raises(UnknownNameError):
        store.evaluations.get_evaluation_rows("nope")


def test_a_failed_record_writes_nothing(store, e):
    rows = [EvaluationRow(*r) for r in value_rows(e)]
    with pytest.raises(ValidationError):
        store.evaluations.record_evaluation("r", "q1", rows, evaluator_version="v", params={"bad": object()})
    with pytest.raises(ValidationError):
        store.evaluations.record_evaluation("r", "q1", [], evaluator_version="v")
    bad = rows + [EvaluationRow("R@2", "x", math.nan, 0.0, 0.0, None)]  # NULL n_topics violates NOT NULL
    with pytest.raises((StoreError, TypeError)):
        store.evaluations.record_evaluation("r", "q1", bad, evaluator_version="v")
    assert store.evaluations.list_evaluations() == []
