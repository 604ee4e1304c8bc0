"""The one ordering rule for ranked lists.

Every component that turns scores into ranks (pooling, fusion, scoring, the UI)
calls ``ranked``; nothing else sorts a run.

Rule: sort by score descending, break ties by ``doc_id`` descending (string
comparison), ignore any rank column from the file, assign 1-based ranks. This is
what trec_eval does (it sorts by score, then by docno in reverse ``strcmp``
order; see usnistgov/trec_eval issue #22), so the same run file gives the same
numbers here and in trec_eval.

The vectorised form of the same rule, for whole runs as numpy columns, is
``workbench.scoring.columns.canonical_order`` / ``rank_run`` (used by the
scorer on large runs); a test pins the two to the same order.

The opt-in ``trust_file_order`` ordering keeps the order given by the file's rank
column instead (ties in the rank column broken by file position).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress, islice
from operator import eq, itemgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # at run time imported by the two functions that build them: errors imports this module
    from workbench.types import ScoredDoc


def ranked(scores: Mapping[str, float]) -> list[ScoredDoc]:
    """Order one topic's results the trec_eval way.

    Args:
        scores: doc_id -> score for a single topic. Each doc_id appears once
            (duplicates are resolved by the readers, see ``formats.trec``).

    Returns:
        The documents as ``ScoredDoc`` in rank order, ranks 1..n.

    Example:
        >>> [d.doc_id for d in ranked({"a": 1.0, "b": 1.0, "c": 2.0})]
        ['c', 'b', 'a']
    """
    from workbench.types import ScoredDoc

    return [ScoredDoc(doc_id, float(score), i) for i, (doc_id, score) in enumerate(_ordered(scores), 1)]


def _ordered(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """(doc_id, score) pairs in rank order: score descending, ties by doc_id descending."""
    # Two stable sorts: secondary key first (doc_id desc), then primary (score desc).
    items = sorted(scores.items(), key=itemgetter(0), reverse=True)
    items.sort(key=itemgetter(1), reverse=True)
    return items


def ranked_ids(scores: Mapping[str, float], k: int | None = None) -> list[str]:
    """The doc_ids of ``ranked(scores)``, cut at ``k`` when given (k >= 0)."""
    ids = [doc_id for doc_id, _ in _ordered(scores)]
    return ids if k is None else ids[:k]


def ranked_ids_of(doc_ids: Sequence[str], scores: Sequence[float]) -> list[str]:
    """``ranked_ids`` of one topic given as two columns: ``doc_ids[i]`` scored ``scores[i]``, ids distinct.

    The same rule in one sort: (score, doc_id) pairs descending are score
    descending, ties by doc_id descending (ids are distinct, so no pair ties).

    Example:
        >>> ranked_ids_of(["a", "b", "c"], [1.0, 1.0, 2.0])
        ['c', 'b', 'a']
    """
    n = len(scores)
    if len(doc_ids) != n:
        raise ValueError(f"{len(doc_ids)} doc ids for {n} scores")
    s = list(scores)
    if sorted(s, reverse=True) != s:  # not in score order: the pairs sorted (the general case)
        return [doc_id for _score, doc_id in sorted(zip(s, doc_ids, strict=True), reverse=True)]
    # Already score-descending, as retrievers write their runs: file order is the rule's order except
    # within runs of equal scores, each put in doc_id-descending order (comparisons in C; a Python
    # step per tied position only).
    out = list(doc_ids)
    tied = list(compress(range(1, n), map(eq, s, islice(s, 1, None))))  # i: s[i] == s[i - 1]
    j = 0
    while j < len(tied):
        first = tied[j] - 1
        last = tied[j]
        j += 1
        while j < len(tied) and tied[j] == last + 1:
            last = tied[j]
            j += 1
        out[first:last + 1] = sorted(out[first:last + 1], reverse=True)
    return out


def ranked_by_file_order(rows: Iterable[tuple[str, int, float]]) -> list[ScoredDoc]:
    """Order one topic's results by the file's rank column (opt-in).

    Args:
        rows: (doc_id, file_rank, score) in file order. Ties in ``file_rank``
            keep file order.

    Returns:
        ``ScoredDoc`` list with ranks re-assigned 1..n in that order.
    """
    items = sorted(enumerate(rows), key=lambda ir: (ir[1][1], ir[0]))
    from workbench.types import ScoredDoc

    return [ScoredDoc(doc_id, float(score), i) for i, (_, (doc_id, _r, score)) in enumerate(items, 1)]


def file_orders(rows: Mapping[str, Iterable[tuple[str, int, float]]]) -> dict[str, list[str]]:
    """Each topic's doc ids in the file's rank-column order, first occurrence kept.

    Args:
        rows: topic_id -> (doc_id, file_rank, score) in file order, as a run
            reader collects them (TREC text and Parquet alike).

    Returns:
        topic_id -> doc ids ordered by ``ranked_by_file_order``; a doc id that
        appears twice for a topic is kept at its first (best) place.
    """
    out: dict[str, list[str]] = {}
    for topic, topic_rows in rows.items():
        out[topic] = list(dict.fromkeys(sd.doc_id for sd in ranked_by_file_order(topic_rows)))
    return out


def scores_from_order(doc_ids: Iterable[str]) -> dict[str, float]:
    """Scores that make ``ranked`` reproduce a given order: n, n-1, ..., 1.

    Used to turn a trusted file order into an ordinary ``Run`` mapping.
    """
    ids = list(doc_ids)
    n = len(ids)
    return {doc_id: float(n - i) for i, doc_id in enumerate(ids)}


_DIGITS = re.compile(r"([0-9]+)")
_LONGEST_NUMBER = 4000
"""Digits of the longest run of digits read as a number (Python refuses ``int()`` of more than 4,300)."""
_HUGE = 10 ** _LONGEST_NUMBER
"""The number a longer run of digits stands for in sort keys: after every shorter one, ties by the id."""


def _as_number(digits: str) -> int:
    return int(digits) if len(digits) <= _LONGEST_NUMBER else _HUGE


def natural_key(id_: str) -> tuple[int, int, str]:
    """Order of ids in listings and exports: all-digit ids by number first, then the others as strings.

    ``2`` before ``10``; ids stay ``str`` and the ranking rule above never uses
    it. Exported files (qrels versions) and stored choices (a duplicate group's
    canonical member) are ordered by it, so it must not change between
    releases; ``display_key`` orders mixed ids for people.

    Example:
        >>> sorted(["10", "2", "b", "a"], key=natural_key)
        ['2', '10', 'a', 'b']
    """
    if id_.isascii() and id_.isdigit():
        return (0, int(id_) if len(id_) <= _LONGEST_NUMBER else _HUGE, id_)
    return (1, 0, id_)


def display_key(id_: str) -> tuple[int, int, tuple[int | str, ...], str]:
    """Order of ids in lists people read (miss lists): ``natural_key``, with digit runs inside other
    ids compared as numbers (``d2`` before ``d10``, ``q9#1`` before ``q10#0``), ties by the id itself.

    Example:
        >>> sorted(["10", "2", "b", "a", "d10", "d2", "d1"], key=display_key)
        ['2', '10', 'a', 'b', 'd1', 'd2', 'd10']
    """
    if id_.isascii() and id_.isdigit():
        return (0, int(id_) if len(id_) <= _LONGEST_NUMBER else _HUGE, (), id_)
    parts = _DIGITS.split(id_)  # str, digits, str, digits, ..., str: each position keeps one type
    return (1, 0, tuple(_as_number(x) if i % 2 else x for i, x in enumerate(parts)), id_)
