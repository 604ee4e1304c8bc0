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
  groups of its unit's collection (``store.units.get_duplicate_groups``, plus
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

from workbench.errors import ValidationError, shown
from workbench.hashing import qrels_content_hash
from workbench.scoring.abstention import NoAnswerResult, evaluate_no_answer
from workbench.scoring.groups import (
    DedupeFacts,
    DuplicateGroups,
    dedupe_qrels,
    dedupe_ranking,
    merge_groups,
)
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
from workbench.services.evaluation.load import load_qrels, load_run, qrels_warnings
from workbench.services.evaluation.no_answer import NoAnswerMarks, find_marks, run_scores
from workbench.services.evaluation.refs import QrelsRef, RunRef
from workbench.services.evaluation.report import ScoreReport
from workbench.services.evaluation.request import ScoreEnv, ScoreRequest, UnitOptions

if TYPE_CHECKING:
    from workbench.scoring.columns import RankedRun
    from workbench.store import Store
    from workbench.store.units import ChunkSource

StoreOpener = Callable[[], "Store"]


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
        qref, _ = load_qrels(qrels_ref, open_store, allow_edited=True)  # the score refuses or warns, once
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
    from workbench.services.evaluation.record import record_report, with_file_hashes

    report = view.report
    as_stored = dataclasses.replace(report, runs=tuple(ld.ref for ld in loaded), qrels=qref,
                                    git_commit=report.git_commit or git_commit())
    params = {"unit": view.unit, "unit_labelled": view.labelled, "run_mapping": view.run_mapping,
              "qrels_mapping": view.qrels_mapping, "unit_qrels_content_hash": report.qrels.content_hash,
              "dedupe": {"applied": view.dedupe.applied, "groups": view.dedupe.n_groups}}
    ids = tuple(record_report(with_file_hashes(as_stored), store, params))
    return dataclasses.replace(report, evaluation_ids=ids, git_commit=as_stored.git_commit)


