"""Ingestion services used by the CLI and the app: folders, qrels files, Cranfield conversion (qrels export: ``services.judging.qrels_files``).

Folder layouts understood by ``ingest_folder``:

* **BEIR**: ``corpus.jsonl`` (or ``corpus.parquet``) + ``queries.jsonl`` (or,
  instead, ``queries.parquet``, a TREC topic file ``topics.txt`` or a
  ``topic_id<TAB>query`` file ``topics.tsv``, read by
  ``formats.trec.read_topics``), optionally ``qrels/*.tsv`` and
  ``qrels/*.parquet`` (each imported as qrels version ``<collection>-<stem>``)
  and/or ``qrels.reference.txt`` in TREC format or ``qrels.reference.parquet``
  (imported as ``<collection>-reference``, with the ``rule`` and ``source``
  read from ``qrels.meta.json`` next to it). Parquet files are read by
  ``formats.parquet`` (columns by name, errors naming the row).
* **ir_datasets**: ``irds:<dataset id>`` instead of a folder (e.g.
  ``irds:cranfield``): read from the local ir_datasets cache only, never
  downloaded (``formats.irds``); its qrels become ``<collection>-reference``.
* **SMART** (Cranfield): ``cran.all.1400``, ``cran.qry``, ``cranqrel``; the
  qrels become ``<collection>-reference`` with ``formats.smart.GRADE_RULE``.

Metadata (``workbench.metadata``; stored with ``workbench.store.metadata``):

* document metadata: the ``metadata`` objects of ``corpus.jsonl`` (BEIR;
  non-scalar values are skipped and reported), the columns of ``corpus.parquet``
  other than id, title and text, or ``author``/``bib``/``year``/
  ``source`` of the SMART fields (``formats.smart``), plus the side file
  ``doc_metadata.{jsonl,csv,tsv,parquet}`` (``doc_id`` + one column per key,
  ``formats.metadata``). Both sources may give the same key only with the same
  value. Document metadata is part of the collection version's hash.
* topic metadata: the ``metadata`` keys of ``queries.jsonl`` other than
  description/narrative (e.g. ``smart_id``), tags of TREC ``<top>`` blocks with
  a closing tag (``<priority>critical</priority>``), plus the side file
  ``topic_metadata.{jsonl,csv,tsv,parquet}`` (``topic_id`` + columns). A topic's
  eligibility filter is its ``filter`` value (``scoring.filters``).

Every file is read and checked *before* anything is written: the collection
is then written in one transaction and each qrels version in one more, so a
malformed or mismatched file leaves the store as it was.

Unknown ids in qrels: a topic that is not a topic of the collection is an
error naming file and line; so is a document that is not in the collection,
unless ``allow_unknown_docs`` is set, in which case the qrels are imported and
the coverage line shows the share found. Re-importing identical qrels under
the same name is a no-op ("unchanged"); different content under a taken name
is a ``DuplicateNameError``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from workbench.errors import (
    DuplicateNameError,
    InputFormatError,
    UnknownNameError,
    ValidationError,
    shown,
)
from workbench.formats import beir, irds, parquet, smart, trec
from workbench.formats.io import check_writable_folder
from workbench.formats.metadata import (
    DOC_METADATA_STEM,
    TOPIC_METADATA_STEM,
    find_side_file,
    read_metadata_file,
)
from workbench.metadata import MetaValue, merge_metadata
from workbench.rubric import Rubric
from workbench.services.collections.convert import ConversionReport, Progress, ProgressStep
from workbench.store.collections import check_collection_name
from workbench.types import Document, Topic

if TYPE_CHECKING:
    from workbench.store import Store
    from workbench.store.collections import Collections, IngestReport
    from workbench.store.qrels import Qrels, QrelsCoverage, QrelsVersionInfo
    from workbench.store.rubrics import Rubrics

Layout = Literal["beir", "smart", "ir_datasets"]
QrelsFormat = Literal["trec", "beir", "cranqrel", "parquet", "ir_datasets"]

SMART_FILES = ("cran.all.1400", "cran.qry", "cranqrel")
CORPUS_FILES = ("corpus.jsonl", "corpus.parquet")
TOPIC_FILES = ("queries.jsonl", "topics.txt", "topics.tsv", "queries.parquet")
REFERENCE_QRELS = "qrels.reference.txt"
REFERENCE_QRELS_PARQUET = "qrels.reference.parquet"
QRELS_META = "qrels.meta.json"
CRANFIELD_DOC_METADATA = "doc_metadata.jsonl"
"""The side file of ``convert_cranfield``: ``year`` and ``source`` derived from ``.B`` (``smart.bib_fields``)."""


def _noop(_: str) -> None:
    pass


# -- results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class QrelsFile:
    """A qrels file found in a collection folder, read and ready to import."""

    name: str
    path: Path
    fmt: QrelsFormat
    qrels: dict[str, dict[str, int]]
    rule: str
    source: str


@dataclass(frozen=True)
class QrelsImport:
    """What importing one qrels file did.

    Attributes:
        info: the qrels version (new or existing).
        status: ``created`` or ``unchanged`` (same name and content already stored).
        coverage: share of its doc ids and topics found in the collection.
        notes: what a user must know about these qrels: positives only (no
            non-relevant judgment), or a rubric suggestion (only grades 0/1).
    """

    info: QrelsVersionInfo
    status: Literal["created", "unchanged"]
    coverage: QrelsCoverage
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class FolderContents:
    """Everything read from a collection folder, checked, nothing written yet.

    Attributes:
        layout: ``beir`` or ``smart``.
        documents, topics: the corpus and the topics.
        qrels_files: the reference qrels found.
        doc_metadata: doc_id -> key -> value (corpus/SMART fields merged with ``doc_metadata.*``).
        topic_metadata: topic_id -> key -> value (queries/topic file merged with ``topic_metadata.*``).
        metadata_files: the side files read.
        notes: things the user should know (e.g. skipped non-scalar BEIR metadata values).
    """

    layout: Layout
    documents: list[Document]
    topics: list[Topic]
    qrels_files: list[QrelsFile]
    doc_metadata: dict[str, dict[str, MetaValue]] = field(default_factory=dict)
    topic_metadata: dict[str, dict[str, MetaValue]] = field(default_factory=dict)
    metadata_files: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class FolderIngest:
    """What ``ingest_folder`` did: the collection report, one entry per qrels file, and notes."""

    layout: Layout
    collection: IngestReport
    qrels: list[QrelsImport] = field(default_factory=list)
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """True when anything was written."""
        return self.collection.changed or any(q.status == "created" for q in self.qrels)


# -- reading a folder -------------------------------------------------------------------


def detect_layout(folder: str | Path) -> Layout:
    """Which layout a collection folder uses.

    Raises:
        InputFormatError: the folder is missing or has neither layout's files.
    """
    if str(folder).startswith(irds.PREFIX):
        return "ir_datasets"
    p = Path(folder)
    check_input_folder(p, "a collection folder")
    corpus = [f for f in CORPUS_FILES if (p / f).is_file()]
    if len(corpus) > 1:
        raise InputFormatError(str(folder), 0, f"expected one corpus file, found both {' and '.join(corpus)}. "
                                               "Remove one of them.")
    if corpus:
        if not any((p / f).is_file() for f in TOPIC_FILES):
            raise InputFormatError(
                str(folder), 0, f"expected one of {', '.join(TOPIC_FILES)} next to {corpus[0]}, found none. Add the topics file."
            )
        return "beir"
    if all((p / f).is_file() for f in SMART_FILES):
        return "smart"
    found = sorted(x.name for x in p.iterdir())[:10]
    raise InputFormatError(
        str(folder), 0,
        f"expected corpus.jsonl + queries.jsonl (BEIR) or {', '.join(SMART_FILES)} (SMART), found {found}. "
        "Convert the collection first (e.g. `workbench convert cranfield`).",
    )


def _meta_for(path: Path) -> dict[str, Any]:
    meta_path = path.with_name(QRELS_META)
    if not meta_path.is_file():
        return {}
    meta = trec.parse_json(trec.read_text(meta_path), meta_path)
    if not isinstance(meta, dict):
        raise InputFormatError(str(meta_path), 1, "expected a JSON object, found another JSON value. Fix the file.")
    return meta


def read_folder(folder: str | Path, name: str) -> tuple[Layout, list[Document], list[Topic], list[QrelsFile]]:
    """Read and check every file of a collection folder (nothing is written).

    Args:
        folder: the collection folder.
        name: the collection name (used to name qrels versions).

    Returns:
        (layout, documents, topics, qrels files); ``read_collection_folder``
        also returns the metadata.

    Raises:
        InputFormatError: any file is malformed (file:line), or the layout is unknown.
    """
    c = read_collection_folder(folder, name)
    return c.layout, c.documents, c.topics, c.qrels_files


def read_collection_folder(folder: str | Path, name: str) -> FolderContents:
    """Read and check every file of a collection folder, metadata included (nothing is written).

    Args:
        folder: the collection folder (see the module docstring), or ``irds:DATASET``.
        name: the collection name (used to name qrels versions).

    Returns:
        ``FolderContents``.

    Raises:
        InputFormatError: any file is malformed (file:line), the layout is
            unknown, a side file names an id that is not in the corpus or the
            topics, or gives a key another source gives with a different value.
    """
    layout = detect_layout(folder)
    qrels_files: list[QrelsFile] = []
    notes: list[str] = []
    if layout == "ir_datasets":
        c = irds.read_dataset(str(folder))
        if c.qrels:
            rule = "grades as in the ir_datasets qrels (relevance)"
            if c.qrels_defs:
                rule += "; " + "; ".join(f"{g}: {d}" for g, d in sorted(c.qrels_defs.items()))
            qrels_files.append(QrelsFile(f"{name}-reference", Path(str(folder)), "ir_datasets", c.qrels, rule,
                                         f"{irds.PREFIX}{c.dataset_id} from {c.cache}"))
        return FolderContents(layout, c.documents, c.topics, qrels_files)
    p = Path(folder)
    doc_meta: dict[str, dict[str, MetaValue]]
    topic_meta: dict[str, dict[str, MetaValue]] = {}
    if layout == "beir":
        if (p / "corpus.jsonl").is_file():
            docs, doc_meta, skipped = beir.read_corpus_with_metadata(p / "corpus.jsonl")
            notes += _skipped_note(p / "corpus.jsonl", skipped)
            doc_source = "corpus.jsonl"
        else:
            docs, table = parquet.read_corpus(p / "corpus.parquet")
            doc_meta = parquet_metadata(p / "corpus.parquet", table)
            doc_source = "corpus.parquet"
        topic_file = next(p / f for f in TOPIC_FILES if (p / f).is_file())
        if topic_file.suffix == ".jsonl":
            topics, topic_meta, tskipped = beir.read_queries_with_metadata(topic_file)
            notes += _skipped_note(topic_file, tskipped)
        elif topic_file.suffix == ".parquet":
            topics = parquet.read_queries(topic_file)
        else:
            topics, topic_meta = trec.read_topics_with_metadata(topic_file)
        topic_source = topic_file.name
        refs = [p / f for f in (REFERENCE_QRELS, REFERENCE_QRELS_PARQUET) if (p / f).is_file()]
        if len(refs) > 1:
            raise InputFormatError(str(p), 0, f"expected one reference qrels file, found both {REFERENCE_QRELS} and "
                                              f"{REFERENCE_QRELS_PARQUET}. Remove one of them.")
        for ref in refs:
            meta = _meta_for(ref)
            is_parquet = ref.suffix == ".parquet"
            qrels_files.append(QrelsFile(
                f"{name}-reference", ref, "parquet" if is_parquet else "trec",
                parquet.read_qrels(ref) if is_parquet else trec.read_qrels(ref),
                str(meta.get("rule", "grades as in the file")), str(meta.get("source", ref.as_posix())),
            ))
        qdir = p / "qrels"
        if qdir.is_dir():
            for q in sorted([*qdir.glob("*.tsv"), *qdir.glob("*.parquet")]):
                fmt: QrelsFormat = "parquet" if q.suffix == ".parquet" else "beir"
                grades = parquet.read_qrels(q) if fmt == "parquet" else beir.read_qrels_tsv(q)
                qrels_files.append(QrelsFile(
                    f"{name}-{q.stem}", q, fmt, grades, "grades as in the file (BEIR score)", q.as_posix(),
                ))
        names = [qf.name for qf in qrels_files]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup:
            raise InputFormatError(str(qdir), 0, f"expected one qrels file per name, found two that make {dup!r} "
                                                 "(a .tsv and a .parquet with one stem). Rename one of them.")
    else:
        cdocs = smart.read_cranfield_documents(p / "cran.all.1400")
        queries = smart.read_cranfield_queries(p / "cran.qry")
        docs = [d.document() for d in cdocs]
        topics = [q.topic() for q in queries]
        doc_meta = {d.doc_id: dict(d.metadata()) for d in cdocs}
        topic_meta = {q.topic_id: {"smart_id": q.smart_id} for q in queries}
        qpath = p / "cranqrel"
        qrels_files.append(QrelsFile(
            f"{name}-reference", qpath, "cranqrel", smart.read_cranqrel(qpath), smart.GRADE_RULE, qpath.as_posix(),
        ))
        doc_source, topic_source = "cran.all.1400", "cran.qry"
    side_files: list[Path] = []
    doc_side = find_side_file(p, DOC_METADATA_STEM)
    if doc_side is not None:
        side_files.append(doc_side)
        doc_meta = _merge_side(doc_meta, read_metadata_file(doc_side, "doc_id"), doc_side, doc_source,
                               {d.doc_id for d in docs}, "doc id", "document")
    topic_side = find_side_file(p, TOPIC_METADATA_STEM)
    if topic_side is not None:
        side_files.append(topic_side)
        topic_meta = _merge_side(topic_meta, read_metadata_file(topic_side, "topic_id"), topic_side, topic_source,
                                 {t.topic_id for t in topics}, "topic id", "topic")
    return FolderContents(layout, docs, topics, qrels_files, doc_meta, topic_meta, tuple(side_files), tuple(notes))


def parquet_metadata(path: Path, corpus: parquet.ParquetTable) -> dict[str, dict[str, MetaValue]]:
    """The metadata columns of a ``corpus.parquet`` (its columns other than id, title and text)."""
    from workbench.formats.metadata import metadata_from_parquet_columns

    used = set(corpus.names.values())
    extra = [n for n in corpus.extra if n not in used]
    if not extra:
        return {}
    t = parquet.read_table(path, [parquet.DOC_ID], what="corpus", keep_extra=True)
    values = {n: v for n, v in t.extra_values.items() if n in extra}
    return {d: m for d, m in metadata_from_parquet_columns(str(path), t.values["doc_id"], values).items() if m}


def _skipped_note(path: Path, skipped: Mapping[str, int]) -> list[str]:
    if not skipped:
        return []
    keys = ", ".join(f"{k} ({n:,})" for k, n in sorted(skipped.items())[:8])
    return [f"{path}: skipped {sum(skipped.values()):,} metadata value(s) that are not strings, numbers, dates "
            f"or booleans, or whose key is not a valid metadata key: {keys}"]


def _merge_side(
    base: dict[str, dict[str, MetaValue]],
    side: dict[str, dict[str, MetaValue]],
    side_path: Path,
    base_name: str,
    known: set[str],
    id_word: str,
    what: str,
) -> dict[str, dict[str, MetaValue]]:
    unknown = [i for i in side if i not in known]
    if unknown:
        raise InputFormatError(
            str(side_path), 0,
            f"expected {id_word}s of {base_name}, found {trec.shown_id(unknown[0])} "
            f"({len(unknown):,} of {len(side):,} ids are unknown). Check the ids' case and prefix.",
        )
    merged, conflicts = merge_metadata(base, side)
    if conflicts:
        i, k, a, b = conflicts[0]
        raise InputFormatError(
            str(side_path), 0,
            f"{what} {trec.shown_id(i)}: key {k!r} is {shown(a)} in {base_name} and {shown(b)} here "
            f"({len(conflicts):,} conflicting value(s)). Give each key in one place, or the same value in both.",
        )
    return merged


def _scan(path: Path, fmt: QrelsFormat) -> Iterator[tuple[int, str, str]]:
    if fmt == "trec":
        return trec.scan_ids(path, "qrels")
    if fmt == "beir":
        return beir.scan_qrels_tsv_ids(path)
    if fmt == "parquet":
        return parquet.scan_qrels_ids(path)
    return smart.scan_cranqrel_ids(path)


def _scan_file(qf: QrelsFile) -> Iterator[tuple[int, str, str]]:
    """(line or row or record, topic, doc) of a qrels file, to name the first unknown id."""
    if qf.fmt == "ir_datasets":
        pairs = ((t, d) for t, grades in qf.qrels.items() for d in grades)
        return ((i, t, d) for i, (t, d) in enumerate(pairs, 1))
    return _scan(qf.path, qf.fmt)


def _where(qf: QrelsFile, lineno: int, problem: str) -> InputFormatError:
    if qf.fmt == "parquet":
        return parquet.row_error(qf.path, lineno, problem)
    return InputFormatError(str(qf.path), lineno, problem)


def check_qrels_ids(
    qf: QrelsFile,
    collection: str,
    known_topics: set[str],
    missing_docs: set[str],
    n_docs_total: int,
    *,
    allow_unknown_docs: bool,
) -> None:
    """Raise at the first qrels line whose topic (or, unless allowed, document) is unknown.

    Args:
        qf: the qrels file, already read.
        collection: the collection name, for the message.
        known_topics: topic ids of the collection.
        missing_docs: the qrels doc ids that are not in the collection.
        n_docs_total: distinct doc ids in the qrels (for the share in the message).
        allow_unknown_docs: accept unknown doc ids (the coverage line reports them).

    Raises:
        InputFormatError: naming the file, the line and the unknown id.
    """
    unknown_topics = [t for t in qf.qrels if t not in known_topics]
    check_docs = bool(missing_docs) and not allow_unknown_docs
    if not unknown_topics and not check_docs:
        return
    bad_topics = set(unknown_topics)
    for lineno, topic, doc in _scan_file(qf):
        if topic in bad_topics:
            raise _where(
                qf, lineno,
                f"expected a topic of collection {collection!r}, found topic {trec.shown_id(topic)} "
                f"({len(bad_topics)} of {len(qf.qrels)} qrels topics are unknown). "
                "Check the topic numbering, or add the topic to the collection's topics.",
            )
        if check_docs and doc in missing_docs:
            found = n_docs_total - len(missing_docs)
            raise _where(
                qf, lineno,
                f"expected a document of collection {collection!r}, found doc id {trec.shown_id(doc)} "
                f"({found:,} of {n_docs_total:,} qrels doc ids, {found / n_docs_total:.1%}, are in the collection). "
                "Check the ids' case and prefix, or pass --allow-unknown-docs to import anyway.",
            )
    raise AssertionError("unknown id not found on any line")  # pragma: no cover - scan mirrors the reader


def check_qrels_grades(qf: QrelsFile, collection: str, rubric: Rubric) -> None:
    """Raise at the first qrels line whose grade is not on the collection's rubric.

    A grade off the scale breaks numbers later: ``nDCG(dcg='exp-log2')`` of grade
    2147483647 overflows to infinity, and agreement and publishing meet grades
    the rubric does not define.

    Args:
        qf: the qrels file, already read.
        collection: the collection name, for the message.
        rubric: the scale the grades must belong to.

    Raises:
        InputFormatError: naming the file, the line, the grade and the rubric's range.
    """
    allowed = set(rubric.values)
    off = {(t, d) for t, grades in qf.qrels.items() for d, g in grades.items() if g not in allowed}
    if not off:
        return
    n = sum(len(g) for g in qf.qrels.values())
    scale = f"{min(allowed)} to {max(allowed)}" if allowed == set(range(min(allowed), max(allowed) + 1)) \
        else ", ".join(map(str, sorted(allowed)))
    for lineno, topic, doc in _scan_file(qf):
        if (topic, doc) in off:
            raise _where(
                qf, lineno,
                f"expected a grade of collection {collection!r}'s rubric {rubric.name!r} ({scale}), found grade "
                f"{qf.qrels[topic][doc]} for topic {trec.shown_id(topic)} document {trec.shown_id(doc)} "
                f"({len(off):,} of {n:,} entries are off the scale). Map the grades onto the rubric, or choose "
                f"the rubric they use first: workbench rubric {collection} NAME --lead LEAD.",
            )
    raise AssertionError("off-scale grade not found on any line")  # pragma: no cover - scan mirrors the reader


# -- ingest ----------------------------------------------------------------------------


def _check_topic_filters(contents: FolderContents, folder: Path) -> None:
    """Refuse topics whose ``filter`` metadata does not parse or names a key no document has, before writing.

    Raises:
        ValidationError: naming the folder, the topic and the problem (column and caret).
    """
    from workbench.scoring.eligibility import DEFAULT_FILTER_KEY, check_filters, topic_filters
    from workbench.scoring.filters import MetadataColumns

    if not any(DEFAULT_FILTER_KEY in m for m in contents.topic_metadata.values()):
        return
    try:
        filters = topic_filters(contents.topic_metadata)
        check_filters(filters, MetadataColumns([d.doc_id for d in contents.documents], contents.doc_metadata))
    except ValidationError as e:
        raise ValidationError(f"{folder}: topic metadata {DEFAULT_FILTER_KEY!r}: {e}") from None


def ingest_folder(
    store: Store,
    folder: str | Path,
    *,
    name: str | None = None,
    allow_unknown_docs: bool = False,
    replace_topic_metadata: bool = False,
    created_by: str = "workbench ingest",
    progress: Progress | None = None,
) -> FolderIngest:
    """Ingest a collection folder: documents, topics and any reference qrels.

    Args:
        store: the workbench store.
        folder: a BEIR or SMART folder (see the module docstring).
        name: the collection name (letters, digits, ``_``, ``.``, ``-``; 1 to
            64 characters); default the folder's name.
        allow_unknown_docs: import qrels whose doc ids are not all in the corpus.
        replace_topic_metadata: let the folder's topic metadata change stored
            values (the old ones are kept in the store's history).
        created_by: recorded on new qrels versions.
        progress: receives ``[starting]``/``[finished]`` lines (e.g. stderr).

    Returns:
        A ``FolderIngest``. A second identical ingest reports ``unchanged``
        everywhere and writes nothing.

    Raises:
        InputFormatError: a malformed file, or an unknown topic/doc id in qrels (file:line).
        ValidationError: a bad collection name (checked before reading), or
            e.g. a changed topic text (see ``ingest_collection``).
        DuplicateNameError: a qrels version name taken by different content.
    """
    say = progress or _noop
    source = str(folder)
    if source.startswith(irds.PREFIX):
        name = name or source[len(irds.PREFIX):].strip("/").replace("/", "-")
    else:
        name = name or Path(folder).resolve().name
    folder = Path(folder)
    check_collection_name(name)
    with ProgressStep(say, f"read {folder}") as step:
        contents = read_collection_folder(folder, name)
        layout, docs, topics, qrels_files = contents.layout, contents.documents, contents.topics, contents.qrels_files
        step.detail = f"{layout}: {len(docs):,} documents, {len(topics):,} topics, {len(qrels_files)} qrels file(s)"
        if contents.metadata_files:
            step.detail += f", metadata from {', '.join(f.name for f in contents.metadata_files)}"

    # Check qrels against what the collection will hold (existing topics + these), before writing.
    doc_ids = {d.doc_id for d in docs}
    existing_topics: set[str] = set()
    try:
        existing_topics = set(store.collections.get_topics(name))
    except UnknownNameError:
        pass
    known_topics = existing_topics | {t.topic_id for t in topics}
    for qf in qrels_files:
        qdocs = {d for grades in qf.qrels.values() for d in grades}
        check_qrels_ids(qf, name, known_topics, qdocs - doc_ids, len(qdocs), allow_unknown_docs=allow_unknown_docs)
        _check_name_free(store.qrels, qf.name, qf.qrels)

    _check_topic_filters(contents, folder)

    from workbench.services.collections.unit_files import read_unit_files, store_groups

    units = read_unit_files(folder)  # chunk_map.tsv, chunks.meta.json, duplicate_groups.tsv (checked before writing)
    with ProgressStep(say, f"store collection {name}") as step:
        report = store.collections.ingest_collection(
            name, docs, topics, source=source, description=f"ingested from {source}",
            metadata=contents.doc_metadata, topic_metadata=contents.topic_metadata,
            replace_topic_metadata=replace_topic_metadata, chunk_map=units.chunk_map,
            chunk_source=units.chunk_source)
        step.detail = report.status
    unit_notes = store_groups(store.units, name, docs, units)
    if units.chunk_map is not None:
        unit_notes.insert(0, f"chunk map: {len(units.chunk_map):,} chunks of {len(units.chunk_map.doc_ids):,} "
                             "documents (part of the collection version)")
    imports = []
    for qf in qrels_files:
        with ProgressStep(say, f"store qrels {qf.name}") as step:
            imp = _store_qrels(store.qrels, store.rubrics, qf, name, created_by=created_by)
            step.detail = imp.status
        imports.append(imp)
    return FolderIngest(layout, report, imports, contents.notes + tuple(unit_notes))


def _check_name_free(qrels_versions: Qrels, qrels_name: str, qrels: Mapping[str, Mapping[str, int]]) -> None:
    from workbench.store.qrels import qrels_content_hash

    try:
        info = qrels_versions.get_qrels_info(qrels_name)
    except UnknownNameError:
        return
    if info.content_hash != qrels_content_hash(qrels):
        raise DuplicateNameError(
            f"qrels version {qrels_name!r} already exists with different content (hash {info.content_hash[:12]}); "
            "qrels versions are immutable: import under a new --name"
        )


def qrels_notes(rubrics: Rubrics, collection: str, qrels: Mapping[str, Mapping[str, int]]) -> tuple[str, ...]:
    """Warnings and suggestions for imported qrels: positives only; only grades 0/1 -> rubric ``binary``;
    grades off the collection's rubric (an ingested collection's reference qrels may bring a scale of its
    own, which ``qrels import`` refuses: choose the rubric that holds them before judging or importing more).
    """
    from workbench.scoring.qrels_checks import positives_only, positives_only_warning, qrels_grades
    from workbench.services.judging.rubrics import suggested_rubric

    notes = []
    if positives_only(qrels_grades(qrels)):
        notes.append("warning: " + positives_only_warning(1))
    rubric = rubrics.collection_rubric(collection)
    off = sorted({g for grades in qrels.values() for g in grades.values()} - set(rubric.values))
    if off:
        n_off = sum(1 for grades in qrels.values() for g in grades.values() if g not in rubric.values)
        shown = ", ".join(map(str, off[:5])) + (", ..." if len(off) > 5 else "")
        notes.append(f"warning: {n_off:,} qrels entries hold grades off the rubric {rubric.name!r} of collection "
                     f"{collection!r} ({min(rubric.values)} to {max(rubric.values)}): {shown}. Choose a rubric "
                     f"that holds them (`workbench rubric define FILE.toml`, then `workbench rubric {collection} "
                     "NAME`); nDCG with dcg='exp-log2' is undefined for a grade whose gain overflows")
    suggestion = suggested_rubric(qrels)
    if suggestion and rubrics.collection_rubric(collection).name != suggestion:
        notes.append(f"rubric: the qrels hold only grades 0 and 1; judge {collection} on {suggestion!r} with "
                     f"`workbench rubric {collection} {suggestion} --lead LEAD --token TOKEN`")
    return tuple(notes)


def _store_qrels(
    qrels: Qrels, rubrics: Rubrics, qf: QrelsFile, collection: str, *, created_by: str,
) -> QrelsImport:
    from workbench.store.qrels import qrels_content_hash

    try:
        info = qrels.get_qrels_info(qf.name)
    except UnknownNameError:
        info = qrels.create_qrels_version(
            qf.name, collection, qf.qrels, origin="imported", rule=qf.rule, source=qf.source, created_by=created_by
        )
        return QrelsImport(info, "created", qrels.qrels_doc_coverage(collection, qf.qrels),
                           qrels_notes(rubrics, collection, qf.qrels))
    if info.content_hash != qrels_content_hash(qf.qrels) or info.collection != collection:
        raise DuplicateNameError(
            f"qrels version {qf.name!r} already exists with different content or collection; "
            "qrels versions are immutable: import under a new --name"
        )
    return QrelsImport(info, "unchanged", qrels.qrels_doc_coverage(collection, qf.qrels),
                       qrels_notes(rubrics, collection, qf.qrels))


def sniff_qrels_format(path: str | Path) -> QrelsFormat:
    """``parquet`` for a ``.parquet`` file or one that starts with Parquet's magic bytes; ``beir`` when the first
    non-blank line is the BEIR header, else ``trec``."""
    if Path(path).suffix.lower() == ".parquet" or parquet.is_parquet(path):
        return "parquet"
    for _, cols in trec.iter_columns(path):
        return "beir" if tuple(cols) == beir.QRELS_HEADER else "trec"
    raise trec.empty_file_error(path, "qrels")


def import_qrels_file(
    collections: Collections, rubrics: Rubrics, qrels_versions: Qrels,
    path: str | Path,
    *,
    name: str,
    collection: str,
    rule: str = "",
    fmt: QrelsFormat | None = None,
    allow_unknown_docs: bool = False,
    created_by: str = "workbench qrels import",
) -> QrelsImport:
    """Import a qrels file as an immutable qrels version of a collection.

    Args:
        collections: the store's collections.
        rubrics: the store's rubrics.
        qrels_versions: the store's qrels versions.
        path: a TREC qrels file, a BEIR qrels TSV (with header) or a cranqrel file.
        name: the new qrels version's name.
        collection: an existing collection.
        rule: how the grades were obtained (e.g. a grade mapping); default
            "grades as in the file".
        fmt: the format; None sniffs it (BEIR header or TREC).
        allow_unknown_docs: accept doc ids missing from the collection.
        created_by: recorded on the version.

    Returns:
        A ``QrelsImport`` (``unchanged`` when the same content is already stored under ``name``).

    Raises:
        InputFormatError: malformed file, unknown topic/doc id, or a grade off the
            collection's rubric (file:line).
        UnknownNameError: unknown collection.
        DuplicateNameError: ``name`` holds different content.
    """
    p = Path(path)
    fmt = fmt or sniff_qrels_format(p)
    readers: dict[QrelsFormat, Callable[[Path], dict[str, dict[str, int]]]] = {
        "trec": trec.read_qrels, "beir": beir.read_qrels_tsv, "cranqrel": smart.read_cranqrel,
        "parquet": parquet.read_qrels,
    }
    qrels = readers[fmt](p)
    default_rule = smart.GRADE_RULE if fmt == "cranqrel" else "grades as in the file"
    qf = QrelsFile(name, p, fmt, qrels, rule or default_rule, p.as_posix())
    known_topics = set(collections.get_topics(collection))
    qdocs = {d for grades in qrels.values() for d in grades}
    missing = collections.missing_doc_ids(collection, qdocs)
    check_qrels_ids(qf, collection, known_topics, missing, len(qdocs), allow_unknown_docs=allow_unknown_docs)
    check_qrels_grades(qf, collection, rubrics.collection_rubric(collection))
    return _store_qrels(qrels_versions, rubrics, qf, collection, created_by=created_by)


# -- Cranfield conversion -------------------------------------------------------------------


def _examples(queries: list[smart.CranfieldQuery]) -> list[smart.CranfieldQuery]:
    """The first four queries and the last one, each once (fewer for a small file)."""
    picked = sorted({i for i in (0, 1, 2, 3, len(queries) - 1) if 0 <= i < len(queries)})
    return [queries[i] for i in picked]


def _readme(src: Path, n_docs: int, derived: list[dict[str, str | int]], queries: list[smart.CranfieldQuery],
            qrels: Mapping[str, Mapping[str, int]]) -> str:
    years = [int(m["year"]) for m in derived if "year" in m]
    n_year, n_source = len(years), sum(1 for m in derived if "source" in m)
    year_range = f"{min(years)}-{max(years)}" if years else "none"
    grade_counts: dict[int, int] = {}
    for grades in qrels.values():
        for g in grades.values():
            grade_counts[g] = grade_counts.get(g, 0) + 1
    n_entries = sum(grade_counts.values())
    examples = "\n".join(f"| `.I {q.smart_id}` | {q.topic_id} | {q.text[:60]}{'...' if len(q.text) > 60 else ''} |"
                         for q in _examples(queries))
    code_of_grade = {4: "1", 3: "2", 2: "3", 1: "4", 0: "5 (written -1)"}
    mapping = "\n".join(
        f"| {code_of_grade[g]} | {g} | {grade_counts.get(g, 0):,} |" for g in (4, 3, 2, 1, 0)
    )
    n_rel10 = sum(1 for grades in qrels.values() if sum(1 for g in grades.values() if g >= 1) > 10)
    return f"""# Cranfield 1400, converted for the workbench

