"""Frozen records and the canonical in-memory shapes shared by every layer.

The two mapping shapes are the dict-of-dict forms that trec_eval bindings
(pytrec_eval), ir_measures and ranx all accept, so the pure layer never
converts between representations:

* ``Qrels = Mapping[str, Mapping[str, int]]``: topic_id -> doc_id -> grade.
* ``Run = Mapping[str, Mapping[str, float]]``: topic_id -> doc_id -> score.

Identifiers (topic_id, doc_id, run names) are always ``str``; they are never
cast to ``int`` (``"007"`` and ``"7"`` are different topics).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Qrels = Mapping[str, Mapping[str, int]]
"""topic_id -> doc_id -> grade (integer; negative grades are never relevant)."""

Run = Mapping[str, Mapping[str, float]]
"""topic_id -> doc_id -> score (finite float; higher is better)."""

TopicStatus = Literal["ok", "empty", "error"]
"""Per-topic status of a stored run: results, no results, or the retriever failed."""


@dataclass(frozen=True, slots=True)
class Topic:
    """An information need.

    Attributes:
        topic_id: identifier as written in the qrels (string, never cast).
        title: the short query text sent to retrievers by default.
        description: optional longer statement of the need ("" when absent).
        narrative: optional statement of what counts as relevant ("" when absent).
    """

    topic_id: str
    title: str
    description: str = ""
    narrative: str = ""

    @property
    def query(self) -> str:
        """The text sent to a retriever: the title, else the description."""
        return self.title or self.description


@dataclass(frozen=True, slots=True)
class Document:
    """A document of a collection.

    Attributes:
        doc_id: identifier (string, never cast).
        title: title ("" when absent).
        text: body text ("" allowed: Cranfield has two documents with no text).
    """

    doc_id: str
    title: str
    text: str

    @property
    def content(self) -> str:
        """Title and text joined by a blank line, as retrievers index them."""
        if self.title and self.text:
            return f"{self.title}\n\n{self.text}"
        return self.title or self.text


@dataclass(frozen=True, slots=True)
class ScoredDoc:
    """One row of a ranked list, after ordering by ``workbench.ranking``.

    Attributes:
        doc_id: document identifier.
        score: retrieval score (finite).
        rank: 1-based position under the canonical ordering.
    """

    doc_id: str
    score: float
    rank: int


@dataclass(frozen=True, slots=True)
class Qrel:
    """One qrels line: the grade of a document for a topic."""

    topic_id: str
    doc_id: str
    grade: int


@dataclass(frozen=True, slots=True)
class Judgment:
    """One assessor's act of grading a document for a topic (append-only).

    Attributes:
        topic_id: topic judged.
        doc_id: document judged.
        assessor: user name of the assessor.
        grade: integer grade of the rubric, or ``None`` when marked unsure.
        unsure: True when the assessor could not decide (grade may be None).
        note: free text ("" when none).
        duration_ms: time spent on the document before saving, milliseconds.
    """

    topic_id: str
    doc_id: str
    assessor: str
    grade: int | None
    unsure: bool = False
    note: str = ""
    duration_ms: int = 0


@dataclass(frozen=True, slots=True)
class TopicMetric:
    """A measure's value for one topic, with the evidence behind it.

    Follows ir_measures' ``CwlMetric`` precedent: the value is reconstructible
    from ``numerator / denominator`` where the measure is a ratio of counts.

    Attributes:
        topic_id: the topic.
        measure: canonical measure name (e.g. ``"R@100"``).
        value: full-precision value; rounding happens only in ``reports``.
        numerator: the count or gain sum over the cutoff (e.g. relevant hits).
        denominator: what the numerator is divided by (e.g. |R|, k, IDCG).
    """

    topic_id: str
    measure: str
    value: float
    numerator: float
    denominator: float


@dataclass(frozen=True, slots=True)
class RunInfo:
    """Provenance of a stored run.

    Attributes:
        name: unique run name (also the TREC run tag on export).
        kind: system kind: ``bm25``, ``dense``, ``fusion`` or ``imported``.
        params: retriever parameters (JSON-serialisable), e.g. ``{"k1": 0.9}``.
        depth: number of documents retrieved per topic.
        collection: collection name.
        collection_version: content hash of the collection version retrieved over.
        description: free-form text.
    """

    name: str
    kind: str
    params: Mapping[str, object] = field(default_factory=dict)
    depth: int = 1000
    collection: str = ""
    collection_version: str = ""
    description: str = ""
