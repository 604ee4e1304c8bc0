"""The notebook API ``workbench.evaluate``: files, DataFrames and dicts give pytrec_eval's numbers,
as two DataFrames (per topic, aggregates), whatever the input shape."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import pytrec_eval

from tests.scoring.conftest import make_data
from workbench import EvaluationResults, evaluate
from workbench.errors import InputFormatError, MissingTopicsError, ValidationError

PAIRS = {"R@5": "recall_5", "R@20": "recall_20", "P@10": "P_10", "nDCG@10": "ndcg_cut_10", "Success@5": "success_5"}


def _oracle(qrels, run):
    return pytrec_eval.RelevanceEvaluator(qrels, set(PAIRS.values())).evaluate(run)


def _frame(run):
    return pd.DataFrame([(t, d, s) for t, docs in run.items() for d, s in docs.items()],
                        columns=["topic_id", "doc_id", "score"])


def _trec(run, tag):
    return "".join(f"{t} Q0 {d} {i} {s!r} {tag}\n" for t, docs in run.items() for i, (d, s) in enumerate(docs.items(), 1))


def _assert_matches(res: EvaluationResults, qrels, run, name):
    oracle = _oracle(qrels, run)
    pt = res.per_topic
    mine = pt[pt["run"] == name]
    assert len(mine) == len(PAIRS) * len(res.report.topics)
    for _, row in mine.iterrows():
        assert row["value"] == pytest.approx(oracle[row["topic_id"]][PAIRS[row["measure"]]], abs=1e-12)
    agg = res.aggregates.set_index(["run", "measure"])
    for ours, theirs in PAIRS.items():
        expected = sum(oracle[t][theirs] for t in res.report.topics) / len(res.report.topics)
        assert agg.loc[(name, ours), "macro"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("shape", ["dict", "frame", "trec file", "parquet file"])
def test_every_input_shape_gives_pytrec_evals_values(shape, tmp_path, write):
    qrels, run = make_data(3, unicode_ids=False)
    qrels = {t: g for t, g in qrels.items() if any(v >= 1 for v in g.values())}   # pytrec_eval skips |R| = 0 alike
    if shape == "dict":
        runs, q = {"sys": run}, qrels
    elif shape == "frame":
        runs = {"sys": _frame(run)}
        q = pd.DataFrame([(t, d, g) for t, docs in qrels.items() for d, g in docs.items()],
                         columns=["query_id", "doc_id", "relevance"])            # ir_measures' names
    elif shape == "trec file":
        runs = [write("sys.trec", _trec(run, "sys"))]
        q = write("q.txt", "".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items()))
    else:
        path = tmp_path / "sys.parquet"
        pq.write_table(pa.Table.from_pandas(_frame(run), preserve_index=False), path)
        runs = str(path)
        q = tmp_path / "q.parquet"
        pq.write_table(pa.table({"topic_id": [t for t, d in qrels.items() for _ in d],
                                 "doc_id": [x for d in qrels.values() for x in d],
                                 "grade": [g for d in qrels.values() for g in d.values()]}), q)
    res = evaluate(runs, q, measures=list(PAIRS), missing="exclude")
    assert isinstance(res, EvaluationResults)
    assert list(res.aggregates.columns) == ["run", "measure", "macro", "micro", "ceiling", "n_topics", "pool_novel",
                                            "pool_novel_share", "optimistic"]
    assert list(res.per_topic.columns) == ["run", "measure", "topic_id", "value", "numerator", "denominator"]
    _assert_matches(res, qrels, {t: run[t] for t in run if t in qrels}, "sys")


def test_the_api_gives_the_cli_numbers_and_lineage(tmp_path, write, capsys):
    from workbench.cli import main

    qrels, run = make_data(4)
    rf = write("bm25.trec", _trec(run, "bm25"))
    qf = write("q.txt", "".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items()))
    res = evaluate(rf, qf, missing="zero")
    assert main(["score", str(rf), "--qrels", str(qf), "--missing", "zero", "--format", "jsonl"]) == 0
    import json

    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    macro = {r["measure"]: r["value"] for r in rows if r["aggregate"] == "macro"}
    assert dict(zip(res.aggregates["measure"], res.aggregates["macro"], strict=True)) == macro
    assert res.lineage["qrels"]["content_hash"] == rows[0]["qrels_hash"]
    assert res.lineage["evaluator_version"] == rows[0]["evaluator_version"]


def test_several_runs_as_a_list_a_mapping_or_one_frame_with_a_run_column():
    qrels, a = make_data(5)
    _, b = make_data(6)
    by_list = evaluate([a, b], qrels, measures=["R@10"], missing="zero")
    assert list(by_list.aggregates["run"]) == ["run1", "run2"]
    by_name = evaluate({"A": a, "B": b}, qrels, measures=["R@10"], missing="zero")
    frame = pd.concat([_frame(a).assign(run="A"), _frame(b).assign(run="B")])
    by_frame = evaluate(frame, qrels, measures=["R@10"], missing="zero")
    for res in (by_name, by_frame):
        assert list(res.aggregates["run"]) == ["A", "B"]
        assert list(res.aggregates["macro"]) == pytest.approx(list(by_list.aggregates["macro"]))


def test_aggregates_carry_ceiling_micro_and_pool_novel_counts():
    qrels = {"1": {"a": 1, "b": 1, "c": 1}, "2": {"d": 1}}
    run = {"1": {"a": 3.0, "x": 2.0}, "2": {"d": 1.0, "y": 0.5}}
    agg = evaluate({"r": run}, qrels, measures=["R@1", "R@2", "RR@10"]).aggregates.set_index("measure")
    assert agg.loc["R@2", "macro"] == pytest.approx((1 / 3 + 1) / 2)
    assert agg.loc["R@2", "micro"] == pytest.approx(2 / 4)
    assert agg.loc["R@1", "ceiling"] == pytest.approx((1 / 3 + 1) / 2)              # min(k, |R|) / |R|
    assert agg.loc["R@2", "pool_novel"] == 2                                         # x and y unjudged
    assert agg.loc["R@2", "pool_novel_share"] == pytest.approx(2 / 4)
    assert math.isnan(agg.loc["RR@10", "ceiling"]) and pd.isna(agg.loc["RR@10", "pool_novel"])


def test_missing_topics_fail_by_default_and_bad_inputs_say_what_is_wrong(tmp_path):
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    with pytest.raises(MissingTopicsError, match="has no results for 1 qrels topic"):
        evaluate({"1": {"a": 1.0}}, qrels)
    with pytest.raises(InputFormatError, match="expected a run file, found nothing"):
        evaluate(tmp_path / "absent.trec", qrels)
    with pytest.raises(InputFormatError, match="expected a topic column named topic_id or query_id or qid"):
        evaluate(pd.DataFrame({"q": ["1"], "doc_id": ["a"], "score": [1.0]}), qrels)
    with pytest.raises(InputFormatError, match="not a finite number") as e:
        evaluate(pd.DataFrame({"topic_id": ["1", "2"], "doc_id": ["a", "b"], "score": [1.0, float("inf")]}), qrels)
    assert e.value.line == 2
    with pytest.raises(InputFormatError, match="expected string ids in column 'topic_id'"):
        evaluate(pd.DataFrame({"topic_id": [1], "doc_id": ["a"], "score": [1.0]}), qrels)   # '007' is already lost
    with pytest.raises(InputFormatError, match="integer grade"):
        evaluate({"1": {"a": 1.0}}, {"1": {"a": 1.5}})
    with pytest.raises(ValidationError, match="expected runs as a file path"):
        evaluate(42, qrels)


def test_results_write_parquet_rows(tmp_path):
    res = evaluate({"r": {"1": {"a": 1.0}}}, {"1": {"a": 1}}, measures=["R@1"])
    table = pq.read_table(res.to_parquet(tmp_path / "r.parquet"))
    got = {(r["measure"], r["aggregate"], r["topic_id"]): r["value"] for r in table.to_pylist()}
    assert got[("R@1", "macro", "")] == 1.0 and got[("R@1", "", "1")] == 1.0


def test_the_module_docstring_example_runs():
    import doctest

    import workbench.api

    result = doctest.testmod(workbench.api)
    assert result.attempted > 0 and result.failed == 0
