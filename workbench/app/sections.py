"""Small, self-contained page sections of issue 14 (judging strategies and model
assessors), each a thin view over one service; the pages own the layout and
call these in one line.

Blindness: every section here is for leads only (it shows relevance counts or
model judgments); each one checks the role itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from workbench.app import widgets

if TYPE_CHECKING:
    from workbench.judging.agreement import Weights
    from workbench.rubric import Rubric
    from workbench.services.judging.assessments import DisagreementRow, Session
    from workbench.store import Store


def strategy_progress(store: Store, session: Session) -> None:
    """Progress (leads): a pool's judging strategy and, per topic, documents judged,
    relevant found, the strategy's estimate of relevant documents left, stopped."""
    from workbench.services.judging.order import strategy_progress as progress

    if not session.is_lead:
        return
    st.subheader("Judging strategy")
    pool_version = widgets.pool_picker("progress_strategy")
    if pool_version is None:
        return
    p = progress(store.judging, store.pools, session, pool_version)
    if p.setting is None:
        st.caption("rank order (priority bands, shuffled per assessor), no stopping rule. "
                   "Set one with `workbench strategy POOL SPEC` or `workbench assign --strategy`.")
        return
    s = p.setting
    stops = [s.stopping] if s.stopping else []
    if s.budget is not None:
        stops.append(f"budget {s.budget} per topic")
    if s.topic_budgets:
        stops.append(f"{len(s.topic_budgets)} topic budget(s)")
    st.caption(widgets.md_escape(
        f"strategy {s.strategy}, queues re-ordered every {s.refresh_every} save(s) per topic; stopping: "
        f"{', '.join(stops) or 'none'} (set by {s.set_by})"))
    left = p.estimated_remaining
    c1, c2, c3 = st.columns(3)
    c1.metric("Topics stopped", sum(1 for r in p.rows if r.stopped))
    c2.metric("Relevant found", sum(r.n_relevant for r in p.rows))
    c3.metric("Estimated relevant left", "n/a" if left is None else f"{left:.1f}")
    if p.rows:
        st.table(widgets.md_cells([
            {"topic": r.topic_id, "judged": r.n_judged, "relevant": r.n_relevant,
             "estimated left": "" if r.estimate is None else f"{r.estimate:.1f}",
             "budget": "" if r.budget is None else r.budget, "stopped": r.stopped}
            for r in p.rows
        ]))
    st.caption("Estimated left: the strategy's expected number of relevant documents among the unjudged ones "
               "(cal: the sum of its model's probabilities; rough). Assessors see none of this.")


def model_agreement(store: Store, pool_version: str, weights: Weights) -> None:
    """Agreement (leads): each model assessor against each person (the rows ``workbench agreement`` prints),
    split into pre-filled and not pre-filled documents once pre-fill was used."""
    from workbench.services.judging.model_assessor import model_agreement as agreement

    rows = agreement(store.judgments, store.pools, store.rubrics, pool_version, weights=weights)
    if not rows:
        return
    st.subheader("Model assessors against people")
    st.table(widgets.md_cells([
        {"model assessor": r.model, "person": r.person, "documents": r.subset, "items": r.n_items,
         "same grade": "" if r.same_grade is None else f"{r.same_grade:.1%}",
         f"kappa ({weights})": widgets.figure_text(r.kappa.value, r.kappa.reason),
         "alpha (ordinal)": widgets.figure_text(r.alpha.value, r.alpha.reason),
         "confirmed": r.n_confirmed if r.subset == "pre-filled" else ""}
        for r in rows
    ]))
    split = any(r.subset != "all" for r in rows)
    st.caption("Model assessors are not part of the figures above. "
               + ("Pre-filled: the person saw this model's grade pre-selected when saving (confirmed: kept it); "
                  "not pre-filled: no model grade was shown. A gap between the two is the pre-fill's anchoring."
                  if split else "Their judgments reach an assessor only where a lead turned pre-fill on "
                                "(Pool page or `workbench prefill`)."))


def model_suggestion(row: DisagreementRow, rubric: Rubric) -> None:
    """Adjudicate (leads): model assessors' grades of the document, labelled as suggestions."""
    if not row.suggestions:
        return
    shown = "; ".join(f"{widgets.grade_text(g, rubric)} from model assessor {m}" for m, g in row.suggestions)
    st.caption(widgets.md_escape(f"Model suggestion (not an assessor's judgment): {shown}"))
