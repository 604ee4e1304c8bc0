"""Run the UI tests (AppTest and real-browser) N times in a row under CPU load.

The flakiness check of issue 9: UI tests wait on signals the app gives (the
status marker, see ``workbench.app.widgets.status_marker``), never on elapsed
time, so they must pass while another process keeps both cores busy.

Usage (from a worktree, with the shared venv on PATH)::

    python bench/ui_loop.py                  # 20 runs, `stress --cpu 2` alongside
    python bench/ui_loop.py --runs 5 --no-stress
    python bench/ui_loop.py -- -k browser    # extra pytest arguments after --

Each run is one ``pytest tests/app`` process (the services-level concurrency test
``test_concurrency.py`` is left out: it is no UI test and takes minutes). The
loop stops at the first failing run (``--keep-going`` runs on) and prints one
line per run on stderr and a summary on stdout, e.g.::

    20 of 20 runs passed, 20 in a row, under `stress --cpu 2` (run time p50 95 s, max 140 s)

Exit code 0 when every run passed, 1 otherwise. The load generator is started
in its own process group and stopped by its process id at the end.

Disk: each run's pytest temporary folder (``LOG_DIR/run-<n>-tmp``: stores,
server logs, browser profiles; about 0.4 GB) is removed when the run passed,
with its empty artifacts folder; a failing run keeps both, and its log, for the
post-mortem. Every run's log (``LOG_DIR/run-<n>.log``) is kept. ``--keep-tmp``
keeps the folders of passing runs too. (A 20-run loop keeping them all once
filled the shared disk.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TESTS = ["tests/app", "--deselect", "tests/app/test_concurrency.py"]


STRESS = "/usr/bin/stress"
"""Debian's stress(1), by its path: a PyPI package named ``stress`` in a venv's
``bin/`` shadows it on PATH, and that one exits at once with ``--cpu 2``."""


def _start_load(cpus: int) -> subprocess.Popen[bytes] | None:
    exe = STRESS if os.access(STRESS, os.X_OK) else None
    if exe is None:
        print(f"ui_loop: {STRESS} not found; using busy Python loops instead", file=sys.stderr)
        cmd = [sys.executable, "-c", "import multiprocessing as m\n"
               "def f():\n    while True: pass\n"
               f"ps=[m.Process(target=f) for _ in range({cpus})]\n[p.start() for p in ps]\n[p.join() for p in ps]"]
    else:
        cmd = [exe, "--cpu", str(cpus)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    _check_load(proc)
    return proc


def _check_load(proc: subprocess.Popen[bytes] | None) -> None:
    """Refuse to go on without the load: a run "under stress" must have had it."""
    if proc is not None and proc.poll() is not None:
        raise SystemExit(f"ui_loop: the load generator {proc.args[0]} exited (rc {proc.returncode}); "
                         "no run is counted without it")


def _stop_load(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)  # its own group: stress and its workers, nothing else
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _tidy(log_dir: Path, n: int, ok: bool, keep_tmp: bool) -> None:
    """Remove run ``n``'s temporary and artifacts folders when it passed (and ``keep_tmp`` is off)."""
    if ok and not keep_tmp:
        for folder in (log_dir / f"run-{n}-tmp", log_dir / f"run-{n}-artifacts"):
            shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the loop, print the summary; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of the UI tests (default 20)")
    parser.add_argument("--no-stress", dest="stress", action="store_false", help="no CPU load alongside")
    parser.add_argument("--cpus", type=int, default=2, help="busy workers of the load (default 2)")
    parser.add_argument("--keep-going", action="store_true", help="do not stop at the first failing run")
    parser.add_argument("--log-dir", type=Path, default=Path("/tmp/ui_loop"),
                        help="pytest output of each run goes to LOG_DIR/run-<n>.log")
    parser.add_argument("--keep-tmp", action="store_true",
                        help="keep the temporary folders of passing runs too (default: only a failing run's)")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)
    args.log_dir.mkdir(parents=True, exist_ok=True)

    # SIGTERM (e.g. `kill -- -<loop pgid>`) ends the loop through `finally`, so the load stops with it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    load = _start_load(args.cpus) if args.stress else None
    durations: list[float] = []
    passed = streak = best = 0
    try:
        for n in range(1, args.runs + 1):
            _check_load(load)
            log = args.log_dir / f"run-{n}.log"
            start = time.monotonic()
            with open(log, "w") as out:
                # each run has its own temporary folder (stores, server logs) and keeps a failing
                # browser test's screenshot; a passing run's folders are removed below (_tidy)
                keep = ["--basetemp", str(args.log_dir / f"run-{n}-tmp"), "--screenshot", "only-on-failure",
                        "--output", str(args.log_dir / f"run-{n}-artifacts"), "-p", "no:cacheprovider"]
                rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-x", *keep, *DEFAULT_TESTS,
                                      *args.pytest_args], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
            durations.append(time.monotonic() - start)
            _check_load(load)  # the load lasted the whole run
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            ok = rc == 0
            _tidy(args.log_dir, n, ok, args.keep_tmp)
            passed += ok
            streak = streak + 1 if ok else 0
            best = max(best, streak)
            print(f"run {n}/{args.runs}: {'pass' if ok else f'FAIL (rc {rc}, see {log})'} "
                  f"in {durations[-1]:.0f} s: {tail[0]}", file=sys.stderr, flush=True)
            if not ok and not args.keep_going:
                break
    finally:
        _stop_load(load)
    under = f"under `stress --cpu {args.cpus}`" if args.stress else "without extra load"
    print(f"{passed} of {len(durations)} runs passed, {best} in a row, {under} "
          f"(run time p50 {statistics.median(durations):.0f} s, max {max(durations):.0f} s)")
    return 0 if passed == len(durations) == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
