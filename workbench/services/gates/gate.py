"""The release gate service: read the policy, check validity, score both runs, apply the rules.

``run_gate(request, policy_path)`` is ``workbench gate`` (``request.runs``: the baseline, then the candidates):

1. read and validate the policy (``scoring.gate_policy``); an error there is a
   usage error of the command (exit 3, ``GateUsageError``);
2. before scoring, the leakage check: topics whose query is a near-copy of a
   document of the collection are flagged with the document id, then excluded
   or kept per the policy (``scoring.leakage``);
3. score both runs on the policy's measures over the same topics
   (``services.evaluation.pipeline.score`` with ``missing="exclude"``: a topic a run
   failed is left out of both and counted by the completion rule, never read
   as zero recall); the identifier audit and each run's completion are
   measured there;
4. apply the rules (``scoring.gate.evaluate_gate``) and collect the titles of
   the documents in the diff list;
5. record the use of the topic set, if one was given.

Usage errors (exit 3) are the command's own: a bad policy file, an unknown run,
qrels version or topic set name, a bad option, an estimated measure of the
policy (``Rhat@20``) with qrels that are not a sample's. Anything else that stops the
gate (a malformed run file, a store error) means the comparison cannot be
made: invalid (exit 2).
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.errors import (
    InputFormatError,
    NotASampleError,
    UnknownNameError,
    ValidationError,
    WorkbenchError,
    shown,
)
from workbench.scoring.gate import (
    EXIT_CODES,
    GateInputs,
    GateResult,
    depth_notes,
    evaluate_gates,
    worst,
)
from workbench.scoring.gate_policy import GatePolicy, parse_policy
from workbench.scoring.idaudit import IdAudit
from workbench.scoring.leakage import LeakageCheck
from workbench.scoring.validity import TopicCoverage
from workbench.services.evaluation.request import ScoreEnv, ScoreRequest

if TYPE_CHECKING:
    from workbench.scoring.columns import QrelsColumns
    from workbench.services.evaluation.audit import CollectionRef
    from workbench.services.evaluation.refs import QrelsRef, StoreOpener
    from workbench.services.evaluation.report import ScoreReport


class GateUsageError(WorkbenchError):
    """The gate command was used wrongly (policy file, names, options): exit code 3."""


@dataclass(frozen=True)
class GateReport:
    """Everything ``workbench gate`` prints.

    Attributes:
        policy: the policy applied.
        policy_hash: sha256 of the policy file's bytes.
        score: the score report of the baseline and the candidates (lineage, audit, completion).
        results: per candidate, the verdict with its rules, tests and diff list.
        leakage: the leakage check (None when it could not be made).
        excluded_for_leakage: topics left out because they were flagged (``leakage = "exclude"``).
        titles: doc_id -> title of the documents named in the diff list ({} without a store).
        seconds: wall time of the gate.
    """

    policy: GatePolicy
    policy_hash: str
    score: ScoreReport
    results: tuple[GateResult, ...]
    leakage: LeakageCheck | None
    excluded_for_leakage: tuple[str, ...]
    titles: Mapping[str, str]
    seconds: float

    @property
    def baseline(self) -> str:
        """The baseline run's name."""
        return self.score.evaluations[0].run_name

    @property
    def candidates(self) -> tuple[str, ...]:
        """The candidates' run names, in order."""
        return tuple(e.run_name for e in self.score.evaluations[1:])

    @property
    def verdict(self) -> str:
        """The command's verdict: the worst of the candidates' (invalid, then fail, then pass)."""
        return worst(r.verdict for r in self.results)

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 2 invalid."""
        return EXIT_CODES[self.verdict]

    def header(self) -> dict[str, object]:
        """The lineage block (JSON-ready): the score report's header plus the policy."""
        return {**self.score.header(), "policy": self.policy.path, "policy_name": self.policy.name,
                "policy_sha256": self.policy_hash, "baseline": self.baseline, "candidates": list(self.candidates),
                "excluded_for_leakage": list(self.excluded_for_leakage)}


def load_policy(path: str | Path) -> tuple[GatePolicy, str]:
    """Read and validate a policy file; returns (policy, sha256 of its bytes).

    Raises:
        InputFormatError: unreadable, not UTF-8, a TOML syntax error or an invalid rule (file:line).
    """
    from workbench.formats.trec import read_text

    p = Path(path)
    if p.is_dir():
        raise InputFormatError(str(path), 0, "expected a policy file (TOML), found a folder.")
    text = read_text(p)
    return parse_policy(text, str(path)), hashlib.sha256(p.read_bytes()).hexdigest()


