"""Hand-over of the store file between processes: lease waits and save latency under contention.

DuckDB lets one process open the file, so every process takes short leases and
hands the file over (``workbench.store.core``). Two scenarios, each with a CLI
loop (``workbench pool stats``, ``qrels list``, ``collections``, one after
another, as a lead would run them) competing for the file:

* **writers**: 8 writer processes, each a ``Store`` at its defaults (no
  linger), each an assessor saving judgments through the UI's service path
  (``load_view`` then ``save_judgment``) as fast as it can. Reported: the wait
  of every lease (time from asking for the file to holding it), p50/p95/max,
  and saves per second. Targets: p95 < 250 ms, max < 2 s.
* **ui**: one process configured as the UI (``linger_s=STORE_LINGER_S``) with 8
  threads (sessions) saving through the same path. Reported: the latency of
  every ``save_judgment`` call, p50/p95/max. Target: p95 < 150 ms.

Every CLI command must exit 0 and every save must land exactly once (checked
at the end). The store is seeded in a temporary folder (150 documents, 2
topics, a 200-document pool assigned to 8 assessors).

Usage::

    python bench/store_handover.py                   # both scenarios, 30 s each
    python bench/store_handover.py --only writers --seconds 60

Writes ``bench/results/store_handover.md``; exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results" / "store_handover.md"
N = 8
TARGETS = {"writers": ("lease wait", 0.250, 2.0), "ui": ("save", 0.150, None)}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("HF_HUB_OFFLINE", "1")
    return env


def seed(db: Path) -> None:
    """150 documents, 2 topics, pool p1 (200 entries) assigned in full to assessors a0..a7."""
    from pooling.pool import build_pool
    from workbench.services.judging import assessments as svc
    from workbench.store import Store
    from workbench.types import Document, RunInfo, Topic

    store = Store(db, client="seed", lock_timeout_s=60)
    docs = [Document(f"doc{i:03d}", f"Title {i}", f"flow text {i} " * 5) for i in range(150)]
    store.collections.ingest_collection("big", docs, [Topic("1", "flow"), Topic("2", "text")])
    version = store.collections.latest_collection_version("big")
    base = {t: {f"doc{i:03d}": float(200 - i) for i in range(100)} for t in ("1", "2")}
    store.runs.save_run(RunInfo("base", "imported", {}, 100, "big", version), base)
    store.pools.save_pool("p1", build_pool({"base": base}, 100), collection="big", collection_version=version)
    store.users.add_user("lead", "lead", token="lead-token-1")
    for k in range(N):
        store.users.add_user(f"a{k}", "assessor", token=f"a{k}-token-1", lead="lead")
    svc.assign_pool(store, svc.sign_in(store.users, "lead", "lead-token-1"), "p1", [f"a{k}" for k in range(N)],
                    overlap=N, seed=5)
    store.release_file()


def _timed_leases(waits: list[float], leases: list[tuple[float, float, float]] | None = None) -> None:
    """Record the wait of every lease this process takes (time until the cursor is handed out).

    ``leases`` also gets (asked, got, released) of each lease on ``time.monotonic()``
    (CLOCK_MONOTONIC: one clock for every process on Linux), for the hand-over gaps.
    """
    from workbench.store import core

    original = core.Gateway.connection

    @contextlib.contextmanager
    def connection(self, purpose: str = ""):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        asked = time.monotonic()
        got = None
        try:
            with original(self, purpose) as cur:
                waits.append(time.perf_counter() - t0)
                got = time.monotonic()
                yield cur
        finally:
            if leases is not None and got is not None:
                leases.append((asked, got, time.monotonic()))

    core.Gateway.connection = connection  # type: ignore[method-assign]


def cli_main(out: str, argv: list[str]) -> int:
    """A CLI command of the loop, with its leases recorded into ``out`` (JSON) as the writers' are."""
    from workbench.cli import main as workbench_main

    waits: list[float] = []
    leases: list[tuple[float, float, float]] = []
    _timed_leases(waits, leases)
    try:
        return workbench_main(argv)
    finally:
        Path(out).write_text(json.dumps(leases))


