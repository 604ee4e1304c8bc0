"""Retrieval units: chunks of documents, the chunk map, and scoring at the unit the user consumes.

A *chunk collection* holds passages cut from the documents of a *document
collection*. Its **chunk map** gives, for every chunk id, the document it was
cut from and its character offsets in that document's ``text`` (0-based,
``start`` inclusive, ``end`` exclusive, Python slice convention: the chunk's
text is ``document.text[start:end]``). The title is not part of the offsets.

Chunking (``chunk_document``) cuts a text into windows of ``size`` units with
``overlap`` units shared by consecutive windows (stride ``size - overlap``):

* ``unit="tokens"``: a token is a maximal run of non-whitespace characters
  (regex ``\\S+``); a window of tokens spans from its first token's first
  character to its last token's last character, so offsets always fall on
  token boundaries and whitespace between windows is in neither;
* ``unit="chars"``: a window is ``size`` characters, cut anywhere.

Windows start at 0, ``stride``, ``2 * stride``, ... and the last window is
the first that reaches the end of the text (it may be shorter). A text with
no token (empty or whitespace only) gives one chunk ``(0, len(text))``, so
every document has at least one chunk and stays reachable through its title.
Chunk ids are ``f"{doc_id}#{i}"`` with ``i`` counting from 0 (``CHUNK_SEP``).

Scoring at a unit (``to_documents``): a chunk-level run scored at the
document level maps every chunk to its document and keeps the **best-ranked
chunk of each document**, in the chunk ranking's order, *before* the cutoff
k is applied (a document whose chunks rank 3 and 12 is the run's 3rd-or-
better document and counts once). Chunk-level qrels scored at the document
level give each document the highest grade of its chunks
(``qrels_to_documents``); document-level qrels are taken down to chunks only
explicitly (``qrels_to_chunks``, every chunk of a judged document inherits its
grade, which multiplies the denominator by the chunks per relevant document),
or through span qrels (``spans_to_chunk_qrels``).

Span qrels (``Span``): evidence located as (topic, doc_id, start, end, grade)
in the document's text. A chunk of that document is relevant to the topic
when it overlaps a span under the ``OverlapRule``: by default **any overlap**
(at least one shared character); with ``min_share = s`` the shared characters
must be at least ``s`` times the shorter of the span and the chunk (so a
chunk wholly inside a long span and a span wholly inside a chunk both have
share 1). A chunk overlapping several spans takes the highest grade; the other
chunks of a document that has spans for the topic are judged grade 0.

Measure names carry the unit when it is not the run's own (``unit_name``):
``R[doc]@10`` for a chunk run scored at the document level, ``R[chunk]@10``
beside it.

Source:
    Dedupe before the cutoff: ``shared/seeds/004`` ("Test rank truncation after
    deduplication ... document-level scoring may need to collapse them before
    taking K"); passage-to-document aggregation by the maximum passage
    (MaxP: Dai & Callan, SIGIR 2019, doi:10.1145/3331184.3331303).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from workbench.errors import ValidationError
from workbench.ranking import natural_key
from workbench.scoring.measures import Measure
from workbench.types import Qrels

if TYPE_CHECKING:
    from workbench.scoring.columns import RankedRun

Unit = Literal["doc", "chunk"]
"""A retrieval unit: ``doc`` (a document) or ``chunk`` (a passage of one)."""
UNITS: tuple[str, ...] = ("doc", "chunk")

ChunkUnit = Literal["tokens", "chars"]
"""What chunk ``size`` and ``overlap`` count."""
CHUNK_UNITS: tuple[str, ...] = ("tokens", "chars")

CHUNK_SEP = "#"
"""Separator of a generated chunk id: ``<doc_id>#<i>``."""

_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """One chunk: its id, its document and its character offsets in the document's text.

    Attributes:
        chunk_id: the chunk's id (a document id of the chunk collection).
        doc_id: the document it was cut from.
        start: first character (0-based, inclusive).
        end: end character (exclusive); ``end >= start``.
    """

    chunk_id: str
    doc_id: str
    start: int
    end: int

    @property
    def length(self) -> int:
        """Characters covered (``end - start``)."""
        return self.end - self.start


