"""Miss causes: why a relevant document is not in a run's top k (pure).

A *miss* is a (topic, relevant document) pair of the qrels that a run did not
return within the cutoff k. ``categorise`` takes the evidence the store holds
about one miss (``MissEvidence``) and assigns it exactly one cause, the first
rule that holds in this order of precedence:

1. ``not indexed``: the document is not in the collection version the run was
   produced over, or its text is empty (no retriever could return it);
2. ``filtered out``: the topic has an eligibility filter and the document is
   not eligible under it (a filtered run is right not to return it);
3. ``chunk boundary`` (chunk runs only): the document was split into two or
   more chunks, none of them ranks within k, and the analysed query terms the
   document holds are spread over several chunks so that no single chunk holds
   them all (the evidence is split by the chunk boundaries); the chunks' ranks
   are kept;
4. ``found deeper``: the run returned the document below k, within its depth
   (the rank is kept);
5. ``vocabulary mismatch``: the document holds none of the query's analysed
   terms (``pooling.tokenize``: the run's own analyser for BM25 runs); the
   terms of both sides are kept;
6. ``beyond depth``: the run did not return the document, which shares
   analysed query terms with the query, and the run's list for the topic is
   full (it returned its whole depth D): the document ranks below D. When the
   run's retriever can be rebuilt from the store (a BM25 run's recorded
   parameters over its collection version), the document is re-scored and its
   rank beyond D is kept (``deeper_rank``); a re-scored rank within D means the
   stored run is not what its retriever gives, which no rule explains (left
   to the residue);
7. ``uncategorised``: none of the above (e.g. a topic for which the run
   returned fewer than D documents, yet not this one, which shares query
   terms). This is the *residue*.

The order puts what makes a retrieval impossible (1, 2) before what a
retriever did with a retrievable document (3, 4), and a lexical diagnosis (5)
after the rank evidence, since a document the run found deeper needs no
vocabulary explanation; a document that shares terms but was cut off by the
run's depth (6) comes last. "Depth" is the pooling sense: the number of
results per topic a run was produced at (trec_eval's and TREC's run depth). A lead can set or override any miss's cause with a
note (``LeadCause``); ``resolve`` applies the lead's decisions over the rule's,
and offers the decisions made on identical (topic, document) misses of other
runs as *suggestions*, which change no count until a lead accepts them.

A miss list is *closed* when its residue (misses whose effective cause is
``uncategorised``) is 0; the counts per cause always add up to the total
(``MissCounts``).

Example:
    >>> e = MissEvidence("1", "d7", grade=2, rank=34, depth=100, indexed=True)
    >>> categorise(e, k=20).cause, categorise(e, k=20).detail
    ('found deeper', 'rank 34 (depth 100)')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from workbench.errors import UnknownNameError, ValidationError
from workbench.ranking import natural_key
from workbench.scoring.evaluate import RelevantDoc

Cause = Literal["not indexed", "filtered out", "chunk boundary", "found deeper", "vocabulary mismatch",
                "beyond depth", "uncategorised"]
"""A miss cause; see the module docstring for each rule."""

CAUSES: tuple[Cause, ...] = get_args(Cause)
"""Every cause, in order of precedence (the rules are tried in this order)."""

RESIDUE: Cause = "uncategorised"
"""The cause no rule explains: the residue of a miss list."""

RULES_VERSION = "misses-3"
"""Version of the rules above; stored with every categorised list (a change of rules makes a new list)."""

Source = Literal["rule", "lead"]

DOC_TERMS_SHOWN = 12
"""Document terms shown in a vocabulary-mismatch detail (all are kept in the evidence)."""


def check_cause(name: str) -> Cause:
    """``name`` as a ``Cause``.

    Raises:
        UnknownNameError: not one of ``CAUSES`` (the message lists them).
    """
    if name not in CAUSES:
        raise UnknownNameError("miss cause", name, list(CAUSES))
    return name


@dataclass(frozen=True, slots=True)
class ChunkHit:
    """One chunk of a missed document in a chunk run.

    Attributes:
        chunk_id: the chunk.
        rank: its 1-based rank in the run (within the run's depth), None when not returned.
        terms: the analysed query terms the chunk holds.
    """

    chunk_id: str
    rank: int | None
    terms: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class MissEvidence:
    """What the store holds about one miss.

    Attributes:
        topic_id: the topic.
        doc_id: the relevant document.
        grade: its grade in the qrels.
        rank: 1-based rank in the run, None when the run did not return it (a miss has rank None or > k).
        depth: the run's depth (results per topic it was produced at).
        indexed: the document is in the run's collection version.
        empty_text: the document's title and text are empty.
        query_terms: the distinct analysed query terms, in query order.
        doc_terms: the distinct analysed document terms, most frequent first (ties by term).
        eligible: eligibility under the topic's filter; None when the topic has no filter.
        filter_text: the topic's filter ("" when none).
        chunks: the document's chunks in a chunk run (None: not a chunk run).
        collection_version: the run's collection version (for the detail).
        n_returned: results the run returned for the topic, at its own unit (None: unknown).
        deeper_rank: the document's rank when re-scored by the run's retriever
            over the whole collection version, at the run's unit (a chunk run:
            its best chunk's); None when not re-scored or when the retriever
            does not retrieve it at all.
        rescored_by: how it was re-scored ("" when not), e.g. ``bm25 (bm25s, k1=1.2, b=0.75, okapi)``.
    """

    topic_id: str
    doc_id: str
    grade: int
    rank: int | None
    depth: int
    indexed: bool
    empty_text: bool = False
    query_terms: tuple[str, ...] = ()
    doc_terms: tuple[str, ...] = ()
    eligible: bool | None = None
    filter_text: str = ""
    chunks: tuple[ChunkHit, ...] | None = None
    collection_version: str = ""
    n_returned: int | None = None
    deeper_rank: int | None = None
    rescored_by: str = ""

    @property
    def shared_terms(self) -> tuple[str, ...]:
        """The analysed query terms the document holds, in query order."""
        doc = set(self.doc_terms)
        return tuple(t for t in self.query_terms if t in doc)


@dataclass(frozen=True, slots=True)
class Categorised:
    """A miss with the cause the rules assign.

    Attributes:
        evidence: the evidence.
        cause: the rule's cause.
        detail: the evidence behind it, in words (the rank, the terms, the chunk ranks, ...).
    """

    evidence: MissEvidence
    cause: Cause
    detail: str


def _split_evidence(chunks: Sequence[ChunkHit]) -> bool:
    held = frozenset().union(*(c.terms for c in chunks))
    return bool(held) and all(c.terms != held for c in chunks)


def _chunk_ranks(chunks: Sequence[ChunkHit]) -> str:
    return ", ".join(f"{c.chunk_id}: {'-' if c.rank is None else c.rank}" for c in chunks)


def categorise(evidence: MissEvidence, k: int) -> Categorised:
    """The cause of one miss at cutoff k (the first rule of the module docstring that holds).

    Args:
        evidence: the miss's evidence.
        k: the cutoff, >= 1.

    Returns:
        The ``Categorised`` miss: cause and detail.

    Raises:
        ValidationError: k < 1, or the document ranks within k (it is not a miss).
    """
    e = evidence
    if k < 1:
        raise ValidationError(f"expected a cutoff k >= 1, found {k}")
    if e.rank is not None and e.rank <= k:
        raise ValidationError(f"topic {e.topic_id} document {e.doc_id} ranks {e.rank}, within k = {k}: not a miss")
    if not e.indexed:
        where = f" {e.collection_version[:12]}" if e.collection_version else ""
        return Categorised(e, "not indexed", f"not in the run's collection version{where}")
    if e.empty_text:
        return Categorised(e, "not indexed", "the document's text is empty")
    if e.eligible is False:
        return Categorised(e, "filtered out", f"ineligible under the topic's filter {e.filter_text}".rstrip())
    if (e.chunks is not None and len(e.chunks) >= 2 and all(c.rank is None or c.rank > k for c in e.chunks)
            and _split_evidence(e.chunks)):
        return Categorised(e, "chunk boundary", f"query terms split over {len(e.chunks)} chunks, ranks "
                                                f"{_chunk_ranks(e.chunks)}")
    if e.rank is not None:
        return Categorised(e, "found deeper", f"rank {e.rank} (depth {e.depth})")
    if not e.shared_terms:
        shown = " ".join(e.doc_terms[:DOC_TERMS_SHOWN])
        more = f" ... ({len(e.doc_terms)} terms)" if len(e.doc_terms) > DOC_TERMS_SHOWN else ""
        query = " ".join(e.query_terms) if e.query_terms else "(no analysed term)"
        return Categorised(e, "vocabulary mismatch", f"query: {query}; document: {shown}{more}")
    shares = f"shares {len(e.shared_terms)} of {len(e.query_terms)} query terms: {' '.join(e.shared_terms)}"
    if e.rescored_by and e.deeper_rank is not None and e.deeper_rank <= e.depth:
        return Categorised(e, RESIDUE, f"not returned within depth {e.depth}, yet re-scored by {e.rescored_by} it "
                                       f"ranks {e.deeper_rank}: the stored run is not its retriever's; {shares}")
    if e.rescored_by and e.deeper_rank is not None:
        return Categorised(e, "beyond depth", f"rank {e.deeper_rank} beyond depth {e.depth} (re-scored by "
                                              f"{e.rescored_by}); {shares}")
    if e.n_returned is not None and e.n_returned >= e.depth > 0:
        how = (f"; {e.rescored_by} does not retrieve it" if e.rescored_by else "")
        return Categorised(e, "beyond depth", f"not in the run's top {e.depth} (the run returned its full depth"
                                              f"{how}); {shares}")
    short = (f" (the run returned {e.n_returned} of its depth {e.depth} for this topic)"
             if e.n_returned is not None else "")
    return Categorised(e, RESIDUE, f"not returned within depth {e.depth}{short}; {shares}")


@dataclass(frozen=True, slots=True)
class LeadCause:
    """A lead's cause for a miss (one append-only row of the store).

    Attributes:
        topic_id: the topic.
        doc_id: the document.
        cause: the cause set.
        note: why (required, non-empty).
        lead: the lead.
        run_name: the run whose miss it was set on.
        qrels_version: the qrels version of that miss list.
        decision_id: the row id (later rows win).
    """

    topic_id: str
    doc_id: str
    cause: Cause
    note: str
    lead: str
    run_name: str
    qrels_version: str
    decision_id: int = 0


@dataclass(frozen=True, slots=True)
class MissRow:
    """A miss with its rule cause, the effective cause and where it came from.

    Attributes:
        categorised: the rule's cause and detail.
        cause: the effective cause (the lead's when set, else the rule's).
        source: ``rule`` or ``lead``.
        decision: the lead's decision on this run's miss (None when none).
        suggestion: a lead's decision on the identical (topic, document) miss of
            another run (None when none, or when this miss has its own decision).
    """

    categorised: Categorised
    cause: Cause
    source: Source
    decision: LeadCause | None = None
    suggestion: LeadCause | None = None

    @property
    def evidence(self) -> MissEvidence:
        """The miss's evidence."""
        return self.categorised.evidence


@dataclass(frozen=True, slots=True)
class MissCounts:
    """Misses per effective cause.

    Attributes:
        per_cause: cause -> count, every cause of ``CAUSES`` present (0 when none), in precedence order.
        by_lead: misses whose cause a lead set.
        suggested: misses with a suggestion inherited from another run.
    """

    per_cause: Mapping[Cause, int]
    by_lead: int = 0
    suggested: int = 0

    @property
    def total(self) -> int:
        """All misses (the sum of ``per_cause``)."""
        return sum(self.per_cause.values())

    @property
    def residue(self) -> int:
        """Misses whose effective cause is ``uncategorised``."""
        return self.per_cause[RESIDUE]

    @property
    def closed(self) -> bool:
        """True when the residue is 0 (an empty list is closed)."""
        return self.residue == 0


def count(rows: Iterable[MissRow]) -> MissCounts:
    """Count misses per effective cause (every cause present, 0 when none)."""
    rows = list(rows)
    c = Counter(r.cause for r in rows)
    return MissCounts({cause: c.get(cause, 0) for cause in CAUSES},
                      by_lead=sum(1 for r in rows if r.source == "lead"),
                      suggested=sum(1 for r in rows if r.suggestion is not None))


ItemKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class MissList:
    """A run's categorised misses at cutoff k against a qrels version.

    Attributes:
        run_name: the run.
        qrels_version: the qrels version (name).
        k: the cutoff.
        rows: one per miss, topic then grade order as ``Evaluation.misses``.
        counts: per effective cause (adds up to ``len(rows)``).
        analyser: the analyser settings used for the query and document terms.
        extra: other lineage (collection version, rules version, list id, ...).
    """

    run_name: str
    qrels_version: str
    k: int
    rows: tuple[MissRow, ...]
    counts: MissCounts
    analyser: Mapping[str, object] = field(default_factory=dict)
    extra: Mapping[str, object] = field(default_factory=dict)

    def with_cause(self, cause: Cause) -> list[MissRow]:
        """The misses whose effective cause is ``cause``."""
        return [r for r in self.rows if r.cause == cause]


def resolve(
    categorised: Sequence[Categorised],
    decisions: Mapping[ItemKey, LeadCause],
    inherited: Mapping[ItemKey, LeadCause] | None = None,
) -> list[MissRow]:
    """Apply the lead's decisions over the rules' causes; attach inherited suggestions.

    Args:
        categorised: the rule-categorised misses of one run.
        decisions: (topic_id, doc_id) -> the latest lead decision on this run's
            miss (against the same qrels version).
        inherited: (topic_id, doc_id) -> the latest lead decision on the same
            (topic, document) miss of another run; offered as a suggestion only.

    Returns:
        One ``MissRow`` per categorised miss, in input order.
    """
    out: list[MissRow] = []
    for c in categorised:
        key = (c.evidence.topic_id, c.evidence.doc_id)
        d = decisions.get(key)
        if d is not None:
            out.append(MissRow(c, d.cause, "lead", decision=d))
        else:
            s = (inherited or {}).get(key)
            out.append(MissRow(c, c.cause, "rule", suggestion=s))
    return out


def evidence_json(e: MissEvidence) -> dict[str, object]:
    """A miss's evidence as a JSON object (``miss_entries.evidence``)."""
    return {
        "topic_id": e.topic_id, "doc_id": e.doc_id, "grade": e.grade, "rank": e.rank, "depth": e.depth,
        "indexed": e.indexed, "empty_text": e.empty_text, "query_terms": list(e.query_terms),
        "doc_terms": list(e.doc_terms), "eligible": e.eligible, "filter_text": e.filter_text,
        "chunks": None if e.chunks is None else [[c.chunk_id, c.rank, sorted(c.terms)] for c in e.chunks],
        "collection_version": e.collection_version, "n_returned": e.n_returned, "deeper_rank": e.deeper_rank,
        "rescored_by": e.rescored_by,
    }


def evidence_from_json(d: Mapping[str, Any]) -> MissEvidence:
    """Inverse of ``evidence_json``."""
    chunks = d.get("chunks")
    return MissEvidence(
        str(d["topic_id"]), str(d["doc_id"]), int(d["grade"]), None if d["rank"] is None else int(d["rank"]),
        int(d["depth"]), bool(d["indexed"]), bool(d.get("empty_text", False)), tuple(d.get("query_terms", ())),
        tuple(d.get("doc_terms", ())), d.get("eligible"), str(d.get("filter_text", "")),
        None if chunks is None else tuple(ChunkHit(str(c), None if r is None else int(r), frozenset(t))
                                          for c, r, t in chunks),
        str(d.get("collection_version", "")),
        None if d.get("n_returned") is None else int(d["n_returned"]),
        None if d.get("deeper_rank") is None else int(d["deeper_rank"]), str(d.get("rescored_by", "")))


def with_ineligible(
    misses: Sequence[RelevantDoc],
    ineligible_gold: Mapping[str, Sequence[tuple[str, int]]],
    ranks: Mapping[str, Mapping[str, int]],
    k: int,
) -> tuple[list[RelevantDoc], int]:
    """Add the judged-relevant documents a topic's filter excludes to a run's misses.

    Filtered scoring (``scoring.eligibility.restrict_qrels``) takes ineligible
    judged-relevant documents out of the relevant sets, so the scorer's misses
    never hold them; a miss list must (their cause is ``filtered out``), or the
    list would drop them silently.

    Args:
        misses: the scorer's misses (over the eligible relevant documents), topic then grade order.
        ineligible_gold: topic_id -> ((doc_id, grade), ...) the filters exclude
            (``RestrictedQrels.ineligible_gold``).
        ranks: topic_id -> doc_id -> 1-based rank in the run (documents not returned absent).
        k: the cutoff, >= 1.

    Returns:
        (the misses with each ineligible document the run did not return within k
        added after its topic's other misses, by grade descending then doc id;
        topics in natural order, the input order kept within a topic, and the
        number of ineligible documents the run returned within k: leaks, which
        are not misses).

    Example:
        >>> with_ineligible([RelevantDoc("1", "d4", 2, None)], {"1": (("d1", 1),)}, {"1": {"d1": 40}}, 20)
        ([RelevantDoc(topic_id='1', doc_id='d4', grade=2, rank=None), RelevantDoc(topic_id='1', doc_id='d1', grade=1, rank=40)], 0)
    """
    added: list[RelevantDoc] = []
    within = 0
    for topic_id, gold in ineligible_gold.items():
        topic_ranks = ranks.get(topic_id, {})
        for doc_id, grade in sorted(gold, key=lambda g: (-g[1], natural_key(g[0]))):
            rank = topic_ranks.get(doc_id)
            if rank is not None and rank <= k:
                within += 1
                continue
            added.append(RelevantDoc(topic_id, doc_id, grade, rank))
    order = {t: i for i, t in enumerate(sorted({m.topic_id for m in [*misses, *added]}, key=natural_key))}
    merged = sorted([*misses, *added], key=lambda m: order[m.topic_id])  # stable: input order within a topic
    return merged, within


def categorise_all(evidence: Iterable[MissEvidence], k: int) -> list[Categorised]:
    """``categorise`` each miss, in input order.

    Raises:
        ValidationError: as ``categorise``.
    """
    return [categorise(e, k) for e in evidence]


def row_dict(run_name: str, k: int, r: MissRow) -> dict[str, Any]:
    """One miss as a flat record (the columns of csv/tsv/jsonl and the Scoreboard's list)."""
    e, s, d = r.evidence, r.suggestion, r.decision
    return {"run": run_name, "topic_id": e.topic_id, "doc_id": e.doc_id, "grade": e.grade, "rank": e.rank, "k": k,
            "cause": r.cause, "source": r.source, "rule_cause": r.categorised.cause, "detail": r.categorised.detail,
            "note": d.note if d is not None else "", "suggested_cause": s.cause if s is not None else "",
            "suggested_from": f"{s.run_name}: {s.note}" if s is not None else ""}
