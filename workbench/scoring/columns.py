"""Runs and qrels as parallel numpy arrays, and the trec_eval ordering on them.

The scorer works on columns rather than dict-of-dicts so that a 7-million-line
run (MS MARCO dev size) is scored in about a second. Two shapes:

* ``RunColumns``: one row per result line as read (topic code, packed doc id,
  score, optionally the file's rank column).
* ``QrelsColumns``: one row per judged (topic, document) with its grade.

Document ids are *packed*: the UTF-8 bytes of each id, NUL-padded to a multiple
of 8 bytes, read as big-endian 64-bit words. Comparing the word tuples compares
the ids exactly as C ``strcmp`` (and trec_eval) do, and equality of words is
equality of ids, so sorting, tie-breaking and joining never build Python
strings. (Ids containing a NUL byte are not supported; TREC files cannot
carry them meaningfully.)

``rank_run`` turns ``RunColumns`` into a ``RankedRun``: rows ordered by topic,
then score descending, then doc_id descending (``workbench.ranking``'s rule,
which is trec_eval's, usnistgov/trec_eval#22), or by the file's rank column
when trusted; a doc_id repeated within a topic keeps its best-ranked occurrence
(the others are dropped and counted); ranks are 1-based. Mappings are converted
with ``run_columns_from_mapping``, which orders each topic with
``workbench.ranking.ranked`` itself.

Source:
    trec_eval ``get_trec_results.c`` / ``form_res_rels.c``: sort by score
    descending, ties by doc_id in reverse ``strcmp`` order; the rank column is
    not used.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from workbench import ranking
from workbench.scoring.rank_column import RANK_MAX, OddRankKind, OddRanks
from workbench.types import Qrels, Run

_U64 = np.uint64
_F = TypeVar("_F", bound=Callable[..., Any])
_CHUNK = 1 << 20
"""Rows processed per step where a full-length temporary would cost memory."""


# -- memory --------------------------------------------------------------------------


@contextmanager
def small_pages() -> Iterator[None]:
    """Within the block, numpy arrays are allocated without asking for transparent huge pages.

    numpy marks every array of 4 MB or more ``MADV_HUGEPAGE``. Where the
    kernel's THP ``defrag`` setting is ``madvise`` (the Debian and Ubuntu
    default) and no huge page is free, each first touch of such an array may
    compact memory synchronously (numpy/numpy#31590): on this 2-core machine
    that made ``rank_run`` of a 7-million-line run take 0.31-0.35 s of CPU
    instead of 0.17-0.18 s, and reading it about 0.1 s more. The previous
    setting is restored on leaving (numpy's ``NUMPY_MADVISE_HUGEPAGE``
    switch, set at run time; a no-op where numpy lacks it).
    """
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    switch = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    if switch is None:
        yield
        return
    previous = switch(False)
    try:
        yield
    finally:
        switch(previous)


def with_small_pages(func: _F) -> _F:
    """Decorator: ``func`` runs within ``small_pages()``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with small_pages():
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


# -- packing ------------------------------------------------------------------------


def words_for(max_bytes: int) -> int:
    """Number of 64-bit words that hold an id of ``max_bytes`` UTF-8 bytes (at least 1)."""
    return max(1, (int(max_bytes) + 7) // 8)


def pack_ids(ids: Sequence[str], width: int | None = None) -> np.ndarray:
    """Pack ids into order-preserving 64-bit words.

    Args:
        ids: the ids (str).
        width: words per id; default: enough for the longest id.

    Returns:
        uint64 array of shape (len(ids), width). Row order compares like the
        ids' bytes (``strcmp``); equal rows mean equal ids.

    Raises:
        ValueError: an id is longer than ``width`` words (a programming error).

    Example:
        >>> w = pack_ids(["b", "ab"])
        >>> w.shape, bool(w[0, 0] > w[1, 0])  # "b" > "ab", as strcmp
        ((2, 1), True)
    """
    raw = [s.encode("utf-8") for s in ids]
    longest = max((len(b) for b in raw), default=0)
    w = words_for(longest) if width is None else width
    if longest > 8 * w:
        raise ValueError(f"an id of {longest} bytes does not fit in {w} words")
    if not raw:
        return np.zeros((0, w), dtype=_U64)
    arr = np.array(raw, dtype=f"S{8 * w}")
    return arr.view(">u8").reshape(len(raw), w).astype(_U64)


def unpack_ids(words: np.ndarray) -> list[str]:
    """The ids packed in ``words`` (shape (n, W)), as str, in row order.

    Example:
        >>> unpack_ids(pack_ids(["d10", "d9", "é"]))
        ['d10', 'd9', 'é']
    """
    if len(words) == 0:
        return []
    w = words.shape[1]
    raw = np.ascontiguousarray(words.astype(">u8")).view(f"S{8 * w}").reshape(-1)
    if not np.any(raw.view(np.uint8) & 0x80):  # all ASCII: numpy decodes in C
        return list(raw.astype(f"U{8 * w}").tolist())
    return [b.decode("utf-8") for b in raw.tolist()]


def widen(words: np.ndarray, width: int) -> np.ndarray:
    """``words`` with zero words appended up to ``width`` columns (NUL padding)."""
    if words.shape[1] >= width:
        return words
    out = np.zeros((words.shape[0], width), dtype=_U64)
    out[:, : words.shape[1]] = words
    return out


def hash_words(words: np.ndarray) -> np.ndarray:
    """A 64-bit multiplicative hash of each row of packed words, for bucketing only.

    Each word is folded in with xor and a multiplication by an odd constant
    (Fibonacci hashing, Knuth TAOCP vol. 3, 6.4), then the high half is mixed
    into the low half; equality is always confirmed on the words themselves.

    All-zero words (the NUL padding of a shorter id) are not folded in, so an
    id hashes alike whatever the width it is packed at: a run whose longest id
    needs one word and qrels whose longest id needs two still meet in the
    same buckets (``widen`` pads with zero words).
    """
    c = _U64(0x9E3779B97F4A7C15)
    h = np.empty(words.shape[0], dtype=_U64)
    with np.errstate(over="ignore"):
        for lo in range(0, len(h), _CHUNK):  # chunks keep temporaries small
            part = h[lo: lo + _CHUNK]
            np.multiply(words[lo: lo + _CHUNK, 0], c, out=part)
            for j in range(1, words.shape[1]):
                w = words[lo: lo + _CHUNK, j]
                nz = w != 0
                if nz.all():
                    part ^= w
                    part *= c
                elif nz.any():
                    part[nz] = (part[nz] ^ w[nz]) * c
            part ^= part >> _U64(29)
    return h


# -- the rank column ---------------------------------------------------------------


def odd_ranks(topic_ids: Sequence[str], topic_codes: np.ndarray, ranks: np.ndarray) -> OddRanks | None:
    """``rank_column.RankCheck``'s answer for a whole rank column at once: lines (rows) in file order, row i = line i + 1.

    A rank is odd when negative, above ``RANK_MAX``, or equal to the rank of an earlier row of its topic.
    The usual column (each topic's rows together, ranks rising or falling within each) is checked in a few
    passes over the arrays; any other sorts the (topic, rank) pairs once.

    Args:
        topic_ids: code -> topic_id.
        topic_codes: int (n,), the rows' topic codes.
        ranks: int64 (n,), the rows' rank column.

    Returns:
        The ``OddRanks`` (as ``RankCheck`` gives them for the same lines), or None when no rank is odd.

    Example:
        >>> odd_ranks(("1", "2"), np.array([0, 0, 0, 1]), np.array([1, 2, 2, -1]))
        OddRanks(n_lines=2, line=3, rank='2', kind='repeated', topic='1', first_line=2)
    """
    n = len(ranks)
    if n == 0:
        return None
    codes = np.asarray(topic_codes)
    odd = None
    if int(ranks.min()) < 0 or int(ranks.max()) > RANK_MAX:
        odd = (ranks < 0) | (ranks > RANK_MAX)
    if not _monotone_by_topic(codes, ranks):
        rows = np.arange(n) if odd is None else np.flatnonzero(~odd)  # an odd row is counted once
        keys = (codes[rows].astype(np.int64) << 32) | ranks[rows]  # in range: below 2**31
        _, first = np.unique(keys, return_index=True)  # stable: each pair's first row
        if len(first) < len(rows):
            again = np.ones(len(rows), dtype=bool)
            again[first] = False
            if odd is None:
                odd = np.zeros(n, dtype=bool)
            odd[rows[again]] = True
    if odd is None:
        return None
    row = int(np.argmax(odd))
    rank, code = int(ranks[row]), int(codes[row])
    kind: OddRankKind = "negative" if rank < 0 else "too large" if rank > RANK_MAX else "repeated"
    first_line = int(np.flatnonzero((codes == code) & (ranks == rank))[0]) + 1 if kind == "repeated" else 0
    return OddRanks(int(np.count_nonzero(odd)), row + 1, str(rank), kind, topic_ids[code], first_line)


def _monotone_by_topic(codes: np.ndarray, ranks: np.ndarray) -> bool:
    """Each topic's rows are together and their ranks strictly rise (or each topic's strictly fall): no
    rank repeats within a topic. A rank may only stop rising where a topic ends."""
    ends = np.flatnonzero(codes[1:] != codes[:-1])  # row i ends a stretch of one topic
    stretch_codes = codes[np.concatenate(([0], ends + 1))]
    if len(np.unique(stretch_codes)) != len(stretch_codes):
        return False
    for not_rising in (ranks[1:] <= ranks[:-1], ranks[1:] >= ranks[:-1]):
        if np.isin(np.flatnonzero(not_rising), ends, assume_unique=True).all():
            return True
    return False


# -- shapes ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RunColumns:
    """A run as read: one row per result line, in file order.

    Attributes:
        topic_ids: code -> topic_id (str).
        topic_codes: int32 (n,), index into ``topic_ids``.
        doc_words: uint64 (n, W), packed doc ids (see ``pack_ids``).
        scores: float64 (n,), finite.
        file_ranks: int64 (n,) rank column, when the file's order is trusted;
            None to order by score (the default, as trec_eval).
        name: run name or tag ("" when unknown).
        n_lines: result lines read (rows before dropping duplicates).
        duplicates: topic_id -> duplicate lines a reader already dropped
            (``rank_run`` adds the ones it drops).
        odd_ranks: the lines whose rank column is negative, above ``rank_column.RANK_MAX`` or repeated
            within its topic (``odd_ranks``), or None (none, or a file without a rank column).
    """

    topic_ids: tuple[str, ...]
    topic_codes: np.ndarray
    doc_words: np.ndarray
    scores: np.ndarray
    file_ranks: np.ndarray | None = None
    name: str = ""
    n_lines: int = 0
    duplicates: Mapping[str, int] = field(default_factory=dict)
    odd_ranks: OddRanks | None = None


@dataclass(frozen=True, eq=False)
class RankedRun:
    """A run in canonical order with duplicates dropped.

    Attributes:
        topic_ids: code -> topic_id.
        topic_codes: int32 (m,), non-decreasing: each topic's rows are contiguous
            and in rank order (``rank_at`` gives the 1-based rank of a row).
        doc_words: uint64 (m, W), packed doc ids.
        starts: int64 (n_codes + 1,), rows of code c are ``starts[c]:starts[c+1]``.
        duplicates: topic_id -> number of dropped duplicate lines (topics with some).
        name: run name.
        n_lines: result lines read.
        doc_hash: uint64 (m,), 63-bit ``hash_words(doc_words) >> 1`` (reused by the
            scorer's join), or None to compute it when needed.
    """

    topic_ids: tuple[str, ...]
    topic_codes: np.ndarray
    doc_words: np.ndarray
    starts: np.ndarray
    duplicates: Mapping[str, int] = field(default_factory=dict)
    name: str = ""
    n_lines: int = 0
    doc_hash: np.ndarray | None = None

    def rank_at(self, rows: np.ndarray) -> np.ndarray:
        """1-based ranks (int64) of the given row indices."""
        ranks: np.ndarray = np.asarray(rows, dtype=np.int64) - self.starts[self.topic_codes[rows]] + 1
        return ranks

    def n_results(self) -> dict[str, int]:
        """topic_id -> number of distinct documents returned."""
        counts = np.diff(self.starts)
        return {t: int(c) for t, c in zip(self.topic_ids, counts.tolist(), strict=True) if c}


@dataclass(frozen=True, eq=False)
class QrelsColumns:
    """Qrels as arrays: one row per judged (topic, document).

    Attributes:
        topic_ids: code -> topic_id.
        topic_codes: int32 (n,).
        doc_ids: the doc ids (str), row order.
        doc_words: uint64 (n, W), packed ``doc_ids``.
        grades: int64 (n,).
    """

    topic_ids: tuple[str, ...]
    topic_codes: np.ndarray
    doc_ids: tuple[str, ...]
    doc_words: np.ndarray
    grades: np.ndarray


def qrels_columns_from_mapping(qrels: Qrels) -> QrelsColumns:
    """Columns of a ``Qrels`` mapping (topic_id -> doc_id -> grade), in mapping order."""
    topic_ids = tuple(qrels)
    codes: list[int] = []
    docs: list[str] = []
    grades: list[int] = []
    for code, topic in enumerate(topic_ids):
        for doc, grade in qrels[topic].items():
            codes.append(code)
            docs.append(doc)
            grades.append(int(grade))
    return QrelsColumns(
        topic_ids=topic_ids,
        topic_codes=np.array(codes, dtype=np.int32),
        doc_ids=tuple(docs),
        doc_words=pack_ids(docs),
        grades=np.array(grades, dtype=np.int64),
    )


def run_columns_from_mapping(run: Run, name: str = "") -> RunColumns:
    """Columns of a ``Run`` mapping, each topic ordered by ``workbench.ranking.ranked``.

    Args:
        run: topic_id -> doc_id -> score.
        name: run name.

    Returns:
        ``RunColumns`` whose rows are already in canonical order (so
        ``rank_run`` keeps it).
    """
    topic_ids = tuple(run)
    codes: list[int] = []
    docs: list[str] = []
    scores: list[float] = []
    for code, topic in enumerate(topic_ids):
        for sd in ranking.ranked(run[topic]):
            codes.append(code)
            docs.append(sd.doc_id)
            scores.append(sd.score)
    return RunColumns(
        topic_ids=topic_ids,
        topic_codes=np.array(codes, dtype=np.int32),
        doc_words=pack_ids(docs),
        scores=np.array(scores, dtype=np.float64),
        name=name,
        n_lines=len(codes),
    )


# -- ordering -------------------------------------------------------------------------


def _descending_words_keys(words: np.ndarray) -> list[np.ndarray]:
    """lexsort keys (least significant first) that sort rows by words descending."""
    return [~words[:, j] for j in range(words.shape[1] - 1, -1, -1)]


def _order(cols: RunColumns) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """(order, tie_rows, tie_src): the canonical order as a permutation (None = file
    order already sorted), then a fix for tie groups: after applying ``order``,
    position ``tie_rows[i]`` takes original row ``tie_src[i]``."""
    empty = np.zeros(0, dtype=np.int64)
    codes = cols.topic_codes
    n = len(codes)
    if n < 2:
        return None, empty, empty
    same_topic = codes[1:] == codes[:-1]
    if cols.file_ranks is not None:
        fr = cols.file_ranks
        ok = bool(np.all((codes[1:] > codes[:-1]) | (same_topic & (fr[1:] >= fr[:-1]))))
        return (None if ok else np.lexsort((fr, codes))), empty, empty  # stable: file position breaks ties
    sc = cols.scores
    ok = bool(np.all((codes[1:] > codes[:-1]) | (same_topic & (sc[1:] <= sc[:-1]))))
    order: np.ndarray | None = None if ok else np.lexsort((-sc, codes))
    sc_o = sc if order is None else sc[order]
    if order is None:
        tie = (sc[1:] == sc[:-1]) & same_topic
    else:
        co_o = codes[order]
        tie = (sc_o[1:] == sc_o[:-1]) & (co_o[1:] == co_o[:-1])
    if not tie.any():
        return order, empty, empty
    # Rows in tie groups: i and i+1 for each tie at i; resolve by doc words descending.
    rows = np.flatnonzero(np.concatenate(([False], tie)) | np.concatenate((tie, [False])))
    starts = np.ones(len(rows), dtype=bool)
    starts[1:] = ~tie[rows[:-1]] | (rows[1:] != rows[:-1] + 1)
    group_id = np.cumsum(starts)
    src = rows if order is None else order[rows]
    perm = np.lexsort((*_descending_words_keys(cols.doc_words[src]), group_id))
    return order, rows, src[perm]


def canonical_order(cols: RunColumns) -> np.ndarray | None:
    """The permutation that puts ``cols`` in canonical order, or None when it already is.

    Order: topic code ascending, then score descending, then doc_id descending
    (bytes, as ``strcmp``); with ``file_ranks``: topic code, file rank, file
    position. Duplicates are not dropped here (see ``rank_run``).

    Returns:
        int64 permutation array (row indices in order), or None for the identity.
    """
    order, rows, src = _order(cols)
    if len(rows) == 0:
        return order
    full = np.arange(len(cols.topic_codes), dtype=np.int64) if order is None else order.copy()
    full[rows] = src
    return full


def _segment_grid(values: np.ndarray, codes: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """(n_topics, width) array: row c holds topic c's values in order, padded with the dtype's maximum."""
    n_topics = len(starts) - 1
    m = len(values)
    lengths = np.diff(starts)
    if m == n_topics * width and np.all(lengths == width):
        return np.array(values.reshape(n_topics, width), copy=True, order="C")
    grid = np.full((n_topics, width), np.iinfo(values.dtype).max, dtype=values.dtype)
    flat = grid.reshape(-1)
    shift = np.arange(n_topics, dtype=np.int64) * width - starts[:-1]  # flat index = row + shift[code]
    for lo in range(0, m, _CHUNK):
        hi = min(m, lo + _CHUNK)
        flat[np.arange(lo, hi, dtype=np.int64) + shift[codes[lo:hi]]] = values[lo:hi]
    return grid


def _find_duplicates(codes: np.ndarray, words: np.ndarray, starts: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Rows (in canonical order) that repeat an earlier (topic, doc) pair: boolean (m,).

    A segmented sort of 31-bit hash prefixes finds the topics that may hold a repeat
    (one padded row per topic when lengths are even enough, else one global
    sort); only their rows are then checked exactly.
    """
    m = len(codes)
    drop = np.zeros(m, dtype=bool)
    if m < 2:
        return drop
    lengths = np.diff(starts)
    n_topics = len(lengths)
    longest = int(lengths.max())
    subset: np.ndarray | None = None
    if n_topics * longest <= 2 * m + 1024:
        # The high 31 bits suffice to find suspect topics (half the bytes to sort of 64-bit keys);
        # a chance collision only adds a topic to the exact check below. 31 bits < the uint32 padding.
        # (A strided view of h's high halves: the grid below is its only copy.)
        halves = np.ascontiguousarray(h).view(np.uint32)
        h31 = halves[1::2] if np.little_endian else halves[0::2]
        grid = _segment_grid(h31, codes, starts, longest)
        grid.sort(axis=1)
        eq = (grid[:, 1:] == grid[:, :-1]) & (grid[:, 1:] != np.uint32(0xFFFFFFFF))
        suspects = np.flatnonzero(eq.any(axis=1))
        del grid, eq
        if len(suspects) == 0:
            return drop
        subset = np.concatenate([np.arange(starts[t], starts[t + 1]) for t in suspects.tolist()])
    rows = np.arange(m, dtype=np.int64) if subset is None else subset
    key_order = rows[np.lexsort((h[rows], codes[rows]))]
    hs, cs = h[key_order], codes[key_order]
    eq1 = (hs[1:] == hs[:-1]) & (cs[1:] == cs[:-1])
    if not eq1.any():
        return drop
    mark = np.zeros(len(key_order), dtype=bool)
    mark[:-1] |= eq1
    mark[1:] |= eq1
    candidates = np.sort(key_order[mark])
    # Exact check on the candidates in row order: the first occurrence (best rank) is kept.
    seen: set[tuple[int, bytes]] = set()
    for r in candidates.tolist():
        key = (int(codes[r]), words[r].tobytes())
        if key in seen:
            drop[r] = True
        else:
            seen.add(key)
    return drop


def _compact(arr: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``arr[keep]`` written over ``arr``'s own prefix chunk by chunk (arr must be owned)."""
    out = 0
    for lo in range(0, len(arr), _CHUNK):
        part = arr[lo: lo + _CHUNK][keep[lo: lo + _CHUNK]]
        arr[out: out + len(part)] = part  # out <= lo: never overwrites rows still to be read
        out += len(part)
    return arr[:out]


def _starts(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """int64 (n_codes + 1,): the rows of code c are ``starts[c]:starts[c+1]`` in non-decreasing ``codes``.

    A binary search per code (the codes are in canonical order), not a pass over the rows.
    """
    starts: np.ndarray = np.searchsorted(codes, np.arange(n_codes + 1, dtype=codes.dtype), side="left")
    return starts.astype(np.int64, copy=False)


@with_small_pages
def rank_run(cols: RunColumns, *, reuse: bool = False) -> RankedRun:
    """Order a run canonically and drop repeated doc ids.

    Args:
        cols: the run as read.
        reuse: allow reordering ``cols``' arrays in place (the caller gives
            them up; saves memory on large runs). Default False: ``cols`` is
            left untouched.

    Returns:
        ``RankedRun``; a doc_id repeated within a topic keeps its best-ranked
        occurrence (highest score, or best file rank when trusted) and the
        others are counted in ``duplicates``.

    Source:
        ``workbench.ranking`` (trec_eval's order); duplicates as
        ``workbench.formats.trec.read_run``.
    """
    order, tie_rows, tie_src = _order(cols)
    codes = cols.topic_codes if order is None else cols.topic_codes[order]
    words = cols.doc_words if order is None else cols.doc_words[order]
    owned = reuse or order is not None
    if len(tie_rows):
        # Ties stay within one topic, so the codes are unchanged; only doc words move.
        moved = cols.doc_words[tie_src]
        if not owned:
            words = words.copy()
        words[tie_rows] = moved
    n_codes = len(cols.topic_ids)
    starts = _starts(codes, n_codes)
    h = hash_words(words)
    h >>= _U64(1)
    drop = _find_duplicates(codes, words, starts, h)
    duplicates: dict[str, int] = dict(cols.duplicates)
    if drop.any():
        dropped = np.bincount(codes[drop], minlength=n_codes)
        for c in np.flatnonzero(dropped).tolist():
            duplicates[cols.topic_ids[c]] = duplicates.get(cols.topic_ids[c], 0) + int(dropped[c])
        keep = ~drop
        if owned:
            codes, words = _compact(codes, keep), _compact(words, keep)
        else:
            codes, words = codes[keep], words[keep]
        h = _compact(h, keep)
        starts = _starts(codes, n_codes)
    return RankedRun(
        topic_ids=cols.topic_ids,
        topic_codes=codes,
        doc_words=words,
        starts=starts,
        duplicates=duplicates,
        name=cols.name,
        n_lines=cols.n_lines or len(cols.topic_codes),
        doc_hash=h,
    )