Generated by `workbench convert cranfield {src.as_posix()} <dest>`
(`workbench.services.collections.ingest.convert_cranfield`); do not edit by hand, re-run
the converter. Ingest with `workbench ingest sample_corpus/cranfield`.

## Source and licence

The classic Cranfield II aeronautics collection (Cleverdon, 1960s), as widely
redistributed for IR teaching and research (`cran.all.1400`, `cran.qry`,
`cranqrel`; relevance codes from `cranqrel.readme`). See `SOURCE.md`, copied
unchanged from the raw data folder. No licence is stated beyond this
redistribution note; the data is used here as sample data for teaching and
testing, as is customary.

## Files

| file | content |
| --- | --- |
| `corpus.jsonl` | {n_docs:,} documents: `_id` (the `.I` number), `title` (`.T`), `text` (`.W`), `metadata.author` (`.A`), `metadata.bib` (`.B`) |
| `queries.jsonl` | {len(queries):,} topics: `_id` (1..{len(queries)}, see below), `text` (`.W`), `metadata.smart_id` (the `.I` number) |
| `doc_metadata.jsonl` | document metadata side file: `doc_id`, `year` and `source` derived from `.B` (see below) |
| `qrels.reference.txt` | {n_entries:,} judgments over {len(qrels):,} topics, TREC format `topic 0 doc grade` |
| `qrels.meta.json` | the grade mapping, recorded as the `rule` of the imported qrels version |

