"""Release-gate benchmark: `workbench gate` against `workbench compare` alone at MS MARCO size.

Not part of pytest (speed lives here, as ratios). Run:

    .venv/bin/python bench/gate/bench_gate.py                 # 3 interleaved repeats
    .venv/bin/python bench/gate/bench_gate.py --repeat 5

Data: the scoring benchmark's MS MARCO-size case (``bench/scoring/bench_scoring.py``,
``make_msmarco``: 6,980 topics x 1,000 documents, sparse qrels) as the
baseline, and a candidate made from it with the same generator: for half of the
topics (seeded) the top 100 are shuffled, so some relevant documents move in
and out of the top K. Both are TREC run files (about 190 MB each), generated
once into ``--data``.

Contenders, each a fresh process (file parsing, scoring, statistics and
rendering included), repeats interleaved:

* ``compare``: ``workbench compare BASE CAND --qrels Q -m R@100 --resamples 1000``
  (randomization test and paired bootstrap, 1,000 resamples each; per-topic
  deltas with lost and gained documents);
* ``gate``: ``workbench gate BASE CAND --qrels Q --policy P --format json`` with a
  policy gating R@100 with the same tests (bootstrap CI bound and permutation
  test, 1,000 resamples each), critical topics, a slice floor on ``n_relevant``,
  the completion, topic-count and topic-share rules, the diff list, and each run
  file's sha256; files only, so the ID audit and the leakage check are reported
  as not made (``id_audit = "when-available"``);
* ``gate-2m``: the same gate with two gated measures (R@100 and nDCG@10), so the
  cost of a second family member is visible.

Reported: best and median wall time, median CPU time, peak RSS, and the gate's
overhead over compare ((gate - compare) / compare, best wall times); target:
under 20%. Results go to ``bench/results/gate.md``.
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
sys.path.insert(0, str(ROOT / "bench" / "scoring"))

from bench_scoring import PY, _unique_rows, _write_run, make_msmarco  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "gate.md"

POLICY = """
[gate]
k = 100
measures = {measures}
min_topics = 30
[macro]
min_ci_low = -0.01
resamples = 1000
seed = 0
[permutation]
alpha = 0.05
resamples = 1000
seed = 0
[critical]
topics = {critical}
[[floor]]
by = "n_relevant"
min = 0.0
[validity]
id_audit = "when-available"
"""

CLI = "import sys; from workbench.cli import main; sys.exit(main(sys.argv[1:]))"


def make_candidate(folder: Path, seed: int = 42) -> Path:
    """The baseline's generator replayed, then the top 100 shuffled for half of the topics (seeded)."""
    path = folder / "msmarco-candidate.run"
    if path.exists():
        return path
    rng = np.random.default_rng(seed)  # replay make_msmarco's draws exactly
    n_topics, depth, n_docs = 6_980, 1_000, 8_841_823
    topics = [str(t) for t in np.sort(rng.choice(np.arange(2, 1_200_000), n_topics, replace=False))]
    docs = _unique_rows(rng, n_topics, depth, n_docs)
    scores = -np.sort(-rng.gamma(2.0, 5.0, size=(n_topics, depth)), axis=1)
    shuffle = np.random.default_rng(seed + 1)
    for i in np.flatnonzero(shuffle.random(n_topics) < 0.5):
        docs[i, :100] = docs[i, shuffle.permutation(100)]
        docs[i, 100:200] = docs[i, 100 + shuffle.permutation(100)]
        top = docs[i, :200].copy()
        swap = shuffle.random(200) < 0.1                      # some documents of the top 200 trade places
        docs[i, :200] = np.where(swap, np.roll(top, 100), top)
    _write_run(path, topics, docs, scores, "cand")
    return path


def _argv(kind: str, base: Path, cand: Path, qrels: Path, policy: Path) -> list[str]:
    if kind == "compare":
        return ["--quiet", "compare", str(base), str(cand), "--qrels", str(qrels), "-m", "R@100", "--resamples",
                "1000"]
    return ["--quiet", "gate", str(base), str(cand), "--qrels", str(qrels), "--policy", str(policy), "--format", "json"]


