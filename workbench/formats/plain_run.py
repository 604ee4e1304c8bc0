"""Small TREC run and qrels files read with plain Python (no numpy): the input of ``scoring.small``.

``read_small_qrels`` does the same for a qrels file in the plain dialect
(``topic iter doc grade``, single spaces, whole-number grades), else leaves it
to ``formats.trec.read_qrels``; ``small_text_file`` is the size check both use.

``read_small_run`` reads a run file of at most ``SMALL_RUN_BYTES`` into a
``SmallRun`` (each topic's doc ids in canonical order, ``workbench.ranking``)
when the file is in the plain dialect the columnar fast path reads
(``formats.columnar``): every line ``topic Q0 doc rank score tag`` with single
spaces and LF, UTF-8 without a byte-order mark, one run tag of at most
``text.NAME_MAX`` characters, ranks written as unsigned integers of at most 9
digits (below ``scoring.rank_column.RANK_MAX``) and distinct within each topic,
finite plain decimal scores (``formats.trec``'s pattern), no blank line, no
repeated doc id within a topic. Anything else (a larger file, Parquet, tabs, CR,
a duplicate, a bad field, a control or other ``text.UNSAFE`` character anywhere,
a rank column the other readers warn about: ``scoring.rank_column.OddRanks``)
gives None, and the caller reads the file with
``formats.columnar.read_run_columns``, which reads the rest of the format or
raises the strict reader's ``InputFormatError`` naming the file and line. So a
file is accepted here only if the other readers give the same run, and errors
and warnings are reported once, by them.

Source:
    trec_eval's run format (``get_trec_results.c``); ``formats.columnar`` and
    ``formats.trec`` (the accepted dialect and patterns).
"""

from __future__ import annotations

import math
import os
import re
import stat
from pathlib import Path

from workbench.ranking import ranked_ids, ranked_ids_of
from workbench.scoring.small import SmallRun
from workbench.text import NAME_MAX, NOT_CONTROL_BYTES, UNSAFE_NON_ASCII

SMALL_RUN_BYTES = 4 << 20
"""Run files up to this size (about 100,000 lines) are scored without numpy (``scoring.small``).

Below it, importing numpy costs more than the whole pure-Python path (80 ms idle
against about 40 ms for the 43,000 lines of a TREC DL-size run); above it the
columnar scorer's per-line speed wins. ``bench/scoring/bench_scoring.py`` measures
both sides (its dl and msmarco cases)."""

_SCORE_CHARS = re.compile(r"[0-9.+eE-]*").fullmatch


def small_text_file(path: str | Path, max_bytes: int = SMALL_RUN_BYTES) -> int | None:
    """The size of ``path`` when it is a non-empty regular file of at most ``max_bytes`` that is not Parquet, else None.

    Anything that is not a regular file (``-``, a FIFO, a folder) is None without being opened;
    ``-`` is standard input even when a file named ``-`` exists in the current folder.
    """
    found = _small_bytes(path, max_bytes, head=4)
    return None if found is None or found[1] == b"PAR1" else found[0]


def _small_bytes(path: str | Path, max_bytes: int, *, head: int = -1) -> tuple[int, bytes] | None:
    """(size, the first ``head`` bytes, all with -1) of a non-empty regular file of at most ``max_bytes``, else None.

    ``-`` (standard input, even beside a file named ``-``), FIFOs and folders are None without being opened.
    """
    if str(path) == "-":
        return None
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or not 0 < st.st_size <= max_bytes:
            return None
        with open(path, "rb") as f:
            return st.st_size, f.read(head)
    except OSError:
        return None


def read_small_run(path: str | Path, *, max_bytes: int = SMALL_RUN_BYTES) -> SmallRun | None:
    """A small plain TREC run file as a ``SmallRun``, or None when another reader must read it.

    Args:
        path: the run file.
        max_bytes: the largest file read here (default ``SMALL_RUN_BYTES``).

    Returns:
        ``SmallRun`` named after the run tag, topics in order of first
        appearance, each topic's documents by score descending then doc_id
        descending; or None for anything outside the plain dialect (see the
        module docstring), a file larger than ``max_bytes``, an empty or
        unreadable file, or anything that is not a regular file.

    Example:
        >>> read_small_run("bm25.run").ranked["1"][:3]  # doctest: +SKIP
        ['d12', 'd7', 'd3']
    """
    # The file as columns: every line checked to hold exactly five spaces (one pass over the bytes), then
    # the text split on " " (line ends made spaces) a chunk at a time, each column a slice of the fields.
    lines = _plain_lines(path, max_bytes, 6)
    if lines is None:
        return None
    body, n = lines
    columns = _run_columns(body)
    if columns is None:
        return None
    tag, topics, docs, scores, ranks = columns
    if len(tag) > NAME_MAX:  # the strict reader refuses a longer run tag, naming line 1
        return None
    if not (-math.inf < min(scores) and max(scores) < math.inf):  # 1e999 reads as inf
        return None
    ranked = _ranked_by_topic(topics, docs, scores, ranks)
    if ranked is None:
        return None
    return SmallRun(ranked, name=tag, n_lines=n)


