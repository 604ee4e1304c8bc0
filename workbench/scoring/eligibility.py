"""Eligibility: per-topic filters, filtered relevant sets, ineligible gold and leaks (pure).

A topic's *filter* (``scoring.filters``) says which documents its user may be
shown. Recall measured without it counts documents the user could never see;
a judged-relevant document the filter excludes is a data problem, not a miss.

Conventions (pinned by ``tests/scoring/test_eligibility.py``):

* **Filters** come from one topic metadata key (``filter`` by default;
  ``TopicFilters``). A topic without that key is *unfiltered*: every document
  is eligible, nothing is restricted, no leak is possible.
* **Filtered relevant set.** For a filtered topic, every judgment of an
  ineligible document is demoted to non-relevant before scoring
  (``restrict_qrels``: grade ``min(grade, 0)``, ``min(grade, rel - 1)`` when
  ``rel`` <= 0), so R@k, nDCG@k (ideal included), P@k and RR@k count eligible
  relevant documents only, while the document stays *judged* (Judged@k and
  the pool-novel flags do not turn a leaked, judged document into an
  unjudged one). A topic whose relevant documents are all ineligible has
  |R| = 0 and is excluded (and listed), as any topic with no relevant document.
* **Ineligible gold.** Each demoted judgment with grade >= ``rel`` is reported
  per topic (``ineligible_gold``): never silently counted as a miss. With
  ``strict`` scoring it fails validation (``check_no_ineligible_gold``).
* **Leaks.** Every ineligible document a run returns for a filtered topic is a
  leak, counted per topic and per run over the whole returned list, and within
  each cutoff k (``find_leaks``); the release gate fails on a non-zero count.

Source:
    The eligibility rules follow ``../shared/seeds/004``: "Verify relevant
    labels are themselves eligible under the frozen metadata", and "recall has
    no penalty for ... unauthorized results, so it must be paired with ...
    explicit leakage checks".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from workbench.errors import ValidationError, shown
from workbench.metadata import MetaValue
from workbench.ranking import natural_key
from workbench.scoring.filters import (
    Filter,
    MetadataColumns,
    UnknownMetadataKeyError,
    check_keys,
    eligible_by_filter,
    parse_filter,
)

DEFAULT_FILTER_KEY = "filter"
"""The topic metadata key holding a topic's eligibility filter."""


@dataclass(frozen=True)
class TopicFilters:
    """The filters of a collection's topics, read from one topic metadata key.

    Attributes:
        key: the topic metadata key (``filter`` by default).
        filters: topic_id -> Filter, for the topics that have the key (natural order).
    """

    key: str
    filters: Mapping[str, Filter]

    @property
    def digest(self) -> str:
        """sha256 over ``f"{topic_id}\\t{canonical filter}\\n"`` in topic-id string order ("" when none)."""
        if not self.filters:
            return ""
        h = hashlib.sha256()
        for t in sorted(self.filters):
            h.update(f"{t}\t{self.filters[t].canonical}\n".encode())
        return h.hexdigest()

    def __bool__(self) -> bool:
        return bool(self.filters)


def topic_filters(topic_metadata: Mapping[str, Mapping[str, MetaValue]], key: str = DEFAULT_FILTER_KEY) -> TopicFilters:
    """Parse every topic's filter.

    Args:
        topic_metadata: topic_id -> key -> value (``store.metadata.topic_metadata``).
        key: the metadata key that holds the filter text.

    Returns:
        ``TopicFilters`` (empty when no topic has ``key``).

    Raises:
        ValidationError: a filter that is not text, or does not parse (the
            message names the topic, the column and shows a caret).
    """
    out: dict[str, Filter] = {}
    for topic_id in sorted(topic_metadata, key=natural_key):
        meta = topic_metadata[topic_id]
        if key not in meta:
            continue
        text = meta[key]
        if not isinstance(text, str):
            raise ValidationError(
                f"topic {shown(topic_id)}: expected the {key!r} metadata to be a filter text, found {shown(text)}")
        try:
            out[topic_id] = parse_filter(text)
        except ValidationError as e:
            raise ValidationError(f"topic {shown(topic_id)}: {e}") from None
    return TopicFilters(key, out)


def check_filters(filters: TopicFilters, columns: MetadataColumns) -> None:
    """Refuse filters naming metadata keys the documents do not have (first offending topic named).

    Raises:
        UnknownMetadataKeyError: via ``filters.check_keys``, prefixed with the topic.
    """
    for topic_id, f in filters.filters.items():
        try:
            check_keys(f, columns.key_types)
        except UnknownMetadataKeyError as e:
            raise UnknownMetadataKeyError(e.key, e.known, f"topic {shown(topic_id)}: {e}") from None