def run_cli(argv: list[str]) -> tuple[float, float, str, float]:
    """(wall s, peak RSS MB, stdout, CPU s) of one fresh ``workbench`` process (``os.wait4`` of the child).

    Gate exit codes 0, 1 and 2 are verdicts, not errors; anything else raises.
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out_r, out_w = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child
        os.dup2(out_w, 1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.chdir(ROOT)
        os.execve(PY, [PY, "-c", CLI, *argv], env)
    os.close(out_w)
    chunks = []
    while b := os.read(out_r, 1 << 16):
        chunks.append(b)
    os.close(out_r)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    if rc not in (0, 1, 2):
        raise RuntimeError(f"workbench {' '.join(argv)} exited with {rc}; run it by hand to see why")
    return wall, usage.ru_maxrss / 1024, b"".join(chunks).decode(), usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path.home() / ".cache" / "workbench-bench" / "scoring")
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    base, qrels = make_msmarco(args.data)
    cand = make_candidate(args.data)
    topics = [line.split()[0] for line in qrels.read_text().splitlines()[:: 700]]
    critical = "[" + ", ".join(f'"{x}"' for x in dict.fromkeys(topics)) + "]"
    policies = {}
    for name, measures in (("gate", '["R@100"]'), ("gate-2m", '["R@100", "nDCG@10"]')):
        p = args.data / f"{name}.toml"
        p.write_text(POLICY.format(measures=measures, critical=critical))
        policies[name] = p
    print(f"data ready in {time.perf_counter() - t:.1f} s: {base} ({base.stat().st_size / 1e6:.0f} MB), {cand}",
          file=sys.stderr)
    kinds = ["compare", "gate", "gate-2m"]
    samples: dict[str, list[tuple[float, float, str, float]]] = {k: [] for k in kinds}
    for i in range(args.repeat):
        for k in kinds:
            argv = _argv(k, base, cand, qrels, policies.get(k, policies["gate"]))
            wall, rss, out, cpu = run_cli(argv)
            samples[k].append((wall, rss, out, cpu))
            verdict = out.split('"verdict": "')[1].split('"')[0] if '"verdict"' in out else "-"
            print(f"{i + 1}/{args.repeat} {k:8s} {wall:7.2f} s {cpu:7.2f} s CPU {rss:7.0f} MB  verdict {verdict}",
                  file=sys.stderr)
    best = {k: min(s[0] for s in v) for k, v in samples.items()}
    med = {k: statistics.median(s[0] for s in v) for k, v in samples.items()}
    cpu = {k: statistics.median(s[3] for s in v) for k, v in samples.items()}
    rss = {k: max(s[1] for s in v) for k, v in samples.items()}
    over = {k: (best[k] - best["compare"]) / best["compare"] for k in kinds}
    over_cpu = {k: (cpu[k] - cpu["compare"]) / cpu["compare"] for k in kinds}
    lines = [
        "# Release-gate benchmark",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
        f"{args.repeat} fresh processes per contender, interleaved; MS MARCO size (6,980 topics x 1,000 documents "
        "per run, two runs), 1,000 resamples per test. Produced by `bench/gate/bench_gate.py`.",
        "",
        "| contender | wall, best (s) | wall, median (s) | CPU, median (s) | peak RSS (MB) | overhead vs compare "
        "(best wall) | overhead (median CPU) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for k in kinds:
        lines.append(f"| {k} | {best[k]:.2f} | {med[k]:.2f} | {cpu[k]:.2f} | {rss[k]:.0f} | {100 * over[k]:+.1f}% | "
                     f"{100 * over_cpu[k]:+.1f}% |")
    verdict = "met" if over["gate"] < 0.20 and over_cpu["gate"] < 0.20 else "NOT met"
    lines += ["", f"gate / compare: {best['gate'] / best['compare']:.2f} in best wall time, "
              f"{cpu['gate'] / cpu['compare']:.2f} in median CPU time (same measure and tests as compare, plus "
              f"the gate's rules, its diff list and both files' sha256); target: the gate adds under 20% "
              f"(both ratios < 1.20): **{verdict}**. With a second gated measure (gate-2m): "
              f"{best['gate-2m'] / best['compare']:.2f} wall, {cpu['gate-2m'] / cpu['compare']:.2f} CPU. "
              f"Load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
              "(on a loaded machine wall times mostly measure waiting; the CPU ratio is the steadier figure).", ""]
    text = "\n".join(lines)
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
