"""Scale benchmark: a synthetic TREC-size campaign, pooled and scored in bounded memory.

Not part of pytest. Run (each part can run alone; data is written once and reused):

    .venv/bin/python bench/scale.py data                 # 100 runs x 1,000 topics x 1,000 docs as Parquet (~1 GB)
    .venv/bin/python bench/scale.py pool score           # pool (depth 100) and score at 1e6, 1e7, 1e8 rows
    .venv/bin/python bench/scale.py pytrec               # side by side with pytrec_eval at 1e7 rows
    .venv/bin/python bench/store_size.py                 # the store at campaign size (2e6 judgments)
    .venv/bin/python bench/scale.py all --sizes 1e6 1e7  # everything, smaller sizes only

The campaign (seeded, ``--data``, default ``/tmp/workbench-scale``; check ``df -h``):

* 1,000 topics; a collection of 10,000,000 document ids (``D0000000``...); each
  topic draws its candidates from its own 10,000 documents, the first of which
  are the likelier relevant;
* 100 runs (``run000``..``run099``), each 1,000 topics x 1,000 documents =
  1,000,000 rows: columns ``topic_id, doc_id, score, rank``, one Parquet file
  per run. A run's quality varies (how much its score follows the documents'
  relevance); 1e6 rows = the first run, 1e7 = the first 10, 1e8 = all 100;
* qrels (``qrels.parquet``): for each topic its first 300 candidates judged,
  grade 2 for the first 30, 1 for the next 70, 0 for the rest: 300,000
  judgments; everything else a run returns is unjudged (pool-novel).

Measured, each in a fresh process (``os.wait4``: wall time and peak RSS):

* **pool**: ``services.runs.pooling.pool_from_files(runs, depth=100)``, the bulk
  path (DuckDB reads every Parquet file; entries with best rank, run count and
  RRF priority; provenance: every (topic, document, run, rank) contribution);
* **score**: ``workbench score RUN... --qrels qrels.parquet --missing zero -m
  R@10 -m R@100 -m R@1000 -m nDCG@10 -m Judged@10 -m Judged@100 --format
  parquet --out ...``: the command line, every run read, scored and let go in
  turn; R@k with its ceiling and pool-novel counts, results written as Parquet;
* **pytrec**: at 1e7 rows, the same runs and qrels as TREC text, scored by
  ``workbench score`` and by pytrec_eval one run at a time (parse_run,
  evaluate, keep the per-topic values), R@10/100/1000, nDCG@10; and pytrec_eval
  given one run of all 1e7 rows (10 runs as 10,000 topics), to find the rows
  per run at which its memory stops it on this machine;
* **store**: ``bench/store_size.py`` (its own script, ``bench/results/store.md``).

The load average before and after each measurement is written next to it
(the machine is shared). Writes ``bench/results/scale.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "scale.md"
PY = sys.executable
CONSOLE = "import sys; sys.argv[0] = 'workbench'; from workbench.cli import run; run()"
N_TOPICS, DEPTH, N_RUNS = 1_000, 1_000, 100
UNIVERSE, N_DOCS = 10_000, 10_000_000
SIZES = {"1e6": 1, "1e7": 10, "1e8": 100}
MEASURES = ["R@10", "R@100", "R@1000", "nDCG@10", "Judged@10", "Judged@100"]


def child_env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("WORKBENCH_DB", None)
    return env


# -- data ----------------------------------------------------------------------------------------


def _doc_ids(topic_index: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Document numbers of candidates ``j`` of topics ``topic_index`` (distinct within a topic)."""
    return (topic_index.astype(np.int64) * 1_000_003 + j.astype(np.int64) * 7919) % N_DOCS


