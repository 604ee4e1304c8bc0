"""Agreement (leads): weighted Cohen's kappa per assessor pair and
Krippendorff's alpha (ordinal) per topic and overall, each with its item count."""

from __future__ import annotations

import streamlit as st

from workbench.app import cached, sections, widgets
from workbench.errors import WorkbenchError
from workbench.judging.agreement import Weights

widgets.require_session(lead=True)
st.title("Agreement")
pool_version = widgets.pool_picker("agreement")
if pool_version is None:
    widgets.stop()
weights: Weights = st.radio("Kappa weights", ["linear", "quadratic"], horizontal=True, key="agreement_weights")
try:
    report = cached.agreement(pool_version, weights)
except WorkbenchError as e:  # e.g. grades outside the collection's rubric
    st.error(widgets.md_escape(e))
    widgets.stop()

st.metric("Documents judged by 2+ assessors", report.n_multi_graded)
a = report.alpha_overall
st.markdown(f"**Krippendorff's alpha (ordinal), overall:** {widgets.figure_text(a.value, a.reason)} (n={a.n_items} documents)")

st.subheader(f"Cohen's kappa ({weights} weights) per pair")
if report.pairs:
    st.table(widgets.md_cells(
        [
            {"assessor A": p.assessor_a, "assessor B": p.assessor_b,
             "kappa": widgets.figure_text(p.kappa.value, p.kappa.reason),
             "items": p.kappa.n_items, "same grade": p.n_agree}
            for p in report.pairs
        ]
    ))
else:
    st.caption("No document has been graded by two assessors yet.")

st.subheader("Krippendorff's alpha per topic")
if report.alpha_by_topic:
    st.dataframe(
        [{"topic": t, "alpha": widgets.figure_text(f.value, f.reason), "items": f.n_items}
         for t, f in report.alpha_by_topic.items()],
        hide_index=True, key="agreement_topics",
    )
sections.model_agreement(widgets.store(), pool_version, weights)
st.caption(
    "Kappa: Cohen (1968), doi:10.1037/h0026256. Alpha: Krippendorff (2004), ordinal metric. "
    "Unsure judgments are not items. A figure is undefined with fewer than 2 items or no variation."
)