def handover_gaps(leases: list[tuple[float, float, float]]) -> list[float]:
    """Idle time of the file while someone waited: for each lease asked for before the
    previous holder let go, its start minus that release (seconds; 0 = gap-free).

    Leases of one process never overlap (writers are single-threaded, each lease
    ends with the file detached), so the file's holders are the leases in order of ``got``.
    """
    gaps = []
    last_release = None
    for asked, got, released in sorted(leases, key=lambda x: x[1]):
        if last_release is not None and asked < last_release <= got:
            gaps.append(got - last_release)
        last_release = released if last_release is None else max(last_release, released)
    return gaps


def _sign_in(store, name: str):  # type: ignore[no-untyped-def]
    from workbench.services.judging import assessments as svc

    s = svc.sign_in(store.users, name, f"{name}-token-1")
    return s, svc.queue_state(store.judging, s).n_total


def _barrier(ready: Path, go: Path) -> float:
    """Say this worker is ready; wait for the start signal; return the deadline it holds."""
    ready.touch()
    while not go.exists():
        time.sleep(0.01)
    return float(go.read_text())


def _judge(store, session, n_total: int, until: float, saves: list[float],  # type: ignore[no-untyped-def]
           landed: list[tuple[str, str, int]]) -> None:
    """Save judgments of the session's queue (round and round, new grades) until the deadline."""
    from workbench.services.judging import assessments as svc

    s = session
    position, rnd = 0, 0
    while time.time() < until:
        view = svc.load_view(store.judging, s, position % n_total)
        assert view is not None
        grade = (position + rnd) % 4
        t0 = time.perf_counter()
        jid = svc.save_judgment(store, s, view, grade=grade, duration_ms=5, save_token=uuid.uuid4().hex)
        saves.append(time.perf_counter() - t0)
        landed.append((view.topic.topic_id, view.document.doc_id, jid))
        position += 1
        rnd += position // n_total


def writer_main(db: str, name: str, folder: str) -> None:
    """One writer process: a Store at its defaults, timing every lease after the start."""
    from workbench.store import Store

    waits: list[float] = []
    leases: list[tuple[float, float, float]] = []
    store = Store(db, client=f"writer {name}", lock_timeout_s=120)
    session, n_total = _sign_in(store, name)
    _timed_leases(waits, leases)
    saves: list[float] = []
    landed: list[tuple[str, str, int]] = []
    until = _barrier(Path(folder) / f"ready-{name}", Path(folder) / "go")
    _judge(store, session, n_total, until, saves, landed)
    store.release_file()
    (Path(folder) / f"out-{name}.json").write_text(json.dumps({"waits": waits, "saves": saves, "landed": landed,
                                                               "leases": leases}))


def ui_main(db: str, folder: str) -> None:
    """One UI-like process: the app's store settings, 8 sessions in threads."""
    from workbench.app import STORE_LINGER_S
    from workbench.store import Store

    waits: list[float] = []
    store = Store(db, client="workbench ui (bench)", lock_timeout_s=120, linger_s=STORE_LINGER_S)
    sessions = [_sign_in(store, f"a{k}") for k in range(N)]
    _timed_leases(waits)
    saves: list[list[float]] = [[] for _ in range(N)]
    landed: list[list[tuple[str, str, int]]] = [[] for _ in range(N)]
    errors: list[BaseException] = []
    until = _barrier(Path(folder) / "ready-ui", Path(folder) / "go")

    def session(k: int) -> None:
        try:
            _judge(store, sessions[k][0], sessions[k][1], until, saves[k], landed[k])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=session, args=(k,)) for k in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.release_file()
    if errors:
        raise errors[0]
    (Path(folder) / "out-ui.json").write_text(json.dumps(
        {"waits": waits, "saves": [x for s in saves for x in s], "landed": [x for s in landed for x in s]}))


