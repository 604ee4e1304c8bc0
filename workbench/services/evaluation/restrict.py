"""The restrict step: which topics and which relevant documents a score counts.

In order: the topic set (``--topic-set``: only its topics), the eligibility
filters (``scoring.eligibility``: each filtered topic's relevant set keeps
its eligible documents only; judged-relevant documents that are ineligible
are reported, an error under ``strict``), the no-answer topics (marked in the
collection's topic metadata or listed in a file: left out of every average
and evaluated apart), and topics left out on purpose (``exclude``). The
retrieval unit is a restriction too, made before these for each unit view
(``services.evaluation.units``).

The result, ``Scope``, holds the evaluator over the restricted qrels (the
columnar scorer, or the small-file scorer) and the eligible topics; the
evaluate step scores every run within it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import UnknownOptionValueError, UsageError, ValidationError
from workbench.scoring.qrels_checks import positives_only
from workbench.scoring.small import SmallEvaluator
from workbench.services.evaluation.load import qrels_mapping

if TYPE_CHECKING:
    from collections.abc import Sequence

    from workbench.scoring.columns import QrelsColumns
    from workbench.scoring.eligibility import Eligibility, RestrictedQrels
    from workbench.scoring.evaluate import Evaluator
    from workbench.services.evaluation.load import Loaded
    from workbench.services.evaluation.no_answer import NoAnswerMarks
    from workbench.services.evaluation.refs import QrelsRef, StoreOpener
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest
    from workbench.services.evaluation.sampled import SampleScope
    from workbench.store import Store
    from workbench.store.topic_sets import TopicSetInfo

_DEFAULT_FILTER_KEY = "filter"
"""``scoring.eligibility.DEFAULT_FILTER_KEY`` (a test pins them equal), known here without importing that module."""


@dataclass
class Scope:
    """What the evaluate step scores within.

    Attributes:
        evaluator: the scorer over the (restricted) qrels: ``scoring.evaluate.Evaluator`` (columnar) or
            ``scoring.small.SmallEvaluator`` (small plain files).
        qrels_topics: every topic of the qrels, in qrels order.
        eligible: the topics an average may cover (|R| > 0, within the topic set, not excluded).
        topics: the topics every run is scored on when restricted (topic set, exclusions), else None.
        topic_set: the topic set's version (None when none was asked for).
        eligibility: the filters in force (None: unfiltered).
        restricted: the qrels restricted to eligible documents (None: unfiltered).
        marks: the no-answer marks (None: no-answer topics are off).
        answerable_qrels: the qrels before no-answer topics left (for the answerable topics), or {}.
        positives: the qrels hold no non-relevant judgments (the positives-only warning).
        warnings: what a reader of the numbers should know, in order.
        sample: the judged sample, when the qrels version was published from a sample pool
            (``services.evaluation.sampled``): the evaluate step then estimates each run from it.
    """

    evaluator: Evaluator | SmallEvaluator
    qrels_topics: tuple[str, ...]
    eligible: tuple[str, ...]
    topics: tuple[str, ...] | None = None
    topic_set: TopicSetInfo | None = None
    eligibility: Eligibility | None = None
    restricted: RestrictedQrels | None = None
    marks: NoAnswerMarks | None = None
    answerable_qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    positives: bool = False
    warnings: list[str] = field(default_factory=list)
    sample: SampleScope | None = None


def restrict(request: ScoreRequest, loaded: Loaded, env: ScoreEnv) -> Scope:
    """The restrict step: topic set, eligibility filters, no-answer topics and exclusions -> the ``Scope``.

    Raises:
        ValidationError: a topic set without a store; filters required (``on``) without a collection;
            ineligible judged-relevant documents under ``strict``; a bad filter or no-answer mode.
        NotASampleError: estimated measures asked of a qrels version that is not a sample's.
        UsageError: a ``--filter-key`` where no collection could hold it.
        UnknownNameError, UnknownOptionValueError: an unknown topic set, collection or filter key.
        InputFormatError: a bad no-answer topic list file.
    """
    if loaded.mapping is not None:  # the small path: files only, nothing to look up
        _no_filter_key(request.filtering.key)  # no collection whose topic metadata could hold the key
        small = SmallEvaluator(loaded.mapping, loaded.measures, rel=request.rel,
                               missing=request.missing)
        # the positives-only warning is worded once the runs' depths are known (after scoring)
        positives = positives_only((g for docs in loaded.mapping.values() for g in docs.values()), request.rel)
        return Scope(small, tuple(small.topic_ids), small.eligible_topics(), positives=positives)
    assert loaded.columns is not None
    from workbench.scoring.columns import qrels_columns_from_mapping
    from workbench.scoring.evaluate import Evaluator

    qref, qcols = loaded.qrels, loaded.columns
    check_slice_keys(env, request, qref)
    set_info, set_topics = resolve_topic_set(env.open_store, request.topics.topic_set)
    warnings: list[str] = []
    positives = positives_only(qcols.grades, request.rel)
    elig, restricted = _eligibility_for(env.open_store, request, qref, qcols, warnings)
    if restricted is not None:
        from workbench.scoring.eligibility import check_no_ineligible_gold

        if request.filtering.strict:
            check_no_ineligible_gold(restricted, what=f"qrels {qref.name}")
        qcols = qrels_columns_from_mapping(restricted.qrels)
    exclude = tuple(request.topics.exclude)
    marks = None
    if request.no_answer.mode == "auto":
        from workbench.services.evaluation.no_answer import find_marks

        marks = find_marks(env.open_store, _marks_collection(env.open_store, request.runs, qref, request.collection),
                           request.no_answer.file, qrels_mapping(qcols), request.rel)
        if marks.warning():
            warnings.append(marks.warning())
        if marks.topics:
            exclude = (*exclude, *marks.topics)
        elif request.no_answer.file is not None or request.no_answer.threshold is not None:
            warnings.append("no topic is marked no-answer (topic metadata no_answer, or --no-answer FILE): "
                            "no-answer accuracy is not reported; |R| = 0 is never taken as a mark")
    answerable = qrels_mapping(qcols) if marks is not None and marks.topics else {}
    evaluator = Evaluator(qcols, loaded.measures, rel=request.rel, missing=request.missing)
    eligible = evaluator.eligible_topics()
    topics: tuple[str, ...] | None = None
    if set_info is not None:
        wanted = set(set_topics)
        outside = [t for t in set_topics if t not in set(eligible)]
        if outside:
            warnings.append(f"topic set {set_info.ref}: {len(outside)} of its {len(set_topics)} topics are not "
                            f"eligible in these qrels (absent or |R| = 0), e.g. {', '.join(outside[:5])}")
        eligible = tuple(t for t in eligible if t in wanted)
        topics = eligible
    if exclude:
        # Left out on purpose (e.g. leakage, no-answer): neither evaluated nor counted as eligible.
        dropped = set(exclude)
        eligible = tuple(t for t in eligible if t not in dropped)
        topics = eligible
    if topics is not None:
        from workbench.ranking import natural_key

        topics = tuple(sorted(topics, key=natural_key))
    sample = _sample_of(env, qref, loaded.columns, warnings, filtered=restricted is not None)
    if loaded.estimated:
        from workbench.services.evaluation.load import check_estimable

        check_estimable(loaded.estimated, qref, sample=sample is not None)
    return Scope(evaluator, tuple(qcols.topic_ids), eligible, topics, set_info, elig, restricted, marks, answerable,
                 positives, warnings, sample)


def _sample_of(env: ScoreEnv, qref: QrelsRef, qcols: QrelsColumns, warnings: list[str], *,
               filtered: bool) -> SampleScope | None:
    """The judged sample of a stored qrels version published from a sample pool (None otherwise), with the
    warnings a reader of its estimates needs (``services.evaluation.sampled``)."""
    if qref.origin != "stored" or env.open_store is None:
        return None
    from workbench.services.evaluation.sampled import load_sample, sample_warnings

    sample = load_sample(env.open_store(), qref.name, lambda: qrels_mapping(qcols))
    if sample is not None:
        warnings.extend(sample_warnings(sample, filtered=filtered))
    return sample


def resolve_topic_set(open_store: StoreOpener | None, ref: str | None) -> tuple[TopicSetInfo | None, tuple[str, ...]]:
    """A ``--topic-set NAME[@N]`` reference -> (its version, its topics); (None, ()) when not given.

    Raises:
        ValidationError: a topic set is named but there is no store.
        UnknownNameError: no such topic set.
    """
    if ref is None:
        return None, ()
    if open_store is None:
        raise ValidationError(f"--topic-set {ref}: topic sets live in the workbench store, which does not exist; "
                              "create the set with `workbench topics set` (or pass --db).")
    return open_store().evaluations.get_topic_set(ref)


def _marks_collection(open_store: StoreOpener | None, run_refs: Sequence[str], qref: QrelsRef,
                      collection: str | None) -> str:
    """The collection whose topic metadata marks no-answer topics: --collection, the stored qrels', a stored run's."""
    name = (collection or "").split("@")[0] or qref.collection
    if name or open_store is None:
        return name
    for ref in run_refs:
        if not Path(ref).is_file() and open_store().runs.has_run(ref):
            return open_store().runs.get_run_info(ref).collection
    return ""


def _no_filter_key(filter_key: str) -> None:
    """A --filter-key given where there is no collection whose topic metadata could hold it."""
    if filter_key == _DEFAULT_FILTER_KEY:  # the usual case, without importing the eligibility rules
        return
    from workbench.scoring.eligibility import DEFAULT_FILTER_KEY

    if filter_key != DEFAULT_FILTER_KEY:
        raise UsageError(f"--filter-key {filter_key!r}: the filters are topic metadata of a collection; score stored "
                         "runs or qrels, or pass --collection")


SLICE_KEYS_TEXT = "topic metadata keys, or query_length, n_relevant, pool_coverage"
"""What ``--by`` accepts (``scoring.slices.DERIVED_KEYS`` after the topic keys; a test pins them equal)."""


def check_slice_keys(env: ScoreEnv, request: ScoreRequest, qref: QrelsRef) -> None:
    """Refuse a ``--by`` key no slice can be built from, before any run is read.

    A key is a derived one (``scoring.slices.DERIVED_KEYS``) or a topic metadata key of the
    collection whose topics apply (``--collection``, the stored qrels', else a stored run's). A
    document metadata key is refused with its own reason: ``--by`` partitions topics, and a
    document's value summarised per topic is not defined (the documents of one topic, relevant or
    retrieved, carry different values), so no document-derived slice is offered. Runs given in
    memory whose collection is known only once they are read are checked by the slice step.

    Raises:
        UnknownOptionValueError: the key, and the keys known (derived and the collection's topic keys).
    """
    from workbench.scoring.slices import DERIVED_KEYS

    wanted = [k for k in dict.fromkeys(request.slicing.by) if k not in DERIVED_KEYS]
    if not wanted:
        return
    collection = _marks_collection(env.open_store, request.runs, qref, request.collection)
    if not collection and env.run_sources is not None:
        return  # the runs in memory may name their collection; the slice step checks then
    store = env.open_store() if collection and env.open_store is not None else None
    topic_keys = sorted(store.metadata.topic_metadata_keys(collection)) if store is not None else []
    for key in wanted:
        if key in topic_keys:
            continue
        e = UnknownOptionValueError("slice key (derived, or a topic-metadata key)", key, [*DERIVED_KEYS, *topic_keys])
        if store is None:
            hint = (". Topic metadata keys need a stored collection: score stored runs or stored qrels, or pass "
                    "--collection")
        elif key in store.metadata.document_metadata_keys(collection):
            hint = (f". {key!r} is a document metadata key of {collection!r}; --by slices topics: "
                    f"{SLICE_KEYS_TEXT} (a document value per topic is not defined: a topic's documents differ)")
        else:
            hint = ""
        e.args = (f"--by: {e.args[0]}{hint}",)
        raise e


def _check_filter_key(store: Store, collection: str, filter_key: str) -> None:
    """Refuse a --filter-key no topic of ``collection`` has (the default key may be absent: no filters).

    Raises:
        UnknownOptionValueError: listing the collection's topic metadata keys (and saying when the key is
            a document metadata key instead).
    """
    from workbench.scoring.eligibility import DEFAULT_FILTER_KEY

    if filter_key == DEFAULT_FILTER_KEY:
        return
    topic_keys = store.metadata.topic_metadata_keys(collection)
    if filter_key in topic_keys:
        return
    doc_keys = store.metadata.document_metadata_keys(collection)
    e = UnknownOptionValueError(f"topic metadata key of collection {collection!r}", filter_key, topic_keys)
    hint = (f". {filter_key!r} is a document metadata key; --filter-key names the topic metadata key that holds "
            "each topic's filter expression") if filter_key in doc_keys else ""
    e.args = (f"--filter-key: {e.args[0]}{hint}",)
    raise e


def _eligibility_for(
    open_store: StoreOpener | None,
    request: ScoreRequest,
    qref: QrelsRef,
    qcols: QrelsColumns,
    warnings: list[str],
) -> tuple[Eligibility | None, RestrictedQrels | None]:
    """The eligibility the report is scored under, and the restricted qrels (None, None when unfiltered).

    The collection version whose document metadata decides is the stored runs'
    (when they agree), else the qrels', else the collection's latest.
    """
    from workbench.services.vectors.eligibility import collection_eligibility

    run_refs, collection, rel = request.runs, request.collection, request.rel
    filters, filter_key = request.filtering.mode, request.filtering.key
    if filters == "off":
        return None, None
    if open_store is None:
        if filters == "on":
            raise ValidationError("filtered scoring needs the workbench store (topic filters and document metadata); "
                                  "pass --db, or score with --filters off")
        return None, None
    named = [ref for ref in run_refs if not Path(ref).is_file()]
    if not named and qref.origin != "stored" and not collection:
        # Files only: no collection to take filters from, and the store is not opened at all.
        if filters == "on":
            raise ValidationError("filtered scoring needs a collection: score stored runs or qrels, or pass --collection")
        _no_filter_key(filter_key)
        return None, None
    store = open_store()
    versions: list[tuple[str, str]] = []
    for ref in named:
        if store.runs.has_run(ref):
            info = store.runs.get_run_info(ref)
            versions.append((info.collection, info.collection_version))
    name = (collection or "").split("@")[0] or qref.collection or (versions[0][0] if versions else "")
    if not name:
        if filters == "on":
            raise ValidationError("filtered scoring needs a collection: score stored runs or qrels, or pass --collection")
        _no_filter_key(filter_key)
        return None, None
    _check_filter_key(store, name, filter_key)
    distinct = sorted({v for c, v in versions if c == name})
    version = distinct[0] if len(distinct) == 1 else (qref.collection_version or None)
    if len(distinct) > 1:
        warnings.append(f"runs were produced over {len(distinct)} versions of {name!r}; eligibility uses the document "
                        f"metadata of {'version ' + version[:12] if version else 'the latest version'}")
    from workbench.scoring.filters import UnknownMetadataKeyError

    try:
        elig = collection_eligibility(store, name, version, key=filter_key, require=filters == "on")
    except UnknownMetadataKeyError as e:
        # Name what was read: the runs' collection version, which may predate the document metadata.
        latest = store.collections.latest_collection_version(name)
        which = f"version {version[:12]}" if version else "the latest version"
        later = (f"; the latest version {latest[:12]} came later (metadata imports make a new version): re-run the "
                 "retrievers over it" if version and latest and latest != version else "")
        raise ValidationError(
            f"eligibility of collection {name!r} {which} (the version the runs were produced over): {e}{later}, "
            "or score with --filters off") from None
    if elig is None:
        return None, None
    from workbench.scoring.eligibility import restrict_qrels

    restricted = restrict_qrels(qrels_mapping(qcols), elig, rel=rel)
    if restricted.ineligible_gold:
        warnings.append(
            f"ineligible gold: {restricted.n_ineligible_gold} judged-relevant document(s) in "
            f"{len(restricted.ineligible_gold)} topic(s) are ineligible under their topic's filter (topic metadata {filter_key!r}); they "
            "are left out of the relevant sets (a data problem: fix the filter, the metadata or the judgment; "
            "--strict-eligibility fails on them)")
    return elig, restricted
