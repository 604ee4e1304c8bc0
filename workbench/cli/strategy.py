"""CLI command: ``workbench strategy`` (show or change a pool's judging strategy)."""

from __future__ import annotations

from typing import Annotated

import typer

from workbench.cli import app, common, options
from workbench.errors import UsageError, shown


def _budgets(values: list[str] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values or []:
        topic, sep, n = v.partition("=")
        if not sep or not topic.strip() or not n.strip().isdigit():
            raise UsageError(f"expected --topic-budget TOPIC=N (e.g. 3=40), found {shown(v)}")
        out[topic.strip()] = int(n)
    return out


@app.command("strategy")
def strategy(
    pool: Annotated[str, typer.Argument(help="The pool version.")],
    spec: Annotated[str | None, typer.Argument(
        callback=options.strategy,
        help="New strategy: rank, mtf, bandit, bandit-mm, bandit-ts, cal, cal-model, optionally with parameters "
             "(bandit(method='thompson', seed=1)). Omit to show the current one.")] = None,
    lead: Annotated[str | None, typer.Option(help="The lead changing it.")] = None,
    token: Annotated[str | None, typer.Option(envvar="WORKBENCH_TOKEN", help="The lead's token.")] = None,
    refresh_every: Annotated[int, typer.Option(callback=options.count,
                                               help="Re-order a topic's queues after this many saves.")] = 1,
    stop: Annotated[str, typer.Option(
        callback=options.stopping,
        help="Per-topic stopping rule: knee, knee(min_judged=30), stop_after_nonrelevant(n=20), budget(n=50).")] = "",
    budget: Annotated[int | None, typer.Option(callback=options.count,
                                               help="Stop judging a topic after this many judgments.")] = None,
    topic_budget: Annotated[list[str] | None, typer.Option(
        help="A topic's own budget, TOPIC=N; repeatable.")] = None,
) -> None:
    """Show or set a pool version's judging strategy and per-topic stopping (setting is lead only).

    The assessors' queues follow the strategy live: after each save (or --refresh-every saves) the topic
    is re-ordered from everyone's judgments; assessors see only the next document. Prints the setting and,
    per topic, judged / relevant / estimated relevant left / stopped (TSV)."""
    from workbench.services.judging import assessments as svc
    from workbench.services.judging import order

    store = common.STATE.store(client="workbench strategy")
    if spec is not None:
        if lead is None:
            raise UsageError("setting a strategy needs --lead NAME and --token TOKEN")
        session = svc.sign_in(store.users, lead, token or "")
        order.set_strategy(store, session, pool, spec, refresh_every=refresh_every, stopping=stop,
                           budget=budget, topic_budgets=_budgets(topic_budget))
    setting = store.judging.judging_setting(pool)
    if setting is None:
        store.pools.get_pool(pool)  # unknown pool -> error listing the pools
        common.out("strategy\trank\t(default: priority bands, no stopping)")
        return
    common.out(f"strategy\t{setting.strategy}\trefresh_every={setting.refresh_every}\t"
               f"stopping={setting.stopping or 'none'}\tbudget={setting.budget or 'none'}\t"
               f"set_by={setting.set_by}")
    common.out("topic\tjudged\trelevant\testimated_left\tstopped")
    states = store.judging.topic_orders(pool)
    from workbench.judging.queue import topic_order

    for t in topic_order(states):
        s = states[t]
        common.out(f"{t}\t{s.n_judged}\t{s.n_relevant}\t{'' if s.estimate is None else f'{s.estimate:.1f}'}\t"
                   f"{s.stopped}")
