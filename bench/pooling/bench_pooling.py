"""Pooling benchmarks: BM25 backends, pool construction vs trectools, dense encoding.

Not part of pytest (speed lives here, as ratios). Run:

    .venv/bin/python bench/pooling/bench_pooling.py            # everything
    .venv/bin/python bench/pooling/bench_pooling.py pool bm25  # some parts

Parts:

* ``bm25``: index + query time of ``Bm25Retriever`` with each backend (same
  tokenizer, okapi variant, k1=1.2, b=0.75) on the Cranfield sample (1,400
  documents, 225 queries) and on a synthetic 100,000-document corpus (Zipfian
  vocabulary of 50,000 words, ~60 tokens per document, 50 queries of 4 words).
* ``pool``: depth-20 and depth-100 pools of 50 run files x 50 topics x 1,000
  documents, file parsing included: ``workbench.services.runs.pooling.pool_from_files``
  (DuckDB bulk read + ``pooling.pool.build_pool`` with provenance and RRF
  priority), the strict per-file reader + ``build_pool``, and trectools'
  ``TrecPoolMaker.make_pool_from_files(strategy="topX")`` (no provenance). The
  pooled document sets are checked to be equal (scores have no ties).
* ``dense``: all-MiniLM-L6-v2 encoding throughput (documents per second) on
  Cranfield documents, 1 and 2 torch threads.

Each timing is the best of ``--repeat`` runs (default 3; 1 for the slow ones).
Results are printed and written to ``bench/results/pooling.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SAMPLE = ROOT / "sample_corpus" / "cranfield"
RESULTS = ROOT / "bench" / "results" / "pooling.md"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


# -- BM25 ------------------------------------------------------------------------------------


def cranfield() -> tuple[dict[str, str], dict[str, str]]:
    from workbench.formats import beir

    docs = {d.doc_id: d.content for d in beir.read_corpus(SAMPLE / "corpus.jsonl")}
    queries = {t.topic_id: t.query for t in beir.read_queries(SAMPLE / "queries.jsonl")}
    return docs, queries


def synthetic_corpus(n_docs: int, seed: int = 0) -> tuple[dict[str, str], dict[str, str]]:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(50_000)])
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 1.05
    weights /= weights.sum()
    lengths = rng.poisson(60, n_docs) + 5
    words = rng.choice(len(vocab), size=int(lengths.sum()), p=weights)
    docs, start = {}, 0
    for i, n in enumerate(lengths):
        docs[f"doc{i}"] = " ".join(vocab[words[start:start + n]])
        start += n
    mid = np.arange(100, 5_000)
    queries = {str(q): " ".join(vocab[rng.choice(mid, 4, replace=False)]) for q in range(50)}
    return docs, queries


def bench_bm25(repeat: int) -> list[str]:
    from pooling.retrievers.bm25 import Bm25Retriever
    from pooling.tokenize import Tokenizer

    lines = ["## BM25: index and query, both backends (same tokens, okapi, k1=1.2, b=0.75)", "",
             "| corpus | docs | queries | tokenize docs s | backend | index s (incl. tokenize) | query s "
             "(all queries, top 100) | ms/query |", "|---|---|---|---|---|---|---|---|"]
    ratios = []
    for label, (docs, queries), reps in (("Cranfield sample", cranfield(), repeat),
                                          ("synthetic", synthetic_corpus(100_000), 1)):
        t_tok, _ = best_of(lambda docs=docs: Tokenizer().many(docs.values()), reps)
        times = {}
        for backend in ("bm25s", "rank_bm25"):
            t_index, r = best_of(lambda backend=backend, docs=docs: Bm25Retriever(backend=backend).index(docs), reps)
            t_query, res = best_of(lambda r=r, queries=queries: r.retrieve(queries, 100), reps)
            times[backend] = (t_index, t_query, res)
            lines.append(f"| {label} | {len(docs):,} | {len(queries)} | {t_tok:.2f} | {backend} | {t_index:.2f} | "
                         f"{t_query:.3f} | {1000 * t_query / len(queries):.2f} |")
            print(lines[-1], flush=True)
        a, b = times["bm25s"][2], times["rank_bm25"][2]
        same = sum(set(a.run[q]) == set(b.run[q]) for q in queries)
        ratios.append(f"- {label}: bm25s indexes {times['rank_bm25'][0] / times['bm25s'][0]:.1f}x and answers "
                      f"queries {times['rank_bm25'][1] / times['bm25s'][1]:.0f}x faster than rank_bm25; "
                      f"identical top-100 sets on {same}/{len(queries)} queries.")
    return lines + [""] + ratios + [""]


# -- pooling ---------------------------------------------------------------------------------


def write_runs(folder: Path, n_runs: int = 50, n_topics: int = 50, n_docs: int = 1000, seed: int = 1) -> list[Path]:
    """50 run files; each topic has a pool of 5,000 candidate documents, runs favour a shared head."""
    rng = np.random.default_rng(seed)
    paths = []
    for r in range(n_runs):
        lines = []
        for t in range(1, n_topics + 1):
            weights = 1.0 / np.arange(1, 5001) ** 0.8
            order = rng.permutation(5000)  # each run prefers a different part of the head
            chosen = rng.choice(5000, size=n_docs, replace=False, p=weights / weights.sum())
            docs = order[chosen] % 5000 + t * 10_000
            scores = np.sort(rng.random(n_docs))[::-1] * 100 + r * 1e-7  # distinct, no ties
            lines.extend(f"{t} Q0 D{d} {i} {s!r} run{r:02d}" for i, (d, s) in enumerate(zip(docs, scores.tolist(), strict=True), 1))
        p = folder / f"run{r:02d}.trec"
        p.write_text("\n".join(lines) + "\n")
        paths.append(p)
    return paths


def bench_pool(repeat: int) -> list[str]:
    from pooling.fusion import RRF
    from pooling.pool import build_pool
    from workbench.formats.trec import read_run
    from workbench.services.runs.pooling import pool_from_files

    lines = ["## Pool construction: 50 runs x 50 topics x 1,000 documents, file parsing included", "",
             "| depth | workbench bulk: DuckDB parse + pool with provenance and RRF priority (columns) s | "
             "+ as Python objects s | workbench strict reader + pure build_pool s | trectools topX s "
             "(no provenance) | speed-up bulk vs trectools (wall) | same in CPU time (all threads) | pool size | "
             "provenance rows |",
             "|---|---|---|---|---|---|---|---|---|"]
    notes = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        paths = write_runs(Path(tmp))
        size_mb = sum(p.stat().st_size for p in paths) / 1e6
        notes.append(f"- Run files written in {time.perf_counter() - t0:.1f} s (not timed): {len(paths)} files, "
                     f"{size_mb:.0f} MB, 2,500,000 lines, no tied scores (so tie rules cannot differ).")
        from trectools import TrecPoolMaker  # import cost excluded from timings

        files = [str(p) for p in paths]
        for depth in (20, 100):
            bulk_t, tt_t, obj_t, bulk_cpu, tt_cpu = [], [], [], [], []
            for _ in range(repeat):  # interleaved, so both see the same machine load
                t, c = time.perf_counter(), time.process_time()
                columns = pool_from_files(paths, depth)
                bulk_t.append(time.perf_counter() - t)
                bulk_cpu.append(time.process_time() - c)
                t = time.perf_counter()
                pool = columns.to_pool()
                obj_t.append(time.perf_counter() - t)
                t, c = time.perf_counter(), time.process_time()
                tt_pool = TrecPoolMaker().make_pool_from_files(files, strategy="topX", topX=depth)
                tt_t.append(time.perf_counter() - t)
                tt_cpu.append(time.process_time() - c)
            t_strict, strict_pool = best_of(
                lambda depth=depth: build_pool({p.stem: read_run(p).run for p in paths}, depth,
                                               priority=RRF(k=60.0)), 1)
            theirs = {str(t): {str(d) for d in docs} for t, docs in tt_pool.pool.items()}
            assert pool.documents() == theirs, "pooled documents differ from trectools"
            assert strict_pool.content_hash == columns.content_hash, "bulk and pure paths differ"
            b, o, tt = min(bulk_t), min(obj_t), min(tt_t)
            lines.append(f"| {depth} | {b:.2f} | {o:.2f} | {t_strict:.2f} | {tt:.2f} | {tt / b:.1f}x | "
                         f"{min(tt_cpu) / min(bulk_cpu):.1f}x | {pool.n_entries:,} | {len(pool.provenance):,} |")
            print(lines[-1], flush=True)
        notes.append("- Same pooled documents as trectools at both depths; the bulk path and the strict "
                     "reader + pure `build_pool` give the same pool content hash.")
        notes.append("- Bulk and trectools are run alternately and the best of each is kept; the strict "
                     "path is timed once.")
    return lines + [""] + notes + [""]


# -- dense -----------------------------------------------------------------------------------


def bench_dense(repeat: int, n_texts: int = 256) -> list[str]:
    import torch

    from pooling.retrievers.dense import SentenceTransformerEncoder, default_model_path

    docs, _ = cranfield()
    texts = list(docs.values())[:n_texts]
    with tempfile.TemporaryDirectory() as tmp:
        t_extract, path = best_of(lambda: default_model_path(tmp), 1)
        t0 = time.perf_counter()
        enc = SentenceTransformerEncoder(path, batch_size=64)
        enc.encode(["warm up"])
        t_load = time.perf_counter() - t0
        lines = ["## Dense encoding: all-MiniLM-L6-v2 on CPU", "",
                 f"First extraction of the packaged model: {t_extract:.1f} s; import + load + first encode: "
                 f"{t_load:.1f} s.", "",
                 "| torch threads | texts | batch | seconds | documents/s |", "|---|---|---|---|---|"]
        for threads in (1, 2):
            torch.set_num_threads(threads)
            t, _ = best_of(lambda: enc.encode(texts), repeat)
            lines.append(f"| {threads} | {len(texts)} Cranfield documents | 64 | {t:.2f} | {len(texts) / t:.1f} |")
            print(lines[-1], flush=True)
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", help="bm25, pool and/or dense (default: all three)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    parts = args.parts or ["bm25", "pool", "dense"]
    unknown = sorted(set(parts) - {"bm25", "pool", "dense"})
    if unknown:
        ap.error(f"unknown part {unknown[0]!r}; choose from bm25, pool, dense")
    import duckdb

    head = [
        "# Pooling benchmarks", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"duckdb {duckdb.__version__}. Written by `bench/pooling/bench_pooling.py {' '.join(parts)}` "
        f"on {time.strftime('%Y-%m-%d %H:%M')}. Timings are best of {args.repeat} unless noted; other "
        "processes may have shared the cores.", "",
    ]
    body: list[str] = []
    load_before = os.getloadavg()[0]
    for part in parts:
        body += {"bm25": bench_bm25, "pool": bench_pool, "dense": bench_dense}[part](args.repeat)
    head[-2] += (f" Load average (1 min) {load_before:.1f} before, {os.getloadavg()[0]:.1f} after: above 2 "
                 "means other processes competed for the 2 cores, which hurts DuckDB's two threads most.")
    from workbench.formats.io import atomic_write

    with atomic_write(args.out) as f:
        f.write("\n".join(head + body))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
