"""Judging-UI timings in a real browser (Debian's chromium via Playwright) on the demo store.

Measures, on a *copy* of a store made by ``workbench demo cranfield`` (the
original is not changed):

* key-to-next-document: the demo lead presses a grade key on the Judge page;
  the time until the run that shows the next document has finished (the status
  marker carries the new queue position), p50 and p95 over ``--keys`` presses;
* page loads: each lead page opened from the sidebar, first visit and three
  later visits; the time from the click until the page's run has finished
  (status marker of that page with a new run number) and, on pages with
  tables, until the first table is drawn; beside each, the CPU seconds the
  server spent (less sensitive to the shared machine's load than the wall time).

Every wait is on a signal the app gives; the figures are wall times on this
machine (noisy when shared: run it twice, read the medians).

Usage::

    workbench --db /tmp/demo.duckdb demo cranfield        # once
    python bench/ui_timing.py /tmp/demo.duckdb [--keys 40] [--screenshots /work/screenshots]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "app"))

from app_helpers import CHROMIUM_ARGS  # noqa: E402

LEAD, TOKEN = "demo-lead", "demo-lead-token"
PAGES = ["Progress", "Pool", "Agreement", "Adjudicate", "Publish", "Scoreboard", "Qrels versions"]
STATUS = "[data-testid='wb-status']"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(db: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    exe = Path(sys.executable).with_name("workbench")
    with open(log, "w") as out:
        proc = subprocess.Popen([str(exe), "--db", str(db), "ui", "--port", str(port)], stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ, PYTHONPATH=str(ROOT)))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read() == b"ok":
                    return proc, url
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"the UI did not start: {log.read_text()}")


def _marker(page) -> dict[str, str]:
    return page.locator(STATUS).last.evaluate("e => Object.assign({}, e.dataset)")


def _wait_run_after(pw_page, run: int, **fields: str) -> dict[str, str]:
    sel = STATUS + "".join(f"[data-{k}='{v}']" for k, v in fields.items())
    pw_page.wait_for_function(
        "([sel, run]) => { const e = [...document.querySelectorAll(sel)].pop();"
        " return e && Number(e.dataset.run) > run; }", arg=[sel, run], timeout=120_000)
    return _marker(pw_page)


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) the server process has used so far (Linux /proc).

    Beside the wall times: on a shared 2-core machine the wall time of a run
    grows with the load average, the CPU the server spends on it much less."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main(argv: list[str] | None = None) -> int:
    """Run the measurements and print them; return 0."""
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, help="a store made by `workbench demo cranfield`")
    parser.add_argument("--keys", type=int, default=40, help="grade key presses to time (default 40)")
    parser.add_argument("--visits", type=int, default=3, help="later visits per page (default 3)")
    parser.add_argument("--screenshots", type=Path, default=None, help="write Judge/Adjudicate/Scoreboard PNGs here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ui_timing-") as tmp:
        db = Path(tmp) / "demo.duckdb"
        shutil.copy(args.db, db)
        proc, url = _start(db, Path(tmp) / "server.log")
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                foreign: list[str] = []
                page.on("request", lambda r: foreign.append(r.url) if not r.url.startswith(
                    ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")) else None)
                page.goto(url)
                page.get_by_label("User name").fill(LEAD)
                page.get_by_label("Access token").fill(TOKEN)
                page.get_by_role("button", name="Sign in").click()
                page.locator(STATUS + "[data-page='judge']").wait_for(state="attached", timeout=120_000)
                if args.screenshots:
                    args.screenshots.mkdir(parents=True, exist_ok=True)
                    page.locator(".st-key-judge_grade_1 button:visible").first.wait_for(timeout=60_000)
                    page.screenshot(path=str(args.screenshots / "judge.png"))
                key_times: list[float] = []
                key_cpu: list[float] = []
                for i in range(args.keys):
                    m = _marker(page)
                    page.locator("[data-testid='wb-topic']").first.click()
                    start, cpu = time.perf_counter(), _cpu(proc.pid)
                    page.keyboard.press(str(i % 4))
                    _wait_run_after(page, int(m["run"]), position=str(int(m["position"]) + 1))
                    key_times.append(time.perf_counter() - start)
                    key_cpu.append(_cpu(proc.pid) - cpu)
                loads: dict[str, list[float]] = {}
                load_cpu: dict[str, list[float]] = {}
                tables: dict[str, list[float]] = {}
                for visit in range(1 + args.visits):
                    for name in PAGES:
                        m = _marker(page)
                        start, cpu = time.perf_counter(), _cpu(proc.pid)
                        page.get_by_role("link", name=name, exact=True).click()
                        _wait_run_after(page, int(m["run"]), page=name.lower().replace(" ", "_"))
                        loads.setdefault(name, []).append(time.perf_counter() - start)
                        load_cpu.setdefault(name, []).append(_cpu(proc.pid) - cpu)
                        grid = page.locator("[data-testid='stDataFrame']:visible, [data-testid='stTable']:visible").first
                        if grid.count():
                            grid.wait_for(timeout=60_000)
                            tables.setdefault(name, []).append(time.perf_counter() - start)
                        if visit == 0 and args.screenshots and name in ("Adjudicate", "Scoreboard"):
                            page.screenshot(path=str(args.screenshots / f"{name.lower()}.png"))
                            if name == "Scoreboard":  # Vega draws SVG marks; the page scrolls inside its main block
                                chart = page.locator("[data-testid='stVegaLiteChart'] svg.marks").first
                                chart.wait_for(state="attached", timeout=60_000)
                                table = page.locator("[data-testid='stDataFrame']").first
                                table.scroll_into_view_if_needed()
                                page.screenshot(path=str(args.screenshots / "scoreboard-table.png"))
                                chart.scroll_into_view_if_needed()
                                page.screenshot(path=str(args.screenshots / "scoreboard-chart.png"))
                browser.close()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    print(f"key to next document (n = {len(key_times)}): p50 {_pct(key_times, 0.5):.3f} s, "
          f"p95 {_pct(key_times, 0.95):.3f} s, max {max(key_times):.3f} s; server CPU per key p50 "
          f"{_pct(key_cpu, 0.5):.3f} s, p95 {_pct(key_cpu, 0.95):.3f} s")
    print(f"{'page':<16} {'first visit':>12} {'server CPU, first':>18} {'later (median)':>15} {'later (max)':>12} "
          f"{'table drawn, later':>19} {'server CPU, later':>18}")
    for name in PAGES:
        ts = loads[name]
        later = ts[1:] or ts
        drawn = tables.get(name, [])[1:]
        cpu_later = load_cpu[name][1:] or load_cpu[name]
        print(f"{name:<16} {ts[0]:>11.2f}s {load_cpu[name][0]:>17.2f}s {statistics.median(later):>14.2f}s "
              f"{max(later):>11.2f}s {(f'{statistics.median(drawn):.2f}s' if drawn else '-'):>19} "
              f"{statistics.median(cpu_later):>17.2f}s")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"requests to other hosts: {len(foreign)}" + (f" (first: {foreign[0]})" if foreign else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
