"""Progress: the user's own queue per topic; for leads, every assessor's."""

from __future__ import annotations

import streamlit as st

from workbench.app import sections, widgets
from workbench.services import judging as svc

session = widgets.require_session()
store = widgets.store()

st.title("Progress")
state = svc.queue_state(store, session)
st.metric("Judged", widgets.percent(state.n_done, state.n_total))
if state.progress:
    st.table(widgets.md_cells(
        [
            {"topic": t, "judged": done, "assigned": total, "share": f"{(100 * done / total):.0f}%"}
            for t, (done, total) in state.progress.items()
        ]
    ))

if session.is_lead:
    st.subheader("All assessors")
    rows = []
    for user in store.list_users():
        other = svc.queue_state(store, svc.Session(user.name, user.role))
        if other.n_total:
            rows.append({"assessor": user.name, "role": user.role, "judged": other.n_done,
                         "assigned": other.n_total, "share": widgets.percent(other.n_done, other.n_total)})
    if rows:
        st.table(widgets.md_cells(rows))
    else:
        st.caption("Nobody has assignments yet.")
    sections.strategy_progress(store, session)
