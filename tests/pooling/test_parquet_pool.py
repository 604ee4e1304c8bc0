"""Pooling Parquet runs: the bulk path (DuckDB over Parquet) gives the pool of the same TREC files,
and the Parquet reader's error (file and row)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.scoring.conftest import make_data
from workbench.errors import InputFormatError
from workbench.formats import parquet
from workbench.services.runs.pooling import pool_from_files
from workbench.store.runs import read_run_tops


def _files(tmp_path, seeds=(1, 2, 3)):
    pq_files, trec_files = [], []
    for i, seed in enumerate(seeds):
        _, run = make_data(seed)   # ties, long and non-ASCII ids
        rows = [(t, d, s) for t, docs in run.items() for d, s in docs.items()]
        name = f"sys{i}"
        p = tmp_path / "pq" / f"{name}.parquet"
        p.parent.mkdir(exist_ok=True)
        pq.write_table(pa.table({"topic_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                                 "score": [r[2] for r in rows]}), p)
        t = tmp_path / "trec" / f"{name}.trec"
        t.parent.mkdir(exist_ok=True)
        t.write_text("".join(f"{a} Q0 {b} 1 {c!r} {name}\n" for a, b, c in rows))
        pq_files.append(p)
        trec_files.append(t)
    return pq_files, trec_files


@pytest.mark.parametrize("depth", [1, 5, 20])
def test_a_pool_of_parquet_runs_equals_the_pool_of_the_same_trec_runs(tmp_path, depth):
    pq_files, trec_files = _files(tmp_path)
    a, b = pool_from_files(pq_files, depth), pool_from_files(trec_files, depth)
    assert a.content_hash == b.content_hash and a.n_entries == b.n_entries > 0
    assert read_run_tops(pq_files, depth) == read_run_tops(trec_files, depth)


def test_parquet_and_trec_files_pool_together(tmp_path):
    pq_files, trec_files = _files(tmp_path)
    mixed = [pq_files[0], trec_files[1], pq_files[2]]
    assert pool_from_files(mixed, 10).content_hash == pool_from_files(trec_files, 10).content_hash


def test_a_bad_row_is_the_parquet_readers_error(tmp_path):
    pq_files, _ = _files(tmp_path, seeds=(1,))
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"topic_id": ["1", "1"], "doc_id": ["a", "b c"], "score": [1.0, 2.0]}), bad)
    with pytest.raises(InputFormatError) as e:
        pool_from_files([pq_files[0], bad], 10)
    with pytest.raises(InputFormatError) as direct:
        parquet.read_run(bad)
    assert str(e.value) == str(direct.value) and e.value.line == 2
