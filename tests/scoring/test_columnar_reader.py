"""The fast run readers accept exactly what the strict reader accepts, with the same results.

Every test runs twice: through the numpy reader for small files (``_read_small``)
and through the pyarrow reader (``SMALL_BYTES = 0`` sends every file there).
"""

from __future__ import annotations

import random

import pytest

from tests.scoring.conftest import make_data
from workbench.errors import InputFormatError
from workbench.formats import columnar, trec
from workbench.scoring.evaluate import Evaluator
from workbench.scoring.reference import reference_values

NAMES = ["R@5", "R@20", "P@10", "nDCG@10", "RR@10", "Success@5", "Judged@10"]


@pytest.fixture(params=["numpy", "pyarrow"], autouse=True)
def fast_path(request, monkeypatch):
    """Which fast reader the test goes through."""
    if request.param == "pyarrow":
        monkeypatch.setattr(columnar, "SMALL_BYTES", 0)
    return request.param


def _run_text(run, tag="sys", seed=0, sep=" ", duplicates=0, eol="\n"):
    rng = random.Random(seed)
    lines = []
    for t, docs in run.items():
        for i, (d, s) in enumerate(docs.items(), 1):
            lines.append((t, d, i, s))
    for t, d, i, s in rng.sample(lines, duplicates):
        lines.append((t, d, i, s - 5.0))
    rng.shuffle(lines)
    return "".join(f"{t}{sep}Q0{sep}{d}{sep}{i}{sep}{s!r}{sep}{tag}{eol}" for t, d, i, s in lines)


def _no_fallback(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the strict reader was used")
    monkeypatch.setattr(trec, "read_run", boom)


def test_plain_file_takes_the_fast_path_and_scores_like_the_reference(write, monkeypatch):
    qrels, run = make_data(3)
    path = write("run.trec", _run_text(run, duplicates=12))
    _no_fallback(monkeypatch)
    cols = columnar.read_run_columns(path)
    assert cols.name == "sys" and cols.n_lines == sum(len(d) for d in run.values()) + 12
    e = Evaluator(qrels, NAMES, missing="exclude").evaluate(cols)
    assert e.n_duplicates == 12
    ref = reference_values(qrels, run, NAMES)
    for m in e.measures:
        assert {t: e.value(m, t) for t in e.topics} == pytest.approx(ref[m])


@pytest.mark.parametrize(
    "variant", [dict(sep="\t"), dict(sep="  "), dict(eol="\r\n"), dict(bom=True)]
)
def test_unusual_whitespace_falls_back_to_the_strict_reader_with_equal_results(write, variant):
    qrels, run = make_data(4)
    bom = variant.pop("bom", False)
    text = ("\ufeff" if bom else "") + _run_text(run, duplicates=3, **variant)
    cols = columnar.read_run_columns(write("run.trec", text))
    plain = columnar.read_run_columns(write("plain.trec", _run_text(run, duplicates=3)))
    a = Evaluator(qrels, NAMES, missing="zero").evaluate(cols)
    b = Evaluator(qrels, NAMES, missing="zero").evaluate(plain)
    assert a.n_duplicates == b.n_duplicates == 3
    for m in a.measures:
        assert a.per_topic[m] == b.per_topic[m]


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("1 Q0 a 1 2.0 s\n1 Q0 b 2 1.0\n", 2, "expected 6 columns"),
        ("1 Q0 a 1 2.0 s\n1 Q0 b x 1.0 s\n", 2, "integer rank"),
        ("1 Q0 a 1 2.0 s\n\n1 Q0 b 2 nan s\n", 3, "not a finite number"),
        ("1 Q0 a 1 2.0 s\n1 Q0 b 2 1.0 t\n", 2, "run tag"),
        ("1 Q0 a 1 2.0 s\n1 Q0 b 2 one s\n", 2, "numeric score"),
        ("1 Q0 a 1 2.0 s\n1 Q0 b 1+2 1.0 s\n", 2, "integer rank"),      # no value runs into the next
        ("1 Q0 a 12 2.0 s\n1 Q0 b 3 1e s\n", 2, "numeric score"),
        ("1 Q0 a 1 2.0 s\n1 Q0 b 2 1e999 s\n", 2, "not a finite number"),
        ("1 Q0 a 1 2.0 s\n1 Q0 b 2 1.0 s\n \n1 Q0 c 3\n", 4, "expected 6 columns"),
        ("1 Q0 a 1 2.0 s\n1 Q0 b 2 1.0 s extra\n", 2, "expected 6 columns"),
        ("1 Q0 a 1 2.0 " + "t" * 201 + "\n", 1, "at most 200 characters"),  # the strict reader's NAME_MAX
        ("1 Q0 a 1 2.0 " + "é" * 201 + "\n", 1, "at most 200 characters"),  # characters, not bytes
    ],
)
def test_format_errors_name_the_file_and_line(write, text, line, fragment):
    path = write("bad.trec", text)
    with pytest.raises(InputFormatError) as e:
        columnar.read_run_columns(path)
    assert e.value.line == line and fragment in str(e.value) and str(path) in str(e.value)


