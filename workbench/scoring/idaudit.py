"""Identifier audit: do the qrels' and the runs' document ids exist in the collection version?

A corpus migration can prefix ids, change their case or their zero padding and
keep the texts; every judged-relevant document then looks "not retrieved" and a
sudden zero reads as a retrieval collapse. So before scoring, the audit
measures, against the collection version the run was produced over:

* **relevant coverage**: the share of judged-relevant (topic, doc) ids of the
  evaluated topics whose doc_id is a document of the version (default
  threshold 100%: a missing relevant document is a data problem, not a miss);
* **run coverage**: the share of distinct doc_ids the run returned that are
  documents of the version.

Every missing id is listed; for the first ``limit`` of them the audit looks for
*near misses*: collection ids that differ from it only by these kinds of
difference (both sides normalised the same way):

* ``case``: Unicode case folding (``D12`` ~ ``d12``);
* ``zeros``: zero padding, leading zeros of every digit run dropped (``doc007`` ~ ``doc7``);
* ``prefix``: everything before the first digit dropped (``msmarco_31`` ~ ``31``, ``doc:42`` ~ ``D-42``).

A near miss is labelled with the fewest kinds that explain it, joined by ``+`` in
that order: ``case``, ``zeros``, ``prefix``, ``case+zeros`` (``D007`` ~ ``d7``),
``case+prefix``, ``zeros+prefix`` (``MARCO_00042`` ~ ``42``) or
``case+zeros+prefix`` (``MS_07A`` ~ ``7a``); a missing id's near misses are the
collection ids of its best label (fewest kinds, then that order). A missing id that
has near misses is almost certainly an identifier mismatch, not a missing document:
the report says which kinds of difference it has.

Source:
    The audit of joins between labels and results in the recall-testing
    design note (../shared/seeds/004_f124302079e96b46.txt, "Validate the
    evaluator"): "Missing gold items should fail data validation, not count as
    model misses."
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from workbench.ranking import natural_key

_DIGITS = re.compile(r"\d+")
_PREFIX = re.compile(r"^\D+")

NEAR_MISS_LIMIT = 50
"""Missing ids examined for near misses (the count of missing ids is always exact)."""


def fold_case(doc_id: str) -> str:
    """``case`` rule: Unicode case folding.

    Example:
        >>> fold_case("DOC-12")
        'doc-12'
    """
    return doc_id.casefold()


def strip_zeros(doc_id: str) -> str:
    """``zeros`` rule: leading zeros of every digit run dropped (a run of zeros keeps one).

    Example:
        >>> strip_zeros("doc007-0010"), strip_zeros("000")
        ('doc7-10', '0')
    """
    return _DIGITS.sub(lambda m: m.group().lstrip("0") or "0", doc_id)


def drop_prefix(doc_id: str) -> str:
    """``prefix`` kind: everything before the first digit dropped (an id without digits is kept).

    Example:
        >>> drop_prefix("MARCO_00042"), drop_prefix("D-42"), drop_prefix("abc")
        ('00042', '42', 'abc')
    """
    return _PREFIX.sub("", doc_id) or doc_id


def strip_prefix(doc_id: str) -> str:
    """All three kinds at once: ``prefix``, then ``case`` and ``zeros`` (the key near misses are looked up by).

    An id without digits is only case-folded.

    Example:
        >>> strip_prefix("MARCO_00042"), strip_prefix("D-42"), strip_prefix("abc")
        ('42', '42', 'abc')
    """
    return strip_zeros(fold_case(drop_prefix(doc_id)))


RULES: dict[str, Callable[[str], str]] = {
    "case": fold_case,
    "zeros": strip_zeros,
    "prefix": drop_prefix,
}
"""The kinds of difference a near miss may have, in label order: name -> normalisation."""

LABELS: tuple[tuple[str, ...], ...] = (
    ("case",), ("zeros",), ("prefix",),
    ("case", "zeros"), ("case", "prefix"), ("zeros", "prefix"),
    ("case", "zeros", "prefix"),
)
"""The combinations of kinds, in the order a near miss's label is chosen (fewest kinds first)."""


def _normalised(doc_id: str, kinds: tuple[str, ...]) -> str:
    """``doc_id`` with the kinds applied in the order prefix, case, zeros (as ``strip_prefix``)."""
    for kind in ("prefix", "case", "zeros"):
        if kind in kinds:
            doc_id = RULES[kind](doc_id)
    return doc_id


def difference(missing: str, match: str) -> str | None:
    """The label of the fewest kinds of difference between two ids (``case+zeros``), or None when none explains it.

    Example:
        >>> difference("D007", "d7"), difference("D12", "d12"), difference("MS_07A", "7a"), difference("a1", "b2")
        ('case+zeros', 'case', 'case+zeros+prefix', None)
    """
    for kinds in LABELS:
        if _normalised(missing, kinds) == _normalised(match, kinds):
            return "+".join(kinds)
    return None


@dataclass(frozen=True)
class NearMiss:
    """A missing id and the collection ids that match it under a rule.

    Attributes:
        doc_id: the id that is not in the collection version.
        rule: the kinds of difference of its closest matches: ``case``, ``zeros``, ``prefix`` or a
            combination joined by ``+`` (``case+zeros``), as ``difference`` labels them.
        matches: the collection ids with that label (up to 5, natural order).
    """

    doc_id: str
    rule: str
    matches: tuple[str, ...]


