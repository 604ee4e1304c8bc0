"""Qrels versions (leads): every version with its lineage, and for a version
with a parent, what changed (entries added, changed, removed) and how every
run's scores moved from the parent to it (or from any other version of the
collection the lead chooses). A thin view over
``workbench.services.evaluation.scoreboard`` and the store's read methods.
"""

from __future__ import annotations

import streamlit as st

from workbench.app import cached, widgets
from workbench.errors import WorkbenchError
from workbench.services.evaluation import scoreboard as svc

widgets.require_session(lead=True)
store = widgets.store()
st.title("Qrels versions")

versions = widgets.qrels_versions()
if not versions:
    widgets.stop()

widgets.qrels_versions_table(versions, key="qrels_versions_table")

st.subheader("Lineage")
st.markdown("\n".join(f"- {' → '.join(widgets.md_escape(n) for n in chain)}" for chain in svc.lineage_chains(versions)))
st.caption("Each arrow points from a parent version to the version published as its revision.")

with_parent = [v for v in versions if v.parent_version]
st.subheader("Changes from the parent (or another) version")
c1, c2 = st.columns([3, 2])
with c1:
    name = widgets.qrels_version_picker(versions, key="qrels_versions_pick", remember=widgets.QRELS_VERSIONS_KEY,
                                        default=with_parent[-1].name if with_parent else None)
info = next(v for v in versions if v.name == name)
with c2:
    missing = widgets.missing_policy_picker("qrels_versions_missing")
# The parent by default; any other version of the collection on request (e.g. pooled v2 against the
# full judgments: the pool bias).
others = [v.name for v in versions if v.collection == info.collection and v.name != info.name]
choices = ([info.parent_version] if info.parent_version in others else ["(none)"]) + [
    n for n in others if n != info.parent_version]
base = st.selectbox("Compare with", choices, key=f"qrels_versions_base_{info.name}",
                    format_func=lambda n: f"{n} (parent)" if n == info.parent_version else n)
if base == "(none)":
    st.info(f"{widgets.md_escape(info.name)} has no parent version: nothing to compare it with. "
            + ("Choose another version above to compare with it." if others else ""))
    widgets.stop()
parent = str(base)
st.markdown(f"**{widgets.md_escape(parent)} → {widgets.md_escape(info.name)}**" + (" (parent → child)" if parent == info.parent_version else
                                            " (not its parent)")
            + (f" · pool version {widgets.md_escape(info.pool_version)}" if info.pool_version else ""))

try:
    diff = cached.qrels_diff(parent, info.name)
except WorkbenchError as e:
    st.error(widgets.md_escape(e))
    widgets.stop()
m1, m2, m3 = st.columns(3)
m1.metric("Added", len(diff.added))
m2.metric("Changed", len(diff.changed))
m3.metric("Removed", len(diff.removed))
if diff.changed:
    with st.expander(f"Changed grades ({len(diff.changed)})"):
        st.dataframe([{"topic": t, "document": d, f"grade in {parent}": o, f"grade in {info.name}": n}
                      for t, d, o, n in diff.changed[:500]], hide_index=True)
if diff.added:
    with st.expander(f"Added entries ({len(diff.added)}; first 500)"):
        st.dataframe([{"topic": q.topic_id, "document": q.doc_id, "grade": q.grade} for q in diff.added[:500]],
                     hide_index=True)
if diff.removed:
    with st.expander(f"Removed entries ({len(diff.removed)}; first 500)"):
        st.dataframe([{"topic": q.topic_id, "document": q.doc_id, "grade": q.grade} for q in diff.removed[:500]],
                     hide_index=True)

run_names = [r.name for r in store.runs.list_runs(info.collection)]
if not run_names:
    st.info(f"No stored run of collection {widgets.md_escape(info.collection)} to rescore.")
    widgets.stop()
try:
    before = widgets.cached_scoreboard(parent, run_names, missing=missing)
    after = widgets.cached_scoreboard(info.name, run_names, missing=missing)
except WorkbenchError as e:
    st.error(widgets.md_escape(e))
    widgets.stop()
changes = svc.changes_between(before, after)
e_parent, e_name = widgets.md_escape(parent), widgets.md_escape(info.name)

st.subheader(f"Score changes of every run: {widgets.md_escape(parent)} → {widgets.md_escape(info.name)}")
st.caption(
    f"Change of each run's macro mean ({e_name} minus {e_parent}); missing-topic policy **{missing}**. "
    f"Topics evaluated: {len(before.topics)} on {e_parent}, "
    f"{len(after.topics)} on {e_name} (|R| = 0 excluded: {len(before.excluded_topics)} and "
    f"{len(after.excluded_topics)}). Qrels hashes `{before.qrels.content_hash[:12]}` → "
    f"`{after.qrels.content_hash[:12]}` · evaluator `{after.evaluator_version}`"
)
gained = [t for t in after.topics if t not in set(before.topics)]
lost = [t for t in before.topics if t not in set(after.topics)]
if gained or lost:
    st.caption(
        "The two means average different topics: "
        + (f"{len(gained)} evaluated only on {e_name} ({widgets.topic_list(gained)})" if gained else "")
        + ("; " if gained and lost else "")
        + (f"{len(lost)} evaluated only on {e_parent} ({widgets.topic_list(lost)})" if lost else "")
        + "."
    )
for label, board in ((parent, before), (info.name, after)):
    if board.missing_by_run:
        st.warning(f"On {widgets.md_escape(label)}, topics missing from runs: "
                   + "; ".join(f"{widgets.md_escape(r)}: {widgets.topic_list(ts)}" for r, ts in board.missing_by_run.items()))
# runs x measures, as on the Scoreboard (a run per row: as many runs as there are, the width stays
# that of the measures); each cell is the run's change (version - parent). Judged@k apart.
deltas: dict[str, dict[str, object]] = {}
judged: dict[str, dict[str, object]] = {}
for c in changes:
    (judged if c.measure.startswith("Judged") else deltas).setdefault(c.run, {"run": c.run})[c.measure] = c.delta
delta_rows, judged_rows = list(deltas.values()), list(judged.values())
st.dataframe(delta_rows, hide_index=True, column_config=widgets.measure_columns(delta_rows, "%+.4f"),
             height="content", key="qrels_versions_changes")
if judged_rows:
    st.caption("Change of the judged share of each run's top k (Judged@k):")
    st.dataframe(judged_rows, hide_index=True, column_config=widgets.measure_columns(judged_rows, "%+.4f"),
                 height="content", key="qrels_versions_judged")
detail = [{"run": c.run, "measure": c.measure, parent: c.parent_value, info.name: c.value, "delta": c.delta}
          for c in changes]
with st.expander(f"Every value ({e_parent}, {e_name}, delta)"):
    st.dataframe(detail, hide_index=True, column_config=widgets.float_columns(detail))
