"""Scoring at a retrieval unit, with duplicate groups and no-answer topics (``workbench score --unit ...``).

``score_units`` scores runs once per requested unit (``doc``, ``chunk``) and
puts the views side by side; each view is an ordinary ``score_runs`` report
over mapped runs and qrels (``scoring.units``, ``scoring.groups``), so
ceilings, micro averages, the ID audit and completion work as for any score.

* **The run's own unit** is ``chunk`` when it was produced over a chunk
  collection (a stored run's collection, or ``--collection`` for a file) or
  when ``--chunk-map FILE`` is given; else ``doc``.
* **The qrels' unit** is ``chunk`` when their judged ids are chunks of the
  map, ``doc`` otherwise; ``--spans`` reads the ``--qrels`` file as span qrels.
* Mapping per view (and refusals, each naming the option that maps):

  ========  ===========  ==================================================
  view      run          qrels
  ========  ===========  ==================================================
  doc       chunk -> doc best-ranked chunk per document, before the cutoff
  doc                    chunk qrels -> highest grade per document; spans -> doc
  chunk     doc          refused (a document run has no chunks)
  chunk                  doc qrels refused unless ``--qrels-to-chunks``
                         (every chunk inherits); spans -> chunks (overlap rule)
  ========  ===========  ==================================================

* Measure names carry the unit when it is not the run's own, and always when
  several units are shown: ``R[doc]@10`` beside ``R[chunk]@10``.
* ``--dedupe groups``: each view's runs and qrels are taken over the duplicate
  groups of its unit's collection (``store.get_duplicate_groups``, plus
  ``--groups FILE``); the report states whether groups were applied and how many
  relevant items they merged.
* No-answer topics (topic metadata ``no_answer`` of the qrels' collection, or
  ``--no-answer FILE``) are left out of every average and evaluated apart
  (``scoring.abstention``) on the runs' own results, with ``--answer-threshold``.

``check_units`` is the guard plain ``workbench score`` runs: a chunk run
scored against document qrels (or the reverse) without ``--unit`` is refused
with a message naming ``--unit doc``.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import ValidationError
from workbench.hashing import qrels_content_hash
from workbench.scoring.abstention import NoAnswerResult, evaluate_no_answer, no_answer_topics
from workbench.scoring.groups import (
    DedupeFacts,
    DuplicateGroups,
    dedupe_qrels,
    dedupe_ranking,
    merge_groups,
)
from workbench.scoring.results import MIN_TOPICS
from workbench.scoring.units import (
    UNITS,
    ChunkMap,
    OverlapRule,
    Span,
    qrels_to_chunks,
    qrels_to_documents,
    ranked_lists,
    ranked_run_of,
    spans_to_chunk_qrels,
    spans_to_doc_qrels,
    to_documents,
)
from workbench.services.evaluation.no_answer import run_scores
from workbench.services.evaluation.scoring import (
    QrelsRef,
    RunRef,
    ScoreReport,
    load_qrels,
    load_run,
    score_runs,
)
from workbench.services.evaluation.unit_options import UnitOptions

if TYPE_CHECKING:
    from workbench.scoring.columns import RankedRun
    from workbench.store import Store
    from workbench.store.units import ChunkSource

StoreOpener = Callable[[], "Store"]
Progress = Callable[[str], None]


@dataclass(frozen=True)
class UnitView:
    """One unit's scores.

    Attributes:
        unit: ``doc`` or ``chunk``.
        labelled: measure names carry the unit (``R[doc]@10``).
        report: the score report at this unit.
        run_mapping: how the runs were mapped ("as produced", "chunks -> documents ...").
        qrels_mapping: how the qrels were mapped.
        n_collapsed: run -> chunk lines dropped because their document was already placed.
        dedupe: what duplicate groups changed at this unit.
    """

    unit: str
    labelled: bool
    report: ScoreReport
    run_mapping: str
    qrels_mapping: str
    n_collapsed: Mapping[str, int] = field(default_factory=dict)
    dedupe: DedupeFacts = DedupeFacts(False)


@dataclass(frozen=True)
class UnitReport:
    """``score_units``' result: the views side by side, the chunking, the no-answer figures.

    Attributes:
        run_unit: the runs' own unit.
        qrels_unit: the qrels' unit (``doc``, ``chunk`` or ``span``).
        chunk_collection: the chunk collection ("" when the run is at document level).
        chunk_source: how its chunks were made (None when unknown).
        views: one per unit, in the order asked.
        no_answer: per run, the no-answer figures (empty when no topic is marked).
        no_answer_source: where the marks came from.
        warnings: things a reader should know.
    """

    run_unit: str
    qrels_unit: str
    chunk_collection: str
    chunk_source: ChunkSource | None
    views: tuple[UnitView, ...]
    no_answer: tuple[NoAnswerResult, ...] = ()
    no_answer_source: str = ""
    warnings: tuple[str, ...] = ()


@dataclass
class _Loaded:
    ref: RunRef
    lists: dict[str, list[str]]
    scores: dict[str, list[float]]
    rr: RankedRun


def _chunk_collection_of(run_ref: RunRef, collection: str | None, open_store: StoreOpener | None,
                         ) -> tuple[str, str, ChunkMap | None, ChunkSource | None]:
    """(collection, version, chunk map, source) of the collection a run was produced over."""
    name, version = run_ref.collection, run_ref.collection_version or None
    if collection:
        name, _, prefix = collection.partition("@")
        version = prefix or None
    if not name or open_store is None:
        return "", "", None, None
    store = open_store()
    cmap = store.units.get_chunk_map(name, version)
    if cmap is None:
        return name, version or "", None, None
    return name, version or store.collections.latest_collection_version(name), cmap, store.units.get_chunk_source(name, version)


def _qrels_unit(qrels: Mapping[str, Mapping[str, int]], cmap: ChunkMap | None) -> str:
    if cmap is None:
        return "doc"
    ids = {d for g in qrels.values() for d in g}
    inside = sum(1 for d in ids if d in cmap.spans)
    if inside == 0:
        return "doc"
    if inside == len(ids):
        return "chunk"
    raise ValidationError(f"the qrels judge {inside:,} chunks and {len(ids) - inside:,} other ids: expected all "
                          "chunk ids (chunk-level qrels) or none (document-level). Split the qrels by unit.")


def check_units(run_refs: Sequence[str], qrels_ref: str, open_store: StoreOpener | None,
                collection: str | None = None) -> None:
    """Refuse a plain score of a chunk run against document qrels (or the reverse): name the option.

    Only stored runs, or run files with ``--collection``, can be checked (a run
    file alone does not say what it ranks).

    Raises:
        ValidationError: the run's unit and the qrels' differ.
    """
    if open_store is None:
        return
    for ref in run_refs:
        path = Path(ref)
        if path.is_file() and not collection:
            continue
        if path.is_file():
            run_ref = RunRef(path.stem, "file", ref)
        else:
            try:
                info = open_store().runs.get_run_info(ref)
            except Exception:  # noqa: BLE001 - unknown names are reported by the scorer itself
                continue
            run_ref = RunRef(ref, "stored", ref, info.collection, info.collection_version)
        name, _, cmap, _ = _chunk_collection_of(run_ref, collection, open_store)
        if cmap is None:
            continue
        qref, _ = load_qrels(qrels_ref, open_store)
        qrels = (open_store().qrels.get_qrels(qrels_ref) if qref.origin == "stored"
                 else _read_qrels_file(qrels_ref))
        if _qrels_unit(qrels, cmap) == "doc":
            raise ValidationError(
                f"run {ref!r} ranks chunks (collection {name!r}) and qrels {qrels_ref!r} judge documents: pass "
                "--unit doc to score documents (each document at its best-ranked chunk, before the cut-off), or "
                "--unit chunk with --qrels-to-chunks (every chunk of a judged document inherits its grade) or "
                "span qrels (--spans).")


def _read_qrels_file(ref: str) -> dict[str, dict[str, int]]:
    from workbench.formats import parquet, trec

    p = Path(ref)
    return parquet.read_qrels(p) if parquet.is_parquet(p) else trec.read_qrels(p)


def _groups(open_store: StoreOpener | None, collection: str, version: str | None,
            groups_file: Path | None) -> DuplicateGroups:
    parts: list[tuple[Sequence[str], str]] = []
    if open_store is not None and collection:
        stored = open_store().units.get_duplicate_groups(collection, version)
        parts += [(ms, ",".join(stored.sources.get(c, ()))) for c, ms in stored.members.items()]
    if groups_file is not None:
        from workbench.formats.units import read_groups

        parts += [(ms, groups_file.name) for ms in read_groups(groups_file).values()]
    return merge_groups(parts)


def _recorded(view: UnitView, loaded: Sequence[_Loaded], qref: QrelsRef, store: Store) -> ScoreReport:
    """Record one view's evaluations under the stored run and qrels version names, with the unit in the params."""
    from workbench.services.evaluation.provenance import git_commit
    from workbench.services.evaluation.scoring import _with_file_hashes, record_report

    report = view.report
    as_stored = dataclasses.replace(report, runs=tuple(ld.ref for ld in loaded), qrels=qref,
                                    git_commit=report.git_commit or git_commit())
    params = {"unit": view.unit, "unit_labelled": view.labelled, "run_mapping": view.run_mapping,
              "qrels_mapping": view.qrels_mapping, "unit_qrels_content_hash": report.qrels.content_hash,
              "dedupe": {"applied": view.dedupe.applied, "groups": view.dedupe.n_groups}}
    ids = tuple(record_report(_with_file_hashes(as_stored), store, params))
    return dataclasses.replace(report, evaluation_ids=ids, git_commit=as_stored.git_commit)


