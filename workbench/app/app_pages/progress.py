"""Progress: for leads, the overview of every assessor first (assigned, judged,
unsure, left, and the time per judgment: median and 90th percentile); then the
user's own queue per topic. Unsure judgments are counted apart from graded ones."""

from __future__ import annotations

import streamlit as st

from workbench.app import cached, sections, widgets


def _seconds(ms: float | None) -> str:
    return "" if ms is None else f"{ms / 1000:.1f} s"


def _all_assessors() -> None:
    st.subheader("All assessors")
    rows = cached.assessor_overview()
    if not rows:
        st.caption("Nobody has assignments yet.")
        return
    st.dataframe(
        [{"assessor": r.user, "role": r.role, "assigned": r.n_assigned, "judged": r.n_graded, "unsure": r.n_unsure,
          "left": r.n_left, "done": widgets.percent(r.n_graded + r.n_unsure, r.n_assigned),
          "time per judgment (median)": _seconds(r.median_ms), "(p90)": _seconds(r.p90_ms),
          "timed judgments": r.n_timed,
          "last save": "" if r.last_saved_at is None else f"{r.last_saved_at:%Y-%m-%d %H:%M}"} for r in rows],
        hide_index=True, key="progress_assessors",
    )
    st.caption("Time per judgment: time on the document before the save, over judgments saved in the UI "
               "(imported judgments carry no time). p90: 90th percentile, linear interpolation.")


def _own_queue() -> None:
    state = widgets.queue_state()
    st.subheader("Your queue")
    c1, c2, c3 = st.columns(3)
    c1.metric("Judged", f"{state.n_graded}")
    c2.metric("Unsure", f"{state.n_unsure}")
    c3.metric("Done of assigned", widgets.percent(state.n_done, state.n_total))
    if state.progress:
        st.dataframe(
            [{"topic": t, "judged": done, "assigned": total, "share": f"{(100 * done / total):.0f}%"}
             for t, (done, total) in state.progress.items()],
            hide_index=True, key="progress_topics",
        )


def main() -> None:
    session = widgets.require_session()
    st.title("Progress")
    if session.is_lead:
        _all_assessors()
        sections.strategy_progress(widgets.store(), session)
    _own_queue()


main()
