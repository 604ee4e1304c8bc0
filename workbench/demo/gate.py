"""The demo's release-gate step: may bm25-stem replace bm25 on Cranfield?

After the workflow has scored the new run (``demo.workflow``), ``gate_step``
runs ``workbench gate bm25 bm25-stem --qrels <collection>-v2 --policy
examples/gate.toml`` on the same store and, when an output folder is given,
writes the Markdown report (ready for a pull request) next to the plots. The
gate writes nothing to the store (no topic set is used), so the step can be
re-run freely.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.services.gates.gate import GateReport
    from workbench.store import Store

POLICY = Path(__file__).resolve().parents[2] / "examples" / "gate.toml"
"""The policy shipped with the repository (commented; see the README's "Release gate")."""


def gate_step(
    store: Store,
    baseline: str,
    candidate: str,
    qrels_version: str,
    *,
    out_dir: Path | None = None,
    policy: Path = POLICY,
    say: Callable[[str], None] = lambda _m: None,
) -> tuple[GateReport, Path | None]:
    """Gate ``candidate`` against ``baseline`` on ``qrels_version`` under ``policy``.

    Returns:
        (the gate's report, the Markdown file written or None).

    Raises:
        GateUsageError: the policy file is broken.
        WorkbenchError: the runs or the qrels version are missing.
    """
    from workbench.formats.io import atomic_write
    from workbench.reports.gate import render_gate
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest
    from workbench.services.gates.gate import run_gate

    shown = policy
    try:
        shown = policy.resolve().relative_to(Path.cwd())
    except ValueError:
        pass  # outside the current folder: the absolute path
    report = run_gate(ScoreRequest((baseline, candidate), qrels_version), shown, ScoreEnv(lambda: store))
    say(f"[gate] release gate {candidate} against {baseline}: {report.verdict.upper()} (exit {report.exit_code})")
    path = None
    if out_dir is not None:
        path = out_dir / f"gate-{candidate}-vs-{baseline}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path, "w") as f:
            f.write(render_gate(report, "markdown", max_topics=10))
    return report, path

