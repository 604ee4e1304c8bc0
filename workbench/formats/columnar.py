"""Fast reading of TREC run files into columns (pyarrow), with the strict reader as fallback.

``read_run_columns`` reads a run file into the scorer's arrays: topic codes,
packed doc ids (``scoring.columns``) and scores, by one of two fast paths:

* files up to ``SMALL_BYTES`` (a few hundred thousand lines) are split by
  Python's ``bytes.split`` and converted with numpy: importing pyarrow would
  cost more than parsing them;
* larger files are parsed with pyarrow's multi-threaded CSV reader in slices
  of about 32 MB (bounded memory), each slice converted at once.

Both accept exactly what ``formats.trec.read_run`` accepts: whenever a fast
path sees anything unusual (tabs, several spaces, CR, a byte-order mark, a
blank line, a non-finite score, a second run tag, an unparsable field, an
empty file, bytes that are not UTF-8) it hands the file to ``read_run``, which
either reads it (the same results, more slowly) or raises its
``InputFormatError`` naming the file and line.

Source:
    trec_eval's run format (``get_trec_results.c``); the strict rules of
    ``workbench.formats.trec``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

from workbench.formats import trec
from workbench.scoring.columns import (
    QrelsColumns,
    RunColumns,
    odd_ranks,
    pack_ids,
    qrels_columns_from_mapping,
    run_columns_from_mapping,
    with_small_pages,
    words_for,
)
from workbench.text import CONTROL_BYTES, NAME_MAX, UNSAFE_NON_ASCII

SLICE_BYTES = 32 << 20
"""Bytes parsed per slice: bounds the parser's memory to a few times this."""

SMALL_BYTES = 24 << 20
"""Run files up to this size are parsed without pyarrow (``_read_small``); measured
crossover on 2 cores: about 40 MB, where pyarrow's import (0.15-0.3 s) is repaid."""

_STRICT_ONLY = np.zeros(256, dtype=bool)
"""Bytes that send a file to the strict reader: tab, VT, FF and CR (it splits columns on
them) and every other ASCII control character but LF (it refuses them in ids, with file:line)."""
_STRICT_ONLY[list(CONTROL_BYTES)] = True
_SEPARATOR = np.zeros(256, dtype=bool)
_SEPARATOR[[10, 32]] = True
_LINE = np.array([32, 32, 32, 32, 32, 10], dtype=np.uint8)

# Columns cut to fixed width, NUL-padded (``_column_bytes``): the strict reader's rank and score
# patterns (formats.trec ``_INT``, ``_NUM``), each value followed by its padding. Each value can match
# one way only (the digits before a point are never split between two repeats): a pattern that could,
# such as ``[0-9]+\.?[0-9]*``, backtracks through every split of every value before it refuses one bad
# score, exponential in the number of lines.
_INT_PADDED = re.compile(rb"(?:[+-]?[0-9]{1,18}\x00+)+")
_NUM_PADDED = re.compile(rb"(?:[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\x00+)+")

_NAMES = ["topic", "q0", "doc", "rank", "score", "tag"]
_OTHER_WHITESPACE = (b"\t", b"\r", b"\x0b", b"\x0c")


class _Fallback(Exception):
    """The fast path declines this file; the strict reader takes over."""


def _memory_pool() -> Any:
    """The Arrow memory pool of the large-file reader: jemalloc where pyarrow has it, else the system allocator.

    Each slice's table is freed before the next one is parsed. jemalloc reuses
    those pages for the next slice (with the system allocator they go back to
    the OS and every slice faults them in again: about 0.3 s of system time on
    a 7-million-line run) and still returns them after its decay time, so the
    peak stays about one slice's worth (measured: lower than the system
    allocator's); mimalloc holds freed memory longer.
    """
    import pyarrow as pa

    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc (e.g. Windows wheels)
        return pa.system_memory_pool()


def _looks_plain(head: bytes) -> bool:
    """True when the first lines use single spaces, LF and no BOM (the fast path's dialect)."""
    if head.startswith(b"\xef\xbb\xbf") or b"\r" in head or b"\t" in head or b"  " in head:
        return False
    return not any(line[:1] == b" " or line[-1:] == b" " for line in head.split(b"\n")[:-1])


