"""A run file's rank column: negative, too large or repeated ranks are read (the run is ordered by score, as
trec_eval orders it) but warned about, with the count and the first line, by every reader of the column alike.

Readers: the strict reader (``trec.read_run``), the columnar readers (numpy for small files, pyarrow for large
ones: ``SMALL_BYTES = 0`` sends a file there), the Parquet readers, and the plain small-file reader, which
declines such a file (it goes to the columnar reader, which warns), so a score prints one wording.
"""

from __future__ import annotations

import pytest

from tests.cli.helpers import cli
from workbench.formats import columnar, parquet, trec
from workbench.formats.plain_run import read_small_run
from workbench.scoring.rank_column import RANK_MAX, OddRanks, RankCheck

# Topic 1: ranks 1, 2, 2 (line 3 repeats line 2), 3; topic 2: -1 (negative), 1; topic 3: 1, 99999999999 (too large).
ODD = ("1 Q0 a 1 9.0 t\n1 Q0 b 2 8.0 t\n1 Q0 c 2 7.0 t\n1 Q0 d 3 6.0 t\n"
       "2 Q0 a -1 5.0 t\n2 Q0 b 1 4.0 t\n"
       "3 Q0 a 1 3.0 t\n3 Q0 b 99999999999 2.0 t\n")
ODD_RANKS = OddRanks(n_lines=3, line=3, rank="2", kind="repeated", topic="1", first_line=2)


def _all_readers(path, monkeypatch) -> dict[str, OddRanks | None]:
    """The OddRanks of every reader of a TREC run file."""
    out = {"strict": trec.read_run(path).odd_ranks, "numpy": columnar.read_run_columns(path).odd_ranks}
    monkeypatch.setattr(columnar, "SMALL_BYTES", 0)
    out["pyarrow"] = columnar.read_run_columns(path).odd_ranks
    monkeypatch.undo()
    return out


def test_every_reader_of_the_rank_column_finds_the_same_odd_ranks(write, monkeypatch):
    p = write("odd.trec", ODD)
    assert _all_readers(p, monkeypatch) == {"strict": ODD_RANKS, "numpy": ODD_RANKS, "pyarrow": ODD_RANKS}
    assert read_small_run(p) is None  # declined: the columnar reader reads it and warns
    assert trec.odd_ranks_warning(p, ODD_RANKS) == (
        f"{p}:3: 3 line(s) with a negative, too large (> 2147483647) or repeated rank within a topic; the first: "
        "rank 2 repeats line 2 of topic '1'. The ranks do not change the numbers: each topic is ordered by score "
        "(trec_eval's rule)")


@pytest.mark.parametrize("text, expected", [
    ("1 Q0 a 1 2.0 t\n1 Q0 b -3 1.0 t\n", OddRanks(1, 2, "-3", "negative", "1")),
    (f"1 Q0 a 1 2.0 t\n1 Q0 b {RANK_MAX + 1} 1.0 t\n", OddRanks(1, 2, str(RANK_MAX + 1), "too large", "1")),
    ("1 Q0 a 7 2.0 t\n1 Q0 b 7 1.0 t\n1 Q0 c 7 0.5 t\n", OddRanks(2, 2, "7", "repeated", "1", 1)),
    ("1 Q0 a 01 2.0 t\n1 Q0 b 1 1.0 t\n", OddRanks(1, 2, "1", "repeated", "1", 1)),    # 01 is rank 1
    ("1 Q0 a 1 2.0 t\n2 Q0 a 1 2.0 t\n1 Q0 b 1 1.0 t\n", OddRanks(1, 3, "1", "repeated", "1", 1)),  # interleaved
    ("1 Q0 a -2 2.0 t\n1 Q0 b -2 1.0 t\n", OddRanks(2, 1, "-2", "negative", "1")),     # a line counts once
])
def test_each_kind_of_odd_rank_alone(write, monkeypatch, text, expected):
    p = write("r.trec", text)
    assert set(_all_readers(p, monkeypatch).values()) == {expected}
    assert read_small_run(p) is None


