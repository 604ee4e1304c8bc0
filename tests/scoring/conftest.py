"""Seeded random qrels and runs with the awkward parts: ties, graded and negative
grades, unjudged documents, ids of different lengths (some longer than 8 bytes,
some non-ASCII), topics with |R| = 0 and topics with fewer results than k."""

from __future__ import annotations

import random

import pytest


def make_data(seed: int, n_topics: int = 25, depth: int = 60, tie_levels: int | None = 12,
              unicode_ids: bool = True) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """(qrels, run) drawn from a seeded generator.

    tie_levels: number of distinct score values per topic (None = all distinct).
    """
    rng = random.Random(seed)
    ids = [f"d{i}" for i in range(400)] + [f"doc-long-{i:05d}" for i in range(50)]
    if unicode_ids:
        ids += [f"é{i}" for i in range(20)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for t in range(1, n_topics + 1):
        topic = str(t)
        judged = rng.sample(ids, rng.randint(5, 60))
        grades = {d: rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]) for d in judged}
        if t % 7 == 0:
            grades = {d: min(g, 0) for d, g in grades.items()}    # |R| = 0
        qrels[topic] = grades
        n = rng.randint(1, depth) if t % 5 == 0 else depth          # some short runs
        pool = judged[: rng.randint(0, len(judged))] + rng.sample(ids, min(len(ids), n))
        docs = list(dict.fromkeys(pool))[:n]
        if tie_levels is None:
            run[topic] = {d: rng.random() for d in docs}
        else:
            run[topic] = {d: float(rng.randint(0, tie_levels)) / 2 for d in docs}
    return qrels, run


@pytest.fixture
def tie_data():
    return make_data(7)


@pytest.fixture
def distinct_data():
    return make_data(11, tie_levels=None)
