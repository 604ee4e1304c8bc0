"""The pure-Python scorer for small runs gives the columnar scorer's numbers bit for bit.

Identity, not closeness: every float is compared by its exact bits
(``float.hex``), over seeded random qrels and runs with ties, graded and
negative grades, unjudged documents, long and non-ASCII ids, topics with
|R| = 0, short runs, topics missing from the run and run topics missing from
the qrels, under every missing-topic policy and several thresholds; then end to
end, files through ``pipeline.score`` and every report format, small path against
the columnar path.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from tests.scoring.conftest import make_data
from workbench.errors import MissingTopicsError
from workbench.formats import plain_run
from workbench.formats.columnar import read_run_columns
from workbench.formats.plain_run import read_small_qrels, read_small_run
from workbench.formats.trec import read_qrels
from workbench.ranking import ranked_ids, ranked_ids_of
from workbench.reports.scores import render_scores
from workbench.scoring.columns import rank_run, unpack_ids
from workbench.scoring.evaluate import Evaluation, Evaluator, _discounts, _gains
from workbench.scoring.gains import discounts, gain, rbp_powers
from workbench.scoring.measures import parse_measures
from workbench.scoring.small import (
    SMALL_SCORER_ID,
    ListMetrics,
    SmallEvaluator,
    SmallRun,
    numpy_mean,
    numpy_nanmean,
    numpy_sum,
)
from workbench.services.evaluation import load as load_step
from workbench.services.evaluation import report as report_values
from workbench.services.evaluation.pipeline import score
from workbench.services.evaluation.request import ScoreRequest
from workbench.types import TopicMetric

MEASURES = ["R@1", "R@5", "R@10", "R@50", "R(rel=2)@10", "P@5", "P(rel=2)@10", "nDCG@10", "nDCG@1000",
            "nDCG(dcg='exp-log2')@10", "RR@10", "RR(rel=2)@100", "Success@1", "Success@10", "Judged@5", "Judged@60",
            "AP", "AP@10", "AP(rel=2)@50", "Rprec", "Rprec(rel=2)", "Bpref", "Bpref(rel=3)", "RBP(p=0.8)",
            "RBP(p=0.5,rel=2)@10", "RBP_residual(p=0.8)", "RBP_residual(p=0.95)@20", "NumRelRet", "NumRelRet@5",
            "NumRel", "NumRel(rel=3)", "NumRet", "NumRet@10"]
WHOLE_RANKING = ["AP", "Rprec", "Bpref", "RBP(p=0.9)", "RBP_residual(p=0.9)", "NumRelRet", "NumRel", "NumRet"]
"""Measures without a cutoff only: the evaluation has no novelty cutoff and no pool-novel lists."""


def _bits(x: object) -> object:
    """A value with every float replaced by its exact bits (nan-safe, -0.0 distinct)."""
    if isinstance(x, float):
        return x.hex()
    if isinstance(x, dict):
        return {str(k): _bits(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_bits(v) for v in x]
    return x


def _plain(e: Evaluation) -> dict[str, object]:
    """Everything an evaluation holds, as plain data (the novel lists read at every cutoff)."""
    out: dict[str, object] = {
        "run_name": e.run_name, "measures": [str(m) for m in e.measures], "rel": e.rel, "missing": e.missing,
        "topics": e.topics, "excluded": e.excluded_topics, "missing_topics": e.missing_topics,
        "ignored": e.ignored_topics, "n_results": dict(e.n_results), "duplicates": dict(e.duplicates),
        "per_topic": {str(m): {t: (tm.topic_id, tm.measure, tm.value, tm.numerator, tm.denominator) for t, tm in pt.items()} for m, pt in e.per_topic.items()},
        "aggregates": {str(m): (a.n_topics, a.macro, a.micro, a.ceiling, a.sum_value, a.sum_numerator,
                                a.sum_denominator) for m, a in e.aggregates.items()},
        "novelty": {k: (dict(n.unjudged), dict(n.returned), dict(n.recall_low), dict(n.recall_high), n.macro_low,
                        n.macro_high, n.total_unjudged, n.total_returned) for k, n in e.novelty.items()},
        "curve": (e.curve.macro, e.curve.micro, e.curve.ceiling, e.curve.n_topics),
        "relevant": [tuple(r) for r in e.relevant],
        "documents_kept": e.documents_kept,
    }
    if e.documents_kept:
        out["novel"] = {k: (e.novel_documents.with_ranks(k), e.novel_documents.count(k)) for k in e.novelty}
    return _bits(out)  # type: ignore[return-value]


def _small_run(run: dict[str, dict[str, float]], name: str = "r") -> SmallRun:
    return SmallRun({t: ranked_ids(docs) for t, docs in run.items()}, name=name)


def _awkward(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """make_data plus topics the run lacks, run topics the qrels lack, and grades 0..4 with negatives."""
    qrels, run = make_data(seed, n_topics=30, depth=80, tie_levels=None if seed % 3 == 0 else 9)
    rng = random.Random(seed)
    for t in rng.sample(sorted(run), 3):
        del run[t]                                                      # qrels topics with no results
    run["999"] = {"d1": 1.0, "d2": 0.5}                                 # a topic the qrels lack
    qrels["4"] = {d: (4 if g == 3 else g) for d, g in qrels.get("4", {}).items()}
    order = list(run)
    rng.shuffle(order)                                                  # topics in no particular order
    return qrels, {t: run[t] for t in order}


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("missing", ["zero", "exclude"])
@pytest.mark.parametrize("rel", [1, 2])
def test_small_scorer_equals_the_columnar_scorer_bit_for_bit(seed, missing, rel):
    qrels, run = _awkward(seed)
    columnar = Evaluator(qrels, MEASURES, rel=rel, missing=missing).evaluate(run, run_name="r")
    small = SmallEvaluator(qrels, MEASURES, rel=rel, missing=missing).evaluate(_small_run(run))
    assert small.scorer == SMALL_SCORER_ID and columnar.scorer != small.scorer
    assert _plain(small) == _plain(columnar)
    assert _plain(small.without_documents()) == _plain(columnar.without_documents())
    numbers_only = SmallEvaluator(qrels, MEASURES, rel=rel, missing=missing).evaluate(_small_run(run),
                                                                                      keep_documents=False)
    assert _plain(numbers_only) == _plain(small.without_documents())
    assert not numbers_only.novel_documents.kept and numbers_only.relevant == ()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("missing", ["zero", "exclude"])
def test_measures_of_the_whole_ranking_alone_agree_bit_for_bit(seed, missing):
    qrels, run = _awkward(seed)
    columnar = Evaluator(qrels, WHOLE_RANKING, missing=missing).evaluate(run, run_name="r")
    small = SmallEvaluator(qrels, WHOLE_RANKING, missing=missing).evaluate(_small_run(run))
    assert columnar.novelty == {} and small.novelty == {}
    assert _plain(small) == _plain(columnar)
    assert columnar.novel_documents.max_cutoff == small.novel_documents.max_cutoff == 0


def test_restricted_topics_failed_topics_and_default_measures_agree():
    qrels, run = _awkward(3)
    topics = sorted(qrels)[::2]
    failed = sorted(run)[:2]
    for measures in (None, ["R@100", "Judged@10"]):
        a = Evaluator(qrels, measures, missing="zero").evaluate(run, run_name="x", failed_topics=failed, topics=topics)
        sev = SmallEvaluator(qrels, measures, missing="zero")
        b = sev.evaluate(_small_run(run), run_name="x", failed_topics=failed, topics=topics)
        assert _plain(a) == _plain(b)
    ev = Evaluator(qrels, None)
    rr = rank_run(read_run_columns_from(run))
    assert sev.eligible_topics() == ev.eligible_topics()
    assert sev.n_relevant() == ev.n_relevant()
    assert sev.relevant_doc_ids(topics) == ev.relevant_doc_ids(topics)
    assert sev.missing_topics(_small_run(run), failed) == ev.missing_topics(rr, failed)


def read_run_columns_from(run: dict[str, dict[str, float]]):  # noqa: ANN201 - test helper
    from workbench.scoring.columns import run_columns_from_mapping

    return run_columns_from_mapping(run, "r")


def test_missing_fail_raises_the_same_error():
    qrels, run = _awkward(1)
    with pytest.raises(MissingTopicsError) as columnar:
        Evaluator(qrels, None).evaluate(run, run_name="r")
    with pytest.raises(MissingTopicsError) as small:
        SmallEvaluator(qrels, None).evaluate(_small_run(run))
    assert str(small.value) == str(columnar.value)


def test_huge_grades_overflow_alike_and_judged_of_an_empty_topic_is_0_in_both():
    qrels = {"1": {"a": 1023, "b": 1024, "c": 1}, "2": {"d": 2}, "3": {"e": 1}}
    run = {"1": {"a": 3.0, "b": 2.0, "x": 1.0}, "2": {"d": 1.0}}
    ms = ["nDCG(dcg='exp-log2')@10", "nDCG@10", "Judged@10", "R@10"]
    a = Evaluator(qrels, ms, missing="zero").evaluate(run, run_name="r")
    b = SmallEvaluator(qrels, ms, missing="zero").evaluate(_small_run(run))
    assert _plain(a) == _plain(b)
    assert math.isnan(b.per_topic[b.measures[0]]["1"].value)
    assert a.value("Judged@10", "3") == b.value("Judged@10", "3") == 0.0  # issue 26: as every measure (trec_eval -c)
    judged = [e.aggregates[e.measures[2]] for e in (a, b)]
    assert [(j.n_topics, j.macro) for j in judged] == [(3, (2 / 3 + 1 / 1 + 0.0) / 3)] * 2  # a, b of a, b, x


def test_numpy_sum_is_np_sum_at_every_size_of_the_pairwise_blocks():
    for n in [*range(0, 300), 511, 1024, 4097, 20_000]:
        rng = random.Random(n)
        xs = [rng.random() ** 3 * 10 ** rng.randint(-4, 4) * rng.choice([1, -1]) for _ in range(n)]
        assert numpy_sum(xs).hex() == float(np.sum(np.array(xs, dtype=np.float64))).hex(), n
        if n > 1:
            assert numpy_mean(xs).hex() == float(np.mean(np.array(xs))).hex(), n
            xs[n // 2] = math.nan
            assert numpy_nanmean(xs).hex() == float(np.nanmean(np.array(xs))).hex(), n
    assert math.isnan(numpy_nanmean([math.nan])) and math.isnan(numpy_mean([])) and numpy_sum([]) == 0.0


def test_gains_and_discounts_are_one_table_for_both_scorers():
    grades = [-3, -1, 0, 1, 2, 3, 10, 52, 1023, 1024, 5000]
    for dcg in ("log2", "exp-log2"):
        assert [x.hex() for x in _gains(np.array(grades, dtype=np.int64), dcg).tolist()] == \
            [gain(g, dcg).hex() for g in grades]
    assert gain(3, "exp-log2") == 2**3 - 1 and gain(1024, "exp-log2") == math.inf
    ranks = np.array([1, 2, 3, 10, 999], dtype=np.int64)
    assert _discounts(ranks).tolist() == [1 / math.log2(r + 1) for r in ranks.tolist()]
    assert discounts(3)[1:4] == [1.0, 1 / math.log2(3), 0.5]
    table = rbp_powers(0.8, 4000)
    assert table[1:4] == [1.0, 0.8, 0.8**2] and all(table[r] == 0.8 ** (r - 1) for r in range(1, 4001))
    assert table[3500] == 0.0 and rbp_powers(0.8, 10)[:4001] == table   # one shared table, underflow to 0


# -- the plain readers ------------------------------------------------------------------------

PLAIN = "1 Q0 b 1 2.5 tag\n1 Q0 a 2 2.5 tag\n1 Q0 c 3 -1e-3 tag\n2 Q0 é 1 .5 tag\n10 Q0 x 1 +7. tag\n"


@pytest.fixture(params=[1 << 16, 1, 20], ids=["one-chunk", "a-line-a-chunk", "chunks-of-some-lines"])
def chunk(request, monkeypatch):
    """The run reader's chunk size (characters): the default (these files fit one chunk) and chunks
    of one and of one to two lines, so every check also meets a line of a later chunk."""
    monkeypatch.setattr(plain_run, "_CHUNK_CHARS", request.param)
    return request.param


def test_the_plain_reader_gives_the_columnar_readers_run(chunk, write):
    path = write("r.run", PLAIN)
    small = read_small_run(path)
    rr = rank_run(read_run_columns(path))
    columnar = {t: unpack_ids(rr.doc_words[rr.starts[c]: rr.starts[c + 1]]) for c, t in enumerate(rr.topic_ids)}
    assert small is not None and small.name == "tag" and small.n_lines == 5
    assert dict(small.ranked) == columnar == {"1": ["b", "a", "c"], "2": ["é"], "10": ["x"]}


@pytest.mark.parametrize("text", [
    PLAIN.replace(" 2.5 tag\n1", "\t2.5 tag\n1"),              # a tab
    PLAIN.replace("\n", "\r\n"),                               # CRLF
    "\ufeff" + PLAIN,                                          # a byte-order mark
    PLAIN.replace("1 Q0 a", "1  Q0 a"),                        # two spaces
    PLAIN + "\n",                                              # a blank line
    PLAIN + "2 Q0 é 2 0.1 tag\n",                              # a duplicate doc id in a topic
    PLAIN.replace("-1e-3", "nan"), PLAIN.replace("-1e-3", "1e999"), PLAIN.replace("-1e-3", "1_0"),
    PLAIN.replace("-1e-3", "٣"), PLAIN.replace(" 3 -1e-3", " x -1e-3"), PLAIN.replace(" 3 -1e-3", " 3.0 -1e-3"),
    PLAIN.replace("10 Q0 x 1 +7. tag", "10 Q0 x 1 +7. other"),  # a second run tag
    PLAIN.replace("10 Q0 x 1 +7. tag", "10 Q0 x 1 +7."),        # five columns
    "1 Q0 a 1 tag\ntag Q0 b 2 1.0 tag tag\n",                  # five and seven columns: twelve fields in all
    PLAIN.replace("1 Q0 a", " 1 Q0 a"), PLAIN.replace(" tag\n2", " tag \n2"),  # a space at a line's start, end
    PLAIN.replace("-1e-3", "1.2.3"),                           # the score's characters, not its shape
    PLAIN + "1 Q0 b 4 0.1 tag\n",                              # a duplicate of a topic seen earlier
    PLAIN + "x",                                               # a last line of one field, no line end
    PLAIN + "1 Q0 d 4 0.1 tag 7\n",                            # seven columns on the last line
    "",                                                        # empty
    PLAIN.replace(" tag\n", " " + "t" * 201 + "\n"),          # a run tag the strict reader refuses (NAME_MAX)
])
def test_the_plain_reader_leaves_everything_else_to_the_other_readers(chunk, write, text):
    assert read_small_run(write("r.run", text)) is None


def test_the_plain_readers_read_a_last_line_without_its_line_end(chunk, write):
    run = read_small_run(write("r.run", PLAIN))
    cut = read_small_run(write("r2.run", PLAIN[:-1]))
    assert run is not None and cut is not None and dict(cut.ranked) == dict(run.ranked) and cut.n_lines == 5
    qrels = "1 0 b 1\n1 0 a -1\n2 0 c 3\n"
    assert read_small_qrels(write("q.txt", qrels[:-1])) == read_small_qrels(write("q2.txt", qrels)) == {
        "1": {"b": 1, "a": -1}, "2": {"c": 3}}


def test_the_plain_reader_reads_interleaved_topics_and_ties_as_the_columnar_reader(chunk, write):
    rng = random.Random(7)
    lines = [f"{rng.choice(['1', '2', '10'])} Q0 d{i} {i} {rng.choice(['1', '1.0', '2.5', '-0.0', '0'])} t\n"
             for i in range(60)]
    for text in ("".join(lines), "".join(sorted(lines, key=lambda x: x.split()[0]))):  # interleaved, then grouped
        path = write("r.run", text)
        small = read_small_run(path)
        rr = rank_run(read_run_columns(path))
        columnar = {t: unpack_ids(rr.doc_words[rr.starts[c]: rr.starts[c + 1]]) for c, t in enumerate(rr.topic_ids)}
        assert small is not None and small.n_lines == 60 and dict(small.ranked) == columnar
        assert list(small.ranked) == list(dict.fromkeys(x.split()[0] for x in text.splitlines()))


def test_ranked_ids_of_two_columns_is_ranked_ids():
    rng = random.Random(3)
    for _ in range(50):
        docs = rng.sample([f"d{i}" for i in range(40)] + ["D", "é", "10", "9"], rng.randint(0, 30))
        scores = [rng.choice([0.0, -0.0, 1.0, 0.5, -2.0, 1e-300]) for _ in docs]
        assert ranked_ids_of(docs, scores) == ranked_ids(dict(zip(docs, scores, strict=True)))



def test_ranked_ids_of_a_score_descending_topic_with_ties_is_ranked_ids():
    """The file-order shortcut (scores already descending): each run of equal scores in doc_id-descending order."""
    rng = random.Random(5)
    for _ in range(300):
        docs = rng.sample([f"d{i}" for i in range(40)] + ["D", "é", "10", "9"], rng.randint(0, 30))
        scores = sorted((rng.choice([0.0, -0.0, 1.0, 0.5, -2.0, 3.0]) for _ in docs), reverse=True)
        assert ranked_ids_of(docs, scores) == ranked_ids(dict(zip(docs, scores, strict=True)))
    assert ranked_ids_of(["a", "c", "b", "e", "d"], [3.0, 2.0, 2.0, 1.0, 1.0]) == ["a", "c", "b", "e", "d"]
    assert ranked_ids_of(["a", "b", "c", "d", "e"], [3.0, 2.0, 2.0, 2.0, 1.0]) == ["a", "d", "c", "b", "e"]
    assert ranked_ids_of(["b", "a", "d", "c"], [1.0, 1.0, 1.0, 1.0]) == ["d", "c", "b", "a"]
    with pytest.raises(ValueError):
        ranked_ids_of(["a"], [1.0, 0.5])


def test_per_topic_metrics_of_the_small_scorer_are_built_on_access():
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 2}}
    run = SmallRun({"1": ["b", "a"], "2": ["x", "c"]}, name="r")
    e = SmallEvaluator(qrels, measures=parse_measures(["R@1", "RR@10"])).evaluate(run)
    r1 = e.per_topic[parse_measures(["R@1"])[0]]
    assert isinstance(r1, ListMetrics) and len(r1) == 2 and list(r1) == ["1", "2"] and "3" not in r1
    assert r1["1"] == TopicMetric("1", "R@1", 0.0, 0.0, 1.0) and r1["2"].value == 0.0
    rr = e.per_topic[parse_measures(["RR@10"])[0]]
    assert dict(rr) == {"1": TopicMetric("1", "RR@10", 0.5, 1.0, 2.0), "2": TopicMetric("2", "RR@10", 0.5, 1.0, 2.0)}
    assert rr.value_list(("2", "1")) == [0.5, 0.5] and rr.value_list(e.topics) == [0.5, 0.5]
    with pytest.raises(KeyError):
        rr["3"]

def test_the_plain_reader_leaves_parquet_and_large_files(write, tmp_path):
    assert read_small_run(write("p.run", "PAR1" + PLAIN)) is None
    assert read_small_run(write("r.run", PLAIN), max_bytes=10) is None
    assert read_small_run(tmp_path) is None and read_small_run(tmp_path / "none") is None


def test_the_plain_qrels_reader_gives_read_qrels(write):
    text = "1 0 b 1\n1 0 a -1\n2 0 é 3\n1 0 b 1\n10 0 x +0\n"
    path = write("q.txt", text)
    assert read_small_qrels(path) == read_qrels(path) == {"1": {"b": 1, "a": -1}, "2": {"é": 3}, "10": {"x": 0}}
    assert list(read_small_qrels(path)["1"]) == list(read_qrels(path)["1"])
    for bad in (text + "1 0 b 2\n", text.replace("-1", "x"), text.replace("\n", "\r\n", 1), text + "\n",
                text.replace("+0", "1234567890"), "1 0 a\n", text + "1 0 a 1 x\n", text.replace("+0", "+"),
                text.replace("+0", "+-0"), text.replace("+0", "٣"), text.replace("1 0 a", "1 0  a"),
                text.replace("\n1 0 a", "\n 1 0 a"), text + "x"):
        assert read_small_qrels(write("q2.txt", bad)) is None


# -- end to end: files through pipeline.score and every report -------------------------------------

def _write_trec(path: Path, run: dict[str, dict[str, float]], tag: str) -> None:
    with open(path, "w") as f:
        for t, docs in run.items():
            for r, (d, s) in enumerate(docs.items(), 1):
                f.write(f"{t} Q0 {d} {r} {s!r} {tag}\n")


def _reports(monkeypatch, small: bool, runs: list[str], qrels: str, **kw) -> list[str]:
    if not small:
        monkeypatch.setattr(load_step, "small_runs", lambda *_a: None)
    report = score(ScoreRequest(tuple(runs), qrels, **kw))
    assert {e.scorer for e in report.evaluations} == ({SMALL_SCORER_ID} if small else {"columnar-numpy/1"})
    header = report.header()
    header["created_at"] = "-"
    out = [render_scores(header, report.evaluations, fmt, per_topic=True) for fmt in
           ("table", "json", "jsonl", "csv", "tsv")]
    monkeypatch.undo()
    return out + list(report.warnings) + [repr(report.completion), repr(report.coverage), report.audit_note]


@pytest.mark.parametrize("missing", ["zero", "exclude"])
def test_small_files_print_what_the_columnar_path_prints(tmp_path, monkeypatch, missing):
    qrels, run = _awkward(5)
    _, run2 = _awkward(6)
    qpath = tmp_path / "q.txt"
    qpath.write_text("".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items()))
    _write_trec(tmp_path / "a.run", run, "a")
    _write_trec(tmp_path / "b.run", run2, "b")
    runs = [str(tmp_path / "a.run"), str(tmp_path / "b.run")]
    kw = dict(measures=("R", "nDCG(dcg='exp-log2')@10", "Judged@10", "RR(rel=2)@10", "AP", "Bpref", "RBP(p=0.9)@10",
                        "NumRelRet"), cutoffs=(1, 10, 100), missing=missing)
    assert _reports(monkeypatch, True, runs, str(qpath), **kw) == _reports(monkeypatch, False, runs, str(qpath), **kw)
    kw = dict(measures=tuple(WHOLE_RANKING), missing=missing)
    assert _reports(monkeypatch, True, runs, str(qpath), **kw) == _reports(monkeypatch, False, runs, str(qpath), **kw)


def test_the_sample_collection_scores_alike_on_both_paths(tmp_path, monkeypatch):
    root = Path(__file__).resolve().parents[2] / "sample_corpus" / "cranfield"
    qrels = read_qrels(root / "qrels.reference.txt")
    rng = random.Random(0)
    docs = sorted({d for ds in qrels.values() for d in ds}) + [f"x{i}" for i in range(200)]
    run = {t: {d: float(rng.randint(0, 30)) for d in rng.sample(docs, 100)} for t in qrels}
    _write_trec(tmp_path / "s.run", run, "s")
    args = ([str(tmp_path / "s.run")], str(root / "qrels.reference.txt"))
    assert _reports(monkeypatch, True, *args) == _reports(monkeypatch, False, *args)
    whole = dict(measures=("AP", "Rprec", "Bpref", "RBP(p=0.8)", "NumRelRet", "NumRel", "NumRet", "AP@10"))
    assert _reports(monkeypatch, True, *args, **whole) == _reports(monkeypatch, False, *args, **whole)


def test_the_reports_creation_time_is_what_datetime_writes():
    from datetime import UTC, datetime, timedelta

    before = datetime.now(UTC).replace(microsecond=0)
    text = report_values.utc_now_seconds()
    after = datetime.now(UTC)
    at = datetime.fromisoformat(text)
    assert text == at.isoformat(timespec="seconds") and text.endswith("+00:00") and len(text) == 25
    assert before <= at <= after + timedelta(seconds=1)
