"""Approximate versus exact vector search: build time, QPS and ANN-recall@10 on 100k synthetic 384-d vectors.

Indexes (``pooling.retrievers.ann``, the code the workbench runs): exact brute
force (numpy, the workbench's exact run), faiss ``IndexFlatIP`` (the exact peer),
HNSW (M=32, efConstruction=40; efSearch 16/64/128) and IVF-Flat (nlist=1024;
nprobe 1/8/32), all with the inner product of unit vectors. Every index answers
the same queries in the same process, one query per call (as the workbench
times them); QPS = queries / summed per-query latency. ANN-recall@10 is
``workbench.scoring.ann_recall`` against the numpy exact top-11.

Data: ``clustered`` (default) draws 100,000 documents and the queries from a
mixture of 1,000 Gaussian clusters on the sphere (centres uniform, spread
``--spread``), the shape real embeddings have; ``random`` is i.i.d. Gaussian
vectors, the worst case for graph indexes (nearest neighbours barely nearer
than the rest). The table says which was used.

    python bench/ann/bench_ann.py                    # clustered, writes bench/results/ann.md
    python bench/ann/bench_ann.py --data random --n 100000 --queries 500
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pooling.retrievers.ann import build_index, latency_summary  # noqa: E402
from workbench.scoring.ann_recall import ann_recall  # noqa: E402


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def make_data(kind: str, n: int, n_queries: int, dim: int, spread: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if kind == "random":
        return _unit(rng.standard_normal((n, dim))), _unit(rng.standard_normal((n_queries, dim)))
    centres = _unit(rng.standard_normal((1000, dim)))

    def draw(m: int) -> np.ndarray:
        c = centres[rng.integers(0, len(centres), m)]
        return _unit(c + spread * rng.standard_normal((m, dim)) / np.sqrt(dim))

    return draw(n), draw(n_queries)


def _as_run(hits: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    return {str(i): h for i, h in enumerate(hits)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", choices=["clustered", "random"], default="clustered")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--spread", type=float, default=1.0, help="cluster spread (clustered data)")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "ann.md")
    args = ap.parse_args()
    import faiss

    k = args.k
    docs, queries = make_data(args.data, args.n, args.queries, args.dim, args.spread, args.seed)
    ids = [f"d{i}" for i in range(len(docs))]
    load = os.getloadavg()[0]
    print(f"[starting] {args.data} data: {len(docs):,} x {args.dim}-d documents, {len(queries):,} queries, "
          f"k {k}, faiss {faiss.__version__}, {faiss.omp_get_max_threads()} threads, load {load:.1f}", file=sys.stderr)

    rows: list[tuple[str, str, float, int, float, float, float, float]] = []
    exact = build_index(docs, ids, "exact")
    res = exact.search(queries, k + 1)
    reference = _as_run(res.hits)
    lat = latency_summary(res.latencies_ms)
    exact_qps = lat.qps
    rows.append(("exact (numpy)", "-", 0.0, exact.index_bytes, lat.p50_ms, lat.p95_ms, lat.qps, 1.0))
    print(f"exact numpy: {lat.qps:,.0f} QPS", file=sys.stderr)

    flat = faiss.IndexFlatIP(args.dim)
    t0 = time.perf_counter()
    flat.add(docs)
    flat_build = (time.perf_counter() - t0) * 1000
    flat.search(queries[:1], k)
    lats = []
    flat_hits = []
    for i in range(len(queries)):
        t0 = time.perf_counter()
        d, lab = flat.search(queries[i:i + 1], k)
        lats.append((time.perf_counter() - t0) * 1000)
        flat_hits.append({ids[int(j)]: float(s) for j, s in zip(lab[0], d[0], strict=True) if j >= 0})
    lat = latency_summary(lats)
    a = ann_recall(_as_run(flat_hits), reference, k, exact_depth=k + 1)
    rows.append(("exact (faiss IndexFlatIP)", "-", flat_build, len(faiss.serialize_index(flat)), lat.p50_ms,
                 lat.p95_ms, lat.qps, a.macro_with_ties))
    print(f"faiss flat: {lat.qps:,.0f} QPS", file=sys.stderr)

    for kind, build_params, sweep_name, values in (
        ("hnsw", {"M": 32, "efConstruction": 40}, "efSearch", (16, 64, 128)),
        ("ivf", {"nlist": 1024}, "nprobe", (1, 8, 32)),
    ):
        idx = build_index(docs, ids, kind, {**build_params, sweep_name: values[0]})
        print(f"{kind} {idx.params}: built in {idx.build_ms / 1000:.1f} s", file=sys.stderr)
        for v in values:
            vi = idx.with_search_params(**{sweep_name: v})
            res = vi.search(queries, k)
            lat = latency_summary(res.latencies_ms)
            a = ann_recall(_as_run(res.hits), reference, k, exact_depth=k + 1)
            label = ", ".join(f"{n}={p}" for n, p in vi.params.items())
            rows.append((kind, label, idx.build_ms, idx.index_bytes, lat.p50_ms, lat.p95_ms, lat.qps, a.macro))
            print(f"  {label}: {lat.qps:,.0f} QPS, ANN-recall@{k} {a.macro:.4f} "
                  f"({a.n_boundary_ties} ties at k)", file=sys.stderr)

    head = (f"| index | parameters | build s | size MB | p50 ms | p95 ms | QPS | QPS / exact numpy | "
            f"ANN-recall@{k} |")
    lines = [
        f"# Approximate vs exact vector search ({args.data} data)",
        "",
        f"{len(docs):,} documents x {args.dim} dimensions ({args.data}: "
        + ("1,000 Gaussian clusters on the sphere, spread " + f"{args.spread:g}" if args.data == "clustered"
           else "i.i.d. Gaussian, the worst case for graph indexes")
        + f"), {len(queries):,} queries from the same distribution, inner product of unit vectors, k = {k}. "
        f"One process, one query per call, faiss {faiss.__version__} with {faiss.omp_get_max_threads()} "
        f"threads, load average {load:.1f} at the start ({os.cpu_count()} cores). ANN-recall@{k}: "
        f"|approximate top-{k} ∩ exact top-{k}| / {k}, macro over queries, exact = numpy brute force "
        "(ties cut by doc_id desc). Command: `python bench/ann/bench_ann.py"
        + (f" --data {args.data}" if args.data != "clustered" else "") + "`.",
        "",
        head,
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, params, build_ms, size, p50, p95, qps, rec in rows:
        lines.append(f"| {name} | {params} | {build_ms / 1000:.2f} | {size / 1e6:.1f} | {p50:.3f} | {p95:.3f} | "
                     f"{qps:,.0f} | {qps / exact_qps:.2f} | {rec:.4f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        if args.out.exists() and args.data != "clustered":
            text = args.out.read_text() + "\n" + text
        args.out.write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
