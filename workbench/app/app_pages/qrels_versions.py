"""Qrels versions (leads): every version with its lineage and the state of its
exported file, and for a version with a parent, what changed (entries added,
changed, removed) and how every run's scores moved from the parent to it (or
from any other version of the collection the lead chooses). A version whose
exported file or manifest entry is missing or disagrees with the store (a
publish interrupted after its commit, an edited file) is named with the
command that mends it. A thin view over
``workbench.services.evaluation.scoreboard``,
``workbench.services.judging.qrels_files`` and the store's read methods.

Partial runs are kept apart as on the Scoreboard: the runs that cover every
evaluated topic of both versions are selected by default, and each partial run's
change is shown apart, over only the topics it covers; under ``exclude`` a
selected partial run would shrink every run's topic set to its own, so
selecting one needs an explicit confirmation.
"""

from __future__ import annotations

import streamlit as st

from workbench.app import cached, widgets
from workbench.errors import WorkbenchError
from workbench.services.evaluation import scoreboard as svc
from workbench.services.judging.qrels_files import check_exports

widgets.require_session(lead=True)
store = widgets.store()
st.title("Qrels versions")

versions = widgets.qrels_versions()
if not versions:
    widgets.stop()

exports = {c.name: c for c in check_exports(store.qrels, widgets.config().labels_dir, [v.name for v in versions])}
widgets.qrels_versions_table(versions, key="qrels_versions_table",
                             exported={name: c.status() if c.exported or c.problems else "not exported"
                                       for name, c in exports.items()})
for check in exports.values():
    if not check.ok:
        st.warning(widgets.md_escape(check.describe()))

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
e_parent, e_name = widgets.md_escape(parent), widgets.md_escape(info.name)
coverage = svc.version_coverage(cached.coverage(parent, run_names), cached.coverage(info.name, run_names))
by_run = {c.run: c for c in coverage}


def _covers(c: svc.VersionCoverage) -> str:
    return (f"{c.before.n_covered} of {c.before.n_topics} topics on {parent}, "
            f"{c.after.n_covered} of {c.after.n_topics} on {info.name}")


def _partial_apart(chosen: list[str]) -> None:
    """The partial runs not selected, each one's change over only the topics it covers on each version."""
    apart = [c for c in coverage if not c.complete and c.run not in chosen]
    if not apart:
        return
    st.subheader("Partial runs (scored apart)")
    rows: list[dict[str, object]] = []
    for c in apart:
        row: dict[str, object] = {"run": c.run, "topics covered": f"{c.before.n_covered} of {c.before.n_topics} → "
                                                                   f"{c.after.n_covered} of {c.after.n_topics}"}
        if c.before.n_covered and c.after.n_covered:
            try:
                own = svc.changes_between(widgets.cached_scoreboard(parent, [c.run], missing="exclude"),
                                          widgets.cached_scoreboard(info.name, [c.run], missing="exclude"))
            except WorkbenchError as e:
                row["note"] = str(e)
            else:
                row.update({ch.measure: ch.delta for ch in own})
        else:
            row["note"] = "covers no evaluated topic of one version"
        rows.append(row)
    st.dataframe(rows, hide_index=True, column_config=widgets.float_columns(rows, "%+.4f"), height="content",
                 key="qrels_versions_partial")
    st.caption(f"Each partial run's change ({e_name} minus {e_parent}) averaged over only the topics it covers on "
               "each version: not comparable with the table above. Select one above to score it with the others "
               "(its missing topics scored 0 with **zero**).")


st.subheader(f"Score changes of the runs: {e_parent} → {e_name}")
complete = [c.run for c in coverage if c.complete]
chosen = list(st.multiselect(
    "Runs", [c.run for c in coverage], default=complete or [c.run for c in coverage],
    key=f"qrels_versions_runs_{info.collection}",
    format_func=lambda r: r if by_run[r].complete else f"{r} (partial: {_covers(by_run[r])})",
    help="By default the runs that have results for every evaluated topic of both versions; partial runs are "
         "scored apart below.",
))
if not chosen:
    st.info("Choose at least one run.")
    _partial_apart(chosen)
    widgets.stop()
shrinking = [by_run[r] for r in chosen if not by_run[r].complete]
if shrinking and missing == "exclude":
    st.warning(
        "Partial run(s) selected: " + "; ".join(f"{widgets.md_escape(c.run)} ({widgets.md_escape(_covers(c))})"
                                                for c in shrinking)
        + ". With **exclude**, every selected run would be averaged over only the topics they all cover, on each "
        "version, which changes the complete runs' changes too. Deselect the partial run(s), choose **zero** "
        "(their missing topics score 0), or confirm.")
    if not st.checkbox("Average every selected run over the topics they all cover",
                       key="qrels_versions_confirm_shrink"):
        widgets.stop()
try:
    before = widgets.cached_scoreboard(parent, chosen, missing=missing)
    after = widgets.cached_scoreboard(info.name, chosen, missing=missing)
except WorkbenchError as e:
    st.error(widgets.md_escape(e))
    widgets.stop()
changes = svc.changes_between(before, after)

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
_partial_apart(chosen)
