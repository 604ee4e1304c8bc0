"""The value a score leaves: ``ScoreReport`` (what ``workbench score`` prints, with its lineage).

Every number in it carries what produced it: the qrels version (name and
content hash), the collection version, the runs and where they came from,
the evaluator version, the relevance threshold and the missing-topic policy
(``header``). Renderers (``workbench.reports``) read it and round; nothing
here rounds.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.scoring.results import SCORER_ID, Evaluation, MissingPolicy
from workbench.scoring.validity import Completion, TopicCoverage
from workbench.services.evaluation.refs import QrelsRef, RunRef
from workbench.version import __version__

if TYPE_CHECKING:
    from workbench.scoring.abstention import NoAnswerResult
    from workbench.scoring.eligibility import RunEligibility
    from workbench.scoring.estimate_run import RunEstimate
    from workbench.scoring.idaudit import IdAudit
    from workbench.scoring.measures import Measure
    from workbench.scoring.slices import SliceKey, SliceRow
    from workbench.services.evaluation.sampled import SampleScope
    from workbench.store.topic_sets import TopicSetInfo

EVALUATOR_VERSION = f"workbench {__version__} {SCORER_ID}"
"""Recorded with every evaluation: the package version and the scorer implementation."""


@dataclass(frozen=True)
class ScoreReport:
    """Everything one ``workbench score`` prints.

    Attributes:
        qrels: the qrels used.
        runs: the runs, in the order given.
        evaluations: one per run, same order.
        measures: the measures, in report order.
        rel: the relevance threshold (inclusive).
        missing: the missing-topic policy.
        trust_file_order: whether run files were ordered by their rank column.
        evaluator_version: ``EVALUATOR_VERSION``.
        created_at: ISO 8601 time of scoring (UTC).
        evaluation_ids: ids of the recorded evaluations (empty when not recorded).
        warnings: things a reader of the numbers should know.
        seconds: wall time of the scoring, per run.
        completion: each run's completion over the eligible topics.
        coverage: evaluated topics against the eligible ones (the subset notice).
        audits: the identifier audit, one per collection version (empty when none could be made).
        audit_note: why some or all runs were not audited ("" when all were).
        topic_set: the topic set scored (None when none).
        slices: run -> key -> slice rows (``--by``), in run and key order.
        slice_keys: key -> the partition used (what the values mean).
        git_commit: the workbench checkout's commit ("" when not a checkout, or when a
            plain ``score`` records nothing: it is looked up for recorded evaluations,
            topic-set uses, ``compare`` and ``gate``).
        estimates: per run, its measures estimated from the judged sample (empty unless the qrels version
            was published from a sample pool; ``services.evaluation.sampled``).
        sample: the judged sample (None: the qrels are not a sample's).
    """

    qrels: QrelsRef
    runs: tuple[RunRef, ...]
    evaluations: tuple[Evaluation, ...]
    measures: tuple[Measure, ...]
    rel: int
    missing: MissingPolicy
    trust_file_order: bool
    evaluator_version: str
    created_at: str
    evaluation_ids: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    seconds: tuple[float, ...] = field(default=())
    completion: tuple[Completion, ...] = ()
    coverage: TopicCoverage | None = None
    audits: tuple[IdAudit, ...] = ()
    audit_note: str = ""
    topic_set: TopicSetInfo | None = None
    slices: Mapping[str, Mapping[str, tuple[SliceRow, ...]]] = field(default_factory=dict)
    slice_keys: Mapping[str, SliceKey] = field(default_factory=dict)
    git_commit: str = ""
    eligibility: tuple[RunEligibility | None, ...] = ()
    no_answer: tuple[NoAnswerResult, ...] = ()
    no_answer_source: str = ""
    estimates: tuple[RunEstimate, ...] = ()
    sample: SampleScope | None = None

    def header(self) -> dict[str, object]:
        """The lineage block of every rendering (JSON-ready); with a sample's qrels, its ``sample`` block."""
        cov = self.coverage
        head = self._header(cov)
        if self.sample is not None:
            head["sample"] = self.sample.header()
        return head

    def _header(self, cov: TopicCoverage | None) -> dict[str, object]:
        return {
            "notice": cov.notice() if cov else "",
            "qrels": dataclasses.asdict(self.qrels),
            "runs": [r.lineage() for r in self.runs],
            "evaluator_version": self.evaluator_version,
            "git_commit": self.git_commit,
            "topic_set": self.topic_set.ref if self.topic_set else "",
            "topic_set_protected": bool(self.topic_set and self.topic_set.protected),
            "topics_eligible": cov.n_eligible if cov else None,
            "topics_evaluated": cov.n_evaluated if cov else None,
            "completion": [{"run": c.run, "rate": c.rate, "n_topics": c.n_topics, "ok": c.n_ok, "empty": c.n_empty,
                            "error": c.n_error,
                            "failures": [[f.topic_id, f.status, f.message, f.latency_ms] for f in c.failures]}
                           for c in self.completion],
            "id_audit": [audit_json(a) for a in self.audits],
            "id_audit_note": self.audit_note,
            "rel": self.rel,
            "missing": self.missing,
            "trust_file_order": self.trust_file_order,
            "measures": [str(m) for m in self.measures],
            "created_at": self.created_at,
            "evaluation_ids": list(self.evaluation_ids),
            "warnings": list(self.warnings),
            "eligibility": self.eligibility_header(),
            "no_answer": self.no_answer_header(),
        }

    def no_answer_header(self) -> dict[str, object] | None:
        """The no-answer block (``services.evaluation.no_answer.no_answer_json``; None when no topic is marked)."""
        if not self.no_answer:
            return None
        from workbench.services.evaluation.no_answer import no_answer_json

        return no_answer_json(self.no_answer, self.no_answer_source)

    def eligibility_header(self) -> dict[str, object] | None:
        """The eligibility block: filter key and digest, and per run its leaks and ineligible gold (None: unfiltered)."""
        found = [(r, e) for r, e in zip(self.runs, self.eligibility, strict=False) if e is not None]
        if not found:
            return None
        first = found[0][1]
        return {"filter_key": first.filter_key, "filters_sha256": first.filters_digest,
                "n_filtered_topics": first.n_filtered_topics,
                "ineligible_gold": first.restricted.n_ineligible_gold,
                "leaks_total": sum(e.leaks.total for _, e in found),
                "runs": {r.name: e.as_dict() for r, e in found}}

    @property
    def topics(self) -> tuple[str, ...]:
        """Topics of the first evaluation (all runs share them under ``exclude`` and ``zero``)."""
        return self.evaluations[0].topics if self.evaluations else ()


def audit_json(a: IdAudit) -> dict[str, object]:
    """An ``IdAudit`` as JSON (shares at full precision, every missing id, near misses)."""
    def cov(c: object) -> dict[str, object]:
        from workbench.scoring.idaudit import IdCoverage

        assert isinstance(c, IdCoverage)
        return {"what": c.what, "n_ids": c.n_ids, "n_present": c.n_present, "share": c.share,
                "missing": list(c.missing), "near_misses": [[n.doc_id, n.rule, list(n.matches)] for n in c.near_misses],
                "examined": c.examined}

    return {"collection": a.collection, "collection_version": a.collection_version, "relevant": cov(a.relevant),
            "runs": [cov(r) for r in a.runs]}


def utc_now_seconds() -> str:
    """Now in UTC, ISO 8601 to the second (``2026-12-01T20:30:00+00:00``): what
    ``datetime.now(UTC).isoformat(timespec="seconds")`` gives, without importing datetime (start-up)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
