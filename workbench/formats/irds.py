"""Reading a collection from the local ir_datasets cache, never downloading.

``read_dataset("cranfield")`` loads an ir_datasets dataset by id and iterates
its documents, queries and qrels **with every download path of ir_datasets
switched off**: a file that is not in the local cache (``$IR_DATASETS_HOME``,
default ``~/.ir_datasets``) makes ``NotInCacheError`` (naming the dataset, the
cache folder and how to fetch it once, outside the workbench) instead of a
network request. Nothing is downloaded at run time.

Mapping to the workbench's records:

* document: ``doc_id``; ``title`` when the record has one; ``text`` when it
  has one, else ``default_text()``; other string fields (``author``, ``bib``,
  ``url``, ...) are returned as metadata.
* query: ``query_id``; the query text is ``text``, else ``title``, else
  ``default_text()``; ``description`` and ``narrative`` when present.
* qrels: ``query_id``, ``doc_id``, ``relevance`` (an integer). A pair listed
  twice with two grades is an error naming its record number.

Source:
    MacAvaney et al., Simplified Data Wrangling with ir_datasets, SIGIR 2021,
    doi:10.1145/3404835.3463254; the record types of ``ir_datasets.formats``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import InputFormatError, UnknownNameError, WorkbenchError
from workbench.formats.trec import GRADE_MAX, GRADE_MIN, add_grade, check_id, shown_id
from workbench.types import Document, Topic

PREFIX = "irds:"
"""How a dataset id is written where a folder is expected (``workbench ingest irds:cranfield``), as in PyTerrier."""

_DOC_SKIP = {"doc_id", "title", "text"}


class NotInCacheError(WorkbenchError):
    """A dataset's file is not in the local ir_datasets cache (and the workbench never downloads)."""


@dataclass(frozen=True)
class IrdsCollection:
    """A dataset as read from the cache.

    Attributes:
        dataset_id: the ir_datasets id.
        documents: in iteration order.
        metadata: doc_id -> other string fields of the document record.
        topics: in iteration order.
        qrels: topic_id -> doc_id -> grade (empty when the dataset has none).
        qrels_defs: grade -> definition, as the dataset documents them.
        cache: the cache folder that was read.
    """

    dataset_id: str
    documents: list[Document]
    metadata: dict[str, dict[str, str]]
    topics: list[Topic]
    qrels: dict[str, dict[str, int]]
    qrels_defs: dict[int, str]
    cache: Path


def cache_folder() -> Path:
    """``$IR_DATASETS_HOME``, else ``~/.ir_datasets`` (ir_datasets' own rule)."""
    return Path(os.environ.get("IR_DATASETS_HOME", Path.home() / ".ir_datasets"))