@dataclass(frozen=True)
class ChunkMap:
    """chunk_id -> ``ChunkSpan``: how a chunk collection maps to its documents.

    Build with ``ChunkMap.of(spans)``, which checks the rules.

    Attributes:
        spans: chunk_id -> ChunkSpan.
    """

    spans: Mapping[str, ChunkSpan]
    _by_doc: Mapping[str, tuple[ChunkSpan, ...]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, spans: Iterable[ChunkSpan]) -> ChunkMap:
        """A checked chunk map.

        Raises:
            ValidationError: an empty or whitespace-holding id, a repeated chunk
                id, a negative ``start`` or ``end < start``.
        """
        table: dict[str, ChunkSpan] = {}
        by_doc: dict[str, list[ChunkSpan]] = {}
        for s in spans:
            for what, value in (("chunk id", s.chunk_id), ("doc id", s.doc_id)):
                if not value or any(c.isspace() for c in value):
                    raise ValidationError(f"chunk map: expected a non-empty {what} without whitespace, found {value!r}")
            if s.chunk_id in table:
                raise ValidationError(f"chunk map: expected each chunk id once, found {s.chunk_id!r} twice")
            if s.start < 0 or s.end < s.start:
                raise ValidationError(
                    f"chunk map: chunk {s.chunk_id!r}: expected 0 <= start <= end, found start {s.start}, end {s.end}")
            table[s.chunk_id] = s
            by_doc.setdefault(s.doc_id, []).append(s)
        ordered = {d: tuple(sorted(v, key=lambda c: (c.start, c.end, natural_key(c.chunk_id))))
                   for d, v in by_doc.items()}
        return cls(table, ordered)

    def __len__(self) -> int:
        return len(self.spans)

    def doc_of(self, chunk_id: str) -> str:
        """The document of a chunk.

        Raises:
            KeyError: not a chunk of this map.
        """
        return self.spans[chunk_id].doc_id

    def chunks_of(self, doc_id: str) -> tuple[ChunkSpan, ...]:
        """The chunks of a document, by start offset (empty when it has none)."""
        return tuple(self._by_doc.get(doc_id, ()))

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """The documents that have chunks, in natural id order."""
        return tuple(sorted(self._by_doc, key=natural_key))

    def lines(self) -> list[tuple[str, str, int, int]]:
        """(chunk_id, doc_id, start, end) rows, by chunk id (string order): the content that is hashed."""
        return [(s.chunk_id, s.doc_id, s.start, s.end) for _, s in sorted(self.spans.items())]


def check_chunking(size: int, overlap: int, unit: str) -> ChunkUnit:
    """``unit`` if ``size`` and ``overlap`` are a valid chunking.

    Raises:
        ValidationError: ``size < 1``, ``overlap`` not in ``0..size-1``, or an unknown unit.
    """
    if unit not in CHUNK_UNITS:
        raise ValidationError(f"expected a chunk unit of {', '.join(CHUNK_UNITS)}, found {unit!r}. Write e.g. --by tokens.")
    if isinstance(size, bool) or size < 1:
        raise ValidationError(f"expected a chunk size >= 1, found {size!r}. Write e.g. --size 64.")
    if isinstance(overlap, bool) or not 0 <= overlap < size:
        raise ValidationError(
            f"expected an overlap between 0 and size - 1 = {size - 1}, found {overlap!r}. Write e.g. --overlap 16.")
    return unit  # type: ignore[return-value]