@dataclass(frozen=True)
class Eligibility:
    """Which documents each filtered topic may be shown.

    Attributes:
        filters: the topic filters.
        eligible: topic_id -> eligible doc ids, for filtered topics only
            (topics with equal filters share one set).
        n_documents: documents of the collection version.
    """

    filters: TopicFilters
    eligible: Mapping[str, frozenset[str]]
    n_documents: int

    def is_filtered(self, topic_id: str) -> bool:
        """Whether ``topic_id`` has a filter."""
        return topic_id in self.eligible

    def is_eligible(self, topic_id: str, doc_id: str) -> bool:
        """Whether ``doc_id`` may be shown for ``topic_id`` (always True for an unfiltered topic)."""
        allowed = self.eligible.get(topic_id)
        return True if allowed is None else doc_id in allowed

    def filter_of(self, topic_id: str) -> Filter | None:
        """The topic's filter, or None for an unfiltered topic."""
        return self.filters.filters.get(topic_id)

    def n_eligible(self, topic_id: str) -> int:
        """Eligible documents of a topic (``n_documents`` when unfiltered)."""
        allowed = self.eligible.get(topic_id)
        return self.n_documents if allowed is None else len(allowed)


def eligibility(filters: TopicFilters, columns: MetadataColumns, *, check: bool = True) -> Eligibility:
    """Evaluate every topic's filter over a collection version's documents.

    Args:
        filters: the topic filters.
        columns: the collection version's document metadata (all its doc ids).
        check: refuse unknown keys first (``check_filters``).

    Raises:
        UnknownMetadataKeyError: ``check`` and a filter names a key no document has.
    """
    if check:
        check_filters(filters, columns)
    return Eligibility(filters, eligible_by_filter(filters.filters, columns), len(columns))


@dataclass(frozen=True)
class RestrictedQrels:
    """Qrels with every ineligible judgment of a filtered topic made non-relevant.

    Attributes:
        qrels: topic_id -> doc_id -> grade: eligible judgments as given, ineligible
            ones of filtered topics at ``min(grade, 0)`` (judged, never relevant);
            unfiltered topics as given.
        ineligible_gold: topic_id -> ((doc_id, original grade), ...) of the ineligible
            judgments with grade >= rel, doc ids in string order; topics with none absent.
        n_ineligible_judged: topic_id -> ineligible judgments (any grade); topics with none absent.
        rel: the relevance threshold used for ``ineligible_gold``.
    """

    qrels: Mapping[str, Mapping[str, int]]
    ineligible_gold: Mapping[str, tuple[tuple[str, int], ...]]
    n_ineligible_judged: Mapping[str, int]
    rel: int

    @property
    def n_ineligible_gold(self) -> int:
        """Judged-relevant documents that are ineligible, over all topics."""
        return sum(len(v) for v in self.ineligible_gold.values())


def restrict_qrels(qrels: Mapping[str, Mapping[str, int]], elig: Eligibility, *, rel: int = 1) -> RestrictedQrels:
    """Make the ineligible judgments of filtered topics non-relevant (they stay judged).

    Args:
        qrels: topic_id -> doc_id -> grade.
        elig: the eligibility of the collection version the run was produced over.
        rel: inclusive minimum grade of a relevant document (for ``ineligible_gold``).

    Returns:
        ``RestrictedQrels``; every topic and judgment of ``qrels`` is kept, an
        ineligible one at grade ``min(grade, 0)`` (``min(grade, rel - 1)`` when
        ``rel`` <= 0), so a topic whose relevant documents are all ineligible
        has |R| = 0 and the scorer lists it as excluded.

    Example:
        >>> from workbench.scoring.filters import parse_filter
        >>> e = Eligibility(TopicFilters("filter", {"1": parse_filter("year <= 1956")}), {"1": frozenset({"a"})}, 3)
        >>> r = restrict_qrels({"1": {"a": 1, "b": 2, "c": 0}, "2": {"b": 1}}, e)
        >>> dict(r.qrels["1"]), dict(r.qrels["2"]), dict(r.ineligible_gold), dict(r.n_ineligible_judged)
        ({'a': 1, 'b': 0, 'c': 0}, {'b': 1}, {'1': (('b', 2),)}, {'1': 2})
    """
    floor = min(0, rel - 1)
    out: dict[str, Mapping[str, int]] = {}
    gold: dict[str, tuple[tuple[str, int], ...]] = {}
    ineligible: dict[str, int] = {}
    for topic_id, grades in qrels.items():
        allowed = elig.eligible.get(topic_id)
        if allowed is None:
            out[topic_id] = grades
            continue
        out[topic_id] = {d: (g if d in allowed else min(int(g), floor)) for d, g in grades.items()}
        dropped = [(d, int(g)) for d, g in grades.items() if d not in allowed]
        if dropped:
            ineligible[topic_id] = len(dropped)
            relevant = tuple(sorted((d, g) for d, g in dropped if g >= rel))
            if relevant:
                gold[topic_id] = relevant
    return RestrictedQrels(out, gold, ineligible, rel)