class _Blocked(BaseException):
    """Raised by a blocked download source. A BaseException, so that ir_datasets' mirror loop
    (``except Exception``) does not try the next mirror or log a failed download."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


@contextlib.contextmanager
def no_downloads() -> Iterator[None]:
    """Within the block, every ir_datasets download source raises instead of opening a connection."""
    from ir_datasets.util import download as dl

    classes = [c for c in vars(dl).values()
               if isinstance(c, type) and issubclass(c, dl.BaseDownload) and c is not dl.LocalDownload]
    saved = {c: c.__dict__.get("stream") for c in classes}

    def blocked(self: Any) -> Any:
        raise _Blocked(repr(self))

    try:
        for c in classes:
            setattr(c, "stream", blocked)  # noqa: B010
        yield
    finally:
        for c, fn in saved.items():
            if fn is None:
                with contextlib.suppress(AttributeError):
                    delattr(c, "stream")
            else:
                setattr(c, "stream", fn)  # noqa: B010


def _string(x: Any) -> str:
    return x if isinstance(x, str) else ("" if x is None else str(x))


def _query_text(q: Any) -> str:
    for attr in ("text", "title"):
        v = getattr(q, attr, None)
        if isinstance(v, str) and v.strip():
            return " ".join(v.split())
    return " ".join(str(q.default_text()).split())


def read_dataset(dataset_id: str, *, progress: Callable[[str], None] | None = None) -> IrdsCollection:
    """Read an ir_datasets dataset from the local cache (documents, queries, qrels).

    Args:
        dataset_id: the ir_datasets id, e.g. ``cranfield`` or ``beir/scifact/test``
            (a leading ``irds:`` is removed).
        progress: receives a line per part read.

    Returns:
        An ``IrdsCollection``.

    Raises:
        UnknownNameError: no such dataset id (listing ids that contain it, if any).
        NotInCacheError: a file the dataset needs is not in the local cache.
        InputFormatError: the dataset has no documents or no queries, an id
            with whitespace, or a pair with two grades (record numbers named).
    """
    say = progress or (lambda _m: None)
    name = dataset_id[len(PREFIX):] if dataset_id.startswith(PREFIX) else dataset_id
    where = f"{PREFIX}{name}"
    try:
        import ir_datasets
    except ImportError:  # pragma: no cover - ir_datasets is a dependency of the test extra
        raise WorkbenchError("reading ir_datasets needs the ir_datasets package: pip install ir_datasets") from None
    try:
        ds = ir_datasets.load(name)
    except KeyError:
        known = [k for k in ir_datasets.registry if name.split("/")[0] in k]
        raise UnknownNameError("ir_datasets dataset", name, known) from None
    if not ds.has_docs() or not ds.has_queries():
        raise InputFormatError(where, 0, f"expected a dataset with documents and queries, found "
                                         f"docs={ds.has_docs()}, queries={ds.has_queries()}. Choose a dataset id "
                                         "with both (e.g. a test split).")
    cache = cache_folder()
    try:
        with no_downloads():
            docs, meta = _documents(ds, where)
            say(f"{len(docs):,} documents read from the cache")
            topics = _topics(ds, where)
            qrels = _qrels(ds, where) if ds.has_qrels() else {}
            defs = {int(k): str(v) for k, v in (ds.qrels_defs() or {}).items()} if ds.has_qrels() else {}
    except _Blocked as e:
        raise NotInCacheError(
            f"{where}: a file of this dataset is not in the local ir_datasets cache ({cache}; needed: {e.what}); "
            f"the workbench never downloads. Fetch it once outside the workbench (e.g. `python -m ir_datasets "
            f"export {name} docs > /dev/null`), or set IR_DATASETS_HOME to the cache that holds it"
        ) from None
    except FileNotFoundError as e:
        raise NotInCacheError(f"{where}: a file of this dataset is missing ({e}); the workbench never downloads") from None
    return IrdsCollection(name, docs, meta, topics, qrels, defs, cache)


def _documents(ds: Any, where: str) -> tuple[list[Document], dict[str, dict[str, str]]]:
    docs: list[Document] = []
    meta: dict[str, dict[str, str]] = {}
    seen: dict[str, int] = {}
    for i, d in enumerate(ds.docs_iter(), 1):
        doc_id = check_id(where, i, _string(d.doc_id), "doc id")
        if doc_id in seen:
            raise InputFormatError(where, i, f"expected each doc id once, found {shown_id(doc_id)} again (first at document "
                                             f"{seen[doc_id]}).")
        seen[doc_id] = i
        fields = getattr(d, "_fields", ())
        title = _string(getattr(d, "title", "")) if "title" in fields else ""
        text = _string(d.text) if "text" in fields else _string(d.default_text())
        docs.append(Document(doc_id, title, text))
        extra = {f: getattr(d, f) for f in fields if f not in _DOC_SKIP and isinstance(getattr(d, f), str)}
        if extra:
            meta[doc_id] = extra
    if not docs:
        raise InputFormatError(where, 0, "expected at least one document, found none.")
    return docs, meta


def _topics(ds: Any, where: str) -> list[Topic]:
    topics: list[Topic] = []
    seen: set[str] = set()
    for i, q in enumerate(ds.queries_iter(), 1):
        topic_id = check_id(where, i, _string(q.query_id), "query id")
        if topic_id in seen:
            raise InputFormatError(where, i, f"expected each query id once, found {shown_id(topic_id)} again.")
        seen.add(topic_id)
        text = _query_text(q)
        fields = getattr(q, "_fields", ())
        title = text
        desc = _string(getattr(q, "description", "")) if "description" in fields else ""
        narr = _string(getattr(q, "narrative", "")) if "narrative" in fields else ""
        topics.append(Topic(topic_id, title, " ".join(desc.split()), " ".join(narr.split())))
    if not topics:
        raise InputFormatError(where, 0, "expected at least one query, found none.")
    return topics


def _qrels(ds: Any, where: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    for i, r in enumerate(ds.qrels_iter(), 1):
        grade = int(r.relevance)
        if not GRADE_MIN <= grade <= GRADE_MAX:
            raise InputFormatError(where, i, f"grade {grade} is out of range ({GRADE_MIN}..{GRADE_MAX}).")
        add_grade(qrels, first, where, i, check_id(where, i, _string(r.query_id), "query id"),
                  check_id(where, i, _string(r.doc_id), "doc id"), grade)
    return qrels