def _slices(f, size: int) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
    """(start, end) byte ranges of about SLICE_BYTES ending at line ends."""
    bounds = [0]
    pos = SLICE_BYTES
    while pos < size:
        f.seek(pos)
        f.readline()
        nxt = f.tell()
        if nxt >= size:
            break
        bounds.append(nxt)
        pos = nxt + SLICE_BYTES
    bounds.append(size)
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _values(arr, dtype: type) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Zero-copy numpy view of a null-free primitive pyarrow array (no pandas import)."""
    return np.frombuffer(arr.buffers()[1], dtype=dtype)[arr.offset: arr.offset + len(arr)]


def _pack_chunk(arr, pc, pool) -> np.ndarray | None:  # type: ignore[no-untyped-def]
    """Packed words (n, W) of a pyarrow string array, or None if an id is empty or longer than ``trec.ID_MAX`` bytes.

    ``ascii_rpad`` pads by bytes (also for UTF-8 input), so the padded data
    buffer is the NUL-padded ids back to back; a length check guards that.
    The result may be a big-endian view (``>u8``): assigning it into a native
    uint64 array converts it without a temporary.
    """
    n = len(arr)
    lengths = pc.min_max(pc.binary_length(arr)).as_py()
    if not lengths["min"] or lengths["max"] > trec.ID_MAX:  # a longer id: the strict reader names its line
        return None
    w = words_for(lengths["max"])
    padded = pc.ascii_rpad(arr, 8 * w, padding="\0", memory_pool=pool)
    offsets = np.frombuffer(padded.buffers()[1], dtype=np.int32)
    lo, hi = int(offsets[padded.offset]), int(offsets[padded.offset + n])
    if hi - lo != 8 * w * n:  # not byte-padded as expected: the slow, exact way
        return pack_ids(arr.to_pylist(), w)
    data = np.frombuffer(padded.buffers()[2], dtype=np.uint8)
    return data[lo:hi].view(">u8").reshape(n, w)


def _topic_codes(arr, topic_map: dict[str, int], pc) -> np.ndarray:  # type: ignore[no-untyped-def]
    """int32 codes of a pyarrow string array of topic ids; new ids get the next codes.

    Run files list each topic's lines together, so the column is run-end
    encoded (one comparison per row) and only the runs are looked up; an
    interleaved file takes a hash-based dictionary encoding instead.

    Raises:
        _Fallback: an empty topic id (irregular spacing), or one longer than ``trec.ID_MAX``.
    """
    ree = pc.run_end_encode(arr)
    if len(ree.values) * 4 <= len(arr):
        ends = _values(ree.run_ends, np.int32)
        names = ree.values.to_pylist()
        lengths = np.diff(ends, prepend=0)
    else:
        enc = pc.dictionary_encode(arr)
        names = enc.dictionary.to_pylist()
        lengths = None
    if any(not t or len(t) > trec.ID_MAX for t in names):  # the strict reader names the line
        raise _Fallback
    mapping = np.array([topic_map.setdefault(t, len(topic_map)) for t in names], dtype=np.int32)
    if lengths is not None:
        return np.repeat(mapping, lengths)
    codes: np.ndarray = mapping[_values(enc.indices, np.int32)]
    return codes


def _same_tag(arr, tag: bytes) -> bool:  # type: ignore[no-untyped-def]
    """True when every value of the pyarrow string array ``arr`` is ``tag`` (non-empty)."""
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset: arr.offset + n + 1]
    k = len(tag)
    if not k or int(offsets[-1] - offsets[0]) != k * n or not np.all(np.diff(offsets) == k):
        return False
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8)[offsets[0]: offsets[-1]]
    return bool(np.all(data.reshape(n, k) == np.frombuffer(tag, dtype=np.uint8)))


def _column_bytes(raw: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """(n, width) uint8: row i holds ``raw[starts[i]:starts[i] + lengths[i]]`` then NUL padding."""
    offsets = np.arange(width, dtype=np.int64)
    idx = starts[:, None] + offsets
    np.minimum(idx, len(raw) - 1, out=idx)
    out: np.ndarray = raw[idx]
    out[offsets >= lengths[:, None]] = 0
    return out


def _has_control_or_unsafe(block: bytearray, length: int, raw: np.ndarray) -> bool:
    """Whether a slice holds an ASCII control character other than LF, or DEL, or (in
    non-ASCII text) another ``text.UNSAFE`` character. ``raw`` is the slice as uint8
    (a copy); ``block[:length]`` holds the same bytes and is overwritten (scratch).

    Vectorised, without a per-byte table: ``(b ^ 0x0A) - 1`` (uint8, wrapping) maps LF
    to 255, the other bytes below 0x20 to 0..30 and every byte from 0x20 up to 31 or
    more, so one minimum answers for all of them. DEL is one ``find``; only a slice
    with bytes above 0x7F is decoded and searched for C1 controls and bidi or
    zero-width characters.
    """
    if block.find(b"\x7f", 0, length) >= 0:
        return True
    if int(raw.max()) >= 0x80 and UNSAFE_NON_ASCII.search(bytes(block[:length]).decode("utf-8", "replace")):
        return True
    s = np.frombuffer(block, dtype=np.uint8, count=length)
    np.bitwise_xor(raw, 0x0A, out=s)
    np.subtract(s, 1, out=s)
    return int(s.min()) < 31


def _read_small(data: bytes, trust_file_order: bool) -> RunColumns:
    """``RunColumns`` of a whole run file held in memory, with numpy only (no pyarrow, no Python
    object per line).

    Only the dialect in which every line is ``topic Q0 doc rank score tag``
    with single spaces and LF is read here; anything else raises ``_Fallback``.
    The columns are cut out of the bytes by the positions of the separators;
    ranks must be integers and scores plain finite decimals (the strict
    reader's patterns in ``formats.trec``), checked over all values at once.

    Raises:
        _Fallback: the file is empty or not in that dialect.
    """
    if not data or data.startswith(b"\xef\xbb\xbf"):
        raise _Fallback
    if not data.endswith(b"\n"):
        data += b"\n"
    if not data.isascii():
        try:
            if UNSAFE_NON_ASCII.search(data.decode("utf-8")):  # C1 controls, bidi and zero-width characters
                raise _Fallback
        except UnicodeDecodeError:
            raise _Fallback from None
    raw = np.frombuffer(data, dtype=np.uint8)
    if _STRICT_ONLY[raw].any():  # separators the strict reader splits on, control characters it refuses
        raise _Fallback
    # Separators (spaces and line ends) must come as 5 spaces then a line end, never two in a
    # row and never first: exactly 6 non-empty columns on every line, no blank line.
    seps = np.flatnonzero(_SEPARATOR[raw])
    n = len(seps) // 6
    if (len(seps) != 6 * n or seps[0] == 0 or not np.all(seps[1:] - seps[:-1] > 1)
            or not np.array_equal(raw[seps].reshape(n, 6), np.broadcast_to(_LINE, (n, 6)))):
        raise _Fallback
    starts = np.empty_like(seps)
    starts[0] = 0
    starts[1:] = seps[:-1] + 1
    lengths = seps - starts
    # Columns are cut to their longest value's width (lines x width bytes): a field longer than any id
    # may be (trec.ID_MAX characters, at least as many bytes) goes to the strict reader, which names it.
    if int(lengths.max()) > trec.ID_MAX:
        raise _Fallback

    def column(j: int) -> tuple[np.ndarray, np.ndarray]:
        st, ln = starts[j::6], lengths[j::6]
        return _column_bytes(raw, st, ln, int(ln.max())), ln

    tags, tag_len = column(5)
    if not (np.all(tag_len == tag_len[0]) and np.array_equal(tags, np.broadcast_to(tags[0], tags.shape))):
        raise _Fallback
    name = tags[0, : tag_len[0]].tobytes().decode("utf-8")
    if len(name) > NAME_MAX:  # the strict reader refuses it, naming line 1
        raise _Fallback
    # Rank and score values are cut one byte wider than the longest, so a NUL ends every value.
    rank_len = lengths[3::6]
    if int(rank_len.max()) > 19:
        raise _Fallback
    ranks = _column_bytes(raw, starts[3::6], rank_len, int(rank_len.max()) + 1)
    if not _INT_PADDED.fullmatch(ranks.tobytes()):
        raise _Fallback
    score_len = lengths[4::6]
    score_chars = _column_bytes(raw, starts[4::6], score_len, int(score_len.max()) + 1)
    if not _NUM_PADDED.fullmatch(score_chars.tobytes()):
        raise _Fallback
    scores = score_chars.view(f"S{score_chars.shape[1]}").reshape(n).astype(np.float64)
    if not np.all(np.isfinite(scores)):
        raise _Fallback
    # Topic codes in order of first appearance; a run lists each topic's lines together, so
    # only the first line of each stretch is decoded and looked up.
    topics, topic_len = column(0)
    firsts = np.flatnonzero(np.concatenate(([True], np.any(topics[1:] != topics[:-1], axis=1)
                                            | (topic_len[1:] != topic_len[:-1]))))
    topic_map: dict[str, int] = {}
    stretch_codes = np.array([topic_map.setdefault(topics[i, : topic_len[i]].tobytes().decode("utf-8"), len(topic_map))
                              for i in firsts.tolist()], dtype=np.int32)
    codes = np.repeat(stretch_codes, np.diff(np.append(firsts, n)))
    doc_len = lengths[2::6]
    w = words_for(int(doc_len.max()))
    words = _column_bytes(raw, starts[2::6], doc_len, 8 * w).view(">u8").astype(np.uint64)
    rank_values = ranks.view(f"S{ranks.shape[1]}").reshape(n).astype(np.int64)
    return RunColumns(
        topic_ids=tuple(topic_map),
        topic_codes=codes,
        doc_words=words,
        scores=scores,
        file_ranks=rank_values if trust_file_order else None,
        name=name,
        n_lines=n,
        odd_ranks=odd_ranks(tuple(topic_map), codes, rank_values),
    )


def _parsed_slices(f, size: int, pool, options) -> Generator[tuple[int, int, Any], None, None]:  # type: ignore[no-untyped-def]
    """(start, end, pyarrow.Table) of each slice of the open run file ``f``, in file order, parsed one ahead.

    A worker thread reads and parses slice i + 1 (pyarrow's CSV reader,
    threaded, releases the GIL) while the caller converts slice i, so the
    conversion no longer waits for the parser nor the parser for it (on 2
    cores: about a third off the reading's wall time). Two input buffers
    alternate; slice i + 2 reuses slice i's only after the caller asked for
    slice i + 1, i.e. once it is done with slice i's table.

    Raises:
        _Fallback: other whitespace than spaces and LF, a control character,
            or a slice pyarrow cannot parse with the fast path's types (the strict
            reader decides).
    """
    import pyarrow as pa
    import pyarrow.csv as pcsv

    read_opts, parse_opts, conv_opts = options
    spans = _slices(f, size)
    cap_bytes = min(size, SLICE_BYTES + (1 << 20))
    # Each slice is read into memory Arrow owns (never ``pa.py_buffer`` over Python memory): the
    # threaded CSV reader's workers may drop their last reference to the input after ``read_csv``
    # returned, and releasing a Python-owned buffer takes the GIL; at interpreter exit that
    # worker is then killed by ``pthread_exit`` inside a C++ destructor and the process aborts
    # ("terminate called without an active exception", exit 134). The bytearray is only the
    # fast ``find`` of the whitespace and control-character checks (and their scratch).
    buffers: list[tuple[bytearray, Any]] = []

    def parse(i: int) -> Any:
        start, end = spans[i]
        length = end - start
        if len(buffers) <= i % 2:
            buffers.append((bytearray(cap_bytes), pa.allocate_buffer(cap_bytes, memory_pool=pool)))
        block, native = buffers[i % 2]
        if length > len(block):
            block, native = bytearray(length), pa.allocate_buffer(length, memory_pool=pool)
            buffers[i % 2] = (block, native)
        view = memoryview(block)[:length]
        f.seek(start)
        f.readinto(view)
        if any(block.find(c, 0, length) >= 0 for c in _OTHER_WHITESPACE):  # the strict reader splits on these
            raise _Fallback
        arrow_bytes = np.frombuffer(native, dtype=np.uint8, count=length)
        arrow_bytes[:] = np.frombuffer(view, dtype=np.uint8)
        del view
        if _has_control_or_unsafe(block, length, arrow_bytes):  # block is scratch from here on
            raise _Fallback  # the strict reader names the line
        try:
            return pcsv.read_csv(pa.BufferReader(native.slice(0, length)), read_options=read_opts,
                                 parse_options=parse_opts, convert_options=conv_opts, memory_pool=pool)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            raise _Fallback from None

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="run-reader") as ex:
        pending = ex.submit(parse, 0)
        for i, (start, end) in enumerate(spans):
            table = pending.result()
            if i + 1 < len(spans):
                pending = ex.submit(parse, i + 1)
            yield start, end, table
            del table


def _read_fast(path: Path, trust_file_order: bool) -> RunColumns:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    size = path.stat().st_size
    if size == 0:
        raise _Fallback
    types = {
        "topic": pa.string(),
        "doc": pa.string(),
        "rank": pa.int64(),
        "score": pa.float64(),
        "tag": pa.string(),
    }
    read_opts = pcsv.ReadOptions(column_names=_NAMES, block_size=4 << 20)
    parse_opts = pcsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False)
    conv_opts = pcsv.ConvertOptions(
        column_types=types, include_columns=["topic", "doc", "rank", "score", "tag"], strings_can_be_null=False
    )
    pool = _memory_pool()
    topic_map: dict[str, int] = {}
    tag: bytes | None = None
    n = 0
    cap = 0
    codes: np.ndarray = np.zeros(0, np.int32)
    scores: np.ndarray = np.zeros(0)
    ranks: np.ndarray = np.zeros(0, np.int64)
    words: np.ndarray = np.zeros((0, 1), np.uint64)
    with open(path, "rb") as f:
        head = f.read(1 << 16)
        if not _looks_plain(head if len(head) < (1 << 16) else head[: head.rfind(b"\n") + 1]):
            raise _Fallback
        # closing: on the way out with _Fallback too, the worker thread is done before the file closes
        with closing(_parsed_slices(f, size, pool, (read_opts, parse_opts, conv_opts))) as slices:
            for start, end, table in slices:
                m = table.num_rows
                if m == 0:
                    continue
                for col in ("rank", "score"):
                    if table.column(col).null_count:
                        raise _Fallback
                if n + m > cap:
                    # First slice: estimate the total from its bytes per row; later: grow.
                    est = int(size / max(1, end - start) * m * 1.05) + 1024 if cap == 0 else 2 * (n + m)
                    cap = max(est, n + m)
                    codes = np.resize(codes, cap).astype(np.int32, copy=False) if n else np.empty(cap, np.int32)
                    scores = np.resize(scores, cap) if n else np.empty(cap, np.float64)
                    ranks = np.resize(ranks, cap) if n else np.empty(cap, np.int64)
                    if n:
                        grown = np.zeros((cap, words.shape[1]), dtype=np.uint64)
                        grown[:n] = words[:n]
                        words = grown
                for batch in table.to_batches():
                    b = len(batch)
                    if b == 0:
                        continue
                    topic_col, doc_col = batch.column(0), batch.column(1)
                    codes[n:n + b] = _topic_codes(topic_col, topic_map, pc)
                    sc = _values(batch.column(3), np.float64)
                    if not np.all(np.isfinite(sc)):
                        raise _Fallback
                    scores[n:n + b] = sc
                    ranks[n:n + b] = _values(batch.column(2), np.int64)
                    tag_col = batch.column(4)
                    if tag is None:
                        tag = tag_col[0].as_py().encode("utf-8")
                        if len(tag.decode("utf-8")) > NAME_MAX:  # the strict reader refuses it, naming line 1
                            raise _Fallback
                    if not _same_tag(tag_col, tag):
                        raise _Fallback
                    packed = _pack_chunk(doc_col, pc, pool)
                    if packed is None:
                        raise _Fallback
                    if words.shape[1] < packed.shape[1] or len(words) < cap:
                        width = max(words.shape[1], packed.shape[1])
                        grown = np.zeros((cap, width), dtype=np.uint64)
                        if n:
                            grown[:n, : words.shape[1]] = words[:n]
                        words = grown
                    words[n:n + b, : packed.shape[1]] = packed  # further words stay 0 (NUL padding)
                    n += b
                del table
    if n == 0 or tag is None:
        raise _Fallback
    return RunColumns(
        topic_ids=tuple(topic_map),
        topic_codes=codes[:n],
        doc_words=words[:n],
        scores=scores[:n],
        file_ranks=ranks[:n] if trust_file_order else None,
        name=tag.decode("utf-8"),
        n_lines=n,
        odd_ranks=odd_ranks(tuple(topic_map), codes[:n], ranks[:n]),
    )


@with_small_pages
def read_run_columns(path: str | Path, *, trust_file_order: bool = False) -> RunColumns:
    """Read a TREC run file or a Parquet run into ``RunColumns`` (the scorer's input).

    Args:
        path: the run file (``topic Q0 doc rank score tag``), or a Parquet file
            (``topic_id, doc_id, score[, rank]``; see ``read_parquet_run_columns``).
        trust_file_order: order each topic by the file's rank column (ties by
            file position) instead of by score; default False, as trec_eval.

    Returns:
        ``RunColumns`` with ``name`` = the run tag. Duplicates are dropped later
        by ``scoring.columns.rank_run`` (or already by the strict reader, in
        which case ``RunColumns.duplicates`` holds their counts).

    Raises:
        InputFormatError: the file breaks the TREC run format (file:line in the message).
    """
    p = Path(path)
    from workbench.formats import parquet

    if parquet.is_parquet(p):
        return read_parquet_run_columns(p, trust_file_order=trust_file_order)
    if str(path) == "-":  # standard input, never a file named '-' in the current folder
        p = Path("-")
    elif p.is_file() and os.access(p, os.R_OK):
        try:
            if p.stat().st_size <= SMALL_BYTES:
                return _read_small(p.read_bytes(), trust_file_order)
            return _read_fast(p, trust_file_order)
        except _Fallback:
            pass
    rf = trec.read_run(p, trust_file_order=trust_file_order)
    cols = run_columns_from_mapping(rf.run, rf.tag)
    return RunColumns(
        topic_ids=cols.topic_ids,
        topic_codes=cols.topic_codes,
        doc_words=cols.doc_words,
        scores=cols.scores,
        name=rf.tag,
        n_lines=rf.n_lines,
        duplicates=dict(rf.duplicates),
        odd_ranks=rf.odd_ranks,
    )


def read_parquet_run_columns(path: str | Path, *, trust_file_order: bool = False) -> RunColumns:
    """``RunColumns`` of a Parquet run (``topic_id, doc_id, score[, rank]``), named after the file's stem.

    Columns and values are checked by ``formats.parquet.read_run_arrow`` (the
    rules of ``formats.parquet.read_table``); rows may come in any order
    (``scoring.columns.rank_run`` orders them), and the ``rank`` column is used
    only with ``trust_file_order``.

    Raises:
        InputFormatError: a missing or mistyped column, a bad value (its row),
            an empty file, ``trust_file_order`` without a ``rank`` column.
    """
    from workbench.errors import InputFormatError
    from workbench.formats import parquet

    table = parquet.read_run_arrow(path)
    ranks = None
    if trust_file_order and "rank" not in table.column_names:
        raise InputFormatError(str(path), 0, "expected a 'rank' column to order by (--trust-file-order), found "
                                             f"{', '.join(table.column_names)}. Add the rank or drop the option.")
    if "rank" in table.column_names:
        ranks = np.array(_values(table.column("rank").combine_chunks(), np.int64), copy=True)
    cols = run_columns_from_arrow(table, Path(path).stem)
    odd = odd_ranks(cols.topic_ids, cols.topic_codes, ranks) if ranks is not None else None
    return RunColumns(cols.topic_ids, cols.topic_codes, cols.doc_words, cols.scores,
                      file_ranks=ranks if trust_file_order else None, name=cols.name, n_lines=cols.n_lines,
                      odd_ranks=odd)


def run_columns_from_arrow(table: Any, name: str) -> RunColumns:
    """``RunColumns`` of a ``pyarrow.Table`` with columns topic_id, doc_id (strings) and score (double).

    Used for stored runs (``store.runs.run_entries_arrow``) and Parquet runs;
    rows in any order (``scoring.columns.rank_run`` orders them).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = table.num_rows
    if n == 0:
        return RunColumns((), np.zeros(0, np.int32), np.zeros((0, 1), np.uint64), np.zeros(0), name=name)
    topics = pc.dictionary_encode(table.column("topic_id").combine_chunks().cast(pa.string()))
    codes = np.array(_values(topics.indices, np.int32), copy=True)
    docs = table.column("doc_id").combine_chunks().cast(pa.string())
    scores = table.column("score").combine_chunks().cast(pa.float64())
    words = _pack_chunk(docs, pc, pa.system_memory_pool())
    return RunColumns(
        topic_ids=tuple(topics.dictionary.to_pylist()),
        topic_codes=codes,
        doc_words=words.astype(np.uint64) if words is not None else pack_ids(docs.to_pylist()),
        scores=np.array(_values(scores, np.float64), copy=True),
        name=name,
        n_lines=n,
    )


def read_qrels_columns(path: str | Path) -> QrelsColumns:
    """Read a TREC qrels file strictly (``formats.trec.read_qrels``), or Parquet qrels
    (``formats.parquet.read_qrels``), into ``QrelsColumns``.

    Raises:
        InputFormatError: the file breaks the qrels format (file:line or row in the message).
    """
    from workbench.formats import parquet

    if parquet.is_parquet(path):
        return qrels_columns_from_mapping(parquet.read_qrels(path))
    return qrels_columns_from_mapping(trec.read_qrels(path))