def check_no_ineligible_gold(restricted: RestrictedQrels, *, what: str = "the qrels") -> None:
    """The ``--strict-eligibility`` rule: refuse qrels with judged-relevant ineligible documents.

    Raises:
        ValidationError: naming the count, the first topics and documents, and the fix.
    """
    if not restricted.ineligible_gold:
        return
    topics = sorted(restricted.ineligible_gold, key=natural_key)
    shown = "; ".join(f"topic {t}: {', '.join(d for d, _ in restricted.ineligible_gold[t][:5])}" for t in topics[:5])
    raise ValidationError(
        f"{what}: {restricted.n_ineligible_gold} judged-relevant document(s) in {len(topics)} topic(s) are ineligible "
        f"under their topic's filter ({shown}{' ...' if len(topics) > 5 else ''}); fix the filters, the document "
        "metadata or the judgments, or score without --strict-eligibility to see them reported")


@dataclass(frozen=True)
class Leaks:
    """Ineligible documents a run returned for filtered topics.

    Attributes:
        per_topic: topic_id -> ((rank, doc_id), ...) of leaked documents, rank
            order; only filtered topics with a leak.
        at_k: cutoff -> leaked documents within the top k, summed over topics.
        n_filtered_topics: filtered topics the run was checked on.
    """

    per_topic: Mapping[str, tuple[tuple[int, str], ...]]
    at_k: Mapping[int, int] = field(default_factory=dict)
    n_filtered_topics: int = 0

    @property
    def total(self) -> int:
        """Leaked documents over every returned rank."""
        return sum(len(v) for v in self.per_topic.values())

    @property
    def n_topics(self) -> int:
        """Filtered topics with at least one leak."""
        return len(self.per_topic)


def find_leaks(ranked: Mapping[str, Sequence[str]], elig: Eligibility, cutoffs: Iterable[int] = ()) -> Leaks:
    """Count the ineligible documents returned for filtered topics.

    Args:
        ranked: topic_id -> doc ids in rank order (rank 1 first).
        elig: the eligibility.
        cutoffs: the k at which ``at_k`` counts leaks within the top k.

    Returns:
        ``Leaks``.

    Example:
        >>> from workbench.scoring.filters import parse_filter
        >>> e = Eligibility(TopicFilters("filter", {"1": parse_filter("year <= 1956")}), {"1": frozenset({"a"})}, 3)
        >>> lk = find_leaks({"1": ["b", "a", "c"], "2": ["z"]}, e, [1, 2])
        >>> dict(lk.per_topic), dict(lk.at_k), lk.total
        ({'1': ((1, 'b'), (3, 'c'))}, {1: 1, 2: 1}, 2)
    """
    per_topic: dict[str, tuple[tuple[int, str], ...]] = {}
    ks = sorted(set(cutoffs))
    at_k = {k: 0 for k in ks}
    n_filtered = 0
    for topic_id in sorted(ranked, key=natural_key):
        allowed = elig.eligible.get(topic_id)
        if allowed is None:
            continue
        n_filtered += 1
        bad = tuple((r, d) for r, d in enumerate(ranked[topic_id], 1) if d not in allowed)
        if bad:
            per_topic[topic_id] = bad
            for k in ks:
                at_k[k] += sum(1 for r, _ in bad if r <= k)
    return Leaks(per_topic, at_k, n_filtered)


@dataclass(frozen=True)
class RunEligibility:
    """Everything eligibility adds to one run's score report.

    Attributes:
        filter_key: the topic metadata key of the filters.
        filters_digest: ``TopicFilters.digest``.
        collection_version: the version whose document metadata decided eligibility.
        n_filtered_topics: topics with a filter.
        restricted: the filtered qrels, ineligible gold and removed counts.
        leaks: the run's leaks.
        filter_mode: how the run was produced (``pre``, ``post``, or "" when unknown/unfiltered).
        n_short: post-filtered topics that came back with fewer than ``depth`` results.
        depth: the run's depth (0 when unknown).
    """

    filter_key: str
    filters_digest: str
    collection_version: str
    n_filtered_topics: int
    restricted: RestrictedQrels
    leaks: Leaks
    filter_mode: str = ""
    n_short: int = 0
    depth: int = 0

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (the ``eligibility`` block of ``score --format json``)."""
        return {
            "filter_key": self.filter_key,
            "filters_sha256": self.filters_digest,
            "collection_version": self.collection_version,
            "n_filtered_topics": self.n_filtered_topics,
            "filter_mode": self.filter_mode,
            "topics_short": self.n_short,
            "depth": self.depth,
            "ineligible_gold": {
                "total": self.restricted.n_ineligible_gold,
                "n_topics": len(self.restricted.ineligible_gold),
                "topics": {t: [list(x) for x in v] for t, v in self.restricted.ineligible_gold.items()},
            },
            "ineligible_judged": sum(self.restricted.n_ineligible_judged.values()),
            "leaks": {
                "total": self.leaks.total,
                "n_topics": self.leaks.n_topics,
                "at_k": {str(k): n for k, n in self.leaks.at_k.items()},
                "topics": {t: [list(x) for x in v] for t, v in self.leaks.per_topic.items()},
            },
        }