def _cli_loop(db: Path, until: float, env: dict[str, str],
              leases: list[tuple[float, float, float]]) -> list[tuple[str, int, float, str]]:
    commands = [["pool", "stats", "p1"], ["qrels", "list"], ["collections"]]
    done = []
    i = 0
    out = db.parent / "cli-leases.json"
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); import store_handover as h; "
            f"sys.exit(h.cli_main({str(out)!r}, sys.argv[1:]))")
    while time.time() < until:
        cmd = commands[i % len(commands)]
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", code, "--db", str(db), *cmd], env=env, capture_output=True, text=True)
        done.append((" ".join(cmd), p.returncode, time.perf_counter() - t0, p.stderr.strip()[-300:]))
        if out.exists():
            leases += [tuple(x) for x in json.loads(out.read_text())]  # type: ignore[misc]
            out.unlink()
        i += 1
    return done


def _pct(xs: list[float], q: float) -> float:
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(q * len(ys)))] if ys else float("nan")


def run_scenario(kind: str, seconds: float) -> dict[str, object]:
    env = _env()
    with tempfile.TemporaryDirectory(prefix="wb-handover-") as tmp:
        db = Path(tmp) / "wb.duckdb"
        seed(db)
        me = str(Path(__file__).resolve())
        names = [f"a{k}" for k in range(N)] if kind == "writers" else ["ui"]
        if kind == "writers":
            procs = [subprocess.Popen([sys.executable, me, "--worker", "writer", str(db), n, tmp], env=env)
                     for n in names]
        else:
            procs = [subprocess.Popen([sys.executable, me, "--worker", "ui", str(db), "-", tmp], env=env)]
        while not all((Path(tmp) / f"ready-{n}").exists() for n in names):  # imported, signed in
            if any(p.poll() for p in procs):
                raise SystemExit(f"{kind}: a worker failed while starting")
            time.sleep(0.05)
        until = time.time() + seconds
        (Path(tmp) / "go.tmp").write_text(repr(until))
        os.replace(Path(tmp) / "go.tmp", Path(tmp) / "go")
        load1 = os.getloadavg()[0]
        cli_leases: list[tuple[float, float, float]] = []
        cli = _cli_loop(db, until, env, cli_leases)
        codes = [p.wait(timeout=600) for p in procs]
        if any(codes):
            raise SystemExit(f"{kind}: a worker failed with exit codes {codes}")
        outs = [Path(tmp) / f"out-{n}.json" for n in names]
        data = [json.loads(o.read_text()) for o in outs]
        waits = [w for d in data for w in d["waits"]]
        saves = [s for d in data for s in d["saves"]]
        landed = [tuple(x) for d in data for x in d["landed"]]
        leases = [tuple(x) for d in data for x in d.get("leases", [])]
        holds = [r - g for _a, g, r in leases]
        gaps = handover_gaps([*leases, *cli_leases]) if kind == "writers" else []
        from workbench.store import Store

        store = Store(db, client="check")
        n_rows = store.judgments.count_judgments("big")  # every save has a fresh token: one row each
        store.release_file()
    bad_cli = [c for c in cli if c[1] != 0]
    return {
        "kind": kind, "seconds": seconds, "load": load1, "waits": waits, "saves": saves,
        "n_saves": len(saves), "rows": n_rows, "landed": len(landed), "cli": cli, "bad_cli": bad_cli,
        "holds": holds, "gaps": gaps, "cli_holds": [r - g for _a, g, r in cli_leases],
    }


def _fmt_ms(x: float) -> str:
    return f"{x * 1000:.1f} ms" if x < 0.01 else f"{x * 1000:.0f} ms"


