"""The store's evaluations (``store.evaluations``): scoring actions as rows, and the topic
sets they are scored on.

One ``record_evaluation`` call stores one scoring action of one run against one
qrels version: a row per (measure, aggregate), where ``aggregate`` is ``macro``,
``micro``, ``ceiling``, ``optimistic`` (R@k if every pool-novel document were
relevant), ``unjudged`` (share of the top k never judged) or a topic_id (the
per-topic value). Every row keeps its numerator and denominator, the number of
topics, the evaluator version and the parameters (JSON: threshold, missing-topic
policy, excluded and missing topics, ...). Rows are written once, in one
transaction, through a registered Arrow table.

Topic sets (values and rules in ``store.topic_sets``): a name whose content lives in
immutable versions 1, 2, ...; a *protected* set records every use in
``topic_set_uses``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from workbench.errors import UnknownNameError, ValidationError
from workbench.ranking import natural_key
from workbench.scoring.results import ValueRow
from workbench.store.collection_rows import require_collection, shown_id
from workbench.store.core import Gateway
from workbench.store.topic_sets import (
    TOPIC_SET_COLUMNS,
    SaveStatus,
    TopicSetInfo,
    TopicSetUse,
    check_topic_set_name,
    parse_ref,
    topic_set_hash,
)
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


class Evaluations:
    """Recorded scoring actions and the topic sets they used (``store.evaluations``).

    Every multi-row change is one transaction.

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

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
        with self._gateway.transaction(f"record evaluation of {run_name}") as cur:
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
        with self._gateway.connection("list evaluations") as cur:
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
        with self._gateway.connection("read evaluation") as cur:
            rows = cur.execute(
                "SELECT measure, aggregate, value, numerator, denominator, n_topics FROM evaluations "
                "WHERE evaluation_id = ? ORDER BY measure, aggregate", [evaluation_id]
            ).fetchall()
            if not rows:
                known = [r[0] for r in cur.execute("SELECT DISTINCT evaluation_id FROM evaluations").fetchall()]
                raise UnknownNameError("evaluation", evaluation_id, known)
        return [EvaluationRow(m, a, float(v), float(n), float(d), int(t)) for m, a, v, n, d, t in rows]

    # -- topic sets -----------------------------------------------------------------

    def save_topic_set(
        self,
        name: str,
        topic_ids: Sequence[str],
        *,
        collection: str = "",
        protected: bool = False,
        source: str = "",
        description: str = "",
    ) -> tuple[TopicSetInfo, SaveStatus]:
        """Store a topic set's content as its next version (or nothing when unchanged).

        Args:
            name: the set's name (letters, digits, ``_ . -``; 1-64 characters).
            topic_ids: its topics (repeats are dropped).
            collection: check the ids against this collection's topics ("" = no check).
            protected: record every use of this version.
            source: the file it came from.
            description: free text.

        Returns:
            (the version now current, ``created`` | ``new_version`` | ``unchanged``).
            Unchanged also when only ``protected``/``description`` differ: a
            version's content is what counts; use a new name to change them.

        Raises:
            ValidationError: a bad name, no topics, or a topic that is not a
                topic of ``collection``.
            UnknownNameError: unknown collection.
        """
        import pyarrow as pa

        check_topic_set_name(name)
        ids = sorted(set(topic_ids), key=natural_key)
        if not ids:
            raise ValidationError(f"topic set {name!r}: expected at least one topic id, found none.")
        digest = topic_set_hash(ids)
        with self._gateway.transaction(f"save topic set {name}") as cur:
            if collection:
                require_collection(cur, collection)
                known = {r[0] for r in cur.execute(
                    "SELECT topic_id FROM topics WHERE collection = ?", [collection]).fetchall()}
                unknown = [t for t in ids if t not in known]
                if unknown:
                    raise ValidationError(
                        f"topic set {name!r}: {len(unknown)} id(s) are not topics of collection {collection!r}, "
                        f"e.g. {shown_id(unknown[0])}; check the file or --collection.")
            last = cur.execute(f"SELECT {TOPIC_SET_COLUMNS} FROM topic_sets WHERE name = ? ORDER BY version DESC LIMIT 1",
                               [name]).fetchall()
            if last and last[0][5] == digest:
                return TopicSetInfo(*last[0]), "unchanged"
            version = int(last[0][1]) + 1 if last else 1
            cur.execute("INSERT INTO topic_sets (name, version, collection, protected, n_topics, content_hash, "
                        "source, description) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [name, version, collection, protected, len(ids), digest, source, description])
            cur.register("wb_topic_set", pa.table({"topic_id": ids}))
            try:
                cur.execute("INSERT INTO topic_set_members SELECT ?, ?, topic_id FROM wb_topic_set", [name, version])
            finally:
                cur.unregister("wb_topic_set")
            row = cur.execute(f"SELECT {TOPIC_SET_COLUMNS} FROM topic_sets WHERE name = ? AND version = ?",
                              [name, version]).fetchall()[0]
        return TopicSetInfo(*row), "new_version" if version > 1 else "created"

    def _topic_set_info(self, cur: Any, ref: str) -> TopicSetInfo:
        name, version = parse_ref(ref)
        rows = cur.execute(
            f"SELECT {TOPIC_SET_COLUMNS} FROM topic_sets WHERE name = ? AND (? IS NULL OR version = ?) "
            "ORDER BY version DESC LIMIT 1", [name, version, version]).fetchall()
        if not rows:
            known = [f"{n}@{v}" for n, v in cur.execute("SELECT name, version FROM topic_sets").fetchall()]
            raise UnknownNameError("topic set", ref, known)
        return TopicSetInfo(*rows[0])

    def get_topic_set(self, ref: str) -> tuple[TopicSetInfo, tuple[str, ...]]:
        """A topic set version and its topics (natural order).

        Args:
            ref: ``NAME`` (latest version) or ``NAME@N``.

        Raises:
            UnknownNameError: no such set or version (lists the stored ones).
            ValidationError: a malformed reference.
        """
        with self._gateway.connection("read topic set") as cur:
            info = self._topic_set_info(cur, ref)
            ids = [r[0] for r in cur.execute(
                "SELECT topic_id FROM topic_set_members WHERE name = ? AND version = ?",
                [info.name, info.version]).fetchall()]
        return info, tuple(sorted(ids, key=natural_key))

    def list_topic_sets(self) -> list[TopicSetInfo]:
        """Every version of every topic set, by name then version."""
        with self._gateway.connection("list topic sets") as cur:
            rows = cur.execute(f"SELECT {TOPIC_SET_COLUMNS} FROM topic_sets ORDER BY name, version").fetchall()
        return [TopicSetInfo(*r) for r in rows]

    def record_topic_set_use(
        self,
        info: TopicSetInfo,
        command: str,
        runs: Sequence[str],
        qrels_version: str,
        *,
        outcome: str = "",
        evaluator_version: str = "",
        git_commit: str = "",
    ) -> None:
        """Record one use of a topic set version (one row).

        Raises:
            StoreError: the write failed.
        """
        with self._gateway.transaction(f"record use of topic set {info.ref}") as cur:
            cur.execute("INSERT INTO topic_set_uses (name, version, command, runs, qrels_version, outcome, "
                        "evaluator_version, git_commit) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [info.name, info.version, command, json.dumps(list(runs)), qrels_version, outcome,
                         evaluator_version, git_commit])

    def list_topic_set_uses(self, name: str | None = None) -> list[TopicSetUse]:
        """Recorded uses, oldest first; of one set when ``name`` is given."""
        with self._gateway.connection("list topic set uses") as cur:
            rows = cur.execute(
                "SELECT name, version, command, runs, qrels_version, outcome, evaluator_version, git_commit, "
                "used_at FROM topic_set_uses WHERE ? IS NULL OR name = ? ORDER BY use_id", [name, name]).fetchall()
        return [TopicSetUse(r[0], int(r[1]), r[2], tuple(json.loads(r[3])), r[4], r[5], r[6], r[7], r[8])
                for r in rows]
