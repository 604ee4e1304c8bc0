"""Who judges what, in which order, and what they see (pure).

Assignment: a pool version's entries are handed to assessors with an overlap
policy (``plan_assignments``):

* ``overlap=k``: every document goes to k distinct assessors (k <= number of
  assessors), rotating the starting assessor so loads differ by at most one
  per topic;
* ``double_share=s``: every document goes to one assessor, and a seeded
  ``ceil(s * n)`` of each topic's n documents also go to a second one, to
  measure agreement.

Order: each assessor's queue is topic by topic (topics in the pool's order);
within a topic, documents come by *priority band* (``band = (priority_rank - 1)
// band_size``, band 0 first: the pool's best documents first), and within a
band in a shuffle seeded by (seed, assessor, topic_id). The shuffle is
reproducible (``random.Random`` seeded with a string hashes it with SHA-512,
independent of PYTHONHASHSEED) and differs between assessors, so no two
assessors see the same document sequence and no one can read a system's
ranking from the order.

Blind view: ``JudgingView`` carries the topic, the document and the
assessor's *own* previous grade, never a run name, rank, score, priority or
another assessor's grade.

Source:
    Pooling with per-assessor random order to avoid order bias: Voorhees &
    Harman, TREC: Experiment and Evaluation in IR (MIT Press 2005), ch. 3;
    priority bands after the "move-to-front"-style prioritised pooling of
    Cormack, Palmer & Clarke, SIGIR 1998, doi:10.1145/290941.291009.
"""

from __future__ import annotations

import html
import math
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from workbench.errors import ValidationError
from workbench.types import Document, Topic

DEFAULT_BAND_SIZE = 20
"""Documents per priority band: ranks 1-20 of a topic's pool are band 0, and so on."""

ItemKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class PoolItem:
    """The part of a pool entry that assignment needs (no run, no score).

    Attributes:
        topic_id: the topic.
        doc_id: the document.
        priority_rank: 1-based position in the topic's pool by priority.
    """

    topic_id: str
    doc_id: str
    priority_rank: int


def topic_order(topic_ids: Iterable[str]) -> list[str]:
    """Topics in a stable, human order: shorter ids first, then by string.

    Numeric ids such as ``"2"`` and ``"10"`` come out in numeric order without
    casting them to int (ids stay strings).
    """
    return sorted(set(topic_ids), key=lambda t: (len(t), t))


def band(priority_rank: int, band_size: int = DEFAULT_BAND_SIZE) -> int:
    """The priority band of a 1-based priority rank: (priority_rank - 1) // band_size."""
    return (priority_rank - 1) // band_size


def assessor_order(
    items: Sequence[PoolItem],
    assessor: str,
    *,
    seed: int | str = 0,
    band_size: int = DEFAULT_BAND_SIZE,
) -> list[ItemKey]:
    """One assessor's queue order over the items assigned to them.

    Args:
        items: the assigned pool items (any order).
        assessor: user name; part of the shuffle seed.
        seed: project seed; the same seed gives the same order.
        band_size: documents per priority band (>= 1).

    Returns:
        (topic_id, doc_id) in judging order: topics by ``topic_order``, bands
        ascending, seeded shuffle within a band.

    Raises:
        ValidationError: band_size < 1.

    Example:
        >>> items = [PoolItem("1", d, r) for r, d in enumerate("abcd", 1)]
        >>> sorted(assessor_order(items, "ann", band_size=2)[:2]) == [("1", "a"), ("1", "b")]
        True
    """
    if band_size < 1:
        raise ValidationError(f"band size must be >= 1, found {band_size}")
    by_topic: dict[str, list[PoolItem]] = {}
    for it in items:
        by_topic.setdefault(it.topic_id, []).append(it)
    out: list[ItemKey] = []
    for topic_id in topic_order(by_topic):
        rng = random.Random(f"{seed}\x1f{assessor}\x1f{topic_id}")
        bands: dict[int, list[PoolItem]] = {}
        for it in sorted(by_topic[topic_id], key=lambda i: (i.priority_rank, i.doc_id)):
            bands.setdefault(band(it.priority_rank, band_size), []).append(it)
        for b in sorted(bands):
            docs = [it.doc_id for it in bands[b]]
            rng.shuffle(docs)
            out.extend((topic_id, d) for d in docs)
    return out


