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
another assessor's grade. The one exception is opt-in and labelled: when a lead
turns pre-fill on for the pool version (``judging.prefill``), the view carries
the chosen *model* assessor's grade (``prefill``), shown as the model's.

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
from typing import Literal

from workbench.errors import ValidationError
from workbench.judging.prefill import Prefill
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
    person's grade is a field here; a model assessor's grade only through
    ``prefill``, which a lead turns on per pool version.

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
        prefill: the model assessor's grade to show pre-selected and marked as the
            model's (only when a lead turned pre-fill on for the pool version;
            ``judging.prefill``); None otherwise.
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
    prefill: Prefill | None = None

    @property
    def judged(self) -> bool:
        """True when the assessor has a current judgment on this item."""
        return self.own_grade is not None or self.own_unsure


_GLASGOW_STOPWORDS = (
    "a about above across after afterwards again against all almost alone along already also although "
    "always am among amongst amoungst amount an and another any anyhow anyone anything anyway anywhere are "
    "around as at back be became because become becomes becoming been before beforehand behind being below "
    "beside besides between beyond bill both bottom but by call can cannot cant co con could couldnt cry de "
    "describe detail do done down due during each eg eight either eleven else elsewhere empty enough etc even "
    "ever every everyone everything everywhere except few fifteen fifty fill find fire first five for former "
    "formerly forty found four from front full further get give go had has hasnt have he hence her here "
    "hereafter hereby herein hereupon hers herself him himself his how however hundred i ie if in inc indeed "
    "interest into is it its itself keep last latter latterly least less ltd made many may me meanwhile might "
    "mill mine more moreover most mostly move much must my myself name namely neither never nevertheless next "
    "nine no nobody none noone nor not nothing now nowhere of off often on once one only onto or other others "
    "otherwise our ours ourselves out over own part per perhaps please put rather re same see seem seemed "
    "seeming seems serious several she should show side since sincere six sixty so some somehow someone "
    "something sometime sometimes somewhere still such system take ten than that the their them themselves "
    "then thence there thereafter thereby therefore therein thereupon these they thick thin third this those "
    "though three through throughout thru thus to together too top toward towards twelve twenty two un under "
    "until up upon us very via was we well were what whatever when whence whenever where whereafter whereas "
    "whereby wherein whereupon wherever whether which while whither who whoever whole whom whose why will with "
    "within without would yet you your yours yourself yourselves"
)
_CONTENT_WORDS = frozenset(
    "amount back bill bottom con cry de detail empty fill fire front full interest mill move name part "
    "serious side sincere system thick thin top un".split()
)
"""Words of the Glasgow list that name things in technical text ("thin airfoil",
"de Laval nozzle", "side force", "system"): they stay highlighted."""

STOPWORDS = (frozenset(_GLASGOW_STOPWORDS.split()) - _CONTENT_WORDS) | frozenset(
    "did does paper papers published available known various way ways".split()
)
"""Function words (and query phrasing such as "papers", "find", "show") never
highlighted: the Glasgow IR group's English stop list (318 words, as shipped by
scikit-learn), less the content words in ``_CONTENT_WORDS``.

Source:
    Glasgow Information Retrieval Group stop word list (van Rijsbergen,
    Information Retrieval, 2nd ed., 1979, appendix); scikit-learn's
    ``ENGLISH_STOP_WORDS`` is the same list.
"""

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


QueueStatus = Literal["judged", "unsure", "skipped", "not yet"]
"""Where a queue entry stands for its assessor (``queue_status``)."""


def queue_status(states: Sequence[tuple[int | None, bool]]) -> list[QueueStatus]:
    """The status of each entry of a queue, in queue order.

    Args:
        states: per entry (current grade or None, unsure flag), in queue order.

    Returns:
        ``judged`` (a grade), ``unsure``, ``skipped`` (no judgment, but a later
        entry has one: the assessor moved past it) or ``not yet`` (no judgment
        and nothing after it is judged).

    Example:
        >>> queue_status([(2, False), (None, False), (None, True), (None, False)])
        ['judged', 'skipped', 'unsure', 'not yet']
    """
    last = max((i for i, (g, u) in enumerate(states) if g is not None or u), default=-1)
    out: list[QueueStatus] = []
    for i, (grade, unsure) in enumerate(states):
        if grade is not None:
            out.append("judged")
        elif unsure:
            out.append("unsure")
        else:
            out.append("skipped" if i < last else "not yet")
    return out


@dataclass(frozen=True, slots=True)
class TopicPosition:
    """Where a queue position sits within its topic.

    Attributes:
        topic_id: the topic of the entry.
        index: 1-based position of the entry among the topic's entries.
        size: the topic's entries in the queue.
        new_topic: the previous entry (position - 1) is of another topic, or
            this is the queue's first entry.
    """

    topic_id: str
    index: int
    size: int
    new_topic: bool


def topic_position(topics: Sequence[str], position: int) -> TopicPosition:
    """Position within the topic ("2 of 5 in topic 3") of a 1-based queue position.

    Args:
        topics: the topic_id of each queue entry, in queue order (a topic's
            entries are contiguous, as ``assessor_order`` makes them).
        position: 1..len(topics).

    Raises:
        ValidationError: position outside the queue.

    Example:
        >>> topic_position(["1", "1", "3", "3", "3"], 4)
        TopicPosition(topic_id='3', index=2, size=3, new_topic=False)
    """
    if not 1 <= position <= len(topics):
        raise ValidationError(f"queue position must be in 1..{len(topics)}, found {position}")
    i = position - 1
    topic = topics[i]
    start = i
    while start > 0 and topics[start - 1] == topic:
        start -= 1
    end = i
    while end + 1 < len(topics) and topics[end + 1] == topic:
        end += 1
    return TopicPosition(topic, i - start + 1, end - start + 1, i == start)


def topic_window(topic_ids: Sequence[str], current: str, *, before: int = 2, after: int = 2) -> list[str]:
    """The current topic and its neighbours in queue order (the sidebar's short list).

    Example:
        >>> topic_window(["1", "2", "3", "4", "5", "6"], "2")
        ['1', '2', '3', '4']
    """
    ids = list(topic_ids)
    if current not in ids:
        return ids[: before + after + 1]
    i = ids.index(current)
    return ids[max(0, i - before): i + after + 1]


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