def score_units(request: ScoreRequest, env: ScoreEnv | None = None) -> UnitReport:
    """Score the request's runs at each requested unit, with groups and no-answer topics (see the module docstring).

    The steps: the runs are read once, with their chunk maps (load); the qrels are read at the unit
    they were given in; the no-answer topics are found on the given qrels and each run's own results;
    then for each unit the runs and qrels are mapped to it (the unit restriction) and the view is scored
    by ``pipeline.score`` with the mapped runs and qrels in memory, so the topic set (its use recorded
    once), slices, the topics' eligibility filters of the view's collection (the doc view of a chunk run
    is filtered by the source collection's filters over the mapped documents, leaks counted on them)
    and the ID audit apply as in any score. With ``request.output.record`` (None = when the qrels and
    every run are stored) each view's evaluations are stored under the stored run and qrels version
    names, their params giving the unit, whether the names carry it, both mappings and the groups.

    Args:
        request: what to score; ``request.units`` the units, mappings and groups; ``request.no_answer``
            the no-answer file and answer threshold (no-answer topics are always looked for here).
        env: as ``pipeline.score``; ``before_record`` receives the whole ``UnitReport`` (the evaluation
            ids to be recorded already in it) before any view's evaluations are recorded.

    Returns:
        A ``UnitReport``; ``views[i].report.evaluation_ids`` are the recorded evaluations (empty when none).

    Raises:
        ValidationError: a unit that needs a mapping that was not asked for (the message names the option),
            runs of different units, a chunk map that does not know a run's ids, a bad option.
        InputFormatError, UnknownNameError, MissingTopicsError: as ``pipeline.score``.
    """
    env = env or ScoreEnv()
    options = request.units
    _check_options(options)
    rule = OverlapRule(options.min_share)
    warnings: list[str] = list(qrels_warnings(request, env))
    loaded, (chunk_name, chunk_version, cmap, csource) = _read_runs(request, env)
    run_unit = "chunk" if cmap is not None else "doc"
    units = options.units or (run_unit,)
    qref, given, spans, qrels_unit = _given_qrels(request, env, cmap)

    doc_collection = (csource.source_collection if csource is not None and csource.source_collection
                      else qref.collection if qrels_unit != "chunk" else "")
    doc_version = csource.source_version if csource is not None and csource.source_collection else None
    marks = find_marks(env.open_store, qref.collection or doc_collection or chunk_name, request.no_answer.file,
                       given, request.rel)
    if marks.warning():
        warnings.append(marks.warning())
    na_results = _no_answer_results(request, loaded, given, marks)
    if not marks.topics and (request.no_answer.file is not None or request.no_answer.threshold is not None):
        warnings.append("no topic is marked no-answer (topic metadata no_answer, or --no-answer FILE): "
                        "no-answer accuracy is not reported; |R| = 0 is never taken as a mark")

    views: list[UnitView] = []
    to_record: list[int] = []  # indexes of the views recorded under the stored names
    stored_sources = qref.origin == "stored" and not options.spans and all(ld.ref.origin == "stored" for ld in loaded)
    mapping = _UnitMapping(request, env, loaded, qref, given, spans, qrels_unit, run_unit, cmap, rule,
                           (doc_collection, doc_version), (chunk_name, chunk_version))
    for unit in units:
        plan = mapping.view(unit, first=not views, exclude=marks.topics)
        env.say(f"[starting] scoring at unit {unit}: runs {plan.run_mapping}; qrels {plan.qrels_mapping}")
        from workbench.services.evaluation.pipeline import score

        report = score(plan.request, plan.env)
        report = dataclasses.replace(report, no_answer=tuple(na_results), no_answer_source=marks.source)
        view = UnitView(unit, len(units) > 1 or unit != run_unit, report, plan.run_mapping, plan.qrels_mapping,
                        plan.n_collapsed, plan.dedupe)
        if stored_sources and request.output.record is not False and env.open_store is not None:
            # The ids are chosen now and recorded after the output is written (before_record).
            from workbench.services.evaluation.provenance import git_commit

            view = dataclasses.replace(view, report=dataclasses.replace(
                report, evaluation_ids=tuple(uuid.uuid4().hex for _ in report.runs),
                git_commit=report.git_commit or git_commit()))
            to_record.append(len(views))
        elif request.output.record and not stored_sources:
            raise ValidationError("--record: evaluations are recorded for stored runs against a stored qrels "
                                  "version; these are files (drop --record)")
        views.append(view)

    result = UnitReport(run_unit, qrels_unit, chunk_name, csource, tuple(views), tuple(na_results),
                        marks.source, tuple(warnings))
    if env.before_record is not None:
        env.before_record(result)
    if to_record:
        assert env.open_store is not None
        recorded = list(views)
        for i in to_record:
            recorded[i] = dataclasses.replace(views[i], report=_recorded(views[i], loaded, qref, env.open_store()))
        result = dataclasses.replace(result, views=tuple(recorded))
    return result


def _check_options(options: UnitOptions) -> None:
    """Refuse an unknown unit or dedupe mode, and a groups file without ``--dedupe groups``."""
    for u in options.units:
        if u not in UNITS:
            raise ValidationError(f"expected --unit doc or chunk, found {shown(u)}.")
    if options.dedupe not in ("none", "groups"):
        raise ValidationError(f"expected --dedupe none or groups, found {shown(options.dedupe)}.")
    if options.groups_file is not None and options.dedupe != "groups":
        raise ValidationError("--groups FILE is applied with --dedupe groups; add it.")


_ChunkInfo = tuple[str, str, "ChunkMap | None", "ChunkSource | None"]


def _read_runs(request: ScoreRequest, env: ScoreEnv) -> tuple[list[_Loaded], _ChunkInfo]:
    """Every run, read once with its ranked lists and scores, and the chunk collection they rank (one for all).

    Raises:
        ValidationError: chunk runs and document runs together, or chunk runs of different chunk collections.
    """
    loaded: list[_Loaded] = []
    maps: list[_ChunkInfo] = []
    for ref in request.runs:
        run_ref, rr = load_run(ref, env.open_store, trust_file_order=request.trust_file_order)
        loaded.append(_Loaded(run_ref, ranked_lists(rr), run_scores(ref, run_ref, env.open_store), rr))
        if request.units.chunk_map is not None:
            from workbench.formats.units import read_chunk_map

            maps.append(("", "", read_chunk_map(request.units.chunk_map), None))
        else:
            maps.append(_chunk_collection_of(run_ref, request.collection, env.open_store))
    if len({m[2] is not None for m in maps}) > 1:
        raise ValidationError("expected runs of one unit, found chunk runs and document runs together; "
                              "score them in separate commands.")
    first = maps[0]
    if first[2] is not None and any(m[0] != first[0] or m[1] != first[1] for m in maps[1:]):
        raise ValidationError("expected chunk runs over one chunk collection version; score them separately.")
    return loaded, first


