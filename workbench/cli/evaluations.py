"""CLI commands: ``workbench evaluations list|show``: recorded scoring actions and their lineage.

Every stored evaluation records the evaluator version, the workbench's git
commit when it ran from a checkout, the run's content hash, the qrels version
and hash, and the topic set. ``list`` also shows every recorded use of a
protected topic set (score, compare, gate), so repeated tuning against a
held-out set is visible.
"""

from __future__ import annotations

from typing import Annotated

import typer

from workbench import jsonout
from workbench.cli import app, common, options

evaluations_app = typer.Typer(help="Recorded evaluations (scoring actions) with their lineage.", no_args_is_help=True)
app.add_typer(evaluations_app, name="evaluations")

FORMATS = ("table", "tsv", "csv", "jsonl")


@evaluations_app.command("list")
def list_(
    run: Annotated[str | None, typer.Option(help="Only this run's evaluations.")] = None,
    qrels: Annotated[str | None, typer.Option(help="Only evaluations against this qrels version.")] = None,
    fmt: Annotated[str, typer.Option("--format", callback=options.choice(*FORMATS),
                                                 help=f"Output: {', '.join(FORMATS)}.")] = "table",
) -> None:
    """Recorded evaluations, oldest first, with evaluator version, commit, run hash and topic set; then the
    uses of protected topic sets."""
    from workbench.cli.runs import render

    store = common.STATE.store(client="workbench evaluations list")
    rows = []
    for e in store.evaluations.list_evaluations(run, qrels):
        p = e.params
        ts = str(p.get("topic_set", "") or "-")
        if p.get("topic_set_protected"):
            ts += " (protected)"
        rows.append({
            "evaluation_id": e.evaluation_id[:12], "created": e.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            "run": e.run_name, "qrels": e.qrels_version, "topic_set": ts, "topics": p.get("topics", ""),
            "evaluator": e.evaluator_version, "git_commit": str(p.get("git_commit", "") or "-")[:12]
            + ("-dirty" if str(p.get("git_commit", "")).endswith("-dirty") else ""),
            "run_sha256": str(p.get("run_content_hash", "") or "-")[:12], "rows": e.n_rows,
        })
    cols = ["evaluation_id", "created", "run", "qrels", "topic_set", "topics", "evaluator", "git_commit",
            "run_sha256", "rows"]
    render(rows, cols, fmt)
    protected = {(i.name, i.version) for i in store.evaluations.list_topic_sets() if i.protected}
    uses = [u for u in store.evaluations.list_topic_set_uses() if (u.name, u.version) in protected]
    if fmt != "table" or not uses:
        return
    by_set: dict[str, list[str]] = {}
    for u in uses:
        by_set.setdefault(f"{u.name}@{u.version}", []).append(u.command)
    common.out("")
    for ref, commands in by_set.items():
        counts = ", ".join(f"{c} {commands.count(c)}" for c in ("score", "compare", "gate") if c in commands)
        common.out(f"protected topic set {ref}: used {len(commands)} time(s) ({counts}); each use is a look at "
                   "held-out topics")
    render([{"used_at": u.used_at.strftime("%Y-%m-%d %H:%M:%S"), "topic_set": f"{u.name}@{u.version}",
             "command": u.command, "runs": " ".join(u.runs), "qrels": u.qrels_version, "outcome": u.outcome or "-",
             "git_commit": u.git_commit[:12] or "-"} for u in uses],
           ["used_at", "topic_set", "command", "runs", "qrels", "outcome", "git_commit"], "table")


@evaluations_app.command("show")
def show(
    evaluation_id: Annotated[str, typer.Argument(help="An evaluation id (or a unique prefix of one).")],
    fmt: Annotated[str, typer.Option("--format", callback=options.choice(*FORMATS),
                                                 help=f"Output: {', '.join(FORMATS)}.")] = "table",
) -> None:
    """One recorded evaluation: its lineage, then every value with numerator and denominator (full precision)."""
    from workbench.cli.runs import render
    from workbench.errors import UnknownNameError

    store = common.STATE.store(client="workbench evaluations show")
    known = store.evaluations.list_evaluations()
    hits = [e for e in known if e.evaluation_id.startswith(evaluation_id)]
    if len(hits) != 1:
        raise UnknownNameError("evaluation id" + (" (prefix is ambiguous)" if hits else ""), evaluation_id,
                               [e.evaluation_id[:12] for e in (hits or known)])
    e = hits[0]
    if fmt == "table":
        common.out(f"evaluation  {e.evaluation_id}")
        common.out(f"run         {e.run_name}")
        common.out(f"qrels       {e.qrels_version}")
        common.out(f"evaluator   {e.evaluator_version}")
        common.out(f"recorded    {e.created_at.isoformat(timespec='seconds')}")
        for key in sorted(e.params):
            value = e.params[key]
            shown = jsonout.dumps(value) if not isinstance(value, str) else value
            common.out(f"{key:<11} {shown if len(shown) <= 200 else shown[:200] + ' ...'}")
        common.out("")
    rows = [{"measure": r.measure, "aggregate": r.aggregate, "value": repr(r.value), "numerator": repr(r.numerator),
             "denominator": repr(r.denominator), "n_topics": r.n_topics} for r in store.evaluations.get_evaluation_rows(e.evaluation_id)]
    render(rows, ["measure", "aggregate", "value", "numerator", "denominator", "n_topics"], fmt)