_CHUNK_CHARS = 1 << 16
"""The run's text is split into fields about this many characters (some 1,800 lines) at a time: one chunk's
fields are freed before the next chunk is split, so the reader touches a few MB rather than the 16 MB that
all the fields of a TREC DL-size run take at once (in a fresh process each new page costs a fault)."""


def _run_columns(body: str) -> tuple[str, list[str], list[str], list[float], list[str]] | None:
    """(run tag, topic column, doc column, scores, rank column) of a run text whose every line holds six fields,
    or None.

    None for an empty field, a second run tag, a rank outside ``_plain_ranks``, a score outside the plain
    pattern (``_plain_scores``) or one ``float`` refuses. ``body``: the file's text without its last line
    end, every line already checked to hold exactly five spaces (``_fields_per_line``), so each chunk cut
    at a line end holds whole lines.
    """
    topics: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    ranks: list[str] = []
    tag = ""
    start, size = 0, len(body)
    while start < size:
        end = body.find("\n", start + _CHUNK_CHARS)
        if end < 0:
            end = size
        fields = _split_fields(body[start:end])
        if fields is None:
            return None
        rank_texts, score_texts, tags = fields[3::6], fields[4::6], fields[5::6]
        tag = tag or tags[0]
        if tags.count(tag) != len(tags) or not (_plain_ranks(rank_texts) and _plain_scores(score_texts)):
            return None
        try:
            scores += map(float, score_texts)
        except ValueError:  # e.g. "1.2.3": the pattern's characters, not its shape
            return None
        topics += fields[0::6]
        docs += fields[2::6]
        ranks += rank_texts
        start = end + 1
    return tag, topics, docs, scores, ranks


def _ranked_by_topic(topics: list[str], docs: list[str], scores: list[float],
                     ranks: list[str]) -> dict[str, list[str]] | None:
    """topic -> doc ids in canonical order (``ranking.ranked_ids_of``), topics in order of first appearance;
    None when a topic repeats a doc id (the other readers keep the best-ranked line and say so) or a rank
    (``_plain_ranks`` made equal texts equal ranks; the other readers warn, ``scoring.rank_column.OddRanks``)."""
    order = list(dict.fromkeys(topics))
    starts: list[int] = []
    at = 0
    for t in order:  # first appearances, in order: each search starts where the last topic began
        at = topics.index(t, at)
        starts.append(at)
    starts.append(len(topics))
    out: dict[str, list[str]] = {}
    if all(topics[a:b].count(t) == b - a for t, a, b in zip(order, starts, starts[1:], strict=False)):
        # Each topic's lines are together (as every retriever writes them): slices of the columns.
        for t, a, b in zip(order, starts, starts[1:], strict=False):
            seg = docs[a:b]
            if len(set(seg)) != b - a or not _distinct_ranks(ranks[a:b]):
                return None
            out[t] = ranked_ids_of(seg, scores[a:b])
        return out
    by_topic: dict[str, dict[str, float]] = {t: {} for t in order}
    ranks_of: dict[str, list[str]] = {t: [] for t in order}
    n_seen = 0
    for t, d, x, r in zip(topics, docs, scores, ranks, strict=True):
        by_topic[t][d] = x
        ranks_of[t].append(r)
        n_seen += 1
    if sum(map(len, by_topic.values())) != n_seen or not all(map(_distinct_ranks, ranks_of.values())):
        return None
    return {t: ranked_ids(ds) for t, ds in by_topic.items()}


_COUNTING: list[list[str]] = [[], []]
"""``["0", "1", ...]`` and ``["1", "2", ...]`` as far as a topic needed them: the rank columns retrievers write."""


def _distinct_ranks(ranks: list[str]) -> bool:
    """One topic's ranks (plain unsigned integers, ``_plain_ranks``) are distinct values.

    The usual column, ``1 2 3 ...`` (or ``0 1 2 ...``) in file order, is one list comparison;
    anything else is checked as a set, with a leading zero (``07`` is ``7``) declined.
    """
    n = len(ranks)
    for start, counting in enumerate(_COUNTING):
        if len(counting) < n:
            counting.extend(map(str, range(start + len(counting), start + n)))
        if ranks == counting[:n]:
            return True
    return len(set(ranks)) == n and not any(r[0] == "0" and len(r) > 1 for r in ranks)


_NOT_SEPARATOR_BYTES = bytes(sorted(set(range(256)) - set(b" \n")))


