"""The audit step of scoring, comparing and gating: ID audit, completion, query leakage.

Adapters between the store (or files) and the pure rules of
``scoring.idaudit``, ``scoring.validity`` and ``scoring.leakage``:

* ``IdAuditor``: the identifier audit of one scoring action, against the
  collection version each run was produced over (stored runs), the version
  named with ``--collection`` (files), or the stored qrels' version;
* ``run_completion``: each run's completion over the eligible topics, from the
  stored per-topic statuses or a run file's status side file;
* ``check_leakage``: topics whose query is a near-copy of a document (the gate);
* ``collection_of`` / ``topic_texts_and_metadata``: the collection whose topics
  apply, and their query texts and metadata (slices, leakage).

Files never open the store unless something stored is named (``--collection``,
``--topic-set`` or a stored run/qrels). The pure modules behind the audit and
leakage are imported where they are used, so scoring two files imports none
of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.errors import ValidationError
from workbench.scoring.validity import Completion, completion

if TYPE_CHECKING:
    from workbench.scoring.columns import RankedRun
    from workbench.scoring.idaudit import IdAudit, IdCoverage
    from workbench.scoring.leakage import LeakageCheck
    from workbench.scoring.small import SmallRun
    from workbench.services.evaluation.refs import QrelsRef, RunRef
    from workbench.store import Store

StoreOpener = Callable[[], "Store"]


@dataclass(frozen=True)
class CollectionRef:
    """A collection version the ids are audited against.

    Attributes:
        collection: its name.
        version: the collection version (content hash).
        why: where it came from (``run <name>``, ``--collection``, ``qrels <name>``).
    """

    collection: str
    version: str
    why: str


def parse_collection(ref: str) -> tuple[str, str | None]:
    """``NAME`` or ``NAME@VERSION-PREFIX`` -> (name, version prefix or None).

    Example:
        >>> parse_collection("cranfield@3f2a"), parse_collection("cranfield")
        (('cranfield', '3f2a'), ('cranfield', None))
    """
    name, _, version = ref.partition("@")
    return name, version or None


def resolve_collection(store: Store, ref: str) -> CollectionRef:
    """The collection version named by ``--collection NAME[@VERSION-PREFIX]`` (latest when no version).

    Raises:
        UnknownNameError: unknown collection or no version with that prefix.
    """
    from workbench.errors import UnknownNameError

    name, prefix = parse_collection(ref)
    if prefix is None:
        return CollectionRef(name, store.collections.latest_collection_version(name), "--collection")
    versions = [v.collection_version for v in store.collections.collection_versions(name)]
    hits = [v for v in versions if v.startswith(prefix)]
    if len(hits) != 1:
        raise UnknownNameError(f"version of collection {name!r} (prefix)", prefix, [v[:12] for v in versions])
    return CollectionRef(name, hits[0], "--collection")


def _run_doc_ids(rr: RankedRun | SmallRun) -> list[str]:
    """The distinct doc ids a run returns, sorted (as strings; the packed-bytes order is the same)."""
    if not hasattr(rr, "doc_words"):  # a SmallRun
        return sorted({d for docs in rr.ranked.values() for d in docs})
    import numpy as np

    from workbench.scoring.columns import unpack_ids

    if len(rr.doc_words) == 0:
        return []
    return unpack_ids(np.unique(rr.doc_words, axis=0))


class IdAuditor:
    """The identifier audit of one scoring action, run by run (so runs can be streamed).

    Each run is audited against the collection version it was produced over
    (stored runs), else ``collection`` (``--collection``), else the stored
    qrels' collection version. Runs sharing a version share one relevant-id
    coverage.

    Args:
        qref: the qrels used.
        relevant_ids: doc ids of the judged-relevant pairs of the evaluated topics.
        open_store: the store (None: files only, nothing to audit against).
        collection: ``--collection NAME[@VERSION-PREFIX]`` for run files.

    Raises:
        ValidationError: ``collection`` without a store.
        UnknownNameError: an unknown ``collection``.
    """

    def __init__(self, qref: QrelsRef, relevant_ids: Sequence[str], open_store: StoreOpener | None,
                 *, collection: str | None = None) -> None:
        if open_store is None and collection:
            raise ValidationError(f"--collection {collection}: the store does not exist; pass --db or drop "
                                  "--collection.")
        self._open = open_store
        self._relevant = relevant_ids
        self._fallback: CollectionRef | None = None
        # The store is opened only when there is something to audit against: scoring files
        # with file qrels and no --collection opens (and imports) no database.
        if open_store is not None and (collection or (qref.origin == "stored" and qref.collection)):
            store = open_store()
            if collection:
                self._fallback = resolve_collection(store, collection)
            else:
                version = qref.collection_version or store.collections.latest_collection_version(qref.collection)
                self._fallback = CollectionRef(qref.collection, version, f"qrels {qref.name}")
        self._groups: dict[str, tuple[CollectionRef, IdCoverage, list[IdCoverage]]] = {}
        self._skipped: list[str] = []

    def add_run(self, ref: RunRef, rr: RankedRun | SmallRun) -> None:
        """Audit one run's ids (and, once per version, the relevant ids)."""
        if self._open is None:
            self._skipped.append(ref.name)
            return
        if ref.origin == "stored" and ref.collection_version:
            target = CollectionRef(ref.collection, ref.collection_version, f"run {ref.name}")
        elif self._fallback is not None:
            target = self._fallback
        else:
            self._skipped.append(ref.name)
            return
        from workbench.scoring.idaudit import coverage

        store = self._open()
        version = target.version

        def ids_of_version() -> list[str]:
            return store.collections.version_doc_ids(version)

        if version not in self._groups:
            missing_rel = store.collections.missing_doc_ids(target.collection, set(self._relevant), version)
            self._groups[version] = (target, coverage("relevant", self._relevant, missing_rel, ids_of_version), [])
        if ref.origin == "stored":
            n, missing = store.runs.run_doc_coverage(ref.location, version)
            run_cov = _coverage_from(f"run {ref.name}", n, missing, ids_of_version)
        else:
            ids = _run_doc_ids(rr)
            run_cov = coverage(f"run {ref.name}", ids, store.collections.missing_doc_ids(target.collection, ids, version),
                               ids_of_version)
        self._groups[version][2].append(run_cov)

    def result(self) -> tuple[tuple[IdAudit, ...], str]:
        """(one ``IdAudit`` per collection version, in run order; why some runs were not audited, or "")."""
        audits: tuple[IdAudit, ...] = ()
        if self._groups:
            from workbench.scoring.idaudit import IdAudit

            audits = tuple(IdAudit(t.collection, v, rel, tuple(runs)) for v, (t, rel, runs) in self._groups.items())
        if not self._skipped:
            return audits, ""
        if self._open is None:
            return audits, "files only: no collection version to audit the ids against (pass --collection NAME)"
        return audits, (f"run file(s) {', '.join(self._skipped)} not audited: no collection version known "
                        "(qrels from a file; pass --collection NAME)")


