"""The store at campaign size: 2e6 judgments (1,000 topics x 1,000 documents x 2 assessors).

Not part of pytest. Run:

    .venv/bin/python bench/store_size.py                  # builds the store once in --data, then measures
    .venv/bin/python bench/store_size.py --saves 500      # more single saves for the latency percentiles
    .venv/bin/python bench/store_size.py --reuse          # measure on the store already in --data (no build,
                                                          # no import, no assign); fails if there is none
    .venv/bin/python bench/store_size.py --rebuild        # delete --data's store and build it again

Building the store takes about 10 minutes on an idle 2-core machine (an hour under
load); it is kept in ``--data`` with marker files (``built``, ``imported``,
``assigned``), so later runs measure on it. Each run adds two qrels versions and
1,000 re-grades (the measured steps), which the next run's figures include.

Set-up (timed, reported, not the targets): a collection of 1,000,000 short
documents and 1,000 topics (``store.collections.ingest_collection``), one run of 1,000
documents per topic (a Parquet run, stored with ``import_run_file``: a pool
names stored runs only) pooled at depth 1,000 (the bulk pool path,
``services.runs.pooling.pool_from_files``, stored with ``save_pool``), a lead
and two assessors. Then, each through the command line in a fresh process as
a lead would run it (``os.wait4``: wall time, CPU time, peak RSS):

* ``workbench judgments import`` of each assessor's 1,000,000 judgments (TREC
  format; the bulk import path, ``store.judgments_bulk``); grades drawn so the
  two assessors agree on about 70% of the documents;
* single saves: a third assessor judges ``--saves`` documents through the UI's
  save path (``services.judging.assessments.save_judgment``, one committed row each, in one
  process with the app's store settings: ``linger_s=STORE_LINGER_S``), latency
  p50 and p95 (target p95 < 50 ms); and the same with a store at its defaults
  (no linger: every save attaches and detaches the file, as a CLI process does);
* ``workbench agreement`` over the pool (target < 10 s);
* ``workbench publish`` of qrels v1 (target < 30 s), then 1,000 re-grades and
  ``publish`` of v2 with v1 as parent;
* ``workbench qrels diff v1 v2``.

Writes ``bench/results/store.md`` with the load average next to every figure.
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

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "store.md"
PY = sys.executable
CONSOLE = "import sys; sys.argv[0] = 'workbench'; from workbench.cli import run; run()"
N_TOPICS, N_DOCS_PER_TOPIC = 1_000, 1_000
TOKENS = {"boss": "boss-token-0123456789", "ann": "ann-token-0123456789", "bob": "bob-token-0123456789",
          "cat": "cat-token-0123456789"}

sys.path.insert(0, str(ROOT / "bench"))
from scale import load, measure_usage  # noqa: E402


def measure(argv: list[str]) -> tuple[float, float, float, str]:
    """(wall s, peak RSS MB, CPU s = user + sys, stdout) of a fresh process (``scale.measure_usage``)."""
    wall, rss, cpu, out, _err = measure_usage(argv)
    return wall, rss, cpu, out


def _doc(t: int, j: int) -> str:
    return f"D{t * N_DOCS_PER_TOPIC + j:07d}"


def build(data: Path) -> list[str]:
    """The store with the collection, the pool and the users (once); returns set-up lines for the report."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from workbench.services.runs.pooling import pool_from_files
    from workbench.store import Store
    from workbench.types import Document, Topic

    db = data / "store.duckdb"
    if (data / "built").exists():
        return (data / "built").read_text().splitlines()
    data.mkdir(parents=True, exist_ok=True)
    for p in data.glob("store.duckdb*"):
        p.unlink()
    lines = []
    store = Store(db, client="bench", lock_timeout_s=600)
    t0 = time.perf_counter()
    docs = [Document(_doc(t, j), "", f"document {j} of topic {t}") for t in range(N_TOPICS) for j in range(N_DOCS_PER_TOPIC)]
    store.collections.ingest_collection("campaign", docs, [Topic(str(t + 1), f"topic {t + 1}") for t in range(N_TOPICS)])
    del docs
    lines.append(f"- collection: {N_TOPICS * N_DOCS_PER_TOPIC:,} documents and {N_TOPICS:,} topics ingested in "
                 f"{time.perf_counter() - t0:.0f} s (load {load()})")
    t0 = time.perf_counter()
    t = np.repeat(np.arange(N_TOPICS), N_DOCS_PER_TOPIC)
    j = np.tile(np.arange(N_DOCS_PER_TOPIC), N_TOPICS)
    run_path = data / "system.parquet"
    pq.write_table(pa.table({"topic_id": [str(x + 1) for x in t], "doc_id": [_doc(a, b) for a, b in zip(t, j, strict=True)],
                             "score": (N_DOCS_PER_TOPIC - j).astype(np.float64)}), run_path)
    store.runs.import_run_file(run_path, "system", collection="campaign",
                          description="bench/store_size.py: the one run the campaign pool is built from")
    pool = pool_from_files([run_path], N_DOCS_PER_TOPIC)
    store.pools.save_pool("campaign-pool", pool, collection="campaign",
                    collection_version=store.collections.latest_collection_version("campaign"))
    lines.append(f"- pool: {pool.n_entries:,} documents at depth {N_DOCS_PER_TOPIC:,} built and stored in "
                 f"{time.perf_counter() - t0:.0f} s (load {load()})")
    store.users.add_user("boss", "lead", token=TOKENS["boss"])
    for name in ("ann", "bob", "cat"):
        store.users.add_user(name, token=TOKENS[name], lead="boss")
    rng = np.random.default_rng(5)
    base = rng.choice([0, 1, 2, 3], size=len(t), p=[0.6, 0.2, 0.12, 0.08])
    for name, seed in (("ann", 1), ("bob", 2)):
        r = np.random.default_rng(seed)
        grades = np.where(r.random(len(t)) < 0.7, base, r.integers(0, 4, size=len(t)))
        with open(data / f"{name}.qrels", "w") as f:
            f.writelines(f"{a + 1} 0 {_doc(a, b)} {g}\n" for a, b, g in zip(t, j, grades, strict=True))
    store.close() if hasattr(store, "close") else None
    (data / "built").write_text("\n".join(lines))
    return lines


