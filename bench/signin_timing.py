"""Sign-in timing: does the time a failed sign-in takes tell whether the user exists?

Measures ``store.users.authenticate`` (what the UI's sign-in calls) on a
temporary store, interleaving three cases N times each: a known user with a
wrong token, an unknown user, and a known user with the right token. Prints
the median and p90 per case and the ratio unknown / known-wrong (1.0 = no
signal; the QA report measured 0.7 ms against 61 ms before the fix).

Usage::

    python bench/signin_timing.py [--n 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    """Run the measurement and print the table; return 0."""
    from workbench.errors import PermissionDeniedError
    from workbench.store import Store

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40, help="attempts per case (default 40)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "wb.duckdb", client="bench signin")
        store.users.add_user("lead", "lead", token="lead-token-1")
        store.users.add_user("ann", "assessor", token="ann-token-1", lead="lead")
        cases = {"known user, wrong token": ("ann", "wrong-token"), "unknown user": ("nobody", "wrong-token"),
                 "known user, right token": ("ann", "ann-token-1")}
        times: dict[str, list[float]] = {c: [] for c in cases}
        store.users.authenticate("ann", "ann-token-1")  # warm the connection
        for _ in range(args.n):
            for case, (name, token) in cases.items():
                start = time.perf_counter()
                try:
                    store.users.authenticate(name, token)
                except PermissionDeniedError:
                    pass
                times[case].append(time.perf_counter() - start)
    print(f"{'case':<26} {'median ms':>10} {'p90 ms':>8}")
    for case, ts in times.items():
        ts.sort()
        print(f"{case:<26} {1000 * statistics.median(ts):>10.1f} {1000 * ts[int(0.9 * (len(ts) - 1))]:>8.1f}")
    ratio = statistics.median(times["unknown user"]) / statistics.median(times["known user, wrong token"])
    print(f"unknown / known-wrong median ratio: {ratio:.2f} (n = {args.n} each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
