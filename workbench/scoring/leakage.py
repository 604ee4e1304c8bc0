"""Leakage check: topics whose query text is a near-copy of a document of the collection.

A query written from a document (its "own source": a question generated from a
passage, a title reused as the query) is answered by string matching, and a
large gain on such topics can be leakage rather than retrieval. The check runs
before scoring and flags, per topic, the document that contains most of the
query:

    containment(q, d) = |S(q) ∩ S(d)| / |S(q)|,

where S(x) is the set of word n-grams (default n = 3) of x after lower-casing
and splitting on ``\\w+`` runs. A topic is flagged when its best document's
containment reaches ``threshold`` (default 0.8). Queries with fewer than
``min_terms`` terms (default 4) are not checked (a two-word query is contained
in many documents) and are counted apart.

Containment, not resemblance, because the document is usually much longer
than the query: the query is a near-copy of *part* of it.

Source:
    Broder, "On the resemblance and containment of documents", Compression
    and Complexity of Sequences 1997, doi:10.1109/SEQUEN.1997.666900; the
    warning about leaked query text in the recall-testing design note
    (../shared/seeds/004_f124302079e96b46.txt).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from workbench.errors import ValidationError
from workbench.ranking import natural_key

_TERM = re.compile(r"\w+")


def shingles(text: str, n: int = 3) -> set[tuple[str, ...]]:
    """The set of word n-grams of ``text`` (lower-cased ``\\w+`` runs).

    Example:
        >>> sorted(shingles("Heat flow in a slab", 3))
        [('flow', 'in', 'a'), ('heat', 'flow', 'in'), ('in', 'a', 'slab')]
    """
    words = _TERM.findall(text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


@dataclass(frozen=True)
class LeakFlag:
    """A topic whose query is (nearly) contained in a document.

    Attributes:
        topic_id: the topic.
        doc_id: the document containing most of the query's n-grams.
        containment: |S(q) ∩ S(d)| / |S(q)|, full precision.
        n_shingles: |S(q)|.
    """

    topic_id: str
    doc_id: str
    containment: float
    n_shingles: int


@dataclass(frozen=True)
class LeakageCheck:
    """The result of the check over a topic set.

    Attributes:
        flagged: topics at or above the threshold, natural order.
        n_checked: topics checked.
        too_short: topics with fewer than ``min_terms`` terms (not checked).
        threshold: the containment threshold.
        n: the n-gram size.
        n_documents: documents scanned.
    """

    flagged: tuple[LeakFlag, ...]
    n_checked: int
    too_short: tuple[str, ...]
    threshold: float
    n: int
    n_documents: int

    @property
    def topics(self) -> tuple[str, ...]:
        """The flagged topic ids."""
        return tuple(f.topic_id for f in self.flagged)


def near_copies(
    queries: Mapping[str, str],
    documents: Iterable[tuple[str, str]],
    *,
    n: int = 3,
    threshold: float = 0.8,
    min_terms: int = 4,
) -> LeakageCheck:
    """Flag topics whose query is a near-copy of (part of) a document.

    Args:
        queries: topic_id -> query text.
        documents: (doc_id, text) pairs, e.g. title and body joined; scanned once.
        n: n-gram size, >= 1.
        threshold: containment at or above which a topic is flagged, in (0, 1].
        min_terms: queries with fewer terms are not checked (>= n).

    Returns:
        The ``LeakageCheck``; ties between documents go to the smallest doc_id
        in natural order.

    Raises:
        ValidationError: a parameter out of range.

    Example:
        >>> docs = [("d1", "the flow of heat in a composite slab is solved"), ("d2", "wing flutter")]
        >>> c = near_copies({"1": "heat in a composite slab", "2": "wing flutter at mach 2"}, docs)
        >>> [(f.topic_id, f.doc_id, f.containment) for f in c.flagged], c.n_checked
        ([('1', 'd1', 1.0)], 2)
    """
    if n < 1:
        raise ValidationError(f"leakage check: expected an n-gram size >= 1, found {n}.")
    if not 0 < threshold <= 1:
        raise ValidationError(f"leakage check: expected a containment threshold in (0, 1], found {threshold!r}.")
    if min_terms < n:
        raise ValidationError(f"leakage check: expected min_terms >= n = {n}, found {min_terms}.")
    index: dict[tuple[str, ...], list[int]] = {}
    topic_ids: list[str] = []
    sizes: list[int] = []
    too_short: list[str] = []
    for t in sorted(queries, key=natural_key):
        if len(_TERM.findall(queries[t])) < min_terms:
            too_short.append(t)
            continue
        s = shingles(queries[t], n)
        i = len(topic_ids)
        topic_ids.append(t)
        sizes.append(len(s))
        for sh in s:
            index.setdefault(sh, []).append(i)
    best: list[tuple[int, str]] = [(0, "")] * len(topic_ids)
    n_docs = 0
    for doc_id, text in documents:
        n_docs += 1
        if not index:
            continue
        hits: dict[int, int] = {}
        for sh in shingles(text, n):
            for i in index.get(sh, ()):
                hits[i] = hits.get(i, 0) + 1
        for i, c in hits.items():
            b, bd = best[i]
            if c > b or (c == b and bd and natural_key(doc_id) < natural_key(bd)):
                best[i] = (c, doc_id)
    flagged = []
    for i, t in enumerate(topic_ids):
        c, d = best[i]
        if d and sizes[i] and c / sizes[i] >= threshold:
            flagged.append(LeakFlag(t, d, c / sizes[i], sizes[i]))
    return LeakageCheck(tuple(flagged), len(topic_ids), tuple(too_short), threshold, n, n_docs)
