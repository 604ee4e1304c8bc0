"""The record step: the output hook, then the evaluations stored with their lineage, and a topic set's use.

Nothing is written before the output: the report goes to ``ScoreEnv.before_record``
(the CLI writes the plot and the report there) with the evaluation ids it
will be recorded under already in it, so a failed write (a full disk) leaves
the store unchanged. Each run's evaluation is then one transaction of the
``evaluations`` table (``store.evaluations``), its params keeping the
threshold, policy, qrels hash, collection versions, the run's origin,
location and content hash, the git commit and the topic set.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

from workbench.errors import WorkbenchError
from workbench.scoring.results import value_rows
from workbench.services.evaluation.report import EVALUATOR_VERSION

if TYPE_CHECKING:
    from workbench.scoring.estimate_run import RunEstimate
    from workbench.scoring.results import Evaluation
    from workbench.services.evaluation.report import ScoreReport
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest
    from workbench.store import Store
    from workbench.store.evaluations import EvaluationRow


def record_step(request: ScoreRequest, report: ScoreReport, env: ScoreEnv) -> ScoreReport:
    """The record step: decide whether to record, give the output hook the report, record, note a topic set's use.

    ``request.output.record`` None records when a store is open and the qrels and every run are stored.

    Raises:
        WorkbenchError: recording asked for without a store.
        StoreError: recording failed (nothing was recorded).
    """
    from workbench.services.evaluation.provenance import git_commit

    all_stored = report.qrels.origin == "stored" and all(r.origin == "stored" for r in report.runs)
    record = request.output.record
    if record is None:
        record = env.open_store is not None and all_stored
    if record:
        if env.open_store is None:
            raise WorkbenchError("cannot record evaluations without a workbench store; drop --record or pass --db")
        # The ids are chosen now, so that the output written before recording (before_record) can show them.
        import uuid

        report = dataclasses.replace(with_file_hashes(report), git_commit=git_commit(),
                                     evaluation_ids=tuple(uuid.uuid4().hex for _ in report.runs))
    if env.before_record is not None:  # the plot and the report: a failure there leaves the store unchanged
        env.before_record(report)
    if record:
        assert env.open_store is not None
        ids = tuple(record_report(report, env.open_store()))
        report = dataclasses.replace(report, evaluation_ids=ids)
    if report.topic_set is not None and request.output.command == "score" and env.open_store is not None:
        env.open_store().evaluations.record_topic_set_use(report.topic_set, "score", [r.name for r in report.runs],
                                              report.qrels.recorded_name, outcome=",".join(report.evaluation_ids),
                                              evaluator_version=EVALUATOR_VERSION, git_commit=report.git_commit)
    return report


def evaluation_rows(e: Evaluation) -> list[EvaluationRow]:
    """The ``evaluations`` table rows of one evaluation (aggregates and per-topic values)."""
    from workbench.store.evaluations import EvaluationRow

    return [EvaluationRow(*row) for row in value_rows(e, per_topic=True)]


def with_file_hashes(report: ScoreReport) -> ScoreReport:
    """The report with each run file's sha256 filled in (stored runs carry their content hash)."""
    from workbench.formats.manifest import file_sha256

    runs = tuple(r if r.content_hash or r.origin != "file" else dataclasses.replace(r, content_hash=file_sha256(r.location))
                 for r in report.runs)
    return dataclasses.replace(report, runs=runs)


