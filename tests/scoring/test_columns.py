"""The vectorised ordering equals ``workbench.ranking.ranked``; packing is exact."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tests.scoring.conftest import make_data
from workbench.ranking import ranked_ids
from workbench.scoring.columns import (
    RunColumns,
    canonical_order,
    pack_ids,
    rank_run,
    run_columns_from_mapping,
    unpack_ids,
)


def _shuffled_columns(run, seed, duplicates=0):
    """RunColumns with rows in random order (and some duplicate lines with lower scores)."""
    rng = random.Random(seed)
    rows = [(t, d, s) for t, docs in run.items() for d, s in docs.items()]
    extra = [(t, d, s - 1.0) for t, d, s in rng.sample(rows, duplicates)]
    rows += extra
    rng.shuffle(rows)
    topic_ids = tuple(run)
    code = {t: i for i, t in enumerate(topic_ids)}
    cols = RunColumns(
        topic_ids=topic_ids,
        topic_codes=np.array([code[t] for t, _, _ in rows], dtype=np.int32),
        doc_words=pack_ids([d for _, d, _ in rows]),
        scores=np.array([s for _, _, s in rows]),
    )
    return cols, len(extra)


def _lists(rr):
    ids = unpack_ids(rr.doc_words)
    out = {}
    for c, t in enumerate(rr.topic_ids):
        lo, hi = int(rr.starts[c]), int(rr.starts[c + 1])
        if hi > lo:
            out[t] = ids[lo:hi]
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shuffled_tie_heavy_rows_get_the_ranking_module_order(seed):
    _, run = make_data(seed, tie_levels=3)
    cols, _ = _shuffled_columns(run, seed)
    rr = rank_run(cols)
    assert _lists(rr) == {t: ranked_ids(run[t]) for t in run if run[t]}
    ranks = rr.rank_at(np.arange(len(rr.topic_codes)))
    assert ranks.min() == 1
    assert all(ranks[rr.starts[c]] == 1 for c in range(len(rr.topic_ids)) if rr.starts[c + 1] > rr.starts[c])


def test_sorted_scores_with_ties_keep_scores_and_reorder_ties_only():
    run = {"1": {"b": 1.0, "a": 1.0, "c": 1.0, "d10": 0.5, "d9": 0.5}}
    # rows sorted by score but ties in ascending id order
    cols = RunColumns(("1",), np.zeros(5, np.int32), pack_ids(["a", "b", "c", "d10", "d9"]),
                      np.array([1.0, 1.0, 1.0, 0.5, 0.5]))
    assert canonical_order(cols).tolist() == [2, 1, 0, 4, 3]
    assert _lists(rank_run(cols)) == {"1": ranked_ids(run["1"])} == {"1": ["c", "b", "a", "d9", "d10"]}


def test_mapping_columns_are_already_canonical():
    _, run = make_data(4)
    cols = run_columns_from_mapping(run)
    order = canonical_order(cols)
    assert order is None or order.tolist() == list(range(len(order)))


@pytest.mark.parametrize("dups", [1, 40])
def test_duplicates_are_dropped_at_their_best_rank_and_counted(dups):
    _, run = make_data(5, tie_levels=None)
    cols, n_extra = _shuffled_columns(run, 5, duplicates=dups)
    rr = rank_run(cols)
    assert sum(rr.duplicates.values()) == n_extra
    assert _lists(rr) == {t: ranked_ids(run[t]) for t in run if run[t]}


def test_duplicates_found_when_topic_lengths_are_uneven():
    # One long topic and many short ones: the global-sort branch.
    run = {"big": {f"d{i}": float(i) for i in range(500)}}
    run.update({f"t{i}": {"x": 1.0} for i in range(20)})
    cols, n_extra = _shuffled_columns(run, 9, duplicates=7)
    rr = rank_run(cols)
    assert sum(rr.duplicates.values()) == n_extra
    assert _lists(rr) == {t: ranked_ids(run[t]) for t in run}


def test_reuse_gives_the_same_result():
    _, run = make_data(6, tie_levels=2)
    cols, _ = _shuffled_columns(run, 6, duplicates=5)
    a = _lists(rank_run(cols))
    cols2, _ = _shuffled_columns(run, 6, duplicates=5)
    assert _lists(rank_run(cols2, reuse=True)) == a


def test_file_order_ranks_by_rank_column_then_position():
    cols = RunColumns(("1",), np.zeros(4, np.int32), pack_ids(["a", "b", "c", "d"]),
                      np.array([4.0, 3.0, 2.0, 1.0]), file_ranks=np.array([2, 1, 2, 0]))
    assert _lists(rank_run(cols)) == {"1": ["d", "b", "a", "c"]}


@pytest.mark.parametrize("ids", [["b", "ab", "a", "abc"], ["doc-long-00001", "doc-long-0000", "é", "e", "z" * 17]])
def test_packed_words_compare_like_utf8_bytes_and_round_trip(ids):
    words = pack_ids(ids)
    assert unpack_ids(words) == ids
    as_tuples = [tuple(r) for r in words.tolist()]
    by_words = [ids[i] for i in sorted(range(len(ids)), key=lambda i: as_tuples[i])]
    assert by_words == sorted(ids, key=lambda s: s.encode("utf-8"))


def test_ids_packed_at_different_widths_hash_alike_so_runs_and_qrels_meet():
    """Regression: a run whose longest doc id fits one word scored 0 against qrels whose longest needs two."""
    from workbench.scoring.columns import hash_words, pack_ids, widen
    from workbench.scoring.evaluate import Evaluator
    from workbench.scoring.measures import parse_measure

    narrow = pack_ids(["doc-0000"])
    assert narrow.shape[1] == 1
    assert hash_words(narrow)[0] == hash_words(widen(narrow, 3))[0]
    m = parse_measure("R@10")
    qrels = {"1": {"doc-0000": 1}, "2": {"other-document-0000": 1}}  # 8 and 19 bytes: 1 and 3 words
    e = Evaluator(qrels, [m], rel=1).evaluate({"1": {"doc-0000": 1.0}, "2": {"x": 1.0}}, run_name="r")
    assert (e.per_topic[m]["1"].value, e.per_topic[m]["2"].value) == (1.0, 0.0)