def test_a_run_tag_of_200_characters_is_read_by_every_reader(write, monkeypatch):
    from workbench.formats.plain_run import read_small_run

    path = write("long.trec", "1 Q0 a 1 2.0 " + "é" * 200 + "\n1 Q0 b 2 1.0 " + "é" * 200 + "\n")
    small = read_small_run(path)
    assert small is not None and small.name == "é" * 200
    assert trec.read_run(path).tag == "é" * 200
    _no_fallback(monkeypatch)
    assert columnar.read_run_columns(path).name == "é" * 200


@pytest.mark.parametrize("bad, fragment", [("1.2.3", "numeric score"), ("nan", "not a finite number"),
                                           ("++1", "numeric score")])
def test_one_bad_score_after_many_integer_scores_is_refused(write, fast_path, bad, fragment):
    """A score pattern that can split a value's digits two ways (``[0-9]+\\.?[0-9]*``) backtracks through
    every split of every earlier line before refusing one bad score: about 4^n steps, a hang at 14 lines.
    Read in a child process, so that such a hang fails the test (after 300 s) instead of stalling the suite."""
    import subprocess
    import sys

    path = write("bad.trec", "".join(f"1 Q0 d{i} {i + 1} 1234 t\n" for i in range(40)) + f"1 Q0 z 99 {bad} t\n")
    code = ("import sys\nfrom workbench.formats import columnar\nfrom workbench.errors import InputFormatError\n"
            f"columnar.SMALL_BYTES = {columnar.SMALL_BYTES}\n"
            "try:\n    columnar.read_run_columns(sys.argv[1])\nexcept InputFormatError as e:\n"
            "    print(e.line, e)\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300,
                         check=True).stdout
    assert out.startswith("41 ") and fragment in out


def test_empty_and_missing_files(write, tmp_path):
    with pytest.raises(InputFormatError, match="empty file"):
        columnar.read_run_columns(write("empty.trec", ""))
    with pytest.raises(InputFormatError, match="found nothing"):
        columnar.read_run_columns(tmp_path / "nope.trec")


@pytest.mark.parametrize("odd", ["\t", "\x0b", "\x0c"])
def test_whitespace_inside_a_later_line_is_split_as_the_strict_reader_does(write, odd):
    text = "1 Q0 a 1 2.0 s\n" * 1 + f"1 Q0 b{odd}c 2 1.0 s\n"   # 7 columns for the strict reader
    with pytest.raises(InputFormatError, match="expected 6 columns"):
        columnar.read_run_columns(write("w.trec", text))


def test_quotes_in_ids_are_plain_characters(write, monkeypatch):
    _no_fallback(monkeypatch)
    cols = columnar.read_run_columns(write("q.trec", '1 Q0 "a 1 2.0 s\n1 Q0 b" 2 1.0 s\n'))
    e = Evaluator({"1": {'"a': 1, 'b"': 1}}, ["R@1", "R@2"]).evaluate(cols)
    assert e.value("R@1", "1") == 0.5 and e.value("R@2", "1") == 1.0


def test_trust_file_order(write):
    text = "1 Q0 a 2 9.0 s\n1 Q0 b 1 1.0 s\n1 Q0 c 3 5.0 s\n"
    path = write("r.trec", text)
    qrels = {"1": {"b": 1}}
    by_score = Evaluator(qrels, ["RR@10"]).evaluate(columnar.read_run_columns(path))
    by_file = Evaluator(qrels, ["RR@10"]).evaluate(columnar.read_run_columns(path, trust_file_order=True))
    assert by_score.value("RR@10", "1") == pytest.approx(1 / 3)    # a 9.0, c 5.0, b 1.0
    assert by_file.value("RR@10", "1") == 1.0                       # b has rank 1 in the file