def _coverage_from(what: str, n: int, missing: set[str], ids_of_version: Callable[[], list[str]]) -> IdCoverage:
    from workbench.scoring.idaudit import IdCoverage, coverage

    c = coverage(what, (), missing, ids_of_version)
    return IdCoverage(what, n, n - len(missing), c.missing, c.near_misses, c.examined)


def run_completion(ref: RunRef, rr: RankedRun | SmallRun, topics: Sequence[str]) -> Completion:
    """A run's completion over ``topics`` (the eligible topics), from its recorded statuses."""
    return completion(ref.name, topics, rr.n_results(), ref.statuses, ref.messages, ref.latencies)


def collection_of(runs: Sequence[RunRef], qref: QrelsRef, collection: str | None) -> str:
    """The collection whose topics (query texts, metadata) apply: --collection, stored qrels, or a stored run."""
    if collection:
        return parse_collection(collection)[0]
    if qref.collection:
        return qref.collection
    return next((r.collection for r in runs if r.collection), "")


def topic_texts_and_metadata(
    open_store: StoreOpener | None, collection: str
) -> tuple[dict[str, str], dict[str, dict[str, object]]]:
    """(topic_id -> query text, topic_id -> metadata) of a stored collection; empty without one.

    Topic metadata comes from ``store.metadata.get_topic_metadata`` (topic_id -> key -> value:
    str, int/float, date or bool; imported with the topics or from a side file).
    """
    if open_store is None or not collection:
        return {}, {}
    store = open_store()
    queries = {t: topic.query for t, topic in store.collections.get_topics(collection).items()}
    metadata: dict[str, dict[str, object]] = {
        str(t): dict(m) for t, m in store.metadata.get_topic_metadata(collection).items()}
    return queries, metadata


def check_leakage(
    open_store: StoreOpener | None,
    collection_version: CollectionRef | None,
    queries: Mapping[str, str],
    topics: Sequence[str],
    *,
    threshold: float,
    n: int,
) -> tuple[LeakageCheck | None, str]:
    """The leakage check of ``topics`` against a collection version's documents (title and text).

    Returns:
        (the check, "") or (None, why it could not be made).
    """
    from workbench.scoring.leakage import near_copies

    if open_store is None or collection_version is None:
        return None, "no stored collection (files only): the documents are unknown"
    if not queries:
        return None, "the topics' query texts are unknown"
    store = open_store()
    docs = store.collections.get_documents(collection_version.collection, collection_version.version)
    wanted = {t: queries[t] for t in topics if t in queries}
    check = near_copies(wanted, ((d, f"{doc.title}\n{doc.text}") for d, doc in docs.items()),
                        n=n, threshold=threshold)
    return check, ""