SAVES = """
import sys, time, json
from workbench.app import STORE_LINGER_S
from workbench.services import judging as svc
from workbench.store import Store
linger = STORE_LINGER_S if sys.argv[5] == "ui" else 0.0
store = Store(sys.argv[1], client="bench saves", lock_timeout_s=600, linger_s=linger)
n = int(sys.argv[2])
session = svc.sign_in(store.users, "cat", sys.argv[4])
times = []
state = svc.queue_state(store.judging, session)
position = state.resume
for i in range(n):
    view = svc.load_view(store.judging, session, position)
    if view is None:
        break
    t0 = time.perf_counter()
    svc.save_judgment(store, session, view, grade=i % 4, save_token=f"bench-{i}-{time.time_ns()}")
    times.append(time.perf_counter() - t0)
    position += 1
print("SAVES " + json.dumps(times))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("/tmp/workbench-store-size"))
    ap.add_argument("--saves", type=int, default=200)
    ap.add_argument("--reuse", action="store_true", help="measure on the store already built in --data (error if none)")
    ap.add_argument("--rebuild", action="store_true", help="delete the store in --data and build it again")
    args = ap.parse_args()
    if args.reuse and not all((args.data / m).exists() for m in ("built", "imported", "assigned")):
        ap.error(f"--reuse: no complete store in {args.data} (markers built, imported, assigned); run without --reuse")
    if args.rebuild:
        for marker in ("built", "imported", "assigned"):
            (args.data / marker).unlink(missing_ok=True)
    t0 = time.perf_counter()
    setup = build(args.data)
    print(f"[store] built in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    db = str(args.data / "store.duckdb")
    wb = [PY, "-c", CONSOLE, "--db", db, "-q"]
    lead = ["--lead", "boss", "--token", TOKENS["boss"]]
    rows = ["| step | wall (s) | CPU (s) | peak RSS (MB) | target | load before/after |", "|---|---:|---:|---:|---|---|"]

    def step(name: str, argv: list[str], target: str = "") -> tuple[float, str]:
        before = load()
        wall, rss, cpu, out = measure(argv)
        rows.append(f"| {name} | {wall:.1f} | {cpu:.1f} | {rss:,.0f} | {target} | {before} / {load()} |")
        print(rows[-1], file=sys.stderr)
        return wall, out

    already = (args.data / "imported").exists()
    if not already:
        for name in ("ann", "bob"):
            step(f"`judgments import` {name}: 1,000,000 judgments (bulk path)",
                 [*wb, "judgments", "import", str(args.data / f"{name}.qrels"), "--pool", "campaign-pool",
                  "--assessor", name, *lead])
        (args.data / "imported").write_text("yes")
    if not (args.data / "assigned").exists():
        step("`workbench assign` cat to the pool (for the saves)",
             [*wb, "assign", "campaign-pool", "--assessors", "cat", *lead])
        (args.data / "assigned").write_text("yes")
    import json

    for mode, label, target in (("ui", "single save (UI save path, the app's store settings)", True),
                                ("cli", "single save, store at its defaults (no linger: attach + detach each)", False)):
        before = load()
        _, _, cpu, out = measure([PY, "-c", SAVES, db, str(args.saves), TOKENS["boss"], TOKENS["cat"], mode])
        times = json.loads(out.split("SAVES ", 1)[1])
        p50, p95 = statistics.median(times) * 1000, float(np.percentile(times, 95)) * 1000
        verdict = f"p95 < 50 ms: **{'met' if p95 < 50 else 'NOT met'}**" if target else ""
        rows.append(f"| {label}, {len(times)} saves: p50 / p95 | {p50:.1f} ms / {p95:.1f} ms | {cpu:.1f} (process) "
                    f"| - | {verdict} | {before} / {load()} |")
        print(rows[-1], file=sys.stderr)
    wall, _ = step("`workbench agreement` (2 assessors, 1,000,000 pairs)", [*wb, "agreement", "campaign-pool"],
                   "< 10 s")
    rows[-1] = rows[-1].replace("< 10 s", f"< 10 s: **{'met' if wall < 10 else 'NOT met'}**")
    tag = time.strftime("%H%M%S")
    wall, _ = step("`workbench publish` v1", [*wb, "publish", "campaign-pool", "--name", f"v1-{tag}", "--no-export",
                                              *lead], "< 30 s")
    rows[-1] = rows[-1].replace("< 30 s", f"< 30 s: **{'met' if wall < 30 else 'NOT met'}**")
    regrade = args.data / f"regrade-{tag}.qrels"
    with open(regrade, "w") as f:
        f.writelines(f"{t + 1} 0 {_doc(t, 0)} 3\n" for t in range(N_TOPICS))
    step("`judgments import` 1,000 re-grades (row path)", [*wb, "judgments", "import", str(regrade), "--pool",
                                                           "campaign-pool", "--assessor", "ann", *lead])
    step("`workbench publish` v2 (parent v1)", [*wb, "publish", "campaign-pool", "--name", f"v2-{tag}", "--parent",
                                                f"v1-{tag}", "--no-export", *lead])
    step("`workbench qrels diff` v1 v2", [*wb, "qrels", "diff", f"v1-{tag}", f"v2-{tag}"])
    text = "\n".join([
        "# The store at campaign size", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. Written by "
        f"`bench/store_size.py` on {time.strftime('%Y-%m-%d %H:%M')} (see its docstring). Each step is one fresh "
        "process through the command line (`os.wait4`: wall time, CPU time = user + sys of the child, peak RSS), "
        "except the saves (one process, the app's save path: its CPU time covers sign-in, views and saves); "
        "the 1-minute load average before and after each is given (2 cores; the machine is shared).", "",
        "Set-up:", "", *setup, "", *rows, ""])
    RESULTS.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