def record_report(report: ScoreReport, store: Store, extra_params: Mapping[str, object] | None = None,
                  ) -> list[str]:
    """Record every evaluation of ``report`` (one transaction per run); returns the ids.

    The ids are ``report.evaluation_ids`` when given (one per run, chosen before the
    output was written), else new random ones.

    Each evaluation's params keep the lineage: threshold, policy, qrels hash,
    collection versions, the run's origin, location and content hash, the
    evaluator's git commit, the topic set and the topic counts; ``extra_params``
    are added (e.g. the retrieval unit and the mappings of ``services.evaluation.units``). Against a sample's
    qrels version, ``sample`` keeps the design and the run's estimates (``sample_params``).
    """
    ids: list[str] = []
    for run_ref, e in zip(report.runs, report.evaluations, strict=True):
        params: dict[str, object] = {**(extra_params or {}),
            "rel": report.rel,
            "missing": report.missing,
            "trust_file_order": report.trust_file_order,
            "qrels_content_hash": report.qrels.content_hash,
            "qrels_origin": report.qrels.origin,
            "collection_version": report.qrels.collection_version,
            "run_origin": run_ref.origin,
            "run_location": run_ref.location,
            "run_collection_version": run_ref.collection_version,
            "run_content_hash": run_ref.content_hash,
            "git_commit": report.git_commit,
            "topic_set": report.topic_set.ref if report.topic_set else "",
            "topic_set_protected": bool(report.topic_set and report.topic_set.protected),
            "topics": len(e.topics),
            "topics_eligible": report.coverage.n_eligible if report.coverage else len(e.topics),
            "excluded_topics": list(e.excluded_topics),
            "missing_topics": list(e.missing_topics),
            "ignored_topics": len(e.ignored_topics),
            "duplicates": e.n_duplicates,
            "measures": [str(m) for m in e.measures],
        }
        na = next((r for r in report.no_answer if r.run_name == run_ref.name), None)
        if na is not None:
            params["no_answer"] = {"source": report.no_answer_source, "threshold": na.threshold,
                                   "topics": list(na.no_answer), "abstained": list(na.abstained),
                                   "answered": list(na.answered), "no_answer_accuracy": na.accuracy,
                                   "false_answer_rate": na.false_answer_rate,
                                   "answerable_abstained": list(na.answerable_abstained),
                                   "n_answerable": len(na.answerable)}
        el = report.eligibility[len(ids)] if len(report.eligibility) > len(ids) else None
        if el is not None:
            params["eligibility"] = {"filter_key": el.filter_key, "filters_sha256": el.filters_digest,
                                     "n_filtered_topics": el.n_filtered_topics,
                                     "ineligible_gold": el.restricted.n_ineligible_gold,
                                     "leaks": el.leaks.total, "leaks_at_k": {str(k): n for k, n in el.leaks.at_k.items()},
                                     "filter_mode": el.filter_mode, "topics_short": el.n_short}
        est = next((x for x in report.estimates if x.run == run_ref.name), None)
        if est is not None and report.sample is not None:
            params["sample"] = sample_params(report, est)
        given = report.evaluation_ids[len(ids)] if len(report.evaluation_ids) > len(ids) else None
        ids.append(store.evaluations.record_evaluation(run_ref.name, report.qrels.recorded_name, evaluation_rows(e),
                                           evaluator_version=report.evaluator_version, params=params,
                                           evaluation_id=given))
    return ids


def sample_params(report: ScoreReport, est: RunEstimate) -> dict[str, object]:
    """What an evaluation against a sample's qrels version records of its estimates: the sample pool, its design
    and runs, the estimator, and per estimated measure and aggregate the estimate, interval, standard error,
    topics and judgments behind it (NaN recorded as None)."""
    import math

    assert report.sample is not None

    def num(x: float) -> float | None:
        return None if math.isnan(x) else x

    return {"pool_version": report.sample.pool_version, "design": report.sample.design.as_dict(),
            "runs": list(report.sample.runs), "judged": report.sample.n_judged, "sampled": report.sample.n_sampled,
            "estimates": [{"measure": v.name, "aggregate": v.aggregate, "estimate": num(v.value), "low": num(v.low),
                           "high": num(v.high), "se": num(v.se), "n_topics": v.n_topics, "n_judged": v.n_judged}
                          for v in est.values],
            "undefined_topics": sorted(est.undefined), "no_relevant_topics": list(est.no_relevant)}