def chunk_document(doc_id: str, text: str, *, size: int, overlap: int = 0, unit: str = "tokens") -> list[ChunkSpan]:
    """Cut one document's text into chunks (rules in the module docstring).

    Args:
        doc_id: the document.
        text: its text (offsets index it).
        size: units per chunk (>= 1).
        overlap: units shared by consecutive chunks (0 .. size - 1).
        unit: ``tokens`` (whitespace-delimited) or ``chars``.

    Returns:
        The chunks in text order, ids ``<doc_id>#0``, ``<doc_id>#1``, ...

    Raises:
        ValidationError: a bad size, overlap or unit.

    Example:
        >>> [(c.chunk_id, c.start, c.end) for c in chunk_document("d1", "a b c d e", size=2, overlap=1)]
        [('d1#0', 0, 3), ('d1#1', 2, 5), ('d1#2', 4, 7), ('d1#3', 6, 9)]
    """
    kind = check_chunking(size, overlap, unit)
    stride = size - overlap
    bounds: list[tuple[int, int]] = []
    if kind == "chars":
        n = len(text)
        start = 0
        while True:
            end = min(start + size, n)
            bounds.append((start, end))
            if end >= n:
                break
            start += stride
    else:
        tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
        if not tokens:
            bounds.append((0, len(text)))
        else:
            i = 0
            while True:
                last = min(i + size, len(tokens)) - 1
                bounds.append((tokens[i][0], tokens[last][1]))
                if last >= len(tokens) - 1:
                    break
                i += stride
    return [ChunkSpan(f"{doc_id}{CHUNK_SEP}{j}", doc_id, s, e) for j, (s, e) in enumerate(bounds)]


# -- rankings ---------------------------------------------------------------------------


def ranked_lists(rr: RankedRun) -> dict[str, list[str]]:
    """topic_id -> doc ids in rank order (rank 1 first) of a ranked run; topics without rows are absent."""
    from workbench.scoring.columns import unpack_ids

    out: dict[str, list[str]] = {}
    for code, topic in enumerate(rr.topic_ids):
        a, b = int(rr.starts[code]), int(rr.starts[code + 1])
        if b > a:
            out[topic] = unpack_ids(rr.doc_words[a:b])
    return out


def ranked_run_of(lists: Mapping[str, Sequence[str]], name: str = "") -> RankedRun:
    """A ``RankedRun`` whose order is exactly the given lists' (ids unique within a topic).

    The order is carried as a trusted rank column, so no score tie can reorder it.
    """
    import numpy as np

    from workbench.scoring.columns import RunColumns, pack_ids, rank_run

    topics = list(lists)
    codes: list[int] = []
    ids: list[str] = []
    ranks: list[int] = []
    for code, t in enumerate(topics):
        for r, d in enumerate(lists[t], 1):
            codes.append(code)
            ids.append(d)
            ranks.append(r)
    n = len(ids)
    cols = RunColumns(
        topic_ids=tuple(topics), topic_codes=np.array(codes, dtype=np.int32), doc_words=pack_ids(ids),
        scores=np.zeros(n, dtype=np.float64), file_ranks=np.array(ranks, dtype=np.int64), name=name, n_lines=n,
    )
    return rank_run(cols)


@dataclass(frozen=True)
class DocumentRanking:
    """A chunk ranking mapped to documents (``to_documents``).

    Attributes:
        lists: topic_id -> doc ids, best-ranked chunk first, each document once.
        best_chunk: topic_id -> doc_id -> (chunk_id, chunk rank) of the chunk that placed it.
        chunk_ranks: topic_id -> doc_id -> every rank its chunks reached (ascending).
        n_collapsed: topic_id -> chunks dropped because their document was already placed.
        unknown: chunk ids of the run that the map does not know (kept as they are), sorted.
    """

    lists: Mapping[str, list[str]]
    best_chunk: Mapping[str, Mapping[str, tuple[str, int]]]
    chunk_ranks: Mapping[str, Mapping[str, tuple[int, ...]]]
    n_collapsed: Mapping[str, int]
    unknown: tuple[str, ...] = ()

    @property
    def total_collapsed(self) -> int:
        """Chunks dropped over all topics."""
        return sum(self.n_collapsed.values())


