"""pandas DataFrames as runs and qrels (adapter; for the notebook API ``workbench.evaluate``).

Columns are found by name; the names of ir_measures and PyTerrier frames are
accepted too, so their DataFrames can be passed as they are:

=========  ======================================  =====================================
role       names accepted (first found wins)       source of the aliases
=========  ======================================  =====================================
topic      ``topic_id``, ``query_id``, ``qid``     ir_measures ``query_id``; PyTerrier ``qid``
document   ``doc_id``, ``docno``                   PyTerrier ``docno``
score      ``score``                               all three
rank       ``rank`` (optional)                     TREC, PyTerrier
grade      ``grade``, ``relevance``, ``label``     ir_measures ``relevance``; PyTerrier ``label``
run        ``run`` (optional)                      several runs in one frame
=========  ======================================  =====================================

Ids must be strings, as in every other input (``formats.parquet``): a column
of numbers has already lost ``"007"`` vs ``"7"`` and is refused with the fix
(``df[col].astype(str)``). Scores must be finite numbers and grades whole numbers. A bad value is an ``InputFormatError``
whose path names the frame (``run DataFrame 'bm25'``) and whose line is the
1-based row position. The same rules as the TREC readers apply: a run's
repeated doc_id keeps its best-ranked occurrence (``scoring.columns.rank_run``),
a qrels pair repeated with another grade is an error.

Source:
    ir_measures (terrierteam/ir_measures) ``util.py`` column names; PyTerrier
    (terrier-org/pyterrier) results and qrels frames (``qid``, ``docno``, ``label``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from workbench.errors import InputFormatError, shown
from workbench.formats import trec
from workbench.scoring.columns import RunColumns, odd_ranks, pack_ids

TOPIC = ("topic_id", "query_id", "qid")
DOC = ("doc_id", "docno")
GRADE = ("grade", "relevance", "label")


def is_frame(value: object) -> bool:
    """True for a pandas DataFrame (checked without importing pandas)."""
    return type(value).__name__ == "DataFrame" and type(value).__module__.startswith("pandas")


def _find(df: Any, names: tuple[str, ...], where: str, role: str) -> str:
    for n in names:
        if n in df.columns:
            return n
    raise InputFormatError(where, 0, f"expected a {role} column named {' or '.join(names)}, found "
                                     f"{', '.join(shown(str(c)) for c in df.columns[:12]) or 'none'}. Rename the column.")


def _ids(series: Any, where: str, name: str) -> list[str]:
    if series.dtype.kind in "iufb" or any(not isinstance(v, str) for v in series.tolist() if v is not None):
        raise InputFormatError(where, 0, f"expected string ids in column {shown(name)}, found {series.dtype} values. "
                                         f"Write ids as strings (df[{shown(name)}] = df[{shown(name)}].astype(str)): a number "
                                         "has already lost '007' vs '7', so ids are never numbers.")
    if series.isna().any():
        row = int(np.flatnonzero(series.isna().to_numpy())[0]) + 1
        raise InputFormatError(where, row, f"expected a value in column {shown(name)}, found a missing value. "
                                           "Fill or drop the row.")
    values: list[str] = series.tolist()
    for row, v in enumerate(values, 1):
        if not v or any(c.isspace() for c in v):
            raise InputFormatError(where, row, f"expected a non-empty {name} without whitespace, found "
                                               f"{trec.shown_id(v)}. Replace spaces (e.g. by '_').")
    return values


def split_runs(df: Any, default_name: str) -> dict[str, Any]:
    """A frame as name -> frame: by its ``run`` column when it has one, else ``{default_name: df}``."""
    if "run" not in df.columns:
        return {default_name: df}
    return {str(name): part for name, part in df.groupby("run", sort=False)}


def run_columns_from_frame(df: Any, name: str, *, trust_file_order: bool = False) -> RunColumns:
    """``RunColumns`` of a run DataFrame (topic, document, score[, rank]; see the module docstring).

    Args:
        df: the frame; one row per result.
        name: the run's name (in errors and reports).
        trust_file_order: order each topic by the ``rank`` column (required
            then) instead of the scores.

    Raises:
        InputFormatError: a missing column, a missing value, an empty or
            whitespace id, a non-finite score or a non-integer rank (its row).
    """
    where = f"run DataFrame {shown(name)}"
    if len(df) == 0:
        raise InputFormatError(where, 0, "expected at least one result row, found an empty frame.")
    t, d = _find(df, TOPIC, where, "topic"), _find(df, DOC, where, "document")
    s = _find(df, ("score",), where, "score")
    topics = _ids(df[t], where, t)
    docs = _ids(df[d], where, d)
    try:
        scores = np.asarray(df[s].to_numpy(), dtype=np.float64)
    except (TypeError, ValueError):
        raise InputFormatError(where, 0, f"expected numbers in column {shown(s)}, found {df[s].dtype}.") from None
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):
        raise InputFormatError(where, int(bad[0]) + 1, f"score {shown(scores[bad[0]])} is not a finite number; "
                                                      "remove the row or fix the score.")
    ranks = None
    if trust_file_order:
        r = _find(df, ("rank",), where, "rank (for trust_file_order)")
        raw = df[r].to_numpy()
        if raw.dtype.kind not in "iu":
            raise InputFormatError(where, 0, f"expected integers in column {shown(r)}, found {df[r].dtype}.")
        ranks = raw.astype(np.int64)
    topic_map: dict[str, int] = {}
    codes = np.fromiter((topic_map.setdefault(x, len(topic_map)) for x in topics), dtype=np.int32, count=len(topics))
    return RunColumns(topic_ids=tuple(topic_map), topic_codes=codes, doc_words=pack_ids(docs), scores=scores,
                      file_ranks=ranks, name=name, n_lines=len(topics),
                      odd_ranks=None if ranks is None else odd_ranks(tuple(topic_map), codes, ranks))


def qrels_from_frame(df: Any, where: str = "qrels DataFrame") -> dict[str, dict[str, int]]:
    """topic_id -> doc_id -> grade of a qrels DataFrame (topic, document, grade; see the module docstring).

    Raises:
        InputFormatError: a missing column or value, an empty or whitespace id,
            a grade that is not a whole number in the store's range, a pair
            given two grades (its row), an empty frame.
    """
    if len(df) == 0:
        raise InputFormatError(where, 0, "expected at least one judgment row, found an empty frame.")
    t, d, g = _find(df, TOPIC, where, "topic"), _find(df, DOC, where, "document"), _find(df, GRADE, where, "grade")
    topics, docs = _ids(df[t], where, t), _ids(df[d], where, d)
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    for row, (topic, doc, grade) in enumerate(zip(topics, docs, df[g].tolist(), strict=True), 1):
        if isinstance(grade, bool) or not isinstance(grade, (int, float, np.integer, np.floating)) or \
                (isinstance(grade, (float, np.floating)) and not (math.isfinite(grade) and grade == int(grade))):
            raise InputFormatError(where, row, f"expected a whole-number grade in column {shown(g)}, found {shown(grade)}.")
        value = int(grade)
        if not trec.GRADE_MIN <= value <= trec.GRADE_MAX:
            raise InputFormatError(where, row, f"grade {value} is out of range ({trec.GRADE_MIN}..{trec.GRADE_MAX}).")
        trec.add_grade(qrels, first, where, row, topic, doc, value)
    return qrels


def check_mapping_run(run: Mapping[str, Mapping[str, float]], name: str) -> None:
    """Raise ``InputFormatError`` unless ``run`` is topic_id -> doc_id -> finite score with str ids."""
    where = f"run mapping {shown(name)}"
    for topic, docs in run.items():
        if not isinstance(topic, str) or not isinstance(docs, Mapping):
            raise InputFormatError(where, 0, f"expected topic_id (str) -> doc_id -> score, found {shown(topic)}: "
                                             f"{type(docs).__name__}.")
        for doc, score in docs.items():
            if not isinstance(doc, str) or isinstance(score, bool) or not isinstance(score, (int, float)) \
                    or not math.isfinite(score):
                raise InputFormatError(where, 0, f"expected doc_id (str) -> finite score for topic {shown(topic)}, "
                                                 f"found {shown(doc)}: {shown(score)}.")


def check_mapping_qrels(qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Raise ``InputFormatError`` unless ``qrels`` is topic_id -> doc_id -> integer grade with str ids."""
    for topic, docs in qrels.items():
        if not isinstance(topic, str) or not isinstance(docs, Mapping):
            raise InputFormatError("qrels mapping", 0, f"expected topic_id (str) -> doc_id -> grade, found "
                                                       f"{shown(topic)}: {type(docs).__name__}.")
        for doc, grade in docs.items():
            if not isinstance(doc, str) or isinstance(grade, bool) or not isinstance(grade, (int, np.integer)):
                raise InputFormatError("qrels mapping", 0, f"expected doc_id (str) -> integer grade for topic "
                                                           f"{shown(topic)}, found {shown(doc)}: {shown(grade)}.")
