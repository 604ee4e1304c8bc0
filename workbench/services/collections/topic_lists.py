"""Topic lists (the files of ``workbench topics set``) checked against the store's collections.

A topic set names topics of a collection; a list of ids no collection has (a typo,
the wrong file, ids of another project) would be saved and then silently select
nothing. So, before a set is saved, its ids are checked:

* with ``--collection NAME``: every id must be a topic of NAME;
* without it: against the store's collections. The collection holding every id is
  the set's collection (recorded with it); when several hold them all (e.g. a
  collection and its chunked copy, which share the topics) the set is tied to none
  and the report says which they are; when none does, the ids the collection
  holding most of them lacks are refused; a store without collections checks nothing.

Refusals name the file and the line of the first unknown id, with the unknown ids
(cut, as every echoed id).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import InputFormatError
from workbench.formats.topic_list import topic_list_lines
from workbench.ranking import natural_key
from workbench.text import cut, shown

if TYPE_CHECKING:
    from workbench.store import Store


@dataclass(frozen=True)
class CheckedTopicList:
    """A topic list's ids and the collection they were checked against.

    Attributes:
        topic_ids: the distinct ids, in file order.
        collection: the collection to record with the set ("" = tied to none).
        note: how the collection was chosen, for the user ("" when given with --collection).
    """

    topic_ids: list[str]
    collection: str
    note: str


def check_topic_list(store: Store, path: str | Path, collection: str | None = None) -> CheckedTopicList:
    """Read a topic list and check its ids against ``collection`` or, without one, the store's collections.

    Args:
        store: the store.
        path: the topic list file (``formats.topic_list``).
        collection: the collection the ids must belong to; None = find it (module docstring).

    Returns:
        The ids and the collection to record with the set.

    Raises:
        InputFormatError: an unreadable or empty file; ids that are not topics of ``collection`` (or of the
            collection holding most of them), naming the first one's line and the unknown ids.
        UnknownNameError: ``collection`` is not a collection.
    """
    lines = topic_list_lines(path)
    ids = list(lines)
    if collection is not None:
        known = set(store.collections.get_topics(collection))
        if any(t not in known for t in ids):
            raise _unknown_ids(path, lines, collection, known, "")
        return CheckedTopicList(ids, collection, "")
    names = [c.collection for c in store.collections.list_collections()]
    if not names:
        return CheckedTopicList(ids, "", "not checked: the store holds no collection yet")
    held = {name: set(store.collections.get_topics(name)) for name in names}
    n_held = {name: sum(t in held[name] for t in ids) for name in names}
    complete = [name for name in names if n_held[name] == len(ids)]
    if len(complete) == 1:
        return CheckedTopicList(ids, complete[0], f"all {len(ids):,} ids are topics of collection {complete[0]!r}")
    if complete:
        listed = ", ".join(repr(c) for c in complete)
        return CheckedTopicList(ids, "", f"all {len(ids):,} ids are topics of collections {listed}: the set is "
                                         "tied to none of them (--collection NAME ties it)")
    best = max(names, key=n_held.__getitem__)  # the first (by name) of those holding the most
    raise _unknown_ids(path, lines, best, held[best],
                       f" (no collection holds them all; {best!r} holds the most, {n_held[best]:,} of {len(ids):,}; "
                       "pass --collection NAME to check against another)")


def _unknown_ids(path: str | Path, lines: dict[str, int], collection: str, known: set[str],
                 why: str) -> InputFormatError:
    """The refusal of the ids of ``lines`` that ``known`` lacks: the first one's line, the ids listed (cut)."""
    unknown = [t for t in lines if t not in known]
    first = unknown[0]
    expected = f"expected topic ids of collection {collection!r}{why}, found {shown(first)}"
    if len(unknown) == 1:
        return InputFormatError(str(path), lines[first], f"{expected}, which is not one. Check the file, or the "
                                                         "collection.")
    listed = ", ".join(cut(t) for t in sorted(unknown, key=natural_key)[:10]) + (" ..." if len(unknown) > 10 else "")
    return InputFormatError(str(path), lines[first], f"{expected} and {len(unknown) - 1:,} other unknown id(s) "
                                                     f"({len(unknown):,} of {len(lines):,}: {listed}). Check the "
                                                     "file, or the collection.")
