"""Start-up benchmark: `workbench --version`, `--help` and small-run scoring, hyperfine style.

Not part of pytest (speed lives here). hyperfine is not installed, so this is
a small timing loop in its manner: warm-up runs, then N fresh processes per
command, interleaved across commands so that a busy machine slows all alike;
reported per command: best, median, mean and standard deviation of the wall
time (``os.wait4`` of each child), and peak RSS. Run:

    .venv/bin/python bench/startup.py                        # --version, --help, score on Cranfield
    .venv/bin/python bench/startup.py --runs 30 --importtime # also the slowest imports of each command

Commands run with the interpreter of this script and ``PYTHONPATH`` = the
repository, exactly as the ``workbench`` console script does (``from
workbench.cli import run; run()``). ``PYTHONDONTWRITEBYTECODE`` is removed
from the children's environment: an installed package has its bytecode
compiled, and a worktree's ``__pycache__`` is written on the first (warm-up)
run; without it every run would recompile the workbench's sources.

The Cranfield BM25 run is produced once into ``--data`` (BM25 over the
converted sample corpus, depth 100: 225 topics x 100 = 22,471 lines) unless
it exists. Writes ``bench/results/startup.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
RESULTS = ROOT / "bench" / "results" / "startup.md"
CRANFIELD_QRELS = ROOT / "sample_corpus" / "cranfield" / "qrels.reference.txt"
CONSOLE = "import sys; sys.argv[0] = 'workbench'; from workbench.cli import run; run()"


def child_env(root: Path = ROOT) -> dict[str, str]:
    """The environment of every timed process: the code of ``root`` first, offline, bytecode cached."""
    env = dict(os.environ, PYTHONPATH=str(root), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("WORKBENCH_DB", None)
    return env


def cranfield_bm25_run(folder: Path) -> Path:
    """The Cranfield BM25 run file (225 topics x 100), made once with the workbench itself."""
    run = folder / "cranfield-bm25.run"
    if run.exists():
        return run
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "cranfield.duckdb"
    base = [PY, "-c", CONSOLE, "--db", str(db), "-q"]
    env = child_env()
    subprocess.run([*base, "ingest", str(ROOT / "sample_corpus" / "cranfield")], check=True, env=env)
    subprocess.run([*base, "run", "bm25", "--collection", "cranfield", "--name", "bm25"], check=True, env=env)
    subprocess.run([*base, "run", "export", "bm25", "--out", str(run)], check=True, env=env)
    return run


def time_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one fresh process, output discarded."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.chdir("/tmp")
        os.execve(argv[0], argv, env)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_maxrss / 1024


def slowest_imports(argv: list[str], env: dict[str, str], top: int = 8) -> list[tuple[str, float]]:
    """The ``top`` imports with the largest cumulative time (``python -X importtime``), first level only."""
    out = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], env=env, capture_output=True, text=True).stderr
    rows = []
    for line in out.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        if name.startswith("  ") and not name.startswith("   "):  # direct imports of the script
            rows.append((name.strip(), int(cumulative) / 1e6))
        elif not name.startswith(" "):
            rows.append((name.strip(), int(cumulative) / 1e6))
    return sorted(rows, key=lambda r: -r[1])[:top]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20, help="timed runs per command (after 2 warm-up runs)")
    ap.add_argument("--data", type=Path, default=Path.home() / ".cache" / "workbench-bench" / "startup")
    ap.add_argument("--importtime", action="store_true", help="list the slowest imports of each command")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="also time the same commands with the code of this checkout (e.g. /work/main), "
                         "interleaved, labelled 'baseline'")
    args = ap.parse_args()
    run = cranfield_bm25_run(args.data)
    score = ["score", str(run), "--qrels", str(CRANFIELD_QRELS)]
    variants = [("", ROOT)] + ([(" [baseline]", args.baseline.resolve())] if args.baseline else [])
    commands: dict[str, tuple[list[str], dict[str, str]]] = {}
    for suffix, root in variants:
        env = child_env(root)
        commands[f"workbench --version{suffix}"] = ([PY, "-c", CONSOLE, "--version"], env)
        commands[f"workbench --help{suffix}"] = ([PY, "-c", CONSOLE, "--help"], env)
        commands[f"workbench score (Cranfield BM25){suffix}"] = ([PY, "-c", CONSOLE, *score], env)
    commands["python -c pass (interpreter floor)"] = ([PY, "-c", "pass"], child_env())
    for argv, env in commands.values():  # warm-up: page cache, bytecode
        for _ in range(2):
            time_once(argv, env)
    load_before = os.getloadavg()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for i in range(args.runs):
        for name, (argv, env) in commands.items():
            samples[name].append(time_once(argv, env))
        print(f"run {i + 1}/{args.runs}", file=sys.stderr, end="\r")
    load_after = os.getloadavg()
    lines = [
        "# Start-up benchmark",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}. "
        f"Written by `bench/startup.py` on {time.strftime('%Y-%m-%d %H:%M')}: {args.runs} fresh processes per "
        "command after 2 warm-up runs, interleaved; wall time from fork to exit (`os.wait4`). "
        f"Load average (1 min) {load_before[0]:.1f} before, {load_after[0]:.1f} after (2 cores: above 2 means "
        "other processes competed).",
        "",
    ]
    if args.baseline:
        lines += [f"Rows marked [baseline] run the code of `{args.baseline}`; the others this checkout.", ""]
    lines += ["| command | best (s) | median (s) | mean ± sd (s) | peak RSS (MB) |", "|---|---:|---:|---:|---:|"]
    for name, s in samples.items():
        walls = [w for w, _ in s]
        lines.append(f"| `{name}` | {min(walls):.3f} | {statistics.median(walls):.3f} | "
                     f"{statistics.mean(walls):.3f} ± {statistics.stdev(walls):.3f} | {max(r for _, r in s):.0f} |")
    if args.importtime:
        lines += ["", "Slowest imports (`python -X importtime`, cumulative, one run):", ""]
        for name, (argv, env) in commands.items():
            if "pass" in name:
                continue
            top = ", ".join(f"{m} {t * 1000:.0f} ms" for m, t in slowest_imports(argv, env))
            lines.append(f"- `{name}`: {top}")
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
