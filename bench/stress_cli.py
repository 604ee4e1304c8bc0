"""Stress the CLI's start-up and exit: many short invocations while both cores are busy.

Runs ``--invocations`` (default 1,000) short ``workbench`` commands one after
another, cycling through

* ``score RUN.trec --qrels REF.qrels -m R@10 --format csv --per-topic`` (files:
  pyarrow's threaded CSV reader, no store),
* ``score bm25 --qrels cranfield-reference -m R@10 --format csv --per-topic``
  (stored run and qrels: DuckDB, records an evaluation),
* ``pool stats cranfield-pool-v1``,
* ``collections``,

while another process keeps both cores busy (``stress --cpu N`` when installed,
else N Python busy loops). It reports how many invocations exited non-zero, by
command and exit code, with the last stderr line of each failure (an abort at
interpreter exit shows as exit 134, ``terminate called without an active
exception``). Target: 0.

The store is built once in a temporary folder from ``sample_corpus/cranfield``
(ingest, a BM25 run, a depth-20 pool; not timed, not counted).

Usage::

    python bench/stress_cli.py                       # 1,000 invocations, stress --cpu 2
    python bench/stress_cli.py --invocations 200 --load none
    python bench/stress_cli.py --jobs 4              # 4 invocations at a time (a busy shared machine)

Writes ``bench/results/stress_cli.md``; exits 1 when any invocation failed.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_corpus" / "cranfield"
RESULTS = ROOT / "bench" / "results" / "stress_cli.md"


def _workbench() -> list[str]:
    """The command that runs this checkout's CLI (honours PYTHONPATH, e.g. a worktree)."""
    return [sys.executable, "-c", "import sys; from workbench.cli import main; sys.exit(main())"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


def _setup(folder: Path, env: dict[str, str]) -> tuple[Path, Path, Path]:
    """A small store plus a run file and a qrels file; returns (db, run file, qrels file)."""
    db = folder / "stress.duckdb"
    run_file, qrels_file = folder / "bm25.trec", folder / "reference.qrels"
    steps = [
        ["ingest", str(SAMPLE)],
        ["run", "bm25", "--collection", "cranfield", "--name", "bm25", "--depth", "100"],
        ["pool", "build", "--depth", "20", "bm25"],
        ["run", "export", "bm25", "--out", str(run_file)],
        ["qrels", "export", "cranfield-reference", "--out", str(qrels_file)],
    ]
    for step in steps:
        p = subprocess.run([*_workbench(), "--db", str(db), "--quiet", *step], env=env, cwd=folder,
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"set-up step {' '.join(step)} failed ({p.returncode}): {p.stderr.strip()}")
    return db, run_file, qrels_file


def _stress_program() -> str | None:
    """The ``stress`` load generator (Debian's binary), not a same-named Python script.

    A virtualenv's ``bin/`` can hold a console script called ``stress`` from an
    unrelated PyPI package; it exits at once on ``--cpu``, leaving no load.
    """
    for folder in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin", "/bin"]:
        candidate = Path(folder) / "stress"
        try:
            with open(candidate, "rb") as f:
                if f.read(4) == b"\x7fELF" and os.access(candidate, os.X_OK):
                    return str(candidate)
        except OSError:
            continue
    return None


def _start_load(kind: str, cpus: int, timeout_s: int) -> subprocess.Popen[bytes] | None:
    """Busy workers in their own session (ended by ``_stop_load``; they also stop after ``timeout_s``)."""
    if kind == "none":
        return None
    stress = _stress_program()
    if kind == "stress" or (kind == "auto" and stress):
        if not stress:
            sys.exit("--load stress: the stress program (Debian package stress) is not installed")
        return subprocess.Popen([stress, "--cpu", str(cpus), "--timeout", f"{timeout_s}s"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    code = ("import multiprocessing as m, time\n"
            "def spin(end):\n    while time.time() < end: pass\n"
            f"end = time.time() + {timeout_s}\n"
            f"ps = [m.Process(target=spin, args=(end,)) for _ in range({cpus})]\n"
            "[p.start() for p in ps]\n[p.join() for p in ps]\n")
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True)


def _load_alive(proc: subprocess.Popen[bytes], started: float) -> bool:
    """The load process and (after a second of start-up) a busy worker are alive.

    On a shared machine another user may kill the workers (``pkill stress``).
    """
    if proc.poll() is not None:
        return False
    if time.monotonic() - started < 1.0:
        return True
    try:
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    except OSError:
        return True  # not Linux: trust the parent
    return bool(children)


def _stop_load(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None:
        return
    import signal

    try:
        os.killpg(proc.pid, signal.SIGTERM)  # the load process and the workers it forked (own session)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--invocations", type=int, default=1000, help="total short invocations (default 1000)")
    ap.add_argument("--load", choices=["auto", "stress", "python", "none"], default="auto",
                    help="what keeps the cores busy (auto: stress if installed, else Python loops)")
    ap.add_argument("--cpus", type=int, default=os.cpu_count() or 2, help="busy workers (default: cores)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="invocations running at once (default 1; more finishes sooner on a machine others load too; "
                         "the stored-store commands then also queue for the store file)")
    ap.add_argument("--no-write", action="store_true", help="do not write bench/results/stress_cli.md")
    args = ap.parse_args(argv)

    env = _env()
    with tempfile.TemporaryDirectory(prefix="wb-stress-") as tmp:
        folder = Path(tmp)
        print(f"[starting] set-up of a Cranfield store in {folder}", file=sys.stderr)
        db, run_file, qrels_file = _setup(folder, env)
        commands = {
            "score files": ["score", str(run_file), "--qrels", str(qrels_file), "-m", "R@10", "--format", "csv",
                            "--per-topic"],
            "score stored": ["score", "bm25", "--qrels", "cranfield-reference", "-m", "R@10", "--format", "csv",
                             "--per-topic"],
            "pool stats": ["pool", "stats", "cranfield-pool-v1"],
            "collections": ["collections"],
        }
        names = list(commands)
        timeout_s = max(600, 10 * args.invocations)  # a safety net if this script is killed
        load = _start_load(args.load, args.cpus, timeout_s)
        load_started = time.monotonic()
        restarts = 0
        failures: list[tuple[int, str, int, str]] = []
        counts: collections.Counter[str] = collections.Counter()
        lock = threading.Lock()
        done = 0
        t0 = time.monotonic()

        def invoke(i: int) -> None:
            nonlocal done
            name = names[i % len(names)]
            p = subprocess.run([*_workbench(), "--db", str(db), *commands[name]], env=env, cwd=folder,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            with lock:
                counts[name] += 1
                done += 1
                if p.returncode != 0:
                    last = (p.stderr.strip().splitlines() or [""])[-1]
                    failures.append((i, name, p.returncode, last))
                    print(f"  #{i} {name}: exit {p.returncode}: {last}", file=sys.stderr)
                if done % 100 == 0:
                    print(f"  {done}/{args.invocations} invocations, {len(failures)} non-zero "
                          f"[elapsed] {time.monotonic() - t0:.0f} s", file=sys.stderr)

        import signal

        signal.signal(signal.SIGTERM, signal.default_int_handler)  # kill PID: stop the load, report what ran
        interrupted = False
        load1 = os.getloadavg()[0]
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)
        try:
            time.sleep(1.0 if load else 0.0)  # let the load spin up
            load1 = os.getloadavg()[0]
            pending = {pool.submit(invoke, i) for i in range(args.invocations)}
            while pending:
                finished, pending = concurrent.futures.wait(pending, timeout=1.0)
                for f in finished:
                    f.result()
                if load is not None and not _load_alive(load, load_started):  # killed from outside: restart
                    _stop_load(load)
                    load = _start_load(args.load, args.cpus, timeout_s)
                    load_started = time.monotonic()
                    restarts += 1
        except KeyboardInterrupt:
            interrupted = True
            print("  interrupted: waiting for the invocations under way, then reporting", file=sys.stderr)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            _stop_load(load)
        load2 = os.getloadavg()[0]
        elapsed = time.monotonic() - t0

    by_cmd = collections.Counter(f[1] for f in failures)
    by_code = collections.Counter(f[2] for f in failures)
    lines = [
        "# CLI stress: short invocations under load",
        "",
        f"Run {datetime.now(UTC).isoformat(timespec='seconds')} on {os.cpu_count()} cores; load: "
        f"{_stress_program() if args.load in ('auto', 'stress') and _stress_program() else args.load} "
        f"({args.cpus} busy workers); {args.jobs} invocation(s) at a time; load average {load1:.1f} at the start, {load2:.1f} at the end; "
        f"{elapsed:.0f} s in all"
        + (f"; the load was killed from outside and restarted {restarts} time(s)." if restarts else "."),
        "",
        "| command | invocations | non-zero exits |",
        "| --- | ---: | ---: |",
        *[f"| `{n}` | {counts[n]} | {by_cmd.get(n, 0)} |" for n in names],
        f"| **total** | **{done}**" + (f" (interrupted, of {args.invocations})" if interrupted else "")
        + f" | **{len(failures)}** |",
        "",
    ]
    if failures:
        lines += ["Exit codes: " + ", ".join(f"{c}: {n}" for c, n in sorted(by_code.items())), "",
                  "| # | command | exit | last stderr line |", "| ---: | --- | ---: | --- |"]
        lines += [f"| {i} | `{n}` | {c} | {m.replace('|', '/')} |" for i, n, c, m in failures[:50]]
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        RESULTS.write_text(text)
        print(f"wrote {RESULTS}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
