"""Pool (leads): size per topic, judged share, lineage and contributing runs.

Run names are lead-only information: assessors never see this page.
"""

from __future__ import annotations

import streamlit as st

from workbench.app import cached, widgets


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


main()
