"""Duplicate groups: documents that are one piece of evidence, scored once.

A *duplicate group* is a set of two or more documents of one collection
version that carry the same evidence: exact duplicates (found at ingest by
``identical_groups``: the same *normalised text*) and near-duplicates or
mirrors named in a groups file. Each group is represented by its
**canonical member**, the member first in natural id order (all-digit ids by
number, ``2`` before ``10``, then the others as strings); a document in no group represents itself.

Normalised text (``normalise_text``): title and text joined by a space,
Unicode NFKC, case-folded, every run of characters that are not letters or
digits turned into one space, stripped. So texts differing only in case,
punctuation, spacing or Unicode form are identical; an empty normalised text
is never grouped (empty documents are not duplicates of each other).

Scoring with groups (``dedupe_ranking``, ``dedupe_qrels``, ``--dedupe groups``):

* the run: each document is replaced by its group's canonical member and only
  the best-ranked member of a group is kept, in the run's order, *before* the
  cutoff k (a second member later in the list is not a second hit and takes no
  rank);
* the qrels: a group's grade is the highest grade of its judged members, so
  the relevant set, the denominator of R@k, counts groups; any member
  retrieved finds the group. ``DedupeFacts.n_relevant_merged`` counts the
  relevant (topic, document) entries that merging removed from the denominator.

Groups from several sources are merged transitively (``merge_groups``): two
groups sharing a document become one.

Source:
    ``shared/seeds/004`` ("Duplicate group: any equivalent item is retrieved;
    counting every mirror inflates denominator"); duplicate-aware evaluation
    after Bernstein & Zobel, CIKM 2005, doi:10.1145/1099554.1099733.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from workbench.ranking import natural_key
from workbench.types import Qrels

_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalise_text(title: str, text: str) -> str:
    """The normalised text duplicates are detected on (rules in the module docstring).

    Example:
        >>> normalise_text("On Flow", "The  flow, is\\tLAMINAR.") == normalise_text("on flow", "the flow is laminar")
        True
    """
    joined = unicodedata.normalize("NFKC", f"{title} {text}").casefold()
    return _NOT_WORD.sub(" ", joined).strip()


@dataclass(frozen=True)
class DuplicateGroups:
    """Duplicate groups of one collection version.

    Attributes:
        members: canonical doc id -> members (canonical first, then natural id order), groups of >= 2.
        sources: canonical doc id -> where the group came from (``identical text``, a groups file's name), sorted.
    """

    members: Mapping[str, tuple[str, ...]]
    sources: Mapping[str, tuple[str, ...]]

    @classmethod
    def of(cls, groups: Iterable[Iterable[str]], source: str = "") -> DuplicateGroups:
        """Groups from member lists (merged transitively; lists of fewer than 2 distinct ids ignored)."""
        return merge_groups([(list(g), source) for g in groups])

    @property
    def canonical(self) -> dict[str, str]:
        """doc id -> its group's canonical member, for grouped documents only."""
        return {d: c for c, ms in self.members.items() for d in ms}

    def canonical_of(self, doc_id: str) -> str:
        """The canonical member of ``doc_id``'s group, or ``doc_id`` itself."""
        for c, ms in self.members.items():
            if doc_id in ms:
                return c
        return doc_id

    def __len__(self) -> int:
        return len(self.members)

    @property
    def n_documents(self) -> int:
        """Documents in some group."""
        return sum(len(m) for m in self.members.values())


def merge_groups(groups: Iterable[tuple[Sequence[str], str]]) -> DuplicateGroups:
    """Merge (members, source) groups transitively (union-find); canonical = first in natural id order.

    Example:
        >>> g = merge_groups([(["3", "1"], "identical text"), (["3", "10"], "mirrors.tsv")])
        >>> dict(g.members), dict(g.sources)
        ({'1': ('1', '3', '10')}, {'1': ('identical text', 'mirrors.tsv')})
    """
    parent: dict[str, str] = {}
    srcs: dict[str, set[str]] = {}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for group, source in groups:
        ids = list(dict.fromkeys(group))
        if len(ids) < 2:
            continue
        for d in ids:
            parent.setdefault(d, d)
        root = find(ids[0])
        for d in ids[1:]:
            r = find(d)
            if r != root:
                parent[r] = root
        srcs.setdefault(ids[0], set()).add(source)
    by_root: dict[str, list[str]] = {}
    for d in parent:
        by_root.setdefault(find(d), []).append(d)
    src_by_root: dict[str, set[str]] = {}
    for first, s in srcs.items():
        src_by_root.setdefault(find(first), set()).update(s)
    members: dict[str, tuple[str, ...]] = {}
    sources: dict[str, tuple[str, ...]] = {}
    for root, ms in by_root.items():
        ordered = tuple(sorted(ms, key=natural_key))
        members[ordered[0]] = ordered
        sources[ordered[0]] = tuple(sorted(x for x in src_by_root.get(root, set()) if x))
    keys = sorted(members, key=natural_key)
    return DuplicateGroups({k: members[k] for k in keys}, {k: sources[k] for k in keys})


def identical_groups(texts: Mapping[str, tuple[str, str]]) -> list[list[str]]:
    """Groups of documents with identical normalised text (``normalise_text``), each of >= 2 members.

    Args:
        texts: doc_id -> (title, text).

    Returns:
        Member lists in natural id order, groups ordered by their first member.
    """
    by_text: dict[str, list[str]] = {}
    for doc_id, (title, text) in texts.items():
        norm = normalise_text(title, text)
        if norm:
            by_text.setdefault(norm, []).append(doc_id)
    groups = [sorted(ids, key=natural_key) for ids in by_text.values() if len(ids) > 1]
    return sorted(groups, key=lambda g: natural_key(g[0]))


@dataclass(frozen=True)
class DedupeFacts:
    """What applying groups changed (reports print it).

    Attributes:
        applied: whether groups were applied (``--dedupe groups``).
        n_groups: groups of the collection version.
        n_grouped_documents: documents in those groups.
        n_relevant_merged: relevant (topic, document) qrels entries merged away
            (relevant entries before minus relevant groups after), at threshold ``rel``.
        n_topics_merged: topics where at least one relevant entry was merged.
        n_run_collapsed: run lines dropped because an earlier member of their group was already placed.
    """

    applied: bool
    n_groups: int = 0
    n_grouped_documents: int = 0
    n_relevant_merged: int = 0
    n_topics_merged: int = 0
    n_run_collapsed: int = 0

    def describe(self) -> str:
        """One line for the report."""
        if not self.applied:
            return f"duplicate groups: not applied ({self.n_groups:,} group(s) known; --dedupe groups applies them)"
        return (f"duplicate groups: applied ({self.n_groups:,} group(s) over {self.n_grouped_documents:,} documents); "
                f"{self.n_relevant_merged:,} relevant item(s) merged in {self.n_topics_merged:,} topic(s); "
                f"{self.n_run_collapsed:,} run line(s) were a second member of a group")


def dedupe_qrels(qrels: Qrels, groups: DuplicateGroups, *, rel: int = 1) -> tuple[Qrels, int, int]:
    """Qrels over groups: each group's grade is the highest of its judged members.

    Returns:
        (qrels keyed by canonical member, relevant entries merged away, topics where some were).

    Example:
        >>> g = DuplicateGroups.of([["a", "b"]])
        >>> dedupe_qrels({"1": {"a": 1, "b": 2, "c": 1}}, g)
        ({'1': {'a': 2, 'c': 1}}, 1, 1)
    """
    canon = groups.canonical
    out: dict[str, dict[str, int]] = {}
    merged = topics = 0
    for topic, grades in qrels.items():
        t: dict[str, int] = {}
        for d, g in grades.items():
            c = canon.get(d, d)
            t[c] = max(t.get(c, g), g)
        before = sum(1 for g in grades.values() if g >= rel)
        after = sum(1 for g in t.values() if g >= rel)
        merged += before - after
        topics += before > after
        out[topic] = t
    return out, merged, topics


def dedupe_ranking(lists: Mapping[str, Sequence[str]], groups: DuplicateGroups) -> tuple[dict[str, list[str]], int]:
    """A ranking over groups: each document replaced by its canonical member, best-ranked member kept.

    Returns:
        (topic_id -> ids in rank order, run lines dropped as second members).

    Example:
        >>> g = DuplicateGroups.of([["a", "b"]])
        >>> dedupe_ranking({"1": ["x", "b", "y", "a"]}, g)
        ({'1': ['x', 'a', 'y']}, 1)
    """
    canon = groups.canonical
    out: dict[str, list[str]] = {}
    dropped = 0
    for topic, ids in lists.items():
        seen: set[str] = set()
        kept: list[str] = []
        for d in ids:
            c = canon.get(d, d)
            if c in seen:
                dropped += 1
                continue
            seen.add(c)
            kept.append(c)
        out[topic] = kept
    return out, dropped