## Query renumbering

The `.I` numbers of `cran.qry` (001, 002, 004, 008, ...) are not the query
numbers of `cranqrel`, which numbers the queries 1..{len(queries)} in file order.
Topic ids here are therefore the position in `cran.qry`; the `.I` number is
kept in `metadata.smart_id`. Joining on `.I` would score the wrong queries.

| `cran.qry` | topic id | text |
| --- | --- | --- |
{examples}

## Grade mapping

Cleverdon's codes put the most relevant first; the workbench grade inverts
them (grade = 5 - code; rubric `cranfield`):

| cranqrel code | grade | judgments |
| --- | --- | --- |
{mapping}

{len(qrels)} of {len(queries)} topics have judgments; {n_rel10} topics have more than 10
documents with grade >= 1, so R@10 has a ceiling below 1 for them.

## Document metadata

`workbench ingest` stores `metadata.author` (`.A`), `metadata.bib` (`.B`) and the
side file's `year` and `source` as document metadata (part of the collection
version). `year` is the last stand-alone year 1900-1969 in `.B` that is not a
report number ({n_year:,} of {n_docs:,} documents, {year_range}); `source` is the
journal or report series, the text of `.B` before its first comma or number,
spaces after dots removed, `+` written `&` ({n_source:,} documents; e.g.
`j.ae.scs`, `naca tn`, `arc r & m`). Filters such as `year <= 1956 and source in
["naca tn", "arc r & m"]` test them (`formats.smart.bib_fields` has the rules).

