"""Scoring benchmark: end-to-end time and peak memory against pytrec_eval, ranx and ir_measures.

Not part of pytest (speed lives here, as ratios). Run:

    .venv/bin/python bench/scoring/bench_scoring.py                 # both cases, 3 repeats
    .venv/bin/python bench/scoring/bench_scoring.py --case msmarco --repeat 1

Cases (synthetic, seeded, generated once into ``--data``, default
``~/.cache/workbench-bench/scoring``):

* ``msmarco``: 6,980 topics x 1,000 documents (MS MARCO dev size; doc ids drawn
  from 8,841,823 passages, unique per topic, scores with 4 decimals so some
  tie), sparse qrels: 1 relevant document per topic (2 for 7%), 60% of them
  somewhere in the run.
* ``dl``: 43 topics x 1,000 documents (TREC DL 2019 size), dense graded qrels:
  about 215 judgments per topic, grades 0-3, mostly from the run's top 100.
* ``cranfield``: the real thing at the small end: the workbench's BM25 run over
  the Cranfield sample corpus (225 topics x 100 = 22,471 lines, made once with
  ``workbench ingest`` + ``run bm25`` + ``run export``) against its reference
  qrels (1,837 judgments, grades -1..4 mapped to 0..4).

The workbench contends twice: ``workbench`` is the command line itself
(``workbench score RUN --qrels QRELS``, default report, table on stdout, in a
process started as the console script starts it), and ``workbench-api`` is
the Python API a notebook calls (``workbench.evaluate``), in a fresh process
too, so the difference between them is the command line's start-up.

Every contender runs in a fresh Python process, **file parsing included**
(each library's own readers), and computes R@5/10/20/50/100, nDCG@10, RR@10,
P@10 and Success@10; the workbench also computes everything it reports:
ceilings, micro averages, Judged@10, pool-novel counts, the R@k bounds, the
recall curve, the completion and ID-audit lines, and renders its table. The
document lists (relevant documents with their ranks, the pool-novel
documents) are made where they are printed or returned: ``workbench-api``
materialises the pool-novel lists (as str); the command line's default table
prints their counts only, so it makes no list (``--per-topic`` prints them). Repeats are interleaved across
contenders. Reported per contender: best and median wall time, median CPU time
(user + sys) and peak RSS (``os.wait4`` of the child, max over the repeats);
the verdict uses the best wall time (least disturbed by other processes, as
the pooling benchmark does). Macro R@100 and nDCG@10 are printed as a check.

Results are printed and written to ``bench/results/scoring.md``; with ``--case``, the
other cases keep their sections of that file (each says the load it was measured at).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results" / "scoring.md"
PY = sys.executable
CONSOLE = "import sys; sys.argv[0] = 'workbench'; from workbench.cli import run; run()"
"""What the ``workbench`` console script runs."""


def child_env() -> dict[str, str]:
    """Environment of every contender: this repository first, offline, bytecode cached.

    ``PYTHONDONTWRITEBYTECODE`` is dropped: an installed package has compiled
    bytecode (so do the peers, installed from wheels), and a source checkout
    writes its ``__pycache__`` on the first run.
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("WORKBENCH_DB", None)
    return env

# -- data ------------------------------------------------------------------------------------


def _write_run(path: Path, topics: list[str], docs: np.ndarray, scores: np.ndarray, tag: str) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        for i, t in enumerate(topics):
            f.write("".join(f"{t} Q0 {d} {r} {s:.4f} {tag}\n"
                            for r, (d, s) in enumerate(zip(docs[i].tolist(), scores[i].tolist(), strict=True), 1)))
    os.replace(tmp, path)