def to_documents(lists: Mapping[str, Sequence[str]], chunk_map: ChunkMap, *, strict: bool = True) -> DocumentRanking:
    """Map a chunk ranking to documents: best-ranked chunk per document, order kept, before any cutoff.

    Args:
        lists: topic_id -> chunk ids in rank order (``ranked_lists``).
        chunk_map: the chunk collection's map.
        strict: raise on a chunk id the map does not know; False keeps it as a
            document id of its own and lists it in ``unknown``.

    Returns:
        A ``DocumentRanking``.

    Raises:
        ValidationError: ``strict`` and a run id is not a chunk of the map
            (the message counts them and names the first).

    Example:
        >>> m = ChunkMap.of([ChunkSpan("a#0", "a", 0, 5), ChunkSpan("a#1", "a", 5, 9), ChunkSpan("b#0", "b", 0, 4)])
        >>> to_documents({"1": ["a#1", "b#0", "a#0"]}, m).lists["1"]
        ['a', 'b']
    """
    out: dict[str, list[str]] = {}
    best: dict[str, dict[str, tuple[str, int]]] = {}
    ranks: dict[str, dict[str, tuple[int, ...]]] = {}
    collapsed: dict[str, int] = {}
    unknown: set[str] = set()
    spans = chunk_map.spans
    for topic, ids in lists.items():
        docs: list[str] = []
        b: dict[str, tuple[str, int]] = {}
        rk: dict[str, list[int]] = {}
        for r, cid in enumerate(ids, 1):
            s = spans.get(cid)
            if s is None:
                unknown.add(cid)
                doc = cid
            else:
                doc = s.doc_id
            if doc in b:
                rk[doc].append(r)
                continue
            b[doc] = (cid, r)
            rk[doc] = [r]
            docs.append(doc)
        out[topic] = docs
        best[topic] = b
        ranks[topic] = {d: tuple(v) for d, v in rk.items()}
        collapsed[topic] = len(ids) - len(docs)
    if strict and unknown:
        first = sorted(unknown)[0]
        raise ValidationError(
            f"expected chunk ids of the chunk map, found {len(unknown):,} run id(s) it does not know, e.g. {first!r}. "
            "Is the run over the chunk collection (see --collection), or already at document level (drop --unit doc)?")
    return DocumentRanking(out, best, ranks, collapsed, tuple(sorted(unknown)))


# -- qrels ------------------------------------------------------------------------------


def qrels_to_documents(chunk_qrels: Qrels, chunk_map: ChunkMap) -> Qrels:
    """Chunk-level qrels at document level: each document gets the highest grade of its judged chunks.

    Raises:
        ValidationError: a judged id is not a chunk of the map.
    """
    out: dict[str, dict[str, int]] = {}
    for topic, grades in chunk_qrels.items():
        t: dict[str, int] = {}
        for cid, g in grades.items():
            s = chunk_map.spans.get(cid)
            if s is None:
                raise ValidationError(f"qrels topic {topic}: expected chunk ids of the chunk map, found {cid!r}. "
                                      "Are these qrels already at document level?")
            t[s.doc_id] = max(t.get(s.doc_id, g), g)
        out[topic] = t
    return out


def qrels_to_chunks(doc_qrels: Qrels, chunk_map: ChunkMap) -> Qrels:
    """Document-level qrels taken down to chunks: every chunk of a judged document inherits its grade.

    Judged documents without chunks in the map are dropped (they cannot be
    retrieved as chunks; ``missing_documents`` lists them).
    """
    out: dict[str, dict[str, int]] = {}
    for topic, grades in doc_qrels.items():
        out[topic] = {c.chunk_id: g for d, g in grades.items() for c in chunk_map.chunks_of(d)}
    return out


def missing_documents(doc_qrels: Qrels, chunk_map: ChunkMap, *, rel: int = 1) -> list[tuple[str, str]]:
    """(topic, doc) pairs judged relevant (grade >= rel) whose document has no chunk in the map."""
    return [(t, d) for t, grades in doc_qrels.items() for d, g in grades.items()
            if g >= rel and not chunk_map.chunks_of(d)]