def report(results: list[dict[str, object]]) -> tuple[str, bool]:
    ok = True
    lines = ["# Store hand-over under contention", "",
             f"Run {datetime.now(UTC).isoformat(timespec='seconds')} on {os.cpu_count()} cores.", "",
             "| scenario | measured | n | p50 | p95 | max | target | saves/s | CLI commands (all exit 0) | CLI p50 | CLI max |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: |"]
    for r in results:
        kind = str(r["kind"])
        what, p95_target, max_target = TARGETS[kind]
        xs: list[float] = r["waits"] if kind == "writers" else r["saves"]  # type: ignore[assignment]
        p50, p95, mx = _pct(xs, 0.5), _pct(xs, 0.95), max(xs)
        met = p95 < p95_target and (max_target is None or mx < max_target)
        cli: list[tuple[str, int, float, str]] = r["cli"]  # type: ignore[assignment]
        met = met and not r["bad_cli"] and r["rows"] == r["n_saves"]
        ok = ok and met
        target = f"p95 < {_fmt_ms(p95_target)}" + (f", max < {max_target:.0f} s" if max_target else "")
        cli_t = [c[2] for c in cli]
        lines.append(
            f"| {kind} ({N} {'processes' if kind == 'writers' else 'threads'} + CLI loop, {r['seconds']:.0f} s, "
            f"load {r['load']:.1f}) | {what} | {len(xs)} | {_fmt_ms(p50)} | {_fmt_ms(p95)} | {_fmt_ms(mx)} | "
            f"{target}: {'met' if met else 'MISSED'} | {r['n_saves'] / float(r['seconds']):.1f} | "  # type: ignore[arg-type]
            f"{len(cli)} ({'yes' if not r['bad_cli'] else 'NO: ' + str(len(r['bad_cli'])) + ' failed'}) | "
            f"{_fmt_ms(_pct(cli_t, 0.5))} | {_fmt_ms(max(cli_t) if cli_t else float('nan'))} |")
        if r["rows"] != r["n_saves"]:
            lines.append(f"\n{kind}: {r['n_saves']} saves acknowledged but {r['rows']} judgment rows stored")
        for c in r["bad_cli"][:5]:  # type: ignore[index]
            lines.append(f"\n{kind}: `workbench {c[0]}` exited {c[1]}: {c[3]}")
    writers = [r for r in results if r["kind"] == "writers"]
    if writers:
        r = writers[0]
        holds: list[float] = r["holds"]  # type: ignore[assignment]
        gaps: list[float] = r["gaps"]  # type: ignore[assignment]
        cli_holds: list[float] = r["cli_holds"]  # type: ignore[assignment]
        lines += ["", "What a lease wait is made of (writers scenario): the time the file is held by those queued "
                  "ahead, plus the hand-overs (release to the next holder's cursor). A wait far above the "
                  "holds ahead of it would be a stall; on a loaded machine the holds themselves grow.", "",
                  "| measured | n | p50 | p95 | max |", "| --- | ---: | ---: | ---: | ---: |"]
        for what, xs in (("writer lease hold", holds), ("CLI lease hold", cli_holds),
                         ("hand-over (release to the next waiting holder's cursor: wake-up + attach)", gaps)):
            if xs:
                lines.append(f"| {what} | {len(xs)} | {_fmt_ms(_pct(xs, 0.5))} | {_fmt_ms(_pct(xs, 0.95))} | "
                             f"{_fmt_ms(max(xs))} |")
    lines.append("")
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--worker"]:
        role, db, name, folder = args[1:5]
        if role == "writer":
            writer_main(db, name, folder)
        else:
            ui_main(db, folder)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="length of each scenario (default 30)")
    ap.add_argument("--only", choices=["writers", "ui"], help="run one scenario")
    ap.add_argument("--no-write", action="store_true", help="do not write bench/results/store_handover.md")
    a = ap.parse_args(args)
    results = [run_scenario(k, a.seconds) for k in (["writers", "ui"] if a.only is None else [a.only])]
    text, ok = report(results)
    print(text)
    if not a.no_write:
        RESULTS.write_text(text)
        print(f"wrote {RESULTS}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
