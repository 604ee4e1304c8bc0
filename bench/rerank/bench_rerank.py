"""Two-stage pipeline benchmarks: rerank throughput, the rerank command's thread default under load,
and the stage report's overhead over a plain score.

Not part of pytest (speed lives here, as ratios). Run:

    .venv/bin/python bench/rerank/bench_rerank.py                   # every part
    .venv/bin/python bench/rerank/bench_rerank.py throughput --topics 50
    .venv/bin/python bench/rerank/bench_rerank.py command --rounds 3
    .venv/bin/python bench/rerank/bench_rerank.py overhead --repeat 9

Each part rewrites its own section of ``bench/results/rerank.md`` (the other
sections are kept), and every figure is written with the load average (1 min)
measured beside it: on a shared machine the load decides the wall times.

Parts:

* ``throughput``: documents per second on CPU of each reranker over the top
  100 BM25 candidates of Cranfield topics (``--topics`` of them), timed per
  topic exactly as ``workbench run rerank`` times it (``rerank_topics``):
  the all-MiniLM-L6-v2 bi-encoder with the document vectors from the
  embedding cache (the default path: per topic, one query encoding and 100 dot
  products), with ``--cold`` also the same bi-encoder with the document
  encoding counted (a cold cache: ``prepare`` included), and the tiny random
  cross-encoder of the
  tests (2 layers, hidden size 32; it reads every (query, document) pair, so
  its cost is what any cross-encoder's shape looks like, at a tiny scale).
  1 and 2 torch threads.
* ``command``: ``workbench run rerank --candidates bm25 --depth 50`` as a user
  runs it (a new process on a copy of the Cranfield store, MiniLM vectors
  cached), with the default threads (1) and with ``--threads 0`` (torch's
  choice: a thread per core, the default before issue 26), in interleaved
  rounds: wall time, the process's CPU time, p50 ms per topic, and the load
  average before and after each run.
* ``overhead``: wall time of ``services.runs.stages.stage_reports`` (the stage rows,
  the permutation check on the document sets, contribution, stock, diagnosis
  and the ingestion check) against ``services.evaluation.pipeline.score`` of the same
  two runs with the same measures (R@D, R@k, nDCG@k), both from the store,
  in-process, interleaved; on Cranfield (225 topics, D = 50) and on a
  synthetic store of 5,000 topics x 100 candidates (D = 100) where the
  scoring work dominates fixed costs. Target: overhead under 10%.

Stores are kept in ``~/.cache/workbench-bench/rerank`` (the Cranfield store
keeps its MiniLM embeddings, so the slow encoding happens once). Results are
printed and written to ``bench/results/rerank.md`` with the load average.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "pooling"))
SAMPLE = ROOT / "sample_corpus" / "cranfield"
RESULTS = ROOT / "bench" / "results" / "rerank.md"
CACHE = Path.home() / ".cache" / "workbench-bench" / "rerank"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def cranfield_store():
    """A store with Cranfield, a depth-100 BM25 run and the MiniLM embeddings cached (built once)."""
    from workbench.services.collections.ingest import ingest_folder
    from workbench.services.runs.pooling import DenseRunRequest, make_bm25_run, make_dense_run
    from workbench.store import Store

    CACHE.mkdir(parents=True, exist_ok=True)
    store = Store(CACHE / "cranfield.duckdb", client="bench", linger_s=1.0, min_turn_s=1.0)  # as the CLI
    if not store.runs.has_run("bm25"):
        ingest_folder(store, SAMPLE)
        make_bm25_run(store, "cranfield", "bm25", depth=100)
    if not store.runs.has_run("dense"):
        print("encoding the Cranfield documents once (MiniLM)...", file=sys.stderr)
        make_dense_run(store, DenseRunRequest("cranfield", "dense", depth=100, threads=2))
    return store


# -- throughput -----------------------------------------------------------------------------


def bench_throughput(n_topics: int, depth: int = 100, cold: bool = False) -> list[str]:
    import torch
    from tiny_cross_encoder import build_tiny_cross_encoder

    from pooling.retrievers.rerank import BiEncoderReranker, CrossEncoderReranker, rerank_topics
    from workbench.services.runs.stages import load_candidates

    store = cranfield_store()
    cands = load_candidates(store.collections, store.runs, "bm25", depth)
    topics = sorted(cands.lists, key=lambda t: int(t))[:n_topics]
    queries = {t: cands.queries[t] for t in topics}
    lists = {t: cands.lists[t] for t in topics}
    n_docs = sum(len(v) for v in lists.values())
    tiny = build_tiny_cross_encoder(CACHE / "tiny-ce")
    rows = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        cases = [
            ("bi-encoder all-MiniLM-L6-v2, cached document vectors", BiEncoderReranker(cache=store.vectors, threads=threads),
             False),
            ("tiny cross-encoder (2 layers, hidden 32), batch 32", CrossEncoderReranker(tiny, threads=threads), False),
        ]
        if cold:
            cases.insert(1, ("bi-encoder all-MiniLM-L6-v2, document encoding counted (cold cache)",
                             BiEncoderReranker(cache=None, threads=threads), True))
        for label, rr, count_prepare in cases:
            rr.prepare({d: cands.documents[d] for d in {d for v in lists.values() for d in v}}, cands.text_hashes)
            t0 = time.perf_counter()
            if count_prepare:  # encode every candidate again, timed, as a cold cache would
                rr.prepare({d: cands.documents[d] for d in {d for v in lists.values() for d in v}}, None)
            prep = (time.perf_counter() - t0) * 1000.0
            res = rerank_topics(rr, queries, lists, cands.documents, text_hashes=cands.text_hashes, prepare=False)
            cost = res.cost
            total_ms = cost.total_ms + (prep if count_prepare else 0.0)
            rows.append([label, str(threads), f"{cost.n_topics}", f"{n_docs:,}", f"{n_docs / (total_ms / 1000):,.0f}",
                         f"{cost.p(50):.1f}", f"{cost.p(95):.1f}", f"{total_ms / n_docs:.3f}",
                         f"{os.getloadavg()[0]:.1f}"])
            print(f"  {label}, {threads} thread(s): {rows[-1][4]} documents/s", file=sys.stderr)
    out = [f"## Rerank throughput (CPU, top {depth} BM25 candidates of {n_topics} Cranfield topics)", "",
           "| reranker | threads | topics | documents | documents/s | p50 ms/topic | p95 ms/topic | ms/document "
           "| load (1 min) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    out += ["", "Per-topic timing is the one `workbench run rerank` stores (`rerank_topics`): the wall time of "
            "each topic's call. The bi-encoder's documents/s counts candidates scored: with cached vectors a "
            "topic costs one query encoding plus the dot products, so its cost per topic barely depends on D; "
            "with `--cold` a row adds encoding every candidate (the documents/s a cache miss costs). The cross-encoder "
            "reads every pair, so its cost grows with D."]
    return out


# -- the command ----------------------------------------------------------------------------


def bench_command(rounds: int, depth: int = 50) -> list[str]:
    """``workbench run rerank`` end to end in a new process, default threads against torch's choice."""
    import re
    import resource
    import shutil
    import subprocess
    import tempfile

    store = cranfield_store()
    source = Path(store.path)
    store.release_file()
    settings = [("default (1 thread)", []), ("--threads 0 (torch's choice: one per core; the old default)",
                                             ["--threads", "0"])]
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-rerank-") as tmp:
        for r in range(rounds):
            for label, extra in settings:
                db = Path(tmp) / f"r{r}-{len(extra)}.duckdb"
                shutil.copyfile(source, db)
                argv = [sys.executable, "-m", "workbench", "--db", str(db), "run", "rerank", "--candidates", "bm25",
                        "--depth", str(depth), "--name", "bench+minilm", *extra]
                before = os.getloadavg()[0]
                cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                done = subprocess.run(argv, capture_output=True, text=True, check=False,
                                      env=dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"))
                wall = time.perf_counter() - t0
                cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                after = os.getloadavg()[0]
                if done.returncode != 0:
                    raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
                p50 = re.search(r"per topic p50 ([\d.,]+) ms", done.stdout)
                cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
                rows.append([str(r + 1), label, f"{wall:.1f}", f"{cpu:.1f}", p50.group(1) if p50 else "?",
                             f"{before:.1f} -> {after:.1f}"])
                print(f"  round {r + 1}, {label}: {wall:.1f} s wall, {cpu:.1f} s CPU, load {before:.1f} -> "
                      f"{after:.1f}", file=sys.stderr)
                db.unlink()
    out = [f"## The rerank command under load: default threads against torch's choice (Cranfield, top {depth} "
           "of BM25, 225 topics)", "",
           "| round | threads | wall s | CPU s | p50 ms/topic | load (1 min) before -> after |",
           "|---:|---|---:|---:|---:|---|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    out += ["", f"`workbench run rerank --candidates bm25 --depth {depth} --name bench+minilm` in a new process "
            "on a copy of the Cranfield store (the MiniLM document vectors cached, so each topic costs one query "
            "encoding and 50 dot products), the settings interleaved in rounds. Wall time includes starting Python "
            "and loading the model; CPU time is the process's (all threads). A topic's work is too small to share "
            "between threads: with a thread per core on cores other processes use, the threads wait on each "
            "other, so wall time and CPU time grow with the load while one thread's stay flat. Hence the default, "
            "1 (`--threads 0` asks for torch's choice)."]
    return out


# -- overhead -------------------------------------------------------------------------------


def synthetic_store(n_topics: int = 5000, depth: int = 100, seed: int = 0):
    """A store with n_topics topics, a depth-``depth`` candidate run and a permuted rerank of it."""
    from workbench.lineage import RunLineage
    from workbench.store import Store
    from workbench.types import Document, RunInfo, Topic

    CACHE.mkdir(parents=True, exist_ok=True)
    store = Store(CACHE / f"synthetic-{n_topics}x{depth}.duckdb", client="bench", linger_s=1.0,
                       min_turn_s=1.0)  # the CLI's store settings
    if store.runs.has_run("cand-rr"):
        return store
    rng = np.random.default_rng(seed)
    n_docs = 50_000
    docs = [Document(f"doc{i}", "", f"text {i}") for i in range(n_docs)]
    topics = [Topic(str(t), f"query {t}") for t in range(n_topics)]
    store.collections.ingest_collection("syn", docs, topics)
    cand: dict[str, dict[str, float]] = {}
    final: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for t in range(n_topics):
        ids = rng.choice(n_docs, size=depth + 20, replace=False)
        ranked_docs = [f"doc{i}" for i in ids[:depth]]
        cand[str(t)] = {d: float(depth - r) for r, d in enumerate(ranked_docs)}
        perm = rng.permutation(depth)
        final[str(t)] = {ranked_docs[i]: float(depth - r) for r, i in enumerate(perm)}
        rel = list(rng.choice(ranked_docs, size=3, replace=False)) + [f"doc{i}" for i in ids[depth:depth + 3]]
        qrels[str(t)] = {d: int(rng.integers(1, 4)) for d in rel}
    store.runs.save_run(RunInfo("cand", "bm25", {}, depth, "syn"), cand)
    store.runs.save_rerank_run(RunInfo("cand-rr", "rerank", {}, depth, "syn"), final,
                          RunLineage("cand-rr", "cand", depth, "perm", "external", origin="imported"))
    store.qrels.create_qrels_version("syn-qrels", "syn", qrels, origin="imported", rule="synthetic")
    return store


def _interleaved(fns: dict[str, object], repeat: int) -> dict[str, list[tuple[float, float]]]:
    """(wall s, CPU s of the process, all threads) per call, the contenders interleaved."""
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()  # type: ignore[operator]
            times[name].append((time.perf_counter() - t0, time.process_time() - c0))
    return times


def bench_overhead(repeat: int) -> list[str]:
    from workbench.scoring.stages import stage_measures
    from workbench.services.evaluation.pipeline import score
    from workbench.services.evaluation.request import Output, ScoreEnv, ScoreRequest
    from workbench.services.runs.stages import stage_reports

    out = ["## Stage report overhead over a plain score of the same runs", "",
           "| data | topics | D, k | `score` CPU / wall median (ms) | `stage_reports` CPU / wall median (ms) "
           "| overhead, CPU median | overhead, wall median | load (1 min) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    cases = []
    cran = cranfield_store()
    if not cran.runs.has_run("bm25+perm50"):
        from workbench.lineage import RunLineage
        from workbench.ranking import ranked_ids
        from workbench.types import RunInfo

        rng = np.random.default_rng(1)
        top = {t: ranked_ids(s, 50) for t, s in cran.runs.get_run("bm25", depth=50).items()}
        final = {t: {d: float(len(ds) - r) for r, d in enumerate(rng.permutation(ds))} for t, ds in top.items()}
        info = cran.runs.get_run_info("bm25")
        cran.runs.save_rerank_run(RunInfo("bm25+perm50", "rerank", {}, 50, info.collection), final,
                             RunLineage("bm25+perm50", "bm25", 50, "perm", "external", origin="imported"))
    cases.append(("Cranfield", cran, "bm25", "bm25+perm50", "cranfield-reference", 50))
    print("building the synthetic store (once)...", file=sys.stderr)
    syn = synthetic_store()
    cases.append(("synthetic", syn, "cand", "cand-rr", "syn-qrels", 100))
    for label, store, cand, final, qrels, d in cases:
        ms = [str(m) for m in stage_measures(d, 10)]
        fns = {
            "score": lambda store=store, cand=cand, final=final, qrels=qrels, ms=ms: score(
                ScoreRequest((cand, final), qrels, measures=tuple(ms), output=Output(record=False)),
                ScoreEnv(lambda: store)),
            "stages": lambda store=store, final=final, qrels=qrels: stage_reports(
                [final], qrels, open_store=lambda: store, final_k=10),
        }
        _interleaved(fns, 1)  # warm caches and imports
        times = _interleaved(fns, repeat)
        med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
        (s_wall, s_cpu), (t_wall, t_cpu) = med["score"], med["stages"]
        n_topics = len(stage_reports([final], qrels, open_store=lambda store=store: store, final_k=10).reports[0].topics)
        out.append(f"| {label} | {n_topics:,} | {d}, 10 | {1000 * s_cpu:.1f} / {1000 * s_wall:.1f} | "
                   f"{1000 * t_cpu:.1f} / {1000 * t_wall:.1f} | {100 * (t_cpu / s_cpu - 1):+.1f}% | "
                   f"{100 * (t_wall / s_wall - 1):+.1f}% | {os.getloadavg()[0]:.1f} |")
        print(f"  {label}: score {1000 * s_cpu:.1f} ms CPU, stages {1000 * t_cpu:.1f} ms CPU", file=sys.stderr)
    out += ["", f"{repeat} interleaved repeats after one warm-up, the store opened as the CLI opens it; both read "
            "the two runs and the qrels from the store and score them with the same measures. The verdict uses the "
            "CPU time of the process (all threads): on a shared machine wall time mostly measures the neighbours. `stage_reports` also reads the lineage and the cost, "
            "compares the two top-D document sets, diagnoses every topic and checks the index for the missed "
            "relevant documents; `score_runs` also audits the runs' document ids against the qrels (the release "
            "gate's ID audit), which `stage_reports` does not. Target: under 10%."]
    return out


PARTS = ("throughput", "command", "overhead")
"""The parts, in the order of the results file."""

TITLES = {"throughput": "## Rerank throughput", "command": "## The rerank command under load",
          "overhead": "## Stage report overhead"}
"""How each part's section of the results file begins."""


def _sections(text: str) -> dict[str, str]:
    """The sections of an earlier results file, by part."""
    out = {}
    for chunk in text.split("\n## ")[1:]:
        chunk = "## " + chunk.strip("\n")
        for part, title in TITLES.items():
            if chunk.startswith(title):
                out[part] = chunk
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("parts", nargs="*", help=f"any of {', '.join(PARTS)} (default: all)")
    ap.add_argument("--topics", type=int, default=50, help="Cranfield topics of the throughput part")
    ap.add_argument("--cold", action="store_true", help="also time the bi-encoder with a cold cache (slow)")
    ap.add_argument("--rounds", type=int, default=2, help="interleaved rounds of the command part")
    ap.add_argument("--repeat", type=int, default=15, help="interleaved repeats of the overhead part")
    args = ap.parse_args()
    parts = args.parts or list(PARTS)
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        ap.error(f"unknown part {unknown[0]!r}; choose from {', '.join(PARTS)}")
    sections = _sections(RESULTS.read_text()) if RESULTS.is_file() else {}
    for part in parts:
        lines = (bench_throughput(args.topics, cold=args.cold) if part == "throughput"
                 else bench_command(args.rounds) if part == "command" else bench_overhead(args.repeat))
        sections[part] = "\n".join(lines).strip("\n")
        print(sections[part] + "\n")
    head = ["# Rerank benchmark", "",
            f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. "
            "Produced by `bench/rerank/bench_rerank.py` (see its docstring); each section by its part, "
            "with the load average (1 min) beside each figure.", ""]
    RESULTS.write_text("\n".join(head) + "\n" + "\n\n".join(sections[p] for p in PARTS if p in sections) + "\n")
    print(f"wrote {RESULTS} ({', '.join(parts)})", file=sys.stderr)


if __name__ == "__main__":
    main()