def _id_array(prefix: bytes, numbers: np.ndarray, width: int) -> object:
    """pyarrow string array of ``prefix + zero-padded number`` built from bytes (no Python str per row)."""
    import pyarrow as pa

    n = len(numbers)
    digits = (numbers[:, None] // (10 ** np.arange(width - 1, -1, -1, dtype=np.int64))) % 10 + 48
    chars = np.empty((n, len(prefix) + width), dtype=np.uint8)
    chars[:, : len(prefix)] = np.frombuffer(prefix, dtype=np.uint8)
    chars[:, len(prefix):] = digits
    step = chars.shape[1]
    offsets = np.arange(0, step * n + 1, step, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(chars.tobytes())])


def _topic_array(codes: np.ndarray) -> object:
    """pyarrow dictionary array of topic ids "1".."1000" (dictionary-encoded, as files usually are)."""
    import pyarrow as pa

    names = pa.array([str(t + 1) for t in range(N_TOPICS)])
    return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), names)


def make_run(folder: Path, r: int) -> Path:
    """``run{r:03d}.parquet``: 1,000 topics x 1,000 documents, score desc, rank 1..1000."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / f"run{r:03d}.parquet"
    if path.exists():
        return path
    rng = np.random.default_rng(1000 + r)
    quality = 0.3 + 0.7 * rng.random()
    signal = -np.log1p(np.arange(UNIVERSE) / 200.0)          # candidates early in a topic's list: likelier relevant
    topics, docs, scores = [], [], []
    for lo in range(0, N_TOPICS, 100):                         # 100 topics at a time: bounded memory
        keys = quality * signal[None, :] + rng.gumbel(size=(100, UNIVERSE)) * 0.6
        top = np.argpartition(-keys, DEPTH - 1, axis=1)[:, :DEPTH]
        tk = np.take_along_axis(keys, top, axis=1)
        order = np.argsort(-tk, axis=1, kind="stable")
        top, tk = np.take_along_axis(top, order, axis=1), np.take_along_axis(tk, order, axis=1)
        t_idx = np.repeat(np.arange(lo, lo + 100), DEPTH)
        topics.append(t_idx)
        docs.append(_doc_ids(t_idx, top.reshape(-1)))
        scores.append(np.round(tk.reshape(-1), 6))
    t_all, d_all, s_all = np.concatenate(topics), np.concatenate(docs), np.concatenate(scores)
    table = pa.table({
        "topic_id": _topic_array(t_all), "doc_id": _id_array(b"D", d_all, 7), "score": s_all,
        "rank": np.tile(np.arange(1, DEPTH + 1, dtype=np.int32), N_TOPICS),
    })
    tmp = path.with_suffix(".tmp")
    pq.write_table(table, tmp, compression="zstd", row_group_size=DEPTH * N_TOPICS)
    os.replace(tmp, path)
    return path


def make_qrels(folder: Path) -> Path:
    """``qrels.parquet``: per topic its first 300 candidates, grades 2 (30), 1 (70), 0 (200)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / "qrels.parquet"
    if path.exists():
        return path
    j = np.tile(np.arange(300), N_TOPICS)
    t = np.repeat(np.arange(N_TOPICS), 300)
    grade = np.where(j < 30, 2, np.where(j < 100, 1, 0)).astype(np.int32)
    table = pa.table({"topic_id": _topic_array(t).cast(pa.string()), "doc_id": _id_array(b"D", _doc_ids(t, j), 7),
                      "grade": grade})
    pq.write_table(table, path.with_suffix(".tmp"))
    os.replace(path.with_suffix(".tmp"), path)
    return path