def plan_assignments(
    items: Sequence[PoolItem],
    assessors: Sequence[str],
    *,
    overlap: int | None = None,
    double_share: float | None = None,
    seed: int | str = 0,
    band_size: int = DEFAULT_BAND_SIZE,
) -> dict[str, list[ItemKey]]:
    """Hand pool items to assessors with an overlap policy, each in queue order.

    Exactly one of ``overlap`` and ``double_share`` is given (neither means
    ``overlap=1``: every document judged once).

    Args:
        items: the pool version's entries.
        assessors: distinct user names, at least one.
        overlap: assessors per document, 1..len(assessors).
        double_share: share of each topic's documents judged twice, 0..1
            (needs two assessors when > 0).
        seed: makes the split and the orders reproducible.
        band_size: documents per priority band (see ``assessor_order``).

    Returns:
        assessor -> (topic_id, doc_id) list in that assessor's judging order;
        every assessor appears (possibly with an empty list).

    Raises:
        ValidationError: both or an invalid policy value, duplicate or missing assessors.

    Example:
        >>> items = [PoolItem("1", d, r) for r, d in enumerate("ab", 1)]
        >>> {a: len(q) for a, q in plan_assignments(items, ["x", "y"], overlap=2).items()}
        {'x': 2, 'y': 2}
    """
    names = list(assessors)
    if not names:
        raise ValidationError("assign: expected at least one assessor, found none")
    if len(set(names)) != len(names):
        raise ValidationError(f"assign: assessors must be distinct, found {names}")
    if overlap is not None and double_share is not None:
        raise ValidationError("assign: give --overlap or --double-share, not both")
    if double_share is None:
        k = 1 if overlap is None else overlap
        if not 1 <= k <= len(names):
            raise ValidationError(
                f"assign: overlap must be between 1 and the number of assessors ({len(names)}), found {k}"
            )
    elif not 0.0 <= double_share <= 1.0 or (double_share > 0 and len(names) < 2):
        raise ValidationError(
            f"assign: double share must be in [0, 1] and needs 2+ assessors when > 0, "
            f"found {double_share} with {len(names)} assessor(s)"
        )

    given: dict[str, list[PoolItem]] = {a: [] for a in names}
    by_topic: dict[str, list[PoolItem]] = {}
    for it in items:
        by_topic.setdefault(it.topic_id, []).append(it)
    turn = 0  # rotates across topics so the leftover document does not always go to the same assessor
    for topic_id in topic_order(by_topic):
        docs = sorted(by_topic[topic_id], key=lambda i: (i.priority_rank, i.doc_id))
        rng = random.Random(f"{seed}\x1fsplit\x1f{topic_id}")
        order = docs[:]
        rng.shuffle(order)
        if double_share is None:
            for it in order:
                for j in range(k):
                    given[names[(turn + j) % len(names)]].append(it)
                turn += 1
        else:
            n_double = math.ceil(double_share * len(order) - 1e-9)
            for i, it in enumerate(order):
                first = names[turn % len(names)]
                given[first].append(it)
                if i < n_double:
                    given[names[(turn + 1) % len(names)]].append(it)
                turn += 1
    return {a: assessor_order(given[a], a, seed=seed, band_size=band_size) for a in names}


@dataclass(frozen=True, slots=True)
class JudgingView:
    """Everything the judging screen may show for one document, and nothing more.

    Blind by construction: no run name, rank, score, priority or other
    assessor's grade is a field here.

    Attributes:
        position: the item's 1-based position in the assessor's queue.
        n_queue: length of the assessor's queue.
        collection: collection name (selects the rubric).
        pool_version: pool version the assignment came from.
        topic: the topic (title, description, narrative).
        document: the document (title, text).
        own_grade: the assessor's own current grade, if they judged it already.
        own_unsure: True when their current judgment is "unsure".
        own_note: their current note ("" when none).
    """

    position: int
    n_queue: int
    collection: str
    pool_version: str
    topic: Topic
    document: Document
    own_grade: int | None = None
    own_unsure: bool = False
    own_note: str = ""

    @property
    def judged(self) -> bool:
        """True when the assessor has a current judgment on this item."""
        return self.own_grade is not None or self.own_unsure


STOPWORDS = frozenset(
    "a an and are as at be by can do does for from has have how in is it of on or that the "
    "this to was what when where which who why with would should could there their any been "
    "into not than these those such".split()
)
"""Function words never highlighted (a short English list)."""

_WORD = re.compile(r"[A-Za-z0-9]+(?:['-][A-Za-z0-9]+)*")


def query_terms(topic: Topic) -> list[str]:
    """The terms to highlight for a topic: lower-cased words of its title (else
    description), without stopwords and one-character words, in first-seen order."""
    seen: list[str] = []
    for w in _WORD.findall(topic.query.lower()):
        if len(w) > 1 and w not in STOPWORDS and w not in seen:
            seen.append(w)
    return seen


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def highlight_html(text: str, terms: Sequence[str]) -> str:
    """HTML-escape ``text`` and wrap words matching ``terms`` in ``<mark>``.

    A word matches when it equals a term or shares its crude stem (trailing
    -s, -es, -ed, -ing removed), case-insensitively. The corpus text is escaped
    piece by piece *before* tags are added, so markup in a document (e.g.
    ``<script>``) is shown as text and never runs.

    Args:
        text: raw document text.
        terms: lower-cased terms (see ``query_terms``).

    Returns:
        Safe HTML: escaped text with ``<mark>`` elements; newlines kept.

    Example:
        >>> highlight_html("<b>Flows</b> & flow", ["flow"])
        '&lt;b&gt;<mark>Flows</mark>&lt;/b&gt; &amp; <mark>flow</mark>'
    """
    wanted = {t.lower() for t in terms} | {_stem(t.lower()) for t in terms}
    parts: list[str] = []
    last = 0
    for m in _WORD.finditer(text):
        w = m.group(0).lower()
        if w in wanted or _stem(w) in wanted:
            parts.append(html.escape(text[last : m.start()]))
            parts.append(f"<mark>{html.escape(m.group(0))}</mark>")
            last = m.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts)


def progress_counts(queue: Sequence[ItemKey], judged: Iterable[ItemKey]) -> dict[str, tuple[int, int]]:
    """Per topic (judged, assigned) counts of a queue, topics in queue order."""
    done = set(judged)
    out: dict[str, list[int]] = {}
    for key in queue:
        c = out.setdefault(key[0], [0, 0])
        c[1] += 1
        c[0] += key in done
    return {t: (c[0], c[1]) for t, c in out.items()}


def resume_position(queue: Sequence[ItemKey], judged: Mapping[ItemKey, object] | set[ItemKey]) -> int:
    """The 1-based position to resume at: the first item without a current
    judgment, or the last position when all are judged (1 for an empty queue)."""
    for i, key in enumerate(queue, 1):
        if key not in judged:
            return i
    return max(1, len(queue))
