"""Sample pools' rows (``store.pools``, kind ``sample``): written with the pool, read back for estimation.

A pool version of kind ``sample`` (``workbench pool sample``) holds the
sampled documents as its ``pool_entries`` (so assignment, the Judge page,
agreement, adjudication and publishing read it as any pool) and, written in
the same transaction, what the estimators need (``scoring.estimate``):

* ``sample_entries``: each sampled document's stratum, inclusion probability
  ``n_h / N_h`` and best rank;
* ``sample_strata``: per topic and stratum, the population ``N_h`` and the
  number drawn ``n_h`` (empty strata included);
* ``sample_frame``: every document of the runs' top D with its stratum;
* the design (``pooling.sample.SampleDesign.as_dict``), the collection size
  and the topics in the pool's ``params``; the runs and the collection version
  in its row.

Functions of a cursor, called inside the part's lease or transaction.
"""

from __future__ import annotations

import json
from typing import Any

from pooling.sample import Sample, SampledDoc, SampleDesign, StratumCount
from workbench.errors import StoreError, ValidationError
from workbench.ranking import natural_key

SAMPLE_KIND = "sample"
"""``pools.kind`` of a sample pool (other pools: ``depth-k union``)."""


def insert_sample_rows(cur: Any, name: str, sample: Sample) -> None:
    """Insert the sample's entries, strata counts and frame under pool version ``name`` (caller's transaction)."""
    import pyarrow as pa

    docs = sample.docs
    tables = {
        "wb_sample_entries": pa.table({
            "topic_id": pa.array([d.topic_id for d in docs], pa.string()),
            "doc_id": pa.array([d.doc_id for d in docs], pa.string()),
            "stratum": pa.array([d.stratum for d in docs], pa.string()),
            "inclusion": pa.array([d.inclusion for d in docs], pa.float64()),
            "best_rank": pa.array([d.best_rank for d in docs], pa.int32()),
        }),
        "wb_sample_strata": pa.table({
            "topic_id": pa.array([c.topic_id for c in sample.counts], pa.string()),
            "stratum": pa.array([c.stratum for c in sample.counts], pa.string()),
            "population": pa.array([c.population for c in sample.counts], pa.int32()),
            "sampled": pa.array([c.sampled for c in sample.counts], pa.int32()),
        }),
        "wb_sample_frame": pa.table({
            "topic_id": pa.array([t for t, ds in sample.frame.items() for _ in ds], pa.string()),
            "doc_id": pa.array([d for ds in sample.frame.values() for d in ds], pa.string()),
            "stratum": pa.array([s for ds in sample.frame.values() for s in ds.values()], pa.string()),
        }),
    }
    for view, table in tables.items():
        cur.register(view, table)
    try:
        cur.execute("INSERT INTO sample_entries SELECT ?, topic_id, doc_id, stratum, inclusion, best_rank "
                    "FROM wb_sample_entries", [name])
        cur.execute("INSERT INTO sample_strata SELECT ?, topic_id, stratum, population, sampled FROM wb_sample_strata",
                    [name])
        cur.execute("INSERT INTO sample_frame SELECT ?, topic_id, doc_id, stratum FROM wb_sample_frame", [name])
    finally:
        for view in tables:
            cur.unregister(view)


def read_sample_rows(cur: Any, pool_version: str, params: dict[str, Any], path: object) -> Sample:
    """The stored sample of a pool version of kind ``sample``.

    Args:
        cur: a cursor inside a lease.
        pool_version: the sample pool.
        params: its ``pools.params`` (the design and the collection size).
        path: the store's file, for messages.

    Raises:
        StoreError: the design in the pool's params cannot be read (the store was changed outside the workbench).
    """
    try:
        design = SampleDesign.from_dict(params["design"])
    except (KeyError, TypeError, ValueError, ValidationError) as e:
        raise StoreError(f"{path}: sample pool {pool_version!r} has no readable design in its params ({e}): the "
                         "store was changed outside the workbench; draw the sample again under a new name") from None
    order = {s.name: i for i, s in enumerate(design.strata)}
    entries = cur.execute("SELECT topic_id, doc_id, stratum, inclusion, best_rank FROM sample_entries "
                          "WHERE pool_version = ?", [pool_version]).fetchall()
    # the drawing's order (pooling.sample.draw_sample): topic, stratum, then best rank and doc_id
    entries.sort(key=lambda r: (natural_key(r[0]), order.get(r[2], len(order)), r[4], natural_key(r[1])))
    strata = cur.execute("SELECT topic_id, stratum, population, sampled FROM sample_strata WHERE pool_version = ?",
                         [pool_version]).fetchall()
    strata.sort(key=lambda r: (natural_key(r[0]), order.get(r[1], len(order))))
    frame: dict[str, dict[str, str]] = {}
    for t, d, s in cur.execute("SELECT topic_id, doc_id, stratum FROM sample_frame WHERE pool_version = ? "
                               "ORDER BY topic_id, doc_id", [pool_version]).fetchall():
        frame.setdefault(t, {})[d] = s
    for t in {r[0] for r in strata}:
        frame.setdefault(t, {})
    return Sample(design,
                  tuple(SampledDoc(t, d, s, float(p), int(b)) for t, d, s, p, b in entries),
                  tuple(StratumCount(t, s, int(n), int(m)) for t, s, n, m in strata),
                  {t: frame[t] for t in sorted(frame, key=natural_key)},
                  int(params.get("collection_size", 0)))


def sample_design_json(cur: Any, pool_version: str) -> str:
    """What a qrels version published from ``pool_version`` records: ``""`` for a pool that is not a sample,
    else JSON of the pool version, its design, runs and collection version."""
    rows = cur.execute("SELECT kind, params, runs, collection_version FROM pools WHERE pool_version = ?",
                       [pool_version]).fetchall()
    if not rows or rows[0][0] != SAMPLE_KIND:
        return ""
    params = json.loads(rows[0][1])
    return json.dumps({"pool_version": pool_version, "design": params.get("design", {}),
                       "runs": json.loads(rows[0][2]), "collection_version": rows[0][3],
                       "collection_size": params.get("collection_size", 0)}, sort_keys=True)