def make_trec(folder: Path, parquet_path: Path, *, topic_prefix: str = "") -> Path:
    """The TREC text form of a Parquet run (or qrels) file, for pytrec_eval."""
    import pyarrow.parquet as pq

    out = folder / "trec" / (parquet_path.stem + (".run" if parquet_path.stem.startswith("run") else ".qrels"))
    if out.exists():
        return out
    out.parent.mkdir(exist_ok=True)
    t = pq.read_table(parquet_path)
    topics = t.column("topic_id").cast("string").to_pylist()
    docs = t.column("doc_id").to_pylist()
    with open(out.with_suffix(".tmp"), "w") as f:
        if "grade" in t.column_names:
            f.writelines(f"{a} 0 {b} {g}\n" for a, b, g in zip(topics, docs, t.column("grade").to_pylist(), strict=True))
        else:
            tag = parquet_path.stem
            f.writelines(f"{a} Q0 {b} {r} {s!r} {tag}\n" for a, b, r, s in zip(
                topics, docs, t.column("rank").to_pylist(), t.column("score").to_pylist(), strict=True))
    os.replace(out.with_suffix(".tmp"), out)
    return out


def make_data(folder: Path, n_runs: int) -> tuple[list[Path], Path]:
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    runs = []
    for r in range(n_runs):
        runs.append(make_run(folder, r))
        print(f"[data] run {r + 1}/{n_runs} [elapsed] {time.perf_counter() - t0:.0f} s", file=sys.stderr, end="\r")
    print(file=sys.stderr)
    return runs, make_qrels(folder)


# -- measuring -------------------------------------------------------------------------------------


def measure(argv: list[str], *, cwd: Path | None = None) -> tuple[float, float, str, str]:
    """(wall s, peak RSS MB, stdout, stderr) of a fresh process."""
    wall, rss, _cpu, out, err = measure_usage(argv, cwd=cwd)
    return wall, rss, out, err