def test_slices_cover_the_file_exactly(write, monkeypatch):
    qrels, run = make_data(8)
    monkeypatch.setattr(columnar, "SLICE_BYTES", 1000)    # many slices
    path = write("run.trec", _run_text(run))
    cols = columnar.read_run_columns(path)
    assert cols.n_lines == sum(len(d) for d in run.values())
    e = Evaluator(qrels, NAMES, missing="exclude").evaluate(cols)
    ref = reference_values(qrels, run, NAMES)
    for m in e.measures:
        assert {t: e.value(m, t) for t in e.topics} == pytest.approx(ref[m])


def test_qrels_columns_use_the_strict_reader(write):
    q = columnar.read_qrels_columns(write("q.txt", "1 0 a 2\n1 0 b -1\n2 0 c 0\n"))
    assert q.topic_ids == ("1", "2") and q.doc_ids == ("a", "b", "c") and q.grades.tolist() == [2, -1, 0]
    with pytest.raises(InputFormatError, match=":2:"):
        columnar.read_qrels_columns(write("bad.txt", "1 0 a 2\n1 0 b\n"))


def test_ids_growing_longer_in_later_slices_and_capacity_growth(write, monkeypatch):
    _no_fallback(monkeypatch)
    monkeypatch.setattr(columnar, "SLICE_BYTES", 64)
    short = [f"1 Q0 d{i} {i} {100 - i}.0 s\n" for i in range(5)]               # ~17 bytes per line
    long = [f"2 Q0 {'x' * 30}{i} {i} {50 - i}.0 s\n" for i in range(40)]       # ~45 bytes: estimate too small
    cols = columnar.read_run_columns(write("grow.trec", "".join(short + long)))
    assert cols.n_lines == 45 and cols.doc_words.shape == (45, 4)
    e = Evaluator({"1": {"d4": 1}, "2": {"x" * 30 + "39": 1}}, ["RR@100"]).evaluate(cols)
    assert e.value("RR@100", "1") == pytest.approx(1 / 5) and e.value("RR@100", "2") == pytest.approx(1 / 40)


@pytest.mark.parametrize("slice_bytes", [1 << 20, 256])
def test_fast_reader_gives_arrow_threads_only_arrow_owned_memory(write, monkeypatch, slice_bytes):
    # Regression (issue 9, abort at exit): a ``pa.py_buffer`` over Python memory handed to the threaded
    # CSV reader is released by an Arrow worker, which takes the GIL; at interpreter exit that worker is
    # killed by pthread_exit inside a C++ destructor and the process aborts with exit 134
    # ("terminate called without an active exception"), about 1 in 300 runs under load.
    import pyarrow as pa

    def python_owned(*a, **k):
        raise AssertionError("a Python-owned buffer was handed to pyarrow")

    monkeypatch.setattr(pa, "py_buffer", python_owned)
    monkeypatch.setattr(pa, "foreign_buffer", python_owned)
    monkeypatch.setattr(columnar, "SLICE_BYTES", slice_bytes)  # 256: many slices, each regrowing the buffer
    _no_fallback(monkeypatch)
    qrels, run = make_data(3)
    cols = columnar.read_run_columns(write("run.trec", _run_text(run)))
    assert cols.n_lines == sum(len(d) for d in run.values())
    e = Evaluator(qrels, NAMES, missing="exclude").evaluate(cols)
    ref = reference_values(qrels, run, NAMES)
    for m in e.measures:
        assert {t: e.value(m, t) for t in e.topics} == pytest.approx(ref[m])


def test_scores_are_read_as_python_reads_them(write, monkeypatch):
    _no_fallback(monkeypatch)
    rng = random.Random(5)
    values = ([repr(rng.uniform(-1e6, 1e6)) for _ in range(300)] + [f"{rng.random():.17g}" for _ in range(300)]
              + ["1e-320", "2.2250738585072011e-308", "0.1", "1.", ".5", "+3", "-0", "1E5", "007", "-.25e-2"])
    text = "".join(f"1 Q0 d{i} {i + 1} {v} s\n" for i, v in enumerate(values))
    cols = columnar.read_run_columns(write("s.trec", text))
    assert cols.scores.tolist() == [float(v) for v in values]