@pytest.mark.parametrize("text", [
    "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n2 Q0 a 1 2.0 t\n",        # 1, 2, ... per topic
    "1 Q0 a 0 2.0 t\n1 Q0 b 1 1.0 t\n",                       # from 0
    "1 Q0 a 3 2.0 t\n1 Q0 b 2 1.0 t\n1 Q0 c 1 0.5 t\n",        # falling
    "1 Q0 a 5 2.0 t\n1 Q0 b 2 1.0 t\n1 Q0 c 9 0.5 t\n",        # gaps, any order, distinct
    f"1 Q0 a {RANK_MAX} 2.0 t\n1 Q0 b 0 1.0 t\n",             # the limits themselves
    "1 Q0 a 1 2.0 t\n2 Q0 b 1 1.0 t\n1 Q0 c 2 0.5 t\n",        # interleaved topics, distinct within each
])
def test_plain_rank_columns_have_no_odd_ranks(write, monkeypatch, text):
    p = write("r.trec", text)
    assert set(_all_readers(p, monkeypatch).values()) == {None}


def test_the_plain_small_reader_reads_a_plain_rank_column(write):
    p = write("r.trec", "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n2 Q0 a 5 2.0 t\n2 Q0 c 3 1.0 t\n")
    run = read_small_run(p)
    assert run is not None and run.ranked == {"1": ["a", "b"], "2": ["a", "c"]}


def test_a_rank_of_thousands_of_digits_is_too_large_not_a_crash(write):
    rank = "9" * 5000
    rf = trec.read_run(write("r.trec", f"1 Q0 a 1 2.0 t\n1 Q0 b {rank} 1.0 t\n"))
    assert rf.odd_ranks == OddRanks(1, 2, repr("9" * 60)[1:-1] + "\u2026 (5000 characters)", "too large", "1")
    assert rf.run == {"1": {"a": 2.0, "b": 1.0}}


def test_rank_check_matches_the_strict_reader_line_by_line():
    c = RankCheck()
    for line, (topic, rank) in enumerate([("1", "1"), ("1", "1"), ("2", "1"), ("2", "-5")], 1):
        c.add(line, topic, rank)
    assert c.result() == OddRanks(2, 2, "1", "repeated", "1", 1)


def test_parquet_runs_with_a_rank_column_are_checked_too(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "r.parquet"
    pq.write_table(pa.table({"topic_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0],
                             "rank": pa.array([1, 1, 1], pa.int64())}), p)
    expected = OddRanks(1, 2, "1", "repeated", "1", 1)
    assert parquet.read_run(p).odd_ranks == expected
    assert columnar.read_run_columns(p).odd_ranks == expected
    assert trec.odd_ranks_warning(p, expected, rows=True).startswith(
        f"{p}: row 2: 1 row(s) with a negative, too large (> 2147483647) or repeated rank within a topic; the "
        "first: rank 1 repeats row 1 of topic '1'.")
    q = tmp_path / "norank.parquet"
    pq.write_table(pa.table({"topic_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]}), q)
    assert parquet.read_run(q).odd_ranks is None and columnar.read_run_columns(q).odd_ranks is None


def test_score_warns_once_with_the_same_words_whichever_reader_read_the_file(write, capsys):
    qrels = write("q.txt", "1 0 a 1\n2 0 a 1\n3 0 a 1\n")
    plain = write("odd.trec", ODD)
    tabs = write("tabs.trec", ODD.replace(" ", "\t"))  # not the fast readers' dialect: the strict reader reads it
    warnings = []
    for p in (plain, tabs):
        code, out, err = cli(capsys, "score", p, "--qrels", qrels, "-m", "R@5")
        assert code == 0, err
        lines = [line for line in out.splitlines() if "rank within a topic" in line]
        assert len(lines) == 1, out
        warnings.append(lines[0].replace(str(p), "FILE"))
    assert warnings[0] == warnings[1]
    assert "run 't': FILE:3: 3 line(s) with a negative, too large (> 2147483647) or repeated rank within a topic; " \
           "the first: rank 2 repeats line 2 of topic '1'." in warnings[0]
    code, out, _ = cli(capsys, "score", plain, "--qrels", qrels, "-m", "R@5", "--trust-file-order")
    assert "--trust-file-order orders each topic by them (ties by file position)" in out


def test_score_of_a_plain_rank_column_says_nothing_about_ranks(write, capsys):
    qrels = write("q.txt", "1 0 a 1\n")
    code, out, err = cli(capsys, "score", write("r.trec", "1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n"), "--qrels", qrels)
    assert code == 0 and "rank within a topic" not in out + err
