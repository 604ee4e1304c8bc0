"""Store methods for evaluations (a mixin of ``LabelStore``): scoring actions as rows.

One ``record_evaluation`` call stores one scoring action of one run against one
qrels version: a row per (measure, aggregate), where ``aggregate`` is ``macro``,
``micro``, ``ceiling``, ``optimistic`` (R@k if every pool-novel document were
relevant), ``unjudged`` (share of the top k never judged) or a topic_id (the
per-topic value). Every row keeps its numerator and denominator, the number of
topics, the evaluator version and the parameters (JSON: threshold, missing-topic
policy, excluded and missing topics, ...). Rows are written once, in one
transaction, through a registered Arrow table.

``run_entries_arrow`` hands a stored run to the columnar scorer as an Arrow
table (no per-row Python objects).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from workbench.errors import UnknownNameError, ValidationError
from workbench.scoring.results import ValueRow
from workbench.store.core import StoreCore
from workbench.text import check_name

EvaluationRow = ValueRow
"""One row of the ``evaluations`` table (before it gets its id and time): the scorer's long-form
``scoring.results.ValueRow`` (measure, aggregate, value, numerator, denominator, n_topics), stored as is."""


@dataclass(frozen=True)
class EvaluationSummary:
    """A recorded scoring action.

    Attributes:
        evaluation_id: its id.
        run_name: the run scored.
        qrels_version: the qrels version (or ``file:<path>`` for a qrels file).
        evaluator_version: workbench version and scorer id.
        params: the parameters recorded (JSON object).
        n_rows: rows stored.
        created_at: when it was recorded.
    """

    evaluation_id: str
    run_name: str
    qrels_version: str
    evaluator_version: str
    params: Mapping[str, Any]
    n_rows: int
    created_at: datetime


class EvaluationsMixin(StoreCore):
    """Domain verbs on evaluations; every multi-row change is one ``transaction()``."""

    def record_evaluation(
        self,
        run_name: str,
        qrels_version: str,
        rows: Iterable[EvaluationRow],
        *,
        evaluator_version: str,
        params: Mapping[str, Any] | None = None,
        evaluation_id: str | None = None,
    ) -> str:
        """Store one scoring action (all rows or none).

        Args:
            run_name: the run scored (a stored run name or a file's run name).
            qrels_version: the qrels version scored against.
            rows: the values, see ``EvaluationRow``.
            evaluator_version: e.g. ``workbench 0.1.0 columnar-numpy/1``.
            params: JSON-serialisable parameters (threshold, policy, topics, ...).
            evaluation_id: id to use; default a new random one.

        Returns:
            The evaluation id.

        Raises:
            ValidationError: no rows, an empty run or qrels name, or params that are not JSON.
            StoreError: the write failed (nothing was written).
        """
        import pyarrow as pa

        data = list(rows)
        if not data:
            raise ValidationError("expected at least one evaluation row, found none.")
        if not run_name or not qrels_version:
            raise ValidationError(f"expected a run name and a qrels version, found {run_name!r} and {qrels_version!r}.")
        check_name("run name", run_name)
        check_name("qrels version", qrels_version)
        try:
            params_json = json.dumps(dict(params or {}), sort_keys=True)
        except (TypeError, ValueError) as e:
            raise ValidationError(f"evaluation params must be JSON-serialisable: {e}") from None
        eid = evaluation_id or uuid.uuid4().hex
        table = pa.table({
            "measure": pa.array([r.measure for r in data], pa.string()),
            "aggregate": pa.array([r.aggregate for r in data], pa.string()),
            "value": pa.array([float(r.value) for r in data], pa.float64()),
            "numerator": pa.array([float(r.numerator) for r in data], pa.float64()),
            "denominator": pa.array([float(r.denominator) for r in data], pa.float64()),
            "n_topics": pa.array([int(r.n_topics) for r in data], pa.int32()),
        })
        with self.transaction(f"record evaluation of {run_name}") as cur:
            cur.register("wb_new_evaluation", table)
            try:
                cur.execute(
                    "INSERT INTO evaluations (evaluation_id, run_name, qrels_version, measure, aggregate, value, "
                    "numerator, denominator, n_topics, evaluator_version, params) "
                    "SELECT ?, ?, ?, measure, aggregate, value, numerator, denominator, n_topics, ?, ? "
                    "FROM wb_new_evaluation",
                    [eid, run_name, qrels_version, evaluator_version, params_json],
                )
            finally:
                cur.unregister("wb_new_evaluation")
        return eid

    def list_evaluations(
        self, run_name: str | None = None, qrels_version: str | None = None
    ) -> list[EvaluationSummary]:
        """Recorded scoring actions, oldest first; filtered by run and/or qrels version when given."""
        with self.connection("list evaluations") as cur:
            rows = cur.execute(
                "SELECT evaluation_id, any_value(run_name), any_value(qrels_version), any_value(evaluator_version), "
                "any_value(params), count(*), min(created_at) FROM evaluations "
                "WHERE (? IS NULL OR run_name = ?) AND (? IS NULL OR qrels_version = ?) "
                "GROUP BY evaluation_id ORDER BY min(created_at), evaluation_id",
                [run_name, run_name, qrels_version, qrels_version],
            ).fetchall()
        return [EvaluationSummary(r[0], r[1], r[2], r[3], json.loads(r[4]), int(r[5]), r[6]) for r in rows]

    def get_evaluation_rows(self, evaluation_id: str) -> list[EvaluationRow]:
        """The rows of one recorded evaluation, in measure then aggregate order.

        Raises:
            UnknownNameError: no such evaluation id.
        """
        with self.connection("read evaluation") as cur:
            rows = cur.execute(
                "SELECT measure, aggregate, value, numerator, denominator, n_topics FROM evaluations "
                "WHERE evaluation_id = ? ORDER BY measure, aggregate", [evaluation_id]
            ).fetchall()
            if not rows:
                known = [r[0] for r in cur.execute("SELECT DISTINCT evaluation_id FROM evaluations").fetchall()]
                raise UnknownNameError("evaluation", evaluation_id, known)
        return [EvaluationRow(m, a, float(v), float(n), float(d), int(t)) for m, a, v, n, d, t in rows]

    def run_entries_arrow(self, run_name: str) -> Any:
        """A stored run's rows as a ``pyarrow.Table`` (topic_id, doc_id, score), by topic then rank.

        Raises:
            UnknownNameError: no such run.
        """
        with self.connection("read run for scoring") as cur:
            if not cur.execute("SELECT 1 FROM runs WHERE run_name = ?", [run_name]).fetchall():
                known = [r[0] for r in cur.execute("SELECT run_name FROM runs").fetchall()]
                raise UnknownNameError("run", run_name, known)
            return cur.sql(
                "SELECT topic_id, doc_id, score FROM run_entries WHERE run_name = ? ORDER BY topic_id, rank",
                params=[run_name],
            ).to_arrow_table()