def score_units(
    run_refs: Sequence[str],
    qrels_ref: str,
    options: UnitOptions,
    *,
    open_store: StoreOpener | None = None,
    measures: Sequence[str] | None = None,
    cutoffs: Sequence[int] | None = None,
    rel: int = 1,
    missing: str = "fail",
    trust_file_order: bool = False,
    collection: str | None = None,
    progress: Progress | None = None,
    topic_set: str | None = None,
    by: Sequence[str] = (),
    slice_min_topics: int = MIN_TOPICS,
    filters: str = "auto",
    filter_key: str = "filter",
    strict_eligibility: bool = False,
    record: bool | None = None,
    min_id_coverage: float = 1.0,
    before_record: Callable[[UnitReport], None] | None = None,
) -> UnitReport:
    """Score runs at each requested unit, with groups and no-answer topics (see the module docstring).

    Each view is scored as plain ``score_runs`` scores: the topic set
    (``topic_set``; its use recorded once), slices (``by``), the topics'
    eligibility filters of the view's collection (``filters``: the doc view of a
    chunk run is filtered by the source collection's filters over the mapped
    documents, leaks counted on them) and recording: with ``record`` (None =
    when the qrels and every run are stored) each view's evaluations are stored
    under the stored run and qrels version names, their params giving the unit,
    whether the names carry it, both mappings and the duplicate groups.

    Args:
        run_refs: run files or stored run names (one unit: all chunk runs of one chunk collection, or all document runs).
        qrels_ref: qrels file (or span qrels with ``options.spans``) or a stored qrels version.
        options: the units, mappings, groups and no-answer options.
        open_store, measures, cutoffs, rel, missing, trust_file_order, collection, progress, topic_set, by,
            slice_min_topics, filters, filter_key, strict_eligibility, record, min_id_coverage: as ``score_runs``.
        before_record: called with the whole report (the evaluation ids to be recorded already in it) before
            any view's evaluations are recorded (the CLI writes the report there): a failure in it records none.

    Returns:
        A ``UnitReport``; ``views[i].report.evaluation_ids`` are the recorded evaluations (empty when none).

    Raises:
        ValidationError: a unit that needs a mapping that was not asked for (the message names the option),
            runs of different units, a chunk map that does not know a run's ids, a bad option.
        InputFormatError, UnknownNameError, MissingTopicsError: as ``score_runs``.
    """
    from workbench.scoring.columns import qrels_columns_from_mapping

    for u in options.units:
        if u not in UNITS:
            raise ValidationError(f"expected --unit doc or chunk, found {u!r}.")
    if options.dedupe not in ("none", "groups"):
        raise ValidationError(f"expected --dedupe none or groups, found {options.dedupe!r}.")
    if options.groups_file is not None and options.dedupe != "groups":
        raise ValidationError("--groups FILE is applied with --dedupe groups; add it.")
    rule = OverlapRule(options.min_share)
    say = progress or (lambda _m: None)
    warnings: list[str] = []

    loaded: list[_Loaded] = []
    maps: list[tuple[str, str, ChunkMap | None, ChunkSource | None]] = []
    for ref in run_refs:
        run_ref, rr = load_run(ref, open_store, trust_file_order=trust_file_order)
        loaded.append(_Loaded(run_ref, ranked_lists(rr), run_scores(ref, run_ref, open_store), rr))
        if options.chunk_map is not None:
            from workbench.formats.units import read_chunk_map

            maps.append(("", "", read_chunk_map(options.chunk_map), None))
        else:
            maps.append(_chunk_collection_of(run_ref, collection, open_store))
    kinds = {m[2] is not None for m in maps}
    if len(kinds) > 1:
        raise ValidationError("expected runs of one unit, found chunk runs and document runs together; "
                              "score them in separate commands.")
    chunk_name, chunk_version, cmap, csource = maps[0]
    if cmap is not None and any(m[0] != chunk_name or m[1] != chunk_version for m in maps[1:]):
        raise ValidationError("expected chunk runs over one chunk collection version; score them separately.")
    run_unit = "chunk" if cmap is not None else "doc"
    units = options.units or (run_unit,)

    # The qrels, at the unit they were given in.
    spans: list[Span] = []
    if options.spans:
        from workbench.formats.units import read_spans

        spans = read_spans(qrels_ref)
        qref = QrelsRef(qrels_ref, "file", "", n_topics=len({s.topic_id for s in spans}), n_entries=len(spans))
        given: dict[str, dict[str, int]] = {t: dict(g) for t, g in spans_to_doc_qrels(spans).items()}
        qrels_unit = "span"
    else:
        qref, _ = load_qrels(qrels_ref, open_store)
        given = {t: dict(g) for t, g in (open_store().qrels.get_qrels(qrels_ref).items() if qref.origin == "stored"
                                         and open_store is not None else _read_qrels_file(qrels_ref).items())}
        qrels_unit = _qrels_unit(given, cmap)

    doc_collection = (csource.source_collection if csource is not None and csource.source_collection
                      else qref.collection if qrels_unit != "chunk" else "")
    doc_version = csource.source_version if csource is not None and csource.source_collection else None

    # No-answer topics: marked, never inferred.
    marks: dict[str, dict[str, object]] = {}
    meta_collection = qref.collection or doc_collection or chunk_name
    if open_store is not None and meta_collection:
        marks = {t: dict(m) for t, m in open_store().metadata.get_topic_metadata(meta_collection).items()}
    listed: list[str] = []
    if options.no_answer_file is not None:
        from workbench.formats.topic_list import read_topic_list

        listed = read_topic_list(options.no_answer_file)
    na_topics = no_answer_topics(marks, listed)
    sources = [s for s, on in ((f"topic metadata no_answer of {meta_collection}", any(
        t in na_topics for t in marks)), (str(options.no_answer_file), bool(listed))) if on]
    judged_na = [t for t in na_topics if any(g >= rel for g in given.get(t, {}).values())]
    if judged_na:
        warnings.append(f"{len(judged_na)} topic(s) marked no-answer have relevant judgments (e.g. {judged_na[0]}); "
                        "the mark wins: they are left out of the recall averages")

    na_results: list[NoAnswerResult] = []
    if na_topics:
        answerable = [t for t, g in given.items() if any(x >= rel for x in g.values()) and t not in set(na_topics)]
        for ld in loaded:
            na_results.append(evaluate_no_answer(ld.scores, na_topics, answerable,
                                                 threshold=options.answer_threshold, run_name=ld.ref.name))
    elif options.no_answer_file is not None or options.answer_threshold is not None:
        warnings.append("no topic is marked no-answer (topic metadata no_answer, or --no-answer FILE): "
                        "no-answer accuracy is not reported; |R| = 0 is never taken as a mark")

    views: list[UnitView] = []
    to_record: list[tuple[int, Sequence[_Loaded], QrelsRef]] = []  # (view index, its runs, its stored qrels)
    labelled = len(units) > 1
    stored_sources = qref.origin == "stored" and not options.spans and all(ld.ref.origin == "stored" for ld in loaded)
    for unit in units:
        if unit == "chunk" and run_unit == "doc":
            raise ValidationError("--unit chunk: the runs rank documents, which have no chunks; score them with "
                                  "--unit doc (or produce a run over the chunk collection).")
        # qrels at this unit
        if unit == "doc":
            if qrels_unit == "chunk":
                assert cmap is not None
                q = qrels_to_documents(given, cmap)
                qmap = "chunk qrels -> documents (highest grade of a document's chunks)"
            else:
                q, qmap = given, ("span qrels -> documents (highest grade of a document's spans)"
                                  if qrels_unit == "span" else "as given (documents)")
        else:
            assert cmap is not None
            if qrels_unit == "chunk":
                q, qmap = given, "as given (chunks)"
            elif qrels_unit == "span":
                q, qmap = spans_to_chunk_qrels(spans, cmap, rule), f"span qrels -> chunks ({rule})"
            elif options.qrels_to_chunks:
                q = qrels_to_chunks(given, cmap)
                qmap = "document qrels -> chunks (every chunk of a judged document inherits its grade)"
            else:
                raise ValidationError(
                    f"--unit chunk: qrels {qrels_ref!r} judge documents; pass --qrels-to-chunks (every chunk of a "
                    "judged document inherits its grade) or give span qrels with --spans, or score --unit doc.")
        # runs at this unit
        lists_by_run: list[dict[str, list[str]]] = []
        collapsed: dict[str, int] = {}
        for ld in loaded:
            if unit == "doc" and run_unit == "chunk":
                assert cmap is not None
                ranking = to_documents(ld.lists, cmap)
                lists_by_run.append({t: list(v) for t, v in ranking.lists.items()})
                collapsed[ld.ref.name] = ranking.total_collapsed
            else:
                lists_by_run.append(ld.lists)
        rmap = ("chunks -> documents (best-ranked chunk per document, before the cut-off)"
                if unit == "doc" and run_unit == "chunk" else f"as produced ({run_unit}s)")
        facts = DedupeFacts(False)
        unit_collection = doc_collection if unit == "doc" else chunk_name
        unit_version = doc_version if unit == "doc" else (chunk_version or None)
        if options.dedupe == "groups":
            groups = _groups(open_store, unit_collection, unit_version, options.groups_file)
            q, merged, topics_merged = dedupe_qrels(q, groups, rel=rel)
            dropped = 0
            new_lists = []
            for lists in lists_by_run:
                d_lists, n = dedupe_ranking(lists, groups)
                new_lists.append(d_lists)
                dropped += n
            lists_by_run = new_lists
            facts = DedupeFacts(True, len(groups), groups.n_documents, merged, topics_merged, dropped)
        elif open_store is not None and unit_collection:
            facts = DedupeFacts(False, len(open_store().units.get_duplicate_groups(unit_collection, unit_version)))
        uq = QrelsRef(qref.name if qmap.startswith("as given") and options.dedupe != "groups" else f"{qref.name} [{unit}]",
                      qref.origin if qmap.startswith("as given") and options.dedupe != "groups" else "mapping",
                      qrels_content_hash(q), unit_collection or qref.collection,
                      (unit_version or "") if unit_collection else qref.collection_version,
                      len(q), sum(len(g) for g in q.values()))
        sources_ = []
        for ld, lists in zip(loaded, lists_by_run, strict=True):
            rref = ld.ref
            if unit == "doc" and run_unit == "chunk":
                rref = dataclasses.replace(rref, collection=doc_collection, collection_version=doc_version or "")
            if lists is not ld.lists:  # mapped: audited as the mapping it now is, not as the stored run
                rref = dataclasses.replace(rref, origin="mapping",
                                           location=f"{ld.ref.location} ({rmap}"
                                                    f"{'; duplicate groups' if facts.applied else ''})")
            rr = ld.rr if lists is ld.lists else ranked_run_of(lists, ld.ref.name)
            sources_.append(lambda rref=rref, rr=rr: (rref, rr))
        say(f"[starting] scoring at unit {unit}: runs {rmap}; qrels {qmap}")
        report = score_runs(
            run_refs, qrels_ref, open_store=open_store, measures=measures, cutoffs=cutoffs, rel=rel, missing=missing,
            trust_file_order=trust_file_order, record=False, progress=progress, collection=None,
            qrels=(uq, qrels_columns_from_mapping(q)), run_sources=sources_, exclude_topics=na_topics,
            topic_set=topic_set, command="score" if not views else "score --unit", by=by,
            filters=filters, filter_key=filter_key, strict_eligibility=strict_eligibility,
            min_id_coverage=min_id_coverage, slice_min_topics=slice_min_topics,
        )
        report = dataclasses.replace(report, no_answer=tuple(na_results), no_answer_source="; ".join(sources))
        view = UnitView(unit, labelled or unit != run_unit, report, rmap, qmap, collapsed, facts)
        if stored_sources and (record is None or record) and open_store is not None:
            # The ids are chosen now and recorded after the output is written (before_record).
            from workbench.services.evaluation.provenance import git_commit

            view = dataclasses.replace(view, report=dataclasses.replace(
                report, evaluation_ids=tuple(uuid.uuid4().hex for _ in report.runs),
                git_commit=report.git_commit or git_commit()))
            to_record.append((len(views), loaded, qref))
        elif record and not stored_sources:
            raise ValidationError("--record: evaluations are recorded for stored runs against a stored qrels "
                                  "version; these are files (drop --record)")
        views.append(view)

    result = UnitReport(run_unit, qrels_unit, chunk_name, csource, tuple(views), tuple(na_results),
                        "; ".join(sources), tuple(warnings))
    if before_record is not None:
        before_record(result)
    if to_record:
        assert open_store is not None
        recorded = list(views)
        for i, loaded_i, qref_i in to_record:
            recorded[i] = dataclasses.replace(views[i], report=_recorded(views[i], loaded_i, qref_i, open_store()))
        result = dataclasses.replace(result, views=tuple(recorded))
    return result