@dataclass(frozen=True)
class IdCoverage:
    """How many of a set of ids are documents of the collection version.

    Attributes:
        what: ``relevant`` (judged-relevant ids of the evaluated topics) or
            ``run <name>`` (distinct ids the run returned).
        n_ids: ids checked (relevant: (topic, doc) pairs; run: distinct doc ids).
        n_present: of those, present in the version.
        missing: the distinct missing doc ids, natural order.
        near_misses: near misses of the first ``NEAR_MISS_LIMIT`` missing ids.
        examined: missing ids examined for near misses.
    """

    what: str
    n_ids: int
    n_present: int
    missing: tuple[str, ...]
    near_misses: tuple[NearMiss, ...]
    examined: int

    @property
    def share(self) -> float:
        """n_present / n_ids (1.0 when there is nothing to check)."""
        return self.n_present / self.n_ids if self.n_ids else 1.0


@dataclass(frozen=True)
class IdAudit:
    """The identifier audit of one scoring action.

    Attributes:
        collection: the collection name.
        collection_version: the version audited against.
        relevant: coverage of the judged-relevant ids.
        runs: coverage of each run's ids, in run order.
    """

    collection: str
    collection_version: str
    relevant: IdCoverage
    runs: tuple[IdCoverage, ...]


def coverage(
    what: str,
    ids: Iterable[str],
    missing: Collection[str],
    collection_ids: Callable[[], Iterable[str]],
    *,
    limit: int = NEAR_MISS_LIMIT,
) -> IdCoverage:
    """The coverage of ``ids`` given the ones that are missing, with near misses.

    Args:
        what: label (``relevant`` or ``run <name>``).
        ids: every id checked (repeats count: a relevant id of two topics counts twice).
        missing: the distinct ids of ``ids`` that are not in the version.
        collection_ids: returns the version's doc ids; called only when something
            is missing (it can be large).
        limit: missing ids examined for near misses.

    Returns:
        The ``IdCoverage``.

    Example:
        >>> c = coverage("relevant", ["d1", "D2", "x"], {"D2", "x"}, lambda: ["d1", "d2", "d3"])
        >>> c.share, c.missing, [(n.doc_id, n.rule, n.matches) for n in c.near_misses]
        (0.3333333333333333, ('D2', 'x'), [('D2', 'case', ('d2',))])
    """
    gone = set(missing)
    n_ids = n_present = 0
    for d in ids:
        n_ids += 1
        if d not in gone:
            n_present += 1
    shown = tuple(sorted(gone, key=natural_key))
    examined = shown[:limit]
    near = near_misses(examined, collection_ids()) if examined else ()
    return IdCoverage(what, n_ids, n_present, shown, near, len(examined))


def near_misses(missing: Iterable[str], collection_ids: Iterable[str]) -> tuple[NearMiss, ...]:
    """Near misses of ``missing`` among ``collection_ids`` (see the module docstring for the kinds and labels).

    Each collection id is normalised once (``strip_prefix``: all three kinds); the ones that meet a missing id
    there are labelled with ``difference``, and the missing id keeps those of its best label.

    Args:
        missing: ids not in the collection.
        collection_ids: the collection version's ids.

    Returns:
        One ``NearMiss`` per missing id that has one, in the order of ``missing``.

    Example:
        >>> [(n.doc_id, n.rule, n.matches) for n in near_misses(["D1", "doc07", "MS_3", "D007", "zz"],
        ...                                                    ["d1", "doc7", "3", "d7"])]
        [('D1', 'case', ('d1',)), ('doc07', 'zeros', ('doc7',)), ('MS_3', 'prefix', ('3',)), ('D007', 'case+zeros', ('d7',))]
    """
    wanted = list(dict.fromkeys(missing))
    if not wanted:
        return ()
    by_key: dict[str, list[str]] = {}
    for m in wanted:
        by_key.setdefault(strip_prefix(m), []).append(m)
    found: dict[str, dict[str, list[str]]] = {}  # missing id -> label -> collection ids
    for c in collection_ids:
        for m in by_key.get(strip_prefix(c), ()):
            label = difference(m, c) if m != c else None
            if label is not None:
                found.setdefault(m, {}).setdefault(label, []).append(c)
    order = {"+".join(kinds): i for i, kinds in enumerate(LABELS)}
    out = []
    for m in wanted:
        if m in found:
            label = min(found[m], key=order.__getitem__)
            out.append(NearMiss(m, label, tuple(sorted(found[m][label], key=natural_key)[:5])))
    return tuple(out)


def relevant_ids(relevant: Mapping[str, Collection[str]]) -> list[str]:
    """Flatten topic_id -> relevant doc ids into the list of doc ids (one per pair).

    Example:
        >>> relevant_ids({"1": {"a", "b"}, "2": {"a"}})
        ['a', 'b', 'a']
    """
    return [d for t in sorted(relevant, key=natural_key) for d in sorted(relevant[t])]
