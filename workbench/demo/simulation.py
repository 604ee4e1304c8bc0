"""The demo's judging-simulation step: how much judging would an adaptive order save on Cranfield?

After the workflow, ``simulation_step`` builds, in memory (nothing is stored),
the depth-``depth`` pool over the demo's runs (bm25, dense, rrf, bm25-stem at
their full run depth, 100 by default), replays judging it with the reference
judgments as the oracle under each strategy (``workbench simulate`` on that
pool; ``services.judging.simulation``), and writes the curve (relevant documents found
against judgments made) next to the other plots. The report's table gives,
per strategy, the judgments needed for 50/80/90/95% of the pool's relevant
documents and Kendall's tau of the run ordering at those budgets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.services.judging.simulation import SimulationRun
    from workbench.store import Store

STRATEGIES = "rank,mtf,bandit,cal"
"""The strategies the demo compares (``workbench simulate --strategies``)."""


def simulation_step(
    store: Store,
    collection: str,
    runs: Sequence[str],
    reference: str,
    *,
    depth: int,
    measure: str,
    plot_dir: Path | None = None,
    strategies: str = STRATEGIES,
    seed: int = 0,
    say: Callable[[str], None] = lambda _m: None,
) -> tuple[SimulationRun, list[Path]]:
    """Simulate judging the depth-``depth`` pool of ``runs`` against ``reference``.

    Returns:
        (the simulation, the curve files written).
    """
    from pooling.pool import build_pool
    from workbench.reports.charts import save_chart
    from workbench.reports.simulation import simulation_chart
    from workbench.services.judging.simulation import document_text, simulate_memory_pool

    stored = {n: store.runs.get_run(n) for n in runs}
    pool = build_pool(stored, depth=depth)
    oracle = store.qrels.get_qrels(reference)
    queries = {t: topic.query for t, topic in store.collections.get_topics(collection).items()}
    texts = {d: document_text(doc) for d, doc in store.collections.get_documents(collection).items()}
    say(f"[starting] judging simulation: depth-{depth} pool of {', '.join(runs)} ({pool.n_entries:,} documents) "
        f"against {reference}, strategies {strategies}")
    run = simulate_memory_pool(pool, stored, reference, oracle, queries, texts, strategies,
                               label=f"the depth-{depth} pool of {', '.join(runs)} (in memory)", seed=seed,
                               measure=measure, say=say)
    paths: list[Path] = []
    if plot_dir is not None:
        plot_dir.mkdir(parents=True, exist_ok=True)
        chart = simulation_chart(run, title=f"Judging order on the depth-{depth} pool against {reference}")
        for suffix in (".html", ".png"):
            paths.append(save_chart(chart, plot_dir / f"judging-simulation{suffix}"))
    return run, paths