def _plain_lines(path: str | Path, max_bytes: int, n_fields: int) -> tuple[str, int] | None:
    """(the text without its last line end, the number of lines) of a small plain text file whose
    every line holds ``n_fields`` fields, else None (``_small_bytes``, ``_plain_text``, ``_fields_per_line``;
    Parquet is None). The file's bytes are freed on return (a fresh process pays for each page it touches)."""
    found = _small_bytes(path, max_bytes)
    if found is None or found[1].startswith(b"PAR1"):
        return None
    text = _plain_text(found[1])
    if text is None:
        return None
    body = text[:-1] if text.endswith("\n") else text
    n = body.count("\n") + 1
    if not _fields_per_line(found[1], n, n_fields):
        return None
    return body, n


def _split_fields(lines: str) -> list[str] | None:
    """The fields of whole lines, in order (one split on " ", the line ends made spaces); None when a
    field is empty (two spaces, or a space at a line's start or end)."""
    flat = lines.replace("\n", " ")
    if "  " in flat or flat.startswith(" ") or flat.endswith(" "):
        return None
    return flat.split(" ")


def _fields_per_line(data: bytes, n_lines: int, n_fields: int) -> bool:
    """Every one of the ``n_lines`` lines of ``data`` holds exactly ``n_fields - 1`` spaces.

    The file's spaces and line ends in order (one C pass, ``bytes.translate``)
    must be ``n_fields - 1`` spaces then LF, ``n_lines`` times (the last LF
    optional): so no line is empty or has another count of fields, without a
    string per line.
    """
    seps = data.translate(None, _NOT_SEPARATOR_BYTES)
    line = b" " * (n_fields - 1) + b"\n"
    expected = line * n_lines
    return seps == expected or seps == expected[:-1]


def _plain_text(data: bytes) -> str | None:
    """``data`` as text when the plain readers may read it, else None (the strict reader then
    reads the file, or names the line that breaks its rules).

    None for: a byte that is not UTF-8, a byte-order mark, a tab, CR, VT or FF (the
    strict reader's separators), any other control character or ``text.UNSAFE``
    character (the strict reader refuses them in ids, ``formats.trec.iter_columns``).
    """
    if data.translate(None, NOT_CONTROL_BYTES):  # one C pass over the bytes
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.startswith("\ufeff") or (not text.isascii() and UNSAFE_NON_ASCII.search(text)):  # isascii: O(1) on str
        return None
    return text


def _plain_integers(values: list[str], max_digits: int) -> bool:
    """Every value matches ``[+-]?[0-9]{1,max_digits}``: grades with 9 (``read_small_qrels``). Unsigned
    values are checked in one pass over their join."""
    joined = "".join(values)
    if joined.isascii() and joined.isdigit() and max(map(len, values), default=0) <= max_digits:
        return True
    pattern = re.compile(rf"[+-]?[0-9]{{1,{max_digits}}}")  # signed values only (re caches the pattern)
    return all(pattern.fullmatch(v) for v in values)


def _plain_ranks(ranks: list[str]) -> bool:
    """Every rank is ``[0-9]{1,9}``: unsigned and below ``scoring.rank_column.RANK_MAX`` (one pass over their join)."""
    joined = "".join(ranks)
    return joined.isascii() and joined.isdigit() and max(map(len, ranks), default=0) <= 9


def _plain_scores(scores: list[str]) -> bool:
    """Every score (already read by ``float``) is a plain decimal of ``formats.trec``'s pattern.

    ``float`` accepts exactly that pattern once its text is ASCII and holds
    only digits, ``.``, ``+``, ``-``, ``e`` and ``E`` (no ``_``, no ``inf`` or ``nan``).
    """
    return _SCORE_CHARS("".join(scores)) is not None


def read_small_qrels(path: str | Path, *, max_bytes: int = SMALL_RUN_BYTES) -> dict[str, dict[str, int]] | None:
    """A small plain TREC qrels file, as ``formats.trec.read_qrels`` reads it, or None to let that reader read it.

    Plain: every line ``topic iter doc grade`` with single spaces and LF,
    UTF-8 without a byte-order mark, no blank line, grades written as whole
    numbers of at most 9 digits (an optional sign), a repeated (topic, doc)
    pair only with the same grade. Anything else gives None, and
    ``read_qrels`` reads the file or raises its ``InputFormatError``.

    Returns:
        topic_id -> doc_id -> grade, topics and documents in file order; None
        as described, or for a file larger than ``max_bytes``.
    """
    # As the run reader: the whole file as columns, four fields checked on every line, no per-line split.
    lines = _plain_lines(path, max_bytes, 4)
    fields = None if lines is None else _split_fields(lines[0])
    if fields is None:
        return None
    del lines
    topics, docs, grade_texts = fields[0::4], fields[2::4], fields[3::4]
    del fields
    if not _plain_integers(grade_texts, 9):
        return None
    qrels: dict[str, dict[str, int]] = {}
    for topic, doc, grade in zip(topics, docs, map(int, grade_texts), strict=True):
        topic_docs = qrels.get(topic)
        if topic_docs is None:
            qrels[topic] = {doc: grade}
        elif topic_docs.setdefault(doc, grade) != grade:  # a repeat with another grade: the strict reader names both lines
            return None
    return qrels or None
