"""Encoding throughput: in-process sentence-transformers versus Ray Data actors on this machine.

Not part of pytest. Run:

    .venv/bin/python bench/encoding.py                    # Cranfield's 1,400 documents, all-MiniLM-L6-v2
    .venv/bin/python bench/encoding.py --docs 700 --workers 1 2

What a cluster buys is the slope: documents per second per worker once the
actors hold the model. On one machine Ray adds a fixed cost (starting the
local instance, each actor importing torch and loading the model) and takes
the same cores the in-process path uses, so it cannot be faster here; the
table gives both numbers so the cost can be weighed against the cluster's
size. Each configuration runs in a fresh process; Ray is timed on two corpus
sizes (the first ``--small`` documents, then all) so the fixed cost
(intercept) and the steady rate (slope) are separated.

Writes ``bench/results/encoding.md`` (with the load average: the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "encoding.md"
PY = sys.executable

IN_PROCESS = """
import json, sys, time
from pooling.retrievers.dense import SentenceTransformerEncoder
texts = json.load(open(sys.argv[1]))[: int(sys.argv[2])]
enc = SentenceTransformerEncoder(threads=int(sys.argv[3]), batch_size=64)
t0 = time.perf_counter(); enc.encode(texts[:8]); load = time.perf_counter() - t0    # model load + first batch
t0 = time.perf_counter(); enc.encode(texts); t = time.perf_counter() - t0
print(json.dumps({"load_s": load, "encode_s": t, "n": len(texts)}))
"""

ON_RAY = """
import json, sys, tempfile, time
from pooling.retrievers.dense import default_model_path, model_key_for
from pooling.retrievers.ray_encode import encode_with_ray
texts = json.load(open(sys.argv[1]))[: int(sys.argv[2])]
path = default_model_path()
rows = [(f"d{i}", f"h{i}", t) for i, t in enumerate(texts)]
t0 = time.perf_counter()
r = encode_with_ray(rows, tempfile.mkdtemp() + "/v", model_path=path, model_key=model_key_for(path),
                    num_workers=int(sys.argv[3]), batch_size=64)
print(json.dumps({"total_s": time.perf_counter() - t0, "n": len(texts)}))
"""


def _run(code: str, *args: object) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    out = subprocess.run([PY, "-c", code, *map(str, args)], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=1400)
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--workers", type=int, nargs="+", default=[2])
    args = ap.parse_args()
    corpus = [json.loads(line) for line in (ROOT / "sample_corpus" / "cranfield" / "corpus.jsonl").open()]
    texts = [f"{d['title']}\n\n{d['text']}" if d.get("title") else d["text"] for d in corpus]
    data = Path(f"/tmp/workbench-encoding-{os.getpid()}.json")
    data.write_text(json.dumps(texts))
    rows = []
    try:
        for threads in (1, 2):
            before = os.getloadavg()[0]
            r = _run(IN_PROCESS, data, args.docs, threads)
            rows.append((f"in-process, {threads} torch thread(s)", r["n"], r["load_s"], r["encode_s"],
                         r["n"] / r["encode_s"], before, os.getloadavg()[0]))
            print(rows[-1], file=sys.stderr)
        for w in args.workers:
            before = os.getloadavg()[0]
            small = _run(ON_RAY, data, args.small, w)
            full = _run(ON_RAY, data, args.docs, w)
            slope = (full["total_s"] - small["total_s"]) / (full["n"] - small["n"])
            fixed = small["total_s"] - slope * small["n"]
            rows.append((f"Ray local, {w} actor(s) x 1 thread", full["n"], fixed, full["total_s"],
                         1 / slope if slope > 0 else float("nan"), before, os.getloadavg()[0]))
            print(rows[-1], file=sys.stderr)
    finally:
        data.unlink(missing_ok=True)
    lines = [
        "# Encoding throughput: in-process versus Ray (local)", "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; model "
        f"all-MiniLM-L6-v2 (bundled), Cranfield documents (title + text), batch 64. Written by `bench/encoding.py` "
        f"on {time.strftime('%Y-%m-%d %H:%M')}.", "",
        "| path | documents | fixed cost (s) | wall for all (s) | steady documents/s | load before/after |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, n, fixed, wall, rate, b, a in rows:
        lines.append(f"| {name} | {n:,} | {fixed:.1f} | {wall:.1f} | {rate:.1f} | {b:.1f} / {a:.1f} |")
    lines += ["", "In-process: fixed cost = loading the model and the first batch; wall = encoding all documents "
              "after that. Ray: fixed cost = the intercept of two runs (starting the local instance, each actor "
              "importing torch and loading the model, writing Parquet); steady rate = the slope between them. On a "
              "cluster of N such machines the steady rate grows about N-fold while the fixed cost stays about "
              "the same, which is where Ray pays: ten million documents at 20 documents/s take 6 days on one "
              "machine, 14 hours on ten."]
    text = "\n".join(lines) + "\n"
    RESULTS.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
