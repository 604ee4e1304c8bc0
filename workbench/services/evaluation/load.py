"""The load step: the qrels (a file or a stored version), the measures, and how the runs will be read.

A run reference is a run file path (TREC text or Parquet) or a stored run
name; a qrels reference is a qrels file path (TREC text or Parquet) or a
stored qrels version name (a path that exists wins). Files are read without
a store. Runs are not read here: ``Loaded.read_run`` reads one when the
evaluate step comes to it, so runs are read, scored and let go one at a time.

Small plain files (``small_runs``) are read at once by the pure-Python
reader and scored by ``scoring.small`` (no numpy import): the same numbers as
the columnar scorer, bit for bit.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import NotASampleError, UnknownNameError, ValidationError
from workbench.hashing import qrels_content_hash
from workbench.ranking import natural_key
from workbench.scoring.measures import (
    DEFAULT_CUTOFFS,
    EstimatedMeasure,
    Measure,
    default_measures,
    expand_measures,
    pooled_measures,
    with_residuals,
)
from workbench.scoring.small import SmallRun
from workbench.services.evaluation.refs import QrelsRef, RunRef

if TYPE_CHECKING:
    from workbench.scoring.columns import QrelsColumns, RankedRun
    from workbench.services.evaluation.refs import StoreOpener
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest
    from workbench.services.judging.qrels_files import ScoredFileMismatch


@dataclass(frozen=True)
class Loaded:
    """What the load step read: the qrels and the measures, and how each run will be read.

    Attributes:
        qrels: which qrels.
        measures: the report's measures, in report order.
        columns: the qrels as columns (the columnar scorer), or None on the small path.
        mapping: the qrels as topic_id -> doc_id -> grade (the small path), or None.
        small: the runs already read by the small-file reader, with each one's reading time (seconds),
            or None: every run is then read by ``read_run`` in its turn.
        warnings: what the qrels' checks against the labels folder found (``qrels_warnings``), first
            among the report's warnings.
        estimated: the estimated measures asked for (``Rhat@20``; ``scoring.measures.EstimatedMeasure``), in
            order: ``measures`` holds their pooled counterparts (R@20) instead, and the qrels must be a sample's
            (the restrict step checks a stored version; a file is refused here).
    """

    qrels: QrelsRef
    measures: tuple[Measure, ...]
    columns: QrelsColumns | None = None
    mapping: dict[str, dict[str, int]] | None = None
    small: tuple[tuple[SmallRun, float], ...] | None = None
    warnings: tuple[str, ...] = ()
    estimated: tuple[EstimatedMeasure, ...] = ()


def load(request: ScoreRequest, env: ScoreEnv) -> Loaded:
    """The load step: measures, then the qrels (and, when every input is a small plain file, the runs).

    The small path is taken for plain files with nothing stored or looked up: no qrels or runs given
    in memory, no topic set, slices, collection, exclusions, file order, recording, required filters,
    no-answer file or answer threshold.

    Estimated measures (``Rhat@20``) are set apart (``Loaded.estimated``) and their pooled counterparts scored.

    Raises:
        ValidationError, UnknownNameError: a bad measure or cutoff; a reference that is neither a file
            nor a stored name (the stored ones listed).
        NotASampleError: an estimated measure with a qrels file.
        InputFormatError: a malformed qrels file (file:line).
        EditedQrelsError: the qrels file was edited after its export (``qrels_warnings``).
    """
    asked = resolve_measures(request.measures, request.cutoffs)
    estimated = tuple(m for m in asked if isinstance(m, EstimatedMeasure))
    ms = pooled_measures(asked)
    notes = qrels_warnings(request, env)
    small = None
    if (env.qrels is None and env.run_sources is None and request.topics.topic_set is None
            and not request.slicing.by and not request.collection and not request.topics.exclude
            and not request.trust_file_order and not request.output.record and request.filtering.mode != "on"
            and request.no_answer.file is None and request.no_answer.threshold is None):
        small = small_runs(request.runs, request.qrels)
    if small is not None:
        from workbench.formats.plain_run import read_small_qrels

        qrels_map = read_small_qrels(request.qrels)
        if qrels_map is None:  # not the plain dialect: the strict reader reads it or names the bad line
            from workbench.formats import trec

            qrels_map = trec.read_qrels(request.qrels)
        qref = QrelsRef(request.qrels, "file", qrels_content_hash(qrels_map), n_topics=len(qrels_map),
                        n_entries=sum(len(d) for d in qrels_map.values()))
        check_estimable(estimated, qref)
        return Loaded(qref, ms, mapping=qrels_map, small=tuple(small), warnings=notes)
    qref, qcols = env.qrels if env.qrels is not None else load_qrels(request.qrels, env.open_store, allow_edited=True)
    check_estimable(estimated, qref)
    return Loaded(qref, ms, columns=qcols, warnings=notes, estimated=estimated)


def check_estimable(estimated: Sequence[EstimatedMeasure], qref: QrelsRef, *, sample: bool | None = None) -> None:
    """Refuse estimated measures asked of qrels that are not a judged sample's.

    Args:
        estimated: the estimated measures asked for (nothing to check when empty).
        qref: the qrels.
        sample: whether the stored version was published from a sample pool (None: not known yet; a file is
            refused all the same).

    Raises:
        NotASampleError: names the measure and the qrels version (or file).
    """
    if not estimated or (qref.origin == "stored" and sample is not False):
        return
    m = estimated[0]
    kind = "a file" if qref.origin == "file" else "given in memory"
    what = (f"qrels version {qref.name!r} was not published from a sample pool" if qref.origin == "stored"
            else f"qrels {qref.name!r} is {kind}, not a stored qrels version published from a sample pool")
    raise NotASampleError(
        f"measure {m} ({m.display()}) is estimated from a judged sample, and {what}: there is nothing to estimate "
        f"it from. Score it against a sample's qrels version (`workbench pool sample`, judge, publish; "
        f"docs/sampling.md), or use the pooled measure {m.pooled}.")


ALLOW_EDITED = "pass --allow-edited-qrels to `workbench score` to score it anyway, with a warning"
"""How to score an edited exported qrels file in place (``EditedQrelsError``'s last remedy)."""


def qrels_warnings(request: ScoreRequest, env: ScoreEnv) -> tuple[str, ...]:
    """The qrels reference checked against the labels folder, before anything is read.

    * A qrels file that a ``manifest.json`` beside it records under another sha256 was
      edited after its export: refused (``EditedQrelsError``), unless
      ``request.allow_edited_qrels``; then scored, with a warning saying so.
    * A stored qrels version whose export in ``env.labels_dir`` is incomplete or changed
      (a publish killed after its commit): scored (the stored version is the truth), with
      a warning naming the problem and the command that mends it.

    Qrels given in memory (``env.qrels``) are not checked.

    Returns:
        The warnings, in order (empty when everything agrees).

    Raises:
        EditedQrelsError: an edited exported file, not allowed.
    """
    if env.qrels is not None or request.qrels == "-":
        return ()
    path = Path(request.qrels)
    if path.is_file():
        mismatch = _edited_file(request.qrels, allow_edited=request.allow_edited_qrels)
        return (f"qrels {mismatch.describe()} (scored as asked: --allow-edited-qrels)",) if mismatch else ()
    if env.labels_dir is None or env.open_store is None:
        return ()
    from workbench.services.judging.qrels_files import check_export

    try:
        check = check_export(env.open_store().qrels, env.labels_dir, request.qrels)
    except UnknownNameError:
        return ()  # not a stored version: the load step names it
    return () if check.ok else (check.describe(),)


def _edited_file(ref: str, *, allow_edited: bool) -> ScoredFileMismatch | None:
    """The mismatch of a qrels file with the manifest beside it (``qrels_files.scored_file_mismatch``).

    Raises:
        EditedQrelsError: there is one and ``allow_edited`` is False.
    """
    from workbench.services.judging.qrels_files import EditedQrelsError, scored_file_mismatch

    mismatch = scored_file_mismatch(ref)
    if mismatch is not None and not allow_edited:
        raise EditedQrelsError(mismatch, ALLOW_EDITED)
    return mismatch


def resolve_measures(measures: Sequence[str] | None, cutoffs: Sequence[int] | None) -> tuple[Measure, ...]:
    """The measures of a report.

    Args:
        measures: names; a name that needs a cutoff and has none (``R``,
            ``nDCG(dcg='exp-log2')``) is expanded to every cutoff; a measure whose
            cutoff is optional or absent (``AP``, ``Rprec``) is taken as written.
            Each ``RBP(p=...)`` brings its residual on the next row. None or
            empty = the default report.
        cutoffs: the k of the default R@k rows and of expanded names
            (default 5, 10, 20, 50, 100).

    Raises:
        ValidationError, UnknownNameError: a bad name or cutoff.

    Example:
        >>> [str(m) for m in resolve_measures(["R", "nDCG@10", "AP", "RBP"], [10, 100])]
        ['R@10', 'R@100', 'nDCG@10', 'AP', 'RBP(p=0.8)', 'RBP_residual(p=0.8)']
    """
    ks = sorted(set(cutoffs)) if cutoffs else list(DEFAULT_CUTOFFS)
    if any(k < 1 for k in ks):
        raise ValidationError(f"expected cutoffs k >= 1, found {ks}. Write e.g. --k 10,100.")
    if not measures:
        return default_measures(ks)
    return with_residuals(expand_measures(measures, ks))


def _not_found(ref: str, kind: str, e: UnknownNameError) -> UnknownNameError:
    """Neither a file nor a stored name: say both, so a mistyped path is not read as a name."""
    known = ", ".join(e.known[:20]) + (" ..." if len(e.known) > 20 else "") or "(none)"
    err = UnknownNameError(kind, ref, e.known)
    err.args = (f"{ref}: no such file, and no stored {kind} has that name; stored: {known}",)
    return err


def load_qrels(ref: str, open_store: StoreOpener | None, *, allow_edited: bool = False,
               ) -> tuple[QrelsRef, QrelsColumns]:
    """Resolve a qrels reference (file path first, then stored version name).

    Args:
        ref: a qrels file path (``-``: standard input) or a stored qrels version name.
        open_store: the store, for a stored version (None: files only).
        allow_edited: read a file that a ``manifest.json`` beside it records under another
            sha256 (edited after its export); by default it is refused.

    Raises:
        InputFormatError: the file breaks the qrels format.
        UnknownNameError: neither a file nor a stored version (lists the stored ones).
        EditedQrelsError: the file was edited after its export (not ``allow_edited``).
    """
    from workbench.formats import parquet, trec
    from workbench.scoring.columns import qrels_columns_from_mapping

    path = Path(ref)
    if ref != "-" and path.is_file():
        _edited_file(ref, allow_edited=allow_edited)
    if ref == "-" or (path.exists() and not path.is_dir()):  # '-' is stdin; a FIFO or device: the reader refuses it
        qrels = parquet.read_qrels(path) if parquet.is_parquet(path) else trec.read_qrels(ref if ref == "-" else path)
        return (
            QrelsRef(ref, "file", qrels_content_hash(qrels), n_topics=len(qrels),
                     n_entries=sum(len(d) for d in qrels.values())),
            qrels_columns_from_mapping(qrels),
        )
    if open_store is None:
        raise UnknownNameError("qrels file or version", ref, [])
    store = open_store()
    try:
        info = store.qrels.get_qrels_info(ref)
    except UnknownNameError as e:
        raise _not_found(ref, "qrels version", e) from None
    qrels = store.qrels.get_qrels(ref)
    return (
        QrelsRef(ref, "stored", info.content_hash, info.collection, info.collection_version,
                 info.n_topics, info.n_entries),
        qrels_columns_from_mapping(qrels),
    )


def load_run(ref: str, open_store: StoreOpener | None, *, trust_file_order: bool = False) -> tuple[RunRef, RankedRun]:
    """Resolve a run reference (file path first, then stored run name) into a ranked run.

    Raises:
        InputFormatError: the file breaks the run format.
        UnknownNameError: neither a file nor a stored run (lists the stored ones).
    """
    from workbench.formats import parquet
    from workbench.formats.columnar import read_run_columns, run_columns_from_arrow
    from workbench.formats.trec import odd_ranks_warning
    from workbench.scoring.columns import rank_run

    path = Path(ref)
    if ref == "-" or (path.exists() and not path.is_dir()):  # '-' is stdin; a FIFO or device: the reader refuses it
        cols = read_run_columns(ref if ref == "-" else path, trust_file_order=trust_file_order)
        rr = rank_run(cols, reuse=True)
        warning = "" if cols.odd_ranks is None else odd_ranks_warning(
            ref, cols.odd_ranks, trust_file_order=trust_file_order, rows=parquet.is_parquet(path))
        return _with_status_file(RunRef(cols.name or path.stem, "file", ref, n_lines=cols.n_lines,
                                        rank_warning=warning), rr), rr
    if open_store is None:
        raise UnknownNameError("run file or stored run", ref, [])
    store = open_store()
    try:
        info = store.runs.get_run_info(ref)
    except UnknownNameError as e:
        raise _not_found(ref, "run", e) from None
    rows = store.runs.get_run_topic_statuses(ref)
    failed = tuple(sorted((r.topic_id for r in rows if r.status != "ok"), key=natural_key))
    cols = run_columns_from_arrow(store.runs.run_entries_arrow(ref), ref)
    rr = rank_run(cols, reuse=True)
    return RunRef(ref, "stored", ref, info.collection, info.collection_version, cols.n_lines, failed,
                  statuses={r.topic_id: r.status for r in rows},
                  messages={r.topic_id: r.message for r in rows if r.message},
                  latencies={r.topic_id: r.latency_ms for r in rows if r.latency_ms is not None},
                  content_hash=store.runs.get_run_content_hash(ref)), rr


def _with_status_file(ref: RunRef, rr: RankedRun) -> RunRef:
    """A run file's status side file (``<file>.status.tsv``), when there is one, applied to its RunRef.

    Raises:
        InputFormatError: the status file is malformed or contradicts the run (file:line).
    """
    from workbench.formats.status import check_against_run, read_status_file, sidecar_path

    side = sidecar_path(ref.location)
    if not side.is_file():
        return ref
    rows = read_status_file(side)
    check_against_run(side, rows, rr.n_results())
    failed = tuple(sorted((t for t, r in rows.items() if r.status != "ok"), key=natural_key))
    return dataclasses.replace(
        ref, failed_topics=failed, statuses={t: r.status for t, r in rows.items()},
        messages={t: r.error for t, r in rows.items() if r.error},
        latencies={t: r.latency_ms for t, r in rows.items() if r.latency_ms is not None}, status_file=str(side))


def small_runs(run_refs: Sequence[str], qrels_ref: str) -> list[tuple[SmallRun, float]] | None:
    """The runs as ``SmallRun``s (with each one's reading time in seconds) when every input is a small plain file.

    Small: the qrels file and the run files are regular TREC text files
    (not Parquet, no status side file), each run file read by
    ``formats.plain_run.read_small_run`` and all of them together at most
    ``SMALL_RUN_BYTES``, the qrels at most as much. Then ``score_runs`` scores
    them with ``scoring.small`` (no numpy); the numbers are the columnar
    scorer's, bit for bit.

    Returns:
        One (run, seconds) per reference, in order; None when some input is
        not small and plain (nothing is printed: the caller reads them the usual way).
    """
    from workbench.formats.plain_run import SMALL_RUN_BYTES, read_small_run, small_text_file
    from workbench.formats.status import sidecar_path

    if not run_refs or small_text_file(qrels_ref) is None:
        return None
    sizes = [small_text_file(ref) for ref in run_refs]
    if any(n is None for n in sizes) or sum(n or 0 for n in sizes) > SMALL_RUN_BYTES:
        return None
    out: list[tuple[SmallRun, float]] = []
    for ref in run_refs:
        if sidecar_path(ref).exists():
            return None
        t0 = time.perf_counter()
        run = read_small_run(ref)
        if run is None:
            return None
        out.append((run, time.perf_counter() - t0))
    return out


def qrels_mapping(q: QrelsColumns) -> dict[str, dict[str, int]]:
    """The qrels columns as topic_id -> doc_id -> grade (every topic of the columns, even one without entries)."""
    out: dict[str, dict[str, int]] = {t: {} for t in q.topic_ids}
    for code, doc, grade in zip(q.topic_codes.tolist(), q.doc_ids, q.grades.tolist(), strict=True):
        out[q.topic_ids[code]][doc] = int(grade)
    return out