def measure_usage(argv: list[str], *, cwd: Path | None = None) -> tuple[float, float, float, str, str]:
    """(wall s, peak RSS MB, CPU s = user + sys, stdout, stderr) of a fresh process (``os.wait4``).

    Raises:
        RuntimeError: the process exited with a non-zero code (the end of its stderr is in the message).
    """
    out_r, out_w = os.pipe()
    err_path = Path(f"/tmp/workbench-scale-stderr-{os.getpid()}.txt")
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.dup2(out_w, 1)
        fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 2)
        if cwd is not None:
            os.chdir(cwd)
        os.execve(argv[0], argv, child_env())
    os.close(out_w)
    chunks = []
    while b := os.read(out_r, 1 << 16):
        chunks.append(b)
    os.close(out_r)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    err = err_path.read_text(errors="replace")
    err_path.unlink(missing_ok=True)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}... exited with {os.waitstatus_to_exitcode(status)}:\n{err[-3000:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime, b"".join(chunks).decode(), err


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


POOL = """
import sys, time
from workbench.services.runs.pooling import pool_from_files
t0 = time.perf_counter()
p = pool_from_files(sys.argv[2:], int(sys.argv[1]))
print("POOL", p.n_entries, len(p.provenance["topic_id"]), len(set(p.entries["topic_id"])), time.perf_counter() - t0)
"""


def bench_pool(runs: list[Path], sizes: list[str]) -> list[str]:
    rows = ["| rows | runs | wall (s) | s per 1e6 rows | peak RSS (MB) | pooled documents | provenance rows | load before/after |",
            "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for size in sizes:
        n = SIZES[size]
        before = load()
        wall, rss, out, _ = measure([PY, "-c", POOL, "100", *map(str, runs[:n])])
        _, entries, prov, _topics, _ = out.split()[-5:]
        rows.append(f"| {n * 1_000_000:,} | {n} | {wall:.1f} | {wall / n:.2f} | {rss:,.0f} | {int(entries):,} | "
                    f"{int(prov):,} | {before} / {load()} |")
        print(rows[-1], file=sys.stderr)
    return rows


def bench_score(runs: list[Path], qrels: Path, sizes: list[str], out_dir: Path) -> list[str]:
    rows = ["| rows | runs | wall (s) | s per 1e6 rows | peak RSS (MB) | results rows (Parquet) | load before/after |",
            "|---:|---:|---:|---:|---:|---:|---|"]
    import pyarrow.parquet as pq

    for size in sizes:
        n = SIZES[size]
        target = out_dir / f"scores-{size}.parquet"
        ms = [a for m in MEASURES for a in ("-m", m)]
        before = load()
        wall, rss, _, _ = measure([PY, "-c", CONSOLE, "-q", "score", *map(str, runs[:n]), "--qrels", str(qrels),
                                   "--missing", "zero", *ms, "--per-topic", "--format", "parquet", "--out", str(target)])
        n_rows = pq.read_metadata(target).num_rows
        rows.append(f"| {n * 1_000_000:,} | {n} | {wall:.1f} | {wall / n:.2f} | {rss:,.0f} | {n_rows:,} | "
                    f"{before} / {load()} |")
        print(rows[-1], file=sys.stderr)
    return rows


PYTREC_STREAM = """
import sys, pytrec_eval
qrels_path, runs = sys.argv[1], sys.argv[2:]
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, {"recall_10", "recall_100", "recall_1000", "ndcg_cut_10"})
means = []
for path in runs:                       # one run at a time, as the workbench does
    with open(path) as f:
        run = pytrec_eval.parse_run(f)
    res = ev.evaluate(run)
    del run
    means.append(sum(v["recall_100"] for v in res.values()) / len(res))
print("CHECK", " ".join(f"{m:.6f}" for m in means))
"""

PYTREC_ONE = """
import sys, pytrec_eval
qrels_path, runs = sys.argv[1], sys.argv[2:]
qrels, run = {}, {}
with open(qrels_path) as f:
    base = pytrec_eval.parse_qrel(f)
for i, path in enumerate(runs):         # every run as its own 1,000 topics: one run of all the rows
    with open(path) as f:
        part = pytrec_eval.parse_run(f)
    for t, docs in part.items():
        run[f"{i}-{t}"] = docs
        qrels[f"{i}-{t}"] = base[t]
    del part
res = pytrec_eval.RelevanceEvaluator(qrels, {"recall_10", "recall_100", "recall_1000", "ndcg_cut_10"}).evaluate(run)
print("CHECK", len(res))
"""


def bench_pytrec(runs: list[Path], qrels: Path, folder: Path) -> list[str]:
    n = SIZES["1e7"]
    t0 = time.perf_counter()
    text_runs = [make_trec(folder, r) for r in runs[:n]]
    text_qrels = make_trec(folder, qrels)
    print(f"[pytrec] TREC text written in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    rows = ["| contender (1e7 rows: 10 runs x 1,000 topics x 1,000) | wall (s) | peak RSS (MB) | mean R@100 of run000 | "
            "load before/after |", "|---|---:|---:|---:|---|"]
    results = {}
    for name, argv in (
        ("workbench score, TREC text", [PY, "-c", CONSOLE, "-q", "score", *map(str, text_runs), "--qrels",
                                        str(text_qrels), "--missing", "zero", "-m", "R@10", "-m", "R@100", "-m",
                                        "R@1000", "-m", "nDCG@10", "--format", "jsonl"]),
        ("workbench score, Parquet", [PY, "-c", CONSOLE, "-q", "score", *map(str, runs[:n]), "--qrels", str(qrels),
                                      "--missing", "zero", "-m", "R@10", "-m", "R@100", "-m", "R@1000", "-m", "nDCG@10",
                                      "--format", "jsonl"]),
        ("pytrec_eval, one run at a time", [PY, "-c", PYTREC_STREAM, str(text_qrels), *map(str, text_runs)]),
    ):
        before = load()
        wall, rss, out, _ = measure(argv)
        if out.startswith("CHECK"):
            check = float(out.split()[1])
        else:
            check = next(json.loads(x)["value"] for x in out.splitlines()
                         if '"R@100"' in x and '"macro"' in x)
        results[name] = (wall, rss)
        rows.append(f"| {name} | {wall:.1f} | {rss:,.0f} | {check:.4f} | {before} / {load()} |")
        print(rows[-1], file=sys.stderr)
    # pytrec_eval holding one run of many rows: how its memory grows with the rows of one run
    growth = []
    for k in (1, 3, 10):
        before = load()
        wall, rss, _, _ = measure([PY, "-c", PYTREC_ONE, str(text_qrels), *map(str, text_runs[:k])])
        growth.append((k * 1_000_000, wall, rss))
        rows.append(f"| pytrec_eval, one run of {k * 1_000_000:,} rows ({k * 1000:,} topics) | {wall:.1f} | {rss:,.0f} "
                    f"| - | {before} / {load()} |")
        print(rows[-1], file=sys.stderr)
    (r1, _, m1), (r2, _, m2) = growth[0], growth[-1]
    per_row = (m2 - m1) / (r2 - r1) * 1e6  # MB per 1e6 rows
    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    stops = (total_mb - m1) / per_row * 1e6 + r1
    w = results["workbench score, TREC text"]
    p = results["pytrec_eval, one run at a time"]
    rows += ["", f"pytrec_eval / workbench on the same TREC files: **{p[0] / w[0]:.1f}x** the wall time, "
             f"workbench peak RSS {w[1] / p[1]:.2f} of pytrec_eval's. pytrec_eval's memory grows by about "
             f"{per_row:,.0f} MB per million rows of one run (dicts of dicts in Python, then C++ maps): on this "
             f"machine ({total_mb / 1024:.0f} GiB) one run of about {stops / 1e6:,.0f} million rows would exhaust "
             "it; the workbench reads a run as columns (about 40 bytes a row) and lets each run go before the next."]
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("parts", nargs="+", choices=["data", "pool", "score", "pytrec", "all"])
    ap.add_argument("--data", type=Path, default=Path("/tmp/workbench-scale"))
    ap.add_argument("--sizes", nargs="+", choices=list(SIZES), default=list(SIZES))
    args = ap.parse_args()
    parts = {"data", "pool", "score", "pytrec"} if "all" in args.parts else set(args.parts)
    n_runs = max(SIZES[s] for s in args.sizes)
    if "pytrec" in parts:
        n_runs = max(n_runs, SIZES["1e7"])
    runs, qrels = make_data(args.data, n_runs)
    sections = {}
    if "pool" in parts:
        sections["pool"] = ["## Pool construction: depth 100 with provenance (bulk path)", "", *bench_pool(runs, args.sizes)]
    if "score" in parts:
        sections["score"] = ["## Scoring every run: `workbench score` (R@10/100/1000 with ceilings and pool-novel counts, "
                             "nDCG@10, Judged@10/100), results written as Parquet", "",
                             *bench_score(runs, qrels, args.sizes, args.data)]
    if "pytrec" in parts:
        sections["pytrec"] = ["## Side by side with pytrec_eval at 1e7 rows", "", *bench_pytrec(runs, qrels, args.data)]
    previous = RESULTS.read_text() if RESULTS.exists() else ""
    kept = {}
    for block in previous.split("\n## ")[1:]:
        title = "## " + block.split("\n", 1)[0]
        key = "pool" if title.startswith("## Pool") else "score" if title.startswith("## Scoring") else "pytrec"
        kept[key] = ["## " + block.rstrip("\n")]
    kept.update({k: ["\n".join(v)] for k, v in sections.items()})
    head = [
        "# Scale benchmark", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, Python "
        f"{platform.python_version()}. Written by `bench/scale.py` (see its docstring for the campaign); last part "
        f"run on {time.strftime('%Y-%m-%d %H:%M')}. Each figure is one fresh process (`os.wait4`: wall time, peak "
        "RSS); the machine is shared by up to 8 engineers, so the 1-minute load average before and after each "
        "measurement is given (2 cores: above 2 means other processes competed).", "",
    ]
    text = "\n".join(head + [kept[k][0] + "\n" for k in ("pool", "score", "pytrec") if k in kept])
    RESULTS.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