def _given_qrels(request: ScoreRequest, env: ScoreEnv, cmap: ChunkMap | None,
                 ) -> tuple[QrelsRef, dict[str, dict[str, int]], list[Span], str]:
    """The qrels at the unit they were given in: (ref, topic -> id -> grade, spans, ``doc``/``chunk``/``span``)."""
    if request.units.spans:
        from workbench.formats.units import read_spans

        spans = read_spans(request.qrels)
        qref = QrelsRef(request.qrels, "file", "", n_topics=len({s.topic_id for s in spans}), n_entries=len(spans))
        return qref, {t: dict(g) for t, g in spans_to_doc_qrels(spans).items()}, spans, "span"
    qref, _ = load_qrels(request.qrels, env.open_store, allow_edited=request.allow_edited_qrels)
    stored = qref.origin == "stored" and env.open_store is not None
    source = env.open_store().qrels.get_qrels(request.qrels) if stored else _read_qrels_file(request.qrels)  # type: ignore[misc]
    given = {t: dict(g) for t, g in source.items()}
    return qref, given, [], _qrels_unit(given, cmap)


def _no_answer_results(request: ScoreRequest, loaded: Sequence[_Loaded], given: Mapping[str, Mapping[str, int]],
                       marks: NoAnswerMarks) -> list[NoAnswerResult]:
    """Each run's no-answer figures on its own (unmapped) results; empty when no topic is marked."""
    if not marks.topics:
        return []
    marked = set(marks.topics)
    answerable = [t for t, g in given.items() if any(x >= request.rel for x in g.values()) and t not in marked]
    return [evaluate_no_answer(ld.scores, marks.topics, answerable, threshold=request.no_answer.threshold,
                               run_name=ld.ref.name) for ld in loaded]


@dataclass(frozen=True)
class _ViewPlan:
    """One unit view before it is scored: its request and env (mapped runs and qrels in memory), and how."""

    request: ScoreRequest
    env: ScoreEnv
    run_mapping: str
    qrels_mapping: str
    n_collapsed: dict[str, int]
    dedupe: DedupeFacts


