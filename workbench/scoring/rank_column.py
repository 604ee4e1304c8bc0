"""A run file's rank column: the ranks no ranking writes (negative, too large, repeated within a topic).

The rank column never orders a run (``workbench.ranking``: score, then doc id, as trec_eval) unless the
file's order is trusted, so odd ranks change no number; but they say the file was not written as its
producer meant, and the readers warn (``formats.trec.odd_ranks_warning``). ``RankCheck`` is the line-by-line
form (the strict readers), ``scoring.columns.odd_ranks`` the columnar one; both give the same ``OddRanks``.

Here, not in ``workbench.ranking``: the small-file scorer's path imports that module and never needs this one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RANK_MAX = 2**31 - 1
"""The largest rank column value taken as written without a warning: no ranking has more results than this
(the 32-bit signed range of the store's rank and grade columns, and of most tools that write run files)."""

OddRankKind = Literal["negative", "too large", "repeated"]


@dataclass(frozen=True)
class OddRanks:
    """The lines of a run file whose rank column no ranking writes: a negative rank, one above ``RANK_MAX``,
    or a rank an earlier line of the same topic already has.

    The ranks do not change the numbers (each topic is ordered by score, trec_eval's rule) unless the file's
    order is trusted, but such a column says the file was not written as its producer meant.

    Attributes:
        n_lines: lines with such a rank (a line counts once).
        line: the 1-based line (a Parquet file's row) of the first one.
        rank: its rank as a decimal integer (the text as written, cut, when it has more than 19 digits).
        kind: why it is odd: ``negative``, ``too large`` or ``repeated`` (in that order when several hold).
        topic: its topic.
        first_line: for ``repeated``, the earlier line of the topic with the same rank (else 0).
    """

    n_lines: int
    line: int
    rank: str
    kind: OddRankKind
    topic: str
    first_line: int = 0


def rank_text(text: str) -> tuple[int, str]:
    """(the value used to order by, the canonical text) of a rank column written as ``[+-]?[0-9]+``.

    Ranks of more than 19 digits order as +/- 10**19 (ties by file position): Python would refuse
    ``int()`` of a few thousand digits, and no ranking is that deep.

    Example:
        >>> rank_text("+007"), rank_text("-3")[0], rank_text("9" * 30)[0] == 10**19
        ((7, '7'), -3, True)
    """
    digits = text.lstrip("+-")
    if len(digits) <= 19:
        value = int(text)
        return value, str(value)
    value = -(10**19) if text.startswith("-") else 10**19
    return value, text if len(text) <= 60 else f"{text[:60]}\u2026 ({len(text)} characters)"


class RankCheck:
    """Collects ``OddRanks`` line by line (the strict readers; ``scoring.columns.odd_ranks`` is the columnar form).

    Example:
        >>> c = RankCheck()
        >>> for line, (topic, rank) in enumerate([("1", "1"), ("1", "2"), ("1", "2"), ("2", "-1")], 1):
        ...     _ = c.add(line, topic, rank)
        >>> c.result()
        OddRanks(n_lines=2, line=3, rank='2', kind='repeated', topic='1', first_line=2)
    """

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int], int] = {}
        self._n = 0
        self._first: OddRanks | None = None

    def add(self, line: int, topic: str, rank: str | int) -> int:
        """Check one line's rank (as written, or a number from a typed column); returns its value (``rank_text``)."""
        value, text = (rank, str(rank)) if isinstance(rank, int) else rank_text(rank)
        kind: OddRankKind | None = None
        first = self._seen.setdefault((topic, value), line)
        if value < 0:
            kind = "negative"
        elif value > RANK_MAX:
            kind = "too large"
        elif first != line:
            kind = "repeated"
        if kind is not None:
            self._n += 1
            if self._first is None:
                self._first = OddRanks(0, line, text, kind, topic, first if kind == "repeated" else 0)
        return value

    def result(self) -> OddRanks | None:
        """The ``OddRanks`` of the lines added, or None when every rank is plain."""
        if self._first is None:
            return None
        f = self._first
        return OddRanks(self._n, f.line, f.rank, f.kind, f.topic, f.first_line)
