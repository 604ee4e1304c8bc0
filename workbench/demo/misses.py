"""The demo's miss-list step: why bm25 misses what it misses at K = 20 on Cranfield.

After the workflow has scored every run, ``misses_step`` runs ``workbench misses
bm25 --qrels <collection>-reference --k 20 --categorise`` on the same store:
every (topic, relevant document) of the full reference judgments that bm25 did
not return within the top 20 gets a cause from the store's evidence
(``services.evaluation.misses``), the counts per cause add up to the total, and the
residue (``uncategorised``) says how far the list is from closed. The
reference judgments are used rather than the pooled qrels because they hold
every relevant document, including those no pooled run found. The list is kept
in the store, so a second demo run reads it back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.services.evaluation.misses import MissReport
    from workbench.store import Store

MISS_K = 20
"""The cutoff of the demo's miss list (the demo's pool depth and headline R@k)."""


def misses_step(
    store: Store,
    run: str,
    qrels_version: str,
    *,
    k: int = MISS_K,
    say: Callable[[str], None] = lambda _m: None,
) -> MissReport:
    """The categorised miss list of ``run`` at cutoff ``k`` against ``qrels_version``.

    Returns:
        The ``MissReport`` (counts per cause, residue, the rows).

    Raises:
        WorkbenchError: the run or the qrels version is missing.
    """
    from workbench.reports.miss_causes import closure_line
    from workbench.services.evaluation.misses import categorised_misses

    report = categorised_misses(run, qrels_version, k, open_store=lambda: store, missing="zero")
    say(f"[misses] miss list of {run} at k = {k} against {qrels_version}: {closure_line(report.misses.counts)}")
    return report