@dataclass(frozen=True, slots=True)
class Span:
    """A span of evidence: topic, document, character offsets in its text, grade.

    Attributes:
        topic_id: the topic.
        doc_id: the document.
        start: first character (0-based, inclusive).
        end: end character (exclusive), ``end > start``.
        grade: the evidence's grade.
    """

    topic_id: str
    doc_id: str
    start: int
    end: int
    grade: int = 1


@dataclass(frozen=True, slots=True)
class OverlapRule:
    """When a chunk counts as covering a span.

    Attributes:
        min_share: 0 (the default) = any overlap (>= 1 shared character);
            otherwise shared characters / min(span length, chunk length) must
            be >= ``min_share`` (0 < min_share <= 1).

    Raises:
        ValidationError: ``min_share`` outside 0..1.
    """

    min_share: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_share <= 1.0:
            raise ValidationError(f"expected a minimum overlap share between 0 and 1, found {self.min_share!r}. "
                                  "Write e.g. --span-overlap 0.5 (0 = any overlap).")

    def __str__(self) -> str:
        return "any overlap" if self.min_share == 0 else f"overlap >= {self.min_share:g} of the shorter of span and chunk"

    def covers(self, chunk: ChunkSpan, span: Span) -> bool:
        """True when ``chunk`` covers ``span`` under this rule (same document assumed).

        Example:
            >>> OverlapRule().covers(ChunkSpan("a#0", "a", 0, 10), Span("1", "a", 9, 20))
            True
            >>> OverlapRule(0.5).covers(ChunkSpan("a#0", "a", 0, 10), Span("1", "a", 9, 20))
            False
        """
        shared = min(chunk.end, span.end) - max(chunk.start, span.start)
        if shared <= 0:
            return False
        if self.min_share == 0:
            return True
        shorter = min(chunk.length, span.end - span.start)
        return shorter > 0 and shared >= self.min_share * shorter


def spans_to_chunk_qrels(spans: Iterable[Span], chunk_map: ChunkMap, rule: OverlapRule = OverlapRule()) -> Qrels:
    """Chunk-level qrels from span qrels (rule in the module docstring).

    Every chunk of a document that has a span for a topic is judged for that
    topic: the highest grade of the spans it covers, else 0.
    """
    out: dict[str, dict[str, int]] = {}
    for s in spans:
        t = out.setdefault(s.topic_id, {})
        for c in chunk_map.chunks_of(s.doc_id):
            g = s.grade if rule.covers(c, s) else 0
            t[c.chunk_id] = max(t.get(c.chunk_id, g), g)
    return out


def spans_to_doc_qrels(spans: Iterable[Span]) -> Qrels:
    """Document-level qrels from span qrels: each document gets the highest grade of its spans."""
    out: dict[str, dict[str, int]] = {}
    for s in spans:
        t = out.setdefault(s.topic_id, {})
        t[s.doc_id] = max(t.get(s.doc_id, s.grade), s.grade)
    return out


# -- names ------------------------------------------------------------------------------


def unit_name(measure: Measure, unit: str) -> str:
    """The measure's name with its unit: ``R@10`` at ``doc`` -> ``R[doc]@10``.

    Example:
        >>> from workbench.scoring.measures import parse_measure
        >>> unit_name(parse_measure("R@10"), "doc"), unit_name(parse_measure("R(rel=2)@10"), "chunk")
        ('R[doc]@10', 'R[chunk](rel=2)@10')
    """
    name = str(measure)
    return f"{measure.NAME}[{unit}]{name[len(measure.NAME):]}"


def parse_unit_name(text: str) -> tuple[Measure, str]:
    """``R[doc]@10`` -> (``R@10``, ``"doc"``); a name without ``[unit]`` has unit ``""``.

    Raises:
        ValidationError, UnknownNameError: as ``parse_measure``, or an unknown unit.
    """
    from workbench.scoring.measures import parse_measure

    m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\[([a-z]+)\](.*)$", text)
    if not m:
        return parse_measure(text), ""
    if m.group(2) not in UNITS:
        raise ValidationError(f"expected a unit of {', '.join(UNITS)} in {text!r}, found {m.group(2)!r}.")
    return parse_measure(m.group(1) + m.group(3)), m.group(2)
