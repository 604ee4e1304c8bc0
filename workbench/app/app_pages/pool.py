"""Pool (leads): size per topic, judged share, lineage and contributing runs, and the
pool's pre-fill mode (a model assessor's grades shown pre-selected to assessors, or off).

Run names are lead-only information: assessors never see this page.
"""

from __future__ import annotations

import streamlit as st

from workbench.app import cached, widgets
from workbench.errors import WorkbenchError

OFF = "(off: assessors see no model grade)"


def _set_prefill(pool_version: str) -> None:
    # Box and widget values first; after the write only the box changes in place (widgets.BOXES).
    session, box = widgets.session(), widgets.box("pool")
    model = st.session_state.get(f"pool_prefill_model_{pool_version}") or OFF
    share = float(st.session_state.get(f"pool_prefill_share_{pool_version}") or 1.0)
    store = widgets.store()
    if session is None:
        return
    from workbench.services.judging.model_assessor import set_prefill

    try:
        s = set_prefill(store.judging, session, pool_version, None if model == OFF else model, share=share)
    except WorkbenchError as e:
        box["msg"] = ("error", widgets.md_escape(e))
        return
    box["msg"] = ("ok", f"Pre-fill on: {widgets.md_escape(s.model)}, {s.share:.0%} of each assessor's documents."
                  if s.on else "Pre-fill off.")


def _prefill(pool_version: str) -> None:
    """The pool's pre-fill mode: off, or a model assessor whose grades assessors see pre-selected."""
    store = widgets.store()
    st.subheader("Pre-fill from a model assessor")
    models = [m.name for m in store.users.list_model_assessors()]
    current = store.judging.prefill_setting(pool_version)
    kind, msg = widgets.box("pool")["msg"] or ("", "")
    if msg:
        (st.success if kind == "ok" else st.error)(msg)
    if current.on:
        st.caption(f"On: assessors see the grade of model assessor **{widgets.md_escape(current.model)}** "
                   f"pre-selected and marked as the model's on {current.share:.0%} of their documents "
                   f"(set by {widgets.md_escape(current.set_by)}); each save records whether they confirmed "
                   "or changed it. The Agreement page compares pre-filled and not pre-filled documents.")
    else:
        st.caption("Off: judging is blind to every model assessor.")
    if not models:
        st.caption("No model assessor yet: grade the pool with `workbench judge-with-model` first.")
        return
    choices = [OFF, *models]
    c1, c2, c3 = st.columns([3, 2, 1], vertical_alignment="bottom")
    c1.selectbox("Pre-fill the grades of", choices, key=f"pool_prefill_model_{pool_version}",
                 index=choices.index(current.model) if current.model in choices else 0)
    c2.number_input("Share of each assessor's documents", min_value=0.05, max_value=1.0, step=0.05,
                    value=float(current.share), key=f"pool_prefill_share_{pool_version}",
                    help="Below 1: a fixed draw of documents is pre-filled and the rest not, so the two can be "
                         "compared on the Agreement page.")
    c3.button("Apply", key="pool_prefill_apply", on_click=_set_prefill, args=(pool_version,), width="stretch")


def main() -> None:
    widgets.require_session(lead=True)
    st.title("Pool")
    pool_version = widgets.pool_picker("pool")
    if pool_version is None:
        return
    ov = cached.pool_overview(pool_version)
    n_docs = sum(t.n_documents for t in ov.topics)
    c1, c2, c3 = st.columns(3)
    c1.metric("Documents (with ancestors)", n_docs)
    c2.metric("Topics", len(ov.topics))
    c3.metric("Judged share", f"{100 * ov.judged_share:.1f}%")
    st.caption(f"Collection {widgets.md_escape(ov.collection)} · lineage: "
               f"{' → '.join(widgets.md_escape(v) for v in ov.lineage)}")
    st.subheader("Contributing runs (this pool version)")
    if ov.runs:
        st.dataframe([{"run": r, "documents": n, "only this run": solo} for r, n, solo in ov.runs], hide_index=True)
    else:
        st.caption("No provenance recorded for this pool version.")
    st.subheader("Per topic")
    st.dataframe(
        [{"topic": t.topic_id, "pooled": t.n_documents, "assigned": t.n_assigned, "judged": t.n_judged,
          "judged by 2+": t.n_multi_judged} for t in ov.topics],
        hide_index=True, key="pool_topics",
    )
    _prefill(pool_version)


main()