@dataclass(frozen=True)
class _UnitMapping:
    """Takes the given runs and qrels to one unit (the unit restriction) and makes that view's request."""

    request: ScoreRequest
    env: ScoreEnv
    loaded: Sequence[_Loaded]
    qref: QrelsRef
    given: dict[str, dict[str, int]]
    spans: list[Span]
    qrels_unit: str
    run_unit: str
    cmap: ChunkMap | None
    rule: OverlapRule
    doc: tuple[str, str | None]
    chunk: tuple[str, str]

    def view(self, unit: str, *, first: bool, exclude: Sequence[str]) -> _ViewPlan:
        """The view at ``unit``: its request (``exclude``: the no-answer topics) and env with the mapped runs and qrels.

        Raises:
            ValidationError: ``--unit chunk`` of document runs, or of document qrels without a mapping.
        """
        from workbench.scoring.columns import qrels_columns_from_mapping

        if unit == "chunk" and self.run_unit == "doc":
            raise ValidationError("--unit chunk: the runs rank documents, which have no chunks; score them with "
                                  "--unit doc (or produce a run over the chunk collection).")
        q, qmap = self._qrels(unit)
        lists_by_run, collapsed, rmap = self._runs(unit)
        options = self.request.units
        facts = DedupeFacts(False)
        unit_collection = self.doc[0] if unit == "doc" else self.chunk[0]
        unit_version = self.doc[1] if unit == "doc" else (self.chunk[1] or None)
        if options.dedupe == "groups":
            groups = _groups(self.env.open_store, unit_collection, unit_version, options.groups_file)
            q, merged, topics_merged = dedupe_qrels(q, groups, rel=self.request.rel)
            dropped = 0
            new_lists = []
            for lists in lists_by_run:
                d_lists, n = dedupe_ranking(lists, groups)
                new_lists.append(d_lists)
                dropped += n
            lists_by_run = new_lists
            facts = DedupeFacts(True, len(groups), groups.n_documents, merged, topics_merged, dropped)
        elif self.env.open_store is not None and unit_collection:
            facts = DedupeFacts(False, len(self.env.open_store().units.get_duplicate_groups(unit_collection, unit_version)))
        as_given = qmap.startswith("as given") and options.dedupe != "groups"
        qref = self.qref
        uq = QrelsRef(qref.name if as_given else f"{qref.name} [{unit}]", qref.origin if as_given else "mapping",
                      qrels_content_hash(q), unit_collection or qref.collection,
                      (unit_version or "") if unit_collection else qref.collection_version,
                      len(q), sum(len(g) for g in q.values()))
        sources = tuple(self._source(unit, ld, lists, rmap, facts) for ld, lists in zip(self.loaded, lists_by_run,
                                                                                        strict=True))
        view_request = dataclasses.replace(
            self.request, collection=None, units=UnitOptions(), no_answer=dataclasses.replace(self.request.no_answer,
                                                                                             mode="off"),
            topics=dataclasses.replace(self.request.topics, exclude=(*self.request.topics.exclude, *exclude)),
            output=dataclasses.replace(self.request.output, record=False,
                                       command="score" if first else "score --unit", keep_documents=True))
        view_env = dataclasses.replace(self.env, run_sources=sources, qrels=(uq, qrels_columns_from_mapping(q)),
                                       before_record=None)
        return _ViewPlan(view_request, view_env, rmap, qmap, collapsed, facts)

    def _qrels(self, unit: str) -> tuple[Mapping[str, Mapping[str, int]], str]:
        """The qrels at ``unit`` and how they were mapped."""
        given, cmap = self.given, self.cmap
        if unit == "doc":
            if self.qrels_unit == "chunk":
                assert cmap is not None
                return qrels_to_documents(given, cmap), "chunk qrels -> documents (highest grade of a document's chunks)"
            return given, ("span qrels -> documents (highest grade of a document's spans)"
                           if self.qrels_unit == "span" else "as given (documents)")
        assert cmap is not None
        if self.qrels_unit == "chunk":
            return given, "as given (chunks)"
        if self.qrels_unit == "span":
            return spans_to_chunk_qrels(self.spans, cmap, self.rule), f"span qrels -> chunks ({self.rule})"
        if self.request.units.qrels_to_chunks:
            return (qrels_to_chunks(given, cmap),
                    "document qrels -> chunks (every chunk of a judged document inherits its grade)")
        raise ValidationError(
            f"--unit chunk: qrels {self.request.qrels!r} judge documents; pass --qrels-to-chunks (every chunk of a "
            "judged document inherits its grade) or give span qrels with --spans, or score --unit doc.")

    def _runs(self, unit: str) -> tuple[list[dict[str, list[str]]], dict[str, int], str]:
        """Each run's ranked lists at ``unit``, the chunk lines collapsed per run, and how they were mapped."""
        lists_by_run: list[dict[str, list[str]]] = []
        collapsed: dict[str, int] = {}
        to_docs = unit == "doc" and self.run_unit == "chunk"
        for ld in self.loaded:
            if to_docs:
                assert self.cmap is not None
                ranking = to_documents(ld.lists, self.cmap)
                lists_by_run.append({t: list(v) for t, v in ranking.lists.items()})
                collapsed[ld.ref.name] = ranking.total_collapsed
            else:
                lists_by_run.append(ld.lists)
        rmap = ("chunks -> documents (best-ranked chunk per document, before the cut-off)" if to_docs
                else f"as produced ({self.run_unit}s)")
        return lists_by_run, collapsed, rmap

    def _source(self, unit: str, ld: _Loaded, lists: dict[str, list[str]], rmap: str,
                facts: DedupeFacts) -> Callable[[], tuple[RunRef, RankedRun]]:
        """The loader of one run at ``unit``: the run as read, or its mapping (audited as the mapping it is)."""
        rref = ld.ref
        if unit == "doc" and self.run_unit == "chunk":
            rref = dataclasses.replace(rref, collection=self.doc[0], collection_version=self.doc[1] or "")
        if lists is not ld.lists:
            rref = dataclasses.replace(rref, origin="mapping", location=f"{ld.ref.location} ({rmap}"
                                       f"{'; duplicate groups' if facts.applied else ''})")
        rr = ld.rr if lists is ld.lists else ranked_run_of(lists, ld.ref.name)
        return lambda: (rref, rr)