@pytest.mark.parametrize(
    "line, shown",
    [
        ("1 Q0 a\x1cb 2 1.0 s", r"found \\x1c in column 3"),          # a separator byte the CSV parser keeps
        ("t\x1f Q0 c 2 1.0 s", r"found \\x1f in column 1"),           # in the topic id
        ("1 Q0 \x00 2 1.0 s", r"found \\x00 in column 3"),            # NUL
        ("1 Q0 a\x7f 2 1.0 s", r"found \\x7f in column 3"),           # DEL
        ("1 Q\x1b0 c 2 1.0 s", r"found \\x1b in column 2"),           # the Q0 column, read by nobody
        ("1 Q0 d\x9b2 2 1.0 s", r"found \\x9b in column 3"),          # a C1 control (two UTF-8 bytes)
        ("1 Q0 d\u202e2 2 1.0 s", r"found \\u202e in column 3"),      # a bidi override (Trojan Source)
        ("1 Q0 c 2 1.0 s\x07", r"found \\x07 in column 6"),           # in the run tag
    ],
)
def test_control_characters_in_any_column_are_refused_by_the_fast_readers_as_by_the_strict_one(write, line, shown):
    # Regression (issue 9): the fast readers kept them, so scoring a file accepted what importing it refused.
    text = "1 Q0 é 1 2.0 s\n" + line + "\n" + "1 Q0 z 3 0.5 s\n"
    for read in (columnar.read_run_columns, trec.read_run):
        with pytest.raises(InputFormatError, match=r":2: expected no control characters, " + shown) as e:
            read(write("o.trec", text))
        assert e.value.line == 2


def test_control_characters_are_found_in_a_later_slice(write, monkeypatch):
    monkeypatch.setattr(columnar, "SLICE_BYTES", 64)
    lines = [f"1 Q0 d{i} {i + 1} {100 - i}.0 s\n" for i in range(40)]
    lines[37] = "1 Q0 d\x0537 38 63.0 s\n"
    with pytest.raises(InputFormatError, match=r":38: expected no control characters, found \\x05"):
        columnar.read_run_columns(write("late.trec", "".join(lines)))


def test_non_ascii_ids_without_control_characters_take_the_fast_path(write, monkeypatch):
    _no_fallback(monkeypatch)
    text = "1 Q0 é 1 2.0 s\n1 Q0 naïve 2 1.0 s\nτ Q0 日本 1 1.0 s\n1 Q0 a\u200db 3 0.5 s\n"  # ZWJ is no bidi mark
    cols = columnar.read_run_columns(write("u.trec", text))
    e = Evaluator({"1": {"naïve": 1, "a\u200db": 1}, "τ": {"日本": 1}}, ["R@2"]).evaluate(cols)
    assert cols.topic_ids == ("1", "τ") and cols.n_lines == 4
    assert e.value("R@2", "1") == 0.5 and e.value("R@2", "τ") == 1.0


def test_bytes_that_are_not_utf8_name_the_line(write):
    with pytest.raises(InputFormatError, match="UTF-8") as e:
        columnar.read_run_columns(write("u.trec", b"1 Q0 a 1 2.0 s\n1 Q0 \xff 2 1.0 s\n"))
    assert e.value.line == 2