## Text clean-up

Lines of a field are joined with single spaces and runs of whitespace are
collapsed. The `.W` text of a document starts with a repeat of its title; it
is kept as is. In `cran.all.1400`, documents 471 and 995 are empty (no title,
no text), and documents 240 and 578 contain stray `.A`/`.B`/`.W` marker lines
inside their text: the markers are dropped and the text continues.
"""


def check_input_folder(path: Path, what: str) -> None:
    """Raise unless ``path`` is a folder, saying what was found instead.

    Raises:
        InputFormatError: nothing at the path, or a file (or FIFO, device) where a folder is expected.
    """
    if path.is_dir():
        return
    if not path.exists():
        raise InputFormatError(str(path), 0, f"expected {what}, found nothing at this path. Check the path.")
    raise InputFormatError(str(path), 0, f"expected {what}, found a file. Pass the folder that holds the files "
                                         f"(e.g. {path.parent if str(path.parent) != '.' else 'the current folder'}).")


def convert_cranfield(src: str | Path, dest: str | Path, *, progress: Progress | None = None) -> ConversionReport:
    """Convert the raw Cranfield SMART files into the workbench's BEIR + TREC layout.

    The general SMART converter (``services.collections.convert``) with the Cranfield
    preset (``convert.cranfield_spec``): writes ``corpus.jsonl`` (with
    ``.A``/``.B`` as ``metadata.author``/``metadata.bib``), ``queries.jsonl``,
    ``doc_metadata.jsonl`` (one line per document, in ``cran.all.1400`` order:
    ``{"doc_id": ..., "year": ..., "source": ...}``, the keys
    ``formats.smart.bib_fields`` finds, absent when not found),
    ``qrels.reference.txt`` (grades mapped by ``formats.smart.GRADE_OF_CODE``),
    ``qrels.meta.json``, ``README.md`` and a copy of ``SOURCE.md`` (when
    present) into ``dest``, all or none.

    Args:
        src: the folder with ``cran.all.1400``, ``cran.qry`` and ``cranqrel``.
        dest: the output folder (created if missing).
        progress: receives ``[starting]``/``[finished]`` lines.

    Returns:
        A ``ConversionReport`` with the counts.

    Raises:
        InputFormatError: a raw file is malformed, or cranqrel names a query
            outside 1..n or a document not in ``cran.all.1400`` (file:line).
    """
    from workbench.services.collections import convert

    say = progress or _noop
    s, d = Path(src), Path(dest)
    wanted = f"{', '.join(SMART_FILES[:-1])} and {SMART_FILES[-1]}"
    check_input_folder(s, f"a folder with {wanted}")
    check_writable_folder(d, what="DEST")  # before the 1,400 documents are read
    with ProgressStep(say, f"read {s}") as step:
        missing = [f for f in SMART_FILES if not (s / f).is_file()]
        if missing:
            present = [f for f in SMART_FILES if f not in missing]
            raise InputFormatError(
                str(s), 0, f"expected {wanted} in this folder, found {', '.join(present) or 'none of them'}; "
                           f"missing: {', '.join(missing)}. Put the raw Cranfield files together in one folder.")
        c = convert.read_collection(convert.cranfield_spec(s))
        step.detail = f"{len(c.documents):,} documents, {len(c.queries):,} queries, {c.n_judgments:,} judgments"
    queries = [smart.CranfieldQuery(q.topic.topic_id, q.smart_id, q.topic.title, q.line) for q in c.queries]
    derived = convert.derived_rows(c) or [(d.doc_id, {}) for d in c.documents]
    readme = _readme(s, len(c.documents), [m for _, m in derived], queries, c.qrels)  # built before anything is written
    with ProgressStep(say, f"write {d}"):
        files = convert.write_collection(c, d, readme=readme, meta=CRANFIELD_QRELS_META, source_md=s / "SOURCE.md",
                                         doc_metadata=derived)
    return ConversionReport(
        dest=d, n_documents=len(c.documents), n_topics=len(c.queries),
        n_qrels=c.n_judgments, n_qrels_topics=len(c.qrels), files=tuple(files),
    )


CRANFIELD_QRELS_META: dict[str, Any] = {
    "rule": smart.GRADE_RULE,
    "grade_of_code": {str(k): v for k, v in smart.GRADE_OF_CODE.items()},
    "rubric": "cranfield",
    "source": "cranqrel (Cranfield 1400), see README.md",
}
"""``qrels.meta.json`` of the Cranfield preset (as committed in ``sample_corpus/cranfield``)."""


def describe_ingest(result: FolderIngest) -> Iterable[str]:
    """Lines summarising an ingest for people (what was created vs unchanged, counts, versions, coverage)."""
    r = result.collection
    verb = {"created": "created", "new_version": "new version of", "unchanged": "unchanged:"}[r.status]
    yield f"collection {verb} {r.collection!r}: {r.n_documents:,} documents, version {r.collection_version[:12]}"
    if r.status == "new_version":
        yield (f"  parent version {r.parent_version[:12]}; documents +{r.n_docs_added:,} added, "
               f"-{r.n_docs_removed:,} removed, {r.n_docs_changed:,} changed")
    yield (f"topics: {r.n_topics:,} in collection ({len(r.topics_created):,} added, "
           f"{r.n_topics_unchanged:,} unchanged)")
    if r.n_docs_with_metadata:
        line = (f"document metadata: {r.n_docs_with_metadata:,} of {r.n_documents:,} documents, "
                f"keys {', '.join(r.metadata_keys)} (part of the collection version)")
        if r.status == "new_version":
            line += f"; {r.n_docs_metadata_changed:,} documents' metadata changed"
        yield line
    if r.topic_metadata is not None:
        t = r.topic_metadata
        yield (f"topic metadata: {t.n_topics:,} topics, keys {', '.join(t.keys)}: {t.n_added:,} values added, "
               f"{t.n_unchanged:,} unchanged, {t.n_replaced:,} replaced")
    for note in result.notes:
        yield f"note: {note}"
    for q in result.qrels:
        yield (f"qrels {q.status}: {q.info.name!r} ({q.info.n_topics:,} topics, {q.info.n_entries:,} entries, "
               f"{q.info.n_relevant:,} with grade >= 1; rule: {q.info.rule})")
        yield "  " + q.coverage.describe()
        for note in q.notes:
            yield "  " + note
    if not result.changed:
        yield "nothing changed"
