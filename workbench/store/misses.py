"""The store's miss lists and the lead's miss causes (``store.misses``).

* ``miss_lists`` / ``miss_entries``: a run's categorised misses at cutoff k
  against a qrels version, with each miss's rule cause, detail and evidence
  (JSON). A list is written once, in one transaction, and keyed by (run, qrels
  version, k, rel, evidence fingerprint): the same categorisation is read back
  rather than redone; new evidence (another rules version, metadata, a chunk
  map) has another fingerprint and makes a new list, the old one kept.
* ``miss_causes``: a lead's cause for one miss with a note, append-only like
  judgments (view ``current_miss_causes``: the latest row per run, qrels
  version, topic and document). Decisions on the same (topic, document) in
  other runs of the collection are read back as suggestions
  (``inherited_miss_causes``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from workbench.errors import ValidationError
from workbench.scoring.misses import Cause, LeadCause, check_cause
from workbench.store._rows import ItemKey, _one
from workbench.store.core import Gateway
from workbench.store.users import require_lead


@dataclass(frozen=True, slots=True)
class StoredMissEntry:
    """One row of ``miss_entries``.

    Attributes:
        topic_id, doc_id, grade: the miss.
        rank: rank in the run (None: not returned within its depth).
        cause: the rule's cause.
        detail: the evidence in words.
        evidence: the evidence (JSON object, as ``services.evaluation.misses`` wrote it).
    """

    topic_id: str
    doc_id: str
    grade: int
    rank: int | None
    cause: Cause
    detail: str
    evidence: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class StoredMissList:
    """A stored miss list and its entries, in list order.

    Attributes:
        list_id: row id.
        run_name, qrels_version, k, rel: what it categorises.
        fingerprint: sha256 over its evidence sources.
        rules_version: ``workbench.scoring.misses.RULES_VERSION`` when written.
        params: JSON object (collection version, analyser, depth, ...).
        created_at: commit time.
        entries: the misses.
    """

    list_id: int
    run_name: str
    qrels_version: str
    k: int
    rel: int
    fingerprint: str
    rules_version: str
    params: Mapping[str, Any]
    created_at: datetime
    entries: tuple[StoredMissEntry, ...]


_CAUSE_COLS = "topic_id, doc_id, cause, note, lead, run_name, qrels_version, decision_id"


def _lead_cause(r: Sequence[Any]) -> LeadCause:
    return LeadCause(r[0], r[1], check_cause(r[2]), r[3], r[4], r[5], r[6], int(r[7]))


class Misses:
    """Miss lists (write once, read back) and the lead's causes (append-only) (``store.misses``).

    Args:
        gateway: the store's gateway (leases and transactions).
    """

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def find_miss_list(self, run_name: str, qrels_version: str, k: int, rel: int,
                       fingerprint: str) -> StoredMissList | None:
        """The stored list of exactly these inputs, or None."""
        with self._gateway.connection("read miss list") as cur:
            row = _one(cur.execute(
                "SELECT list_id, run_name, qrels_version, k, rel, fingerprint, rules_version, params, created_at "
                "FROM miss_lists WHERE run_name = ? AND qrels_version = ? AND k = ? AND rel = ? AND fingerprint = ?",
                [run_name, qrels_version, int(k), int(rel), fingerprint]))
            if row is None:
                return None
            entries = cur.execute(
                "SELECT topic_id, doc_id, grade, rank, cause, detail, evidence FROM miss_entries "
                "WHERE list_id = ? ORDER BY position", [row[0]]).fetchall()
        return StoredMissList(
            int(row[0]), row[1], row[2], int(row[3]), int(row[4]), row[5], row[6], json.loads(row[7]), row[8],
            tuple(StoredMissEntry(t, d, int(g), None if r is None else int(r), check_cause(c), det, json.loads(ev))
                  for t, d, g, r, c, det, ev in entries))

    def miss_lists(self, run_name: str | None = None) -> list[tuple[int, str, str, int, int, int, datetime]]:
        """(list_id, run, qrels version, k, rel, n_misses, created_at) of every stored list, oldest first."""
        with self._gateway.connection("list miss lists") as cur:
            where, params = (" WHERE run_name = ?", [run_name]) if run_name is not None else ("", [])
            rows = cur.execute(
                f"SELECT list_id, run_name, qrels_version, k, rel, n_misses, created_at FROM miss_lists{where} "
                "ORDER BY list_id", params).fetchall()
        return [(int(a), b, c, int(d), int(e), int(f), g) for a, b, c, d, e, f, g in rows]

    def save_miss_list(
        self,
        run_name: str,
        qrels_version: str,
        k: int,
        rel: int,
        fingerprint: str,
        rules_version: str,
        params: Mapping[str, Any],
        entries: Sequence[StoredMissEntry],
    ) -> int:
        """Store a categorised miss list once (one transaction); an identical list already stored is kept.

        Returns:
            The list id (the existing one when the same inputs were stored before).

        Raises:
            ValidationError: an entry with an unknown cause, or params/evidence that are not JSON.
        """
        import pyarrow as pa

        for e in entries:
            check_cause(e.cause)
        try:
            params_json = json.dumps(dict(params), sort_keys=True)
            evidence = [json.dumps(dict(e.evidence), sort_keys=True) for e in entries]
        except (TypeError, ValueError) as err:
            raise ValidationError(f"miss list params and evidence must be JSON-serialisable: {err}") from None
        table = pa.table({
            "position": pa.array(range(len(entries)), pa.int32()),
            "topic_id": pa.array([e.topic_id for e in entries], pa.string()),
            "doc_id": pa.array([e.doc_id for e in entries], pa.string()),
            "grade": pa.array([e.grade for e in entries], pa.int32()),
            "rank": pa.array([e.rank for e in entries], pa.int32()),
            "cause": pa.array([e.cause for e in entries], pa.string()),
            "detail": pa.array([e.detail for e in entries], pa.string()),
            "evidence": pa.array(evidence, pa.string()),
        })
        with self._gateway.transaction(f"save miss list of {run_name}") as cur:
            row = _one(cur.execute(
                "SELECT list_id FROM miss_lists WHERE run_name = ? AND qrels_version = ? AND k = ? AND rel = ? "
                "AND fingerprint = ?", [run_name, qrels_version, int(k), int(rel), fingerprint]))
            if row is not None:
                return int(row[0])
            list_id = int(_one(cur.execute(
                "INSERT INTO miss_lists (run_name, qrels_version, k, rel, fingerprint, rules_version, params, "
                "n_misses) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING list_id",
                [run_name, qrels_version, int(k), int(rel), fingerprint, rules_version, params_json,
                 len(entries)]))[0])
            cur.register("wb_new_misses", table)
            try:
                cur.execute(
                    "INSERT INTO miss_entries (list_id, position, topic_id, doc_id, grade, rank, cause, detail, "
                    "evidence) SELECT ?, position, topic_id, doc_id, grade, rank, cause, detail, evidence "
                    "FROM wb_new_misses", [list_id])
            finally:
                cur.unregister("wb_new_misses")
        return list_id

    def record_miss_causes(self, collection: str, decisions: Sequence[LeadCause]) -> list[int]:
        """Append a lead's causes for misses (one transaction; nothing is updated or deleted).

        Args:
            collection: the runs' collection.
            decisions: each with a cause of ``CAUSES``, a non-empty note and the lead's name;
                ``decision_id`` is ignored (the store assigns it).

        Returns:
            The new decision ids, in input order.

        Raises:
            PermissionDeniedError: a decision's user is not a lead.
            ValidationError: an empty note. UnknownNameError: an unknown cause.
        """
        for d in decisions:
            check_cause(d.cause)
            if not d.note.strip():
                raise ValidationError(f"topic {d.topic_id} document {d.doc_id}: a miss cause needs a note "
                                      "saying why (--note)")
        ids: list[int] = []
        with self._gateway.transaction("record miss causes") as cur:
            for lead in sorted({d.lead for d in decisions}):
                require_lead(cur, lead, "set a miss cause")
            for d in decisions:
                row = _one(cur.execute(
                    "INSERT INTO miss_causes (collection, run_name, qrels_version, topic_id, doc_id, cause, note, "
                    "lead) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING decision_id",
                    [collection, d.run_name, d.qrels_version, d.topic_id, d.doc_id, d.cause, d.note.strip(),
                     d.lead]))
                ids.append(int(row[0]))
        return ids

    def miss_causes_revision(self) -> int:
        """The latest decision id (0 when none): changes whenever a lead sets a miss cause (cache keys)."""
        with self._gateway.connection("read miss causes revision") as cur:
            row = _one(cur.execute("SELECT coalesce(max(decision_id), 0) FROM miss_causes"))
        return int(row[0])

    def current_miss_causes(self, run_name: str, qrels_version: str) -> dict[ItemKey, LeadCause]:
        """(topic_id, doc_id) -> the latest lead cause on this run's misses against this qrels version."""
        with self._gateway.connection("read miss causes") as cur:
            rows = cur.execute(
                f"SELECT {_CAUSE_COLS} FROM current_miss_causes WHERE run_name = ? AND qrels_version = ?",
                [run_name, qrels_version]).fetchall()
        return {(r[0], r[1]): _lead_cause(r) for r in rows}

    def inherited_miss_causes(self, collection: str, run_name: str) -> dict[ItemKey, LeadCause]:
        """(topic_id, doc_id) -> the latest lead cause set on that miss in another run of the collection."""
        with self._gateway.connection("read inherited miss causes") as cur:
            rows = cur.execute(
                f"SELECT {_CAUSE_COLS} FROM (SELECT *, row_number() OVER (PARTITION BY topic_id, doc_id "
                "ORDER BY decision_id DESC) AS rn FROM current_miss_causes WHERE collection = ? AND run_name <> ?) "
                "WHERE rn = 1", [collection, run_name]).fetchall()
        return {(r[0], r[1]): _lead_cause(r) for r in rows}

    def miss_cause_history(self, run_name: str, qrels_version: str, topic_id: str,
                           doc_id: str) -> list[tuple[LeadCause, datetime]]:
        """Every cause a lead set on one miss, oldest first, with its time (the append-only history)."""
        with self._gateway.connection("read miss cause history") as cur:
            rows = cur.execute(
                f"SELECT {_CAUSE_COLS}, created_at FROM miss_causes WHERE run_name = ? AND qrels_version = ? "
                "AND topic_id = ? AND doc_id = ? ORDER BY decision_id",
                [run_name, qrels_version, topic_id, doc_id]).fetchall()
        return [(_lead_cause(r), r[8]) for r in rows]