def _leakage_target(
    refs: Sequence[str], qref: QrelsRef, open_store: StoreOpener | None, collection: str | None
) -> CollectionRef | None:
    """The collection version whose documents the queries are checked against (candidate's first)."""
    from workbench.services.evaluation.audit import CollectionRef, resolve_collection

    if open_store is None:
        return None
    store = open_store()
    for ref in reversed(refs):  # the candidate's own version first
        if not Path(ref).is_file() and store.runs.has_run(ref):
            info = store.runs.get_run_info(ref)
            return CollectionRef(info.collection, info.collection_version, f"run {ref}")
    if collection:
        return resolve_collection(store, collection)
    if qref.origin == "stored" and qref.collection:
        return CollectionRef(qref.collection, qref.collection_version or store.collections.latest_collection_version(
            qref.collection), f"qrels {qref.name}")
    return None


def run_gate(request: ScoreRequest, policy_path: str | Path, env: ScoreEnv | None = None) -> GateReport:
    """Run the release gate of the candidates against the baseline (see the module docstring).

    Args:
        request: ``runs`` the baseline, then the candidate (several: one multiple-comparison family);
            ``qrels``; ``topics.topic_set``; ``slicing.by`` (slices reported beside the policy's);
            ``collection`` (what run files were produced over); ``trust_file_order``; ``units``: one
            retrieval unit the runs are taken to (``--unit doc`` for chunk runs). The measures, the
            relevance threshold, the slices' minimum and the missing-topic policy (``exclude``: a
            topic a run failed leaves both and is counted by the completion rule) are the policy's.
        policy_path: the TOML policy.
        env: the store (None: files only) and progress; ``before_record`` is called with the
            ``GateReport`` once the verdict is known and before the topic set's use is recorded (the CLI
            writes the report there), so a failure in it (a full disk) leaves the store unchanged.

    Returns:
        The ``GateReport``; ``report.verdict`` is pass, fail or invalid.

    Raises:
        GateUsageError: a bad policy, an unknown name, a slice key no topic has, no candidate, a run
            given twice, more than one unit.
        WorkbenchError: anything else that stops the comparison (the gate is invalid).
    """
    t0 = time.perf_counter()
    env = env or ScoreEnv()
    try:
        policy, policy_hash = load_policy(policy_path)
    except InputFormatError as e:
        raise GateUsageError(str(e)) from None
    # The run files' sha256 (lineage) is computed beside the scoring: hashing releases the GIL
    # and the single-threaded scoring phases leave a core free.
    hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gate-sha256")
    try:
        return _run_gate(request, policy, policy_hash, hasher, env, t0)
    finally:
        hasher.shutdown(wait=True, cancel_futures=True)


def _run_gate(request: ScoreRequest, policy: GatePolicy, policy_hash: str, hasher: ThreadPoolExecutor,
              env: ScoreEnv, t0: float) -> GateReport:
    from workbench.formats.manifest import file_sha256
    from workbench.services.evaluation.audit import check_leakage, topic_texts_and_metadata
    from workbench.services.evaluation.load import load_qrels
    from workbench.services.evaluation.report import EVALUATOR_VERSION

    names = list(request.runs)
    if len(names) < 2:
        raise GateUsageError("expected at least one candidate run, found none.")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise GateUsageError(f"expected different runs, found {shown(repeated[0])} twice.")
    if len(request.units.units) > 1:
        raise GateUsageError(f"expected one --unit for the gate, found {', '.join(request.units.units)}: "
                             "the gate compares one number per run and topic.")
    open_store, say = env.open_store, env.say
    hashes: dict[str, Future[str]] = {n: hasher.submit(file_sha256, n) for n in names if Path(n).is_file()}
    try:
        qref, qcols = load_qrels(request.qrels, open_store)
        target = _leakage_target(names, qref, open_store, request.collection)
    except UnknownNameError as e:
        raise GateUsageError(str(e)) from None

    # Leakage, before scoring.
    leakage: LeakageCheck | None = None
    leak_note = ""
    excluded: tuple[str, ...] = ()
    coll_name = target.collection if target else (qref.collection or "")
    queries, metadata = topic_texts_and_metadata(open_store, coll_name)
    if policy.validity.leakage != "off":
        say("[starting] leakage check: queries against the collection's documents")
        leakage, leak_note = check_leakage(open_store, target, queries, sorted(set(qcols.topic_ids)),
                                           threshold=policy.validity.leakage_threshold,
                                           n=policy.validity.leakage_ngram)
        if leakage is not None:
            say(f"[finished] leakage check: {len(leakage.flagged)} of {leakage.n_checked} topics flagged")
            if policy.validity.leakage == "exclude":
                excluded = leakage.topics
    score = _score(request, policy, excluded, (qref, qcols), env)
    score = _hashed(score, hashes)
    notes = depth_notes(policy, score.evaluations)
    if notes:
        score = dataclasses.replace(score, warnings=(*score.warnings, *notes))
    a, *bs = score.evaluations
    leaks = _leak_counts(score)
    inputs = [GateInputs(
        baseline=a, candidate=b, completion=(score.completion[0], score.completion[i]),
        coverage=score.coverage or _coverage(score), audits=_audits_for(score, (a.run_name, b.run_name)),
        audit_note=_audit_note_for(score, (a.run_name, b.run_name)), leakage=leakage, leakage_note=leak_note, excluded_for_leakage=excluded,
        leak_counts=leaks, metadata=metadata, slice_keys=score.slice_keys,
        estimates=(score.estimates[0], score.estimates[i]) if len(score.estimates) > i else None,
        sample=score.sample.sq if score.sample is not None else None) for i, b in enumerate(bs, 1)]
    results = evaluate_gates(policy, inputs)
    titles = _titles(open_store, target, results)
    report = GateReport(policy, policy_hash, score, results, leakage, excluded, titles, time.perf_counter() - t0)
    if env.before_record is not None:
        env.before_record(report)
    if score.topic_set is not None and open_store is not None:
        open_store().evaluations.record_topic_set_use(score.topic_set, "gate", [e.run_name for e in score.evaluations],
                                          score.qrels.recorded_name, outcome=report.verdict,
                                          evaluator_version=EVALUATOR_VERSION, git_commit=score.git_commit)
    return report