def _unique_rows(rng: np.random.Generator, n_rows: int, n: int, high: int) -> np.ndarray:
    out = np.empty((n_rows, n), dtype=np.int64)
    for i in range(n_rows):
        draw = rng.integers(0, high, size=n + n // 10 + 16)
        _, first = np.unique(draw, return_index=True)
        out[i] = draw[np.sort(first)][:n]
    return out


def make_msmarco(folder: Path, seed: int = 42) -> tuple[Path, Path]:
    """6,980 topics x 1,000 docs, sparse qrels (MS MARCO dev size)."""
    run, qrels = folder / "msmarco.run", folder / "msmarco.qrels"
    if run.exists() and qrels.exists():
        return run, qrels
    rng = np.random.default_rng(seed)
    n_topics, depth, n_docs = 6_980, 1_000, 8_841_823
    topics = [str(t) for t in np.sort(rng.choice(np.arange(2, 1_200_000), n_topics, replace=False))]
    docs = _unique_rows(rng, n_topics, depth, n_docs)
    scores = -np.sort(-rng.gamma(2.0, 5.0, size=(n_topics, depth)), axis=1)
    with open(qrels.with_suffix(".tmp"), "w") as f:
        for i, t in enumerate(topics):
            for _ in range(2 if rng.random() < 0.07 else 1):
                d = int(docs[i, rng.integers(0, depth)]) if rng.random() < 0.6 else int(rng.integers(0, n_docs))
                f.write(f"{t} 0 {d} 1\n")
    os.replace(qrels.with_suffix(".tmp"), qrels)
    _write_run(run, topics, docs, scores, "synth")
    return run, qrels


def make_dl(folder: Path, seed: int = 43) -> tuple[Path, Path]:
    """43 topics x 1,000 docs, dense graded qrels (TREC DL 2019 size)."""
    run, qrels = folder / "dl.run", folder / "dl.qrels"
    if run.exists() and qrels.exists():
        return run, qrels
    rng = np.random.default_rng(seed)
    n_topics, depth, n_docs = 43, 1_000, 8_841_823
    topics = [str(t) for t in np.sort(rng.choice(np.arange(19_000, 1_200_000), n_topics, replace=False))]
    docs = _unique_rows(rng, n_topics, depth, n_docs)
    scores = -np.sort(-rng.gamma(2.0, 5.0, size=(n_topics, depth)), axis=1)
    with open(qrels.with_suffix(".tmp"), "w") as f:
        for i, t in enumerate(topics):
            n = int(rng.integers(150, 280))
            picks = set()
            for _ in range(n):
                u = rng.random()
                if u < 0.6:
                    picks.add(int(docs[i, rng.integers(0, 100)]))
                elif u < 0.85:
                    picks.add(int(docs[i, rng.integers(100, depth)]))
                else:
                    picks.add(int(rng.integers(0, n_docs)))
            for d in sorted(picks):
                g = int(rng.choice([0, 1, 2, 3], p=[0.5, 0.25, 0.15, 0.10]))
                f.write(f"{t} 0 {d} {g}\n")
    os.replace(qrels.with_suffix(".tmp"), qrels)
    _write_run(run, topics, docs, scores, "synth")
    return run, qrels


def make_cranfield(folder: Path) -> tuple[Path, Path]:
    """The workbench's BM25 run over the Cranfield sample (225 topics x 100) and its reference qrels."""
    run, qrels = folder / "cranfield-bm25.run", ROOT / "sample_corpus" / "cranfield" / "qrels.reference.txt"
    if run.exists():
        return run, qrels
    db = folder / "cranfield.duckdb"
    base = [PY, "-c", CONSOLE, "--db", str(db), "-q"]
    env = child_env()
    subprocess.run([*base, "ingest", str(ROOT / "sample_corpus" / "cranfield")], check=True, env=env)
    subprocess.run([*base, "run", "bm25", "--collection", "cranfield", "--name", "bm25"], check=True, env=env)
    subprocess.run([*base, "run", "export", "bm25", "--out", str(run.with_suffix(".tmp"))], check=True, env=env)
    os.replace(run.with_suffix(".tmp"), run)
    return run, qrels


MAKERS = {"msmarco": make_msmarco, "dl": make_dl, "cranfield": make_cranfield}

# -- contenders (each a script run in a fresh process) ------------------------------------------

KS = (5, 10, 20, 50, 100)

WORKBENCH_CLI = ["-c", CONSOLE, "score", "{run}", "--qrels", "{qrels}"]
"""argv of ``workbench score RUN --qrels QRELS`` (the default report, a table on stdout)."""

WORKBENCH_API = """
import sys
from workbench.services.evaluation.pipeline import score
from workbench.services.evaluation.request import Output, ScoreRequest
from workbench.reports.scores import render_scores
run, qrels = sys.argv[1], sys.argv[2]
report = score(ScoreRequest((run,), qrels, missing="zero", output=Output(record=False)))
e = report.evaluations[0]
lists = e.novel_documents.at(max(e.novelty))          # pool-novel documents as str, per topic
text = render_scores(report.header(), report.evaluations, "table")
agg = {str(m): a.macro for m, a in e.aggregates.items()}
print("CHECK", agg["R@100"], agg["nDCG@10"], sum(len(v) for v in lists.values()), len(text))
"""

PYTREC_EVAL = """
import sys, pytrec_eval
run_path, qrels_path = sys.argv[1], sys.argv[2]
with open(qrels_path) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(run_path) as f:
    run = pytrec_eval.parse_run(f)
names = {"recall_5", "recall_10", "recall_20", "recall_50", "recall_100", "ndcg_cut_10", "recip_rank",
         "P_10", "success_10"}
res = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
mean = {n: sum(v[n] for v in res.values()) / len(res) for n in names}
print("CHECK", mean["recall_100"], mean["ndcg_cut_10"])
"""

IR_MEASURES = """
import sys, ir_measures
from ir_measures import R, nDCG, RR, P, Success
run_path, qrels_path = sys.argv[1], sys.argv[2]
qrels = list(ir_measures.read_trec_qrels(qrels_path))
run = list(ir_measures.read_trec_run(run_path))
ms = [R@5, R@10, R@20, R@50, R@100, nDCG@10, RR@10, P@10, Success@10]
agg = ir_measures.calc_aggregate(ms, qrels, run)
print("CHECK", agg[R@100], agg[nDCG@10])
"""

RANX = """
import sys
from ranx import Qrels, Run, evaluate
run_path, qrels_path = sys.argv[1], sys.argv[2]
qrels = Qrels.from_file(qrels_path, kind="trec")
run = Run.from_file(run_path, kind="trec")
ms = ["recall@5", "recall@10", "recall@20", "recall@50", "recall@100", "ndcg@10", "mrr@10", "precision@10",
      "hit_rate@10"]
res = evaluate(qrels, run, ms, make_comparable=True)
print("CHECK", res["recall@100"], res["ndcg@10"])
"""

CONTENDERS: dict[str, str | list[str]] = {
    "workbench": WORKBENCH_CLI, "workbench-api": WORKBENCH_API, "pytrec_eval": PYTREC_EVAL, "ranx": RANX,
    "ir_measures": IR_MEASURES,
}
OURS = ("workbench", "workbench-api")
TARGETS = {"msmarco": (4.0, 6.0), "dl": (1.0, 2.0), "cranfield": (1.0, 2.0)}
"""Per case: (target, stretch) for `workbench score`'s best wall time against the fastest peer's."""


def _argv(contender: str | list[str], run: Path, qrels: Path) -> list[str]:
    if isinstance(contender, list):
        return [PY, *(a.format(run=run, qrels=qrels) for a in contender)]
    return [PY, "-c", contender, str(run), str(qrels)]


def measure_once_wait4(contender: str | list[str], run: Path, qrels: Path) -> tuple[float, float, str, float]:
    """(wall seconds, peak RSS MB, stdout, CPU seconds) of one fresh process, from os.wait4 of that child."""
    env = child_env()
    argv = _argv(contender, run, qrels)
    out_r, out_w = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child
        os.dup2(out_w, 1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.chdir(ROOT)
        os.execve(PY, argv, env)
    os.close(out_w)
    chunks = []
    while True:
        b = os.read(out_r, 1 << 16)
        if not b:
            break
        chunks.append(b)
    os.close(out_r)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"contender exited with {os.waitstatus_to_exitcode(status)}; run it by hand to see why")
    return wall, usage.ru_maxrss / 1024, b"".join(chunks).decode(), usage.ru_utime + usage.ru_stime


def _check(stdout: str) -> str:
    """Macro R@100 and nDCG@10 from a contender's CHECK line, or from the workbench's table."""
    for line in stdout.splitlines():
        if line.startswith("CHECK"):
            parts = line.split()
            return f"R@100 {float(parts[1]):.4f}, nDCG@10 {float(parts[2]):.4f}"
    table = {m.group(1): float(m.group(2)) for m in re.finditer(r"^(R@100|nDCG@10)\s+([0-9.]+)", stdout, re.M)}
    if len(table) == 2:
        return f"R@100 {table['R@100']:.4f}, nDCG@10 {table['nDCG@10']:.4f}"
    return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", choices=[*MAKERS, "all"], default="all")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path.home() / ".cache" / "workbench-bench" / "scoring")
    ap.add_argument("--only", nargs="*", choices=list(CONTENDERS), default=list(CONTENDERS))
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    cases = list(MAKERS) if args.case == "all" else [args.case]
    lines = [
        "# Scoring benchmark",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        "fresh processes per contender (the number is given in each section), interleaved, file parsing "
        "included; best and median wall time, median CPU time (user + sys), peak RSS = max over the repeats.",
        "Produced by `bench/scoring/bench_scoring.py` (see its docstring for the data and measures).",
        "",
    ]
    sections: dict[str, list[str]] = {}
    for case in cases:
        start = len(lines)
        t = time.perf_counter()
        run, qrels = MAKERS[case](args.data)
        print(f"[{case}] data ready in {time.perf_counter() - t:.1f} s: {run} ({run.stat().st_size / 1e6:.0f} MB)",
              file=sys.stderr)
        # Repeats are interleaved (A, B, C, A, B, C, ...) so that a busy machine slows every
        # contender alike; each contender's median wall time and maximum peak RSS are reported.
        samples: dict[str, list[tuple[float, float, str, float]]] = {name: [] for name in args.only}
        for name in args.only:  # warm-up: page cache, bytecode (not timed)
            measure_once_wait4(CONTENDERS[name], run, qrels)
        load_before = os.getloadavg()[0]
        for i in range(args.repeat):
            for name in args.only:
                wall, rss, out, cpu = measure_once_wait4(CONTENDERS[name], run, qrels)
                samples[name].append((wall, rss, out, cpu))
                print(f"[{case}] {i + 1}/{args.repeat} {name:12s} {wall:7.2f} s {cpu:7.2f} s CPU {rss:8.0f} MB"
                      f"   {_check(out)}", file=sys.stderr)
        results = {
            name: (min(s[0] for s in runs), max(s[1] for s in runs), _check(runs[-1][2]),
                   statistics.median(s[3] for s in runs), statistics.median(s[0] for s in runs))
            for name, runs in samples.items()
        }
        ours = results.get("workbench")
        peers = {k: v for k, v in results.items() if k not in OURS}
        digits = 2 if case == "msmarco" else 3
        lines += [f"## {case}", "", f"{args.repeat} fresh process(es) per contender, {time.strftime('%Y-%m-%d %H:%M')}.",
                  "", "| contender | wall, best (s) | wall, median (s) | CPU, median (s) | peak RSS (MB) "
                  "| best wall / workbench | CPU / workbench | workbench RSS / RSS | check |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        for name, (wall, rss, check, cpu, med) in results.items():
            tr = f"{wall / ours[0]:.2f}x" if ours else "-"
            cr = f"{cpu / ours[3]:.2f}x" if ours else "-"
            mr = f"{ours[1] / rss:.2f}" if ours else "-"
            lines.append(f"| {name} | {wall:.{digits}f} | {med:.{digits}f} | {cpu:.{digits}f} | {rss:.0f} | {tr} | {cr} "
                         f"| {mr} | {check} |")
        if ours and peers:
            fastest = min(peers, key=lambda k: peers[k][0])
            speed = peers[fastest][0] / ours[0]
            cpu_ratio = peers[fastest][3] / ours[3]
            mem = ours[1] / peers[fastest][1]
            target, stretch = TARGETS[case]
            met = speed >= target and (case != "msmarco" or mem <= 0.5)
            verdict = ("met, stretch met" if speed >= stretch else "met") if met else "NOT met"
            memory_target = " and <= 0.5 of its memory" if case == "msmarco" else ""
            lines += ["", f"Fastest peer: {fastest}. `workbench score` is {speed:.2f}x its speed end to end (best wall "
                      f"time; {cpu_ratio:.2f}x in CPU time) and uses {mem:.2f} of its peak memory (target: >= "
                      f"{target:g}x{memory_target}, stretch {stretch:g}x): **{verdict}**. Load average (1 min) "
                      f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores."]
        lines.append("")
        sections[case] = lines[start:]
    print("\n".join(lines))
    # The cases not run this time keep their section of the results file (measured earlier, with their load).
    head = lines[: len(lines) - sum(len(v) for v in sections.values())]
    kept = _sections(RESULTS.read_text()) if RESULTS.exists() else {}
    body = [line for case in MAKERS for line in (sections.get(case) or kept.get(case, []))]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(head + body) + "\n")
    return 0


def _sections(text: str) -> dict[str, list[str]]:
    """case -> the lines of its ``## case`` section in a results file (through the blank line ending it)."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        if line.startswith("## "):
            current = out.setdefault(line[3:].strip(), [])
        if current is not None:
            current.append(line)
    return {case: lines[:-1] if lines and lines[-1] == "" and case == list(out)[-1] else lines
            for case, lines in out.items()}


if __name__ == "__main__":
    sys.exit(main())
