"""The Scoreboard's "Pipeline stages" section: the ``workbench stages`` table for the chosen runs.

A self-contained section (ui16 owns the page layout): the page calls
``render_stages_section`` once. For every chosen rerank run it shows its stage
rows (``R@50 [candidates: bm25]``, ``R@10 [final: bm25+minilm]``, ...) with
macro, micro and ceiling, and per pipeline the permutation check, the
reranker's contribution, the stock and the diagnosis with per-topic counts,
all from ``services.runs.stages`` (no scoring here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from workbench.app import widgets
from workbench.errors import WorkbenchError

EXPANDER_KEY = "scoreboard_stages_open"
"""Session key of the section's expander (True = open: the section is computed)."""


@st.cache_data(max_entries=32, show_spinner=False)
def _stages(db_path: str, qrels_version: str, content_hash: str, runs: tuple[str, ...], missing: str,
            final_k: int) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    from workbench.services.runs.stages import check_table, stage_reports, stage_table

    result = stage_reports(list(runs), qrels_version, open_store=widgets.store, final_k=final_k, missing=missing)
    return stage_table(result), check_table(result)


def render_stages_section(store: Any, qrels_version: str, run_names: Sequence[str], missing: str,
                          final_k: int = 10) -> None:
    """Show the stage table of the rerank runs among ``run_names`` (a note when there are none).

    In an expander that computes its content only when open (each rerank run and its candidates are
    scored again: not part of the Scoreboard's first visit, issue 26)."""
    from workbench.services.runs.stages import rerank_run_names

    section = st.expander("Pipeline stages of the rerank runs (computed when opened)", key=EXPANDER_KEY,
                          on_change="rerun")
    if not section.open:
        return
    with section:
        _render(store, qrels_version, rerank_run_names(store.runs, run_names), missing, final_k)


def _render(store: Any, qrels_version: str, reranks: Sequence[str], missing: str, final_k: int) -> None:
    if not reranks:
        st.caption("No rerank run among the chosen runs: make one with "
                   "`workbench run rerank --candidates RUN --depth 50 --name NAME`.")
        return
    info = store.qrels.get_qrels_info(qrels_version)
    try:
        rows, checks = _stages(str(widgets.config().db_path), qrels_version, info.content_hash, tuple(reranks),
                               missing, final_k)
    except WorkbenchError as e:
        st.error(widgets.md_escape(e))
        return
    st.dataframe(rows, hide_index=True, column_config=widgets.float_columns(rows), key="scoreboard_stages_rows")
    st.dataframe(checks, hide_index=True, column_config=widgets.float_columns(checks),
                 key="scoreboard_stages_checks")
    st.caption(
        "Each number is named by its stage: R@D [candidates] is the ceiling the reranker works under; a rerank "
        "permutes its candidates, so R@D must be unchanged (NO = not a permutation). Contribution = R@k [final] − "
        "R@k [candidates]; stock = R@D − R@k of the candidates, all any reordering could promote. Diagnosis "
        "(high: R@D ≥ 0.8, nDCG@k ≥ 0.5): ranking problem, candidate generation problem, check ingestion, stop; "
        "`workbench stages` prints the per-topic detail.")