def _score(request: ScoreRequest, policy: GatePolicy, excluded: tuple[str, ...],
           qrels: tuple[QrelsRef, QrelsColumns], env: ScoreEnv) -> ScoreReport:
    """Every run scored on the policy's measures over the same topics (``missing="exclude"``), nothing recorded;
    at the request's one unit when it names one (the unit view's report)."""
    from workbench.services.evaluation.request import Output, Slicing, TopicChoice

    gated = dataclasses.replace(
        request, measures=tuple(str(m) for m in policy.scored_measures), cutoffs=(), rel=policy.rel,
        missing="exclude", topics=TopicChoice(request.topics.topic_set, (*request.topics.exclude, *excluded)),
        slicing=Slicing((*policy.slices, *request.slicing.by), policy.slice_min_topics),
        output=Output(record=False, command="gate"))
    try:
        if request.units.unit_mode():
            from workbench.services.evaluation.units import score_units

            return score_units(gated, dataclasses.replace(env, before_record=None)).views[0].report
        from workbench.services.evaluation.pipeline import score
        from workbench.services.evaluation.units import check_units

        check_units(request.runs, request.qrels, env.open_store, request.collection)  # chunk runs need --unit doc
        return score(gated, dataclasses.replace(env, before_record=None, qrels=qrels))
    except (UnknownNameError, NotASampleError) as e:
        raise GateUsageError(str(e)) from None
    except ValidationError as e:
        if "slice key" in str(e) or "topic set" in str(e) or "--collection" in str(e):
            raise GateUsageError(str(e)) from None
        raise


def _audit_note_for(score: ScoreReport, runs: tuple[str, ...]) -> str:
    """Why some of ``runs`` were not audited ("" when both were)."""
    covered = {c.what for a in score.audits for c in a.runs}
    if all(f"run {r}" in covered for r in runs):
        return ""
    return score.audit_note or "not audited"


def _audits_for(score: ScoreReport, runs: tuple[str, ...]) -> tuple[IdAudit, ...]:
    """The ID audits restricted to the given runs (a candidate's gate shows its own and the baseline's)."""
    wanted = {f"run {r}" for r in runs}
    out = []
    for a in score.audits:
        covs = tuple(c for c in a.runs if c.what in wanted)
        if covs:
            out.append(dataclasses.replace(a, runs=covs))
    return tuple(out)


def _hashed(score: ScoreReport, hashes: Mapping[str, Future[str]]) -> ScoreReport:
    """The score report with each run file's sha256 (stored runs carry their content hash already)."""
    runs = tuple(dataclasses.replace(r, content_hash=hashes[r.location].result())
                 if r.origin == "file" and not r.content_hash and r.location in hashes else r for r in score.runs)
    return dataclasses.replace(score, runs=runs)


def _coverage(score: ScoreReport) -> TopicCoverage:
    n = len(score.evaluations[0].topics)
    return TopicCoverage(n, n)


def _leak_counts(score: ScoreReport) -> dict[str, int] | None:
    """run -> ineligible documents returned for filtered topics (``ScoreReport.eligibility``).

    The count is every ineligible document a run returned for a topic with an
    eligibility filter (``scoring.eligibility.find_leaks``, all ranks). Without
    topic filters (no eligibility in the scores) it is None and the gate's
    ``leaks`` rule is skipped.
    """
    if not score.eligibility or any(e is None for e in score.eligibility):
        return None
    return {e.run_name: el.leaks.total for e, el in zip(score.evaluations, score.eligibility, strict=True)
            if el is not None}


def _titles(open_store: StoreOpener | None, target: CollectionRef | None,
            results: Sequence[GateResult]) -> dict[str, str]:
    """Titles of the documents lost or gained in the diff lists."""
    if open_store is None or target is None:
        return {}
    wanted = {doc for r in results for d in r.diffs for doc, *_ in (*d.lost, *d.gained)}
    if not wanted:
        return {}
    docs = open_store().collections.get_documents(target.collection, target.version)
    return {d: docs[d].title for d in wanted if d in docs}