def test_signed_ranks_order_a_trusted_file(write):
    path = write("r.trec", "1 Q0 a +2 1.0 s\n1 Q0 b -1 1.0 s\n1 Q0 c 3 9.0 s\n")
    qrels = {"1": {"a": 1}}
    by_file = Evaluator(qrels, ["RR@10"]).evaluate(columnar.read_run_columns(path, trust_file_order=True))
    assert by_file.value("RR@10", "1") == pytest.approx(1 / 2)        # b (-1), a (+2), c (3)


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ("7 Q0 b\tc 2 1.0 s\n", "expected 6 columns"),      # found by the worker thread (whitespace check)
        ("7 Q0 b x 1.0 s\n", "integer rank"),               # by the worker (pyarrow cannot parse the slice)
        ("7 Q0 b 2 1e999 s\n", "not a finite number"),      # by the converter (the slice parsed)
        ("7 Q0 b 2 1.0 t\n", "run tag"),                    # by the converter
    ],
)
def test_a_bad_line_in_a_late_slice_names_its_line(write, monkeypatch, bad, fragment):
    # The pyarrow reader parses slice i + 1 in a worker thread while slice i is converted: a problem
    # found on either side, far into the file, still reaches the strict reader, which names the line.
    monkeypatch.setattr(columnar, "SLICE_BYTES", 64)       # ~4 lines per slice: the bad line is in slice ~50
    good = [f"{1 + i // 40} Q0 d{i} {i % 40 + 1} {100 - i % 40}.0 s\n" for i in range(200)]
    path = write("late.trec", "".join(good + [bad] + good[:3]))
    with pytest.raises(InputFormatError) as e:
        columnar.read_run_columns(path)
    assert e.value.line == 201 and fragment in str(e.value) and str(path) in str(e.value)


def test_a_late_slice_with_longer_ids_and_many_slices_in_flight(write, monkeypatch):
    # Two input buffers alternate between the worker and the converter; every slice is read once, in order.
    _no_fallback(monkeypatch)
    monkeypatch.setattr(columnar, "SLICE_BYTES", 100)
    lines = [f"{1 + i // 50} Q0 {'y' * (i % 23)}d{i} {i % 50 + 1} {60 - i % 50}.5 s\n" for i in range(500)]
    cols = columnar.read_run_columns(write("many.trec", "".join(lines)))
    assert cols.n_lines == 500 and cols.topic_ids == tuple(str(t) for t in range(1, 11))
    assert cols.scores.tolist() == [60 - i % 50 + 0.5 for i in range(500)]
    e = Evaluator({"3": {"y" * (120 % 23) + "d120": 1}}, ["RR@100"]).evaluate(cols)
    assert e.value("RR@100", "3") == pytest.approx(1 / 21)            # line 121 is rank 21 of topic 3


# -- fields longer than an id may be (trec.ID_MAX): refused with their line, never cut into a lines x width array --


@pytest.fixture
def narrow_columns(monkeypatch):
    """The numpy reader's columns stay as narrow as an id may be (a 10 MB field made a lines x 10 MB array)."""
    real = columnar._column_bytes

    def column_bytes(raw, starts, lengths, width):
        assert width <= trec.ID_MAX + 1, f"a column {width:,} bytes wide"
        return real(raw, starts, lengths, width)

    monkeypatch.setattr(columnar, "_column_bytes", column_bytes)


@pytest.mark.parametrize(("line2", "problem"), [
    ("1 Q0 " + "x" * 1_001 + " 2 1.5 sys\n",
     "document id '" + "x" * 60 + "'… (1001 characters): expected at most 1,000 characters; shorten the id (column 3)."),
    ("t" * 5_000 + " Q0 d2 2 1.5 sys\n",
     "topic id '" + "t" * 60 + "'… (5000 characters): expected at most 1,000 characters; shorten the id (column 1)."),
    ("1 Q0 d2 2 1.5 " + "s" * 2_000_000 + "\n",
     "expected run tag 'sys' (as on line 1), found '" + "s" * 60 + "'… (2000000 characters)."),
])
def test_a_field_longer_than_an_id_may_be_is_refused_naming_its_line(tmp_path, narrow_columns, line2, problem):
    path = tmp_path / "long.trec"
    path.write_text("1 Q0 d1 1 2.5 sys\n" + line2 + "1 Q0 d3 3 0.5 sys\n")
    with pytest.raises(InputFormatError) as e:
        columnar.read_run_columns(path)
    assert str(e.value).startswith(f"{path}:2: {problem}")


def test_an_id_of_exactly_id_max_characters_is_read(tmp_path, narrow_columns):
    path = tmp_path / "max.trec"
    longest = "é" * trec.ID_MAX  # 1,000 characters, 2,000 bytes: the numpy reader leaves it to the strict one
    path.write_text(f"1 Q0 d1 1 2.5 sys\n1 Q0 {longest} 2 1.5 sys\n", encoding="utf-8")
    cols = columnar.read_run_columns(path)
    assert cols.n_lines == 2 and cols.name == "sys"
    assert trec.read_run(path).run == {"1": {"d1": 2.5, longest: 1.5}}
