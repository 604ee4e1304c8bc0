"""Publish (leads): freeze the final grades of a pool version into an immutable
qrels version, exported to labels/<name>.qrels; shows the diff against the parent."""

from __future__ import annotations

import streamlit as st

from workbench.app import widgets
from workbench.errors import WorkbenchError
from workbench.judging.adjudication import DEFAULT_RULE, get_rule, rule_names
from workbench.services import judging as svc


def _publish(pool_version: str) -> None:
    session = widgets.session()
    if session is None:
        return
    parent = st.session_state.get("publish_parent") or None
    try:
        res = svc.publish(
            widgets.store(), session, pool_version, (st.session_state.get("publish_name") or "").strip(),
            rule=st.session_state.get("publish_rule") or DEFAULT_RULE,
            parent_version=None if parent == "(none)" else parent,
            labels_dir=widgets.config().labels_dir,
            note=st.session_state.get("publish_note") or "",
        )
    except WorkbenchError as e:
        st.session_state["publish_msg"] = ("error", widgets.md_escape(e))
    else:
        i = res.info
        st.session_state["publish_msg"] = (
            "ok",
            f"Published {widgets.md_escape(i.name)}: {i.n_entries} entries, {i.n_topics} topics, "
            f"{i.n_relevant} relevant, hash {i.content_hash[:12]}; written to {widgets.md_escape(res.path)}",
        )


widgets.require_session(lead=True)
store = widgets.store()
st.title("Publish")
pool_version = widgets.pool_picker("publish")
if pool_version is None:
    widgets.stop()
kind, msg = st.session_state.get("publish_msg") or ("", "")
if msg:
    (st.success if kind == "ok" else st.error)(msg)

collection = svc.pool_collection(store, pool_version)
versions = store.list_qrels_versions(collection)
parents = ["(none)"] + [v.name for v in versions]
c1, c2 = st.columns(2)
c1.selectbox("Final-grade rule", rule_names(), index=rule_names().index(DEFAULT_RULE), key="publish_rule",
             format_func=lambda r: f"{get_rule(r).name}: {get_rule(r).description}")
c2.selectbox("Parent version", parents, key="publish_parent")
st.text_input("New version name", key="publish_name", placeholder="e.g. cranfield-v1")
st.text_input("Note", key="publish_note")

parent = st.session_state.get("publish_parent")
try:
    preview = svc.preview_publish(store, pool_version, rule=st.session_state.get("publish_rule") or DEFAULT_RULE,
                                  parent_version=None if parent in (None, "(none)") else parent)
except WorkbenchError as e:
    st.error(widgets.md_escape(e))
    widgets.stop()
fg = preview.final
st.markdown(
    f"**Would freeze {preview.n_entries} entries** ({preview.rule}): "
    f"{fg.count('unanimous')} unanimous, {fg.count('adjudicated')} adjudicated, "
    f"{fg.count('fallback')} by fallback, {len(fg.unresolved)} unresolved (only unsure)."
)
d = preview.diff
st.subheader(f"Diff against {widgets.md_escape(preview.parent_version or 'nothing')}")
m1, m2, m3 = st.columns(3)
m1.metric("Added", len(d.added))
m2.metric("Changed", len(d.changed))
m3.metric("Removed", len(d.removed))
if d.changed:
    st.table(widgets.md_cells([{"topic": t, "document": doc, "parent grade": o, "new grade": n}
                               for t, doc, o, n in d.changed[:200]]))
if d.added:
    with st.expander(f"Added ({len(d.added)})"):
        st.table(widgets.md_cells([{"topic": q.topic_id, "document": q.doc_id, "grade": q.grade}
                                   for q in d.added[:500]]))
st.button("Publish", type="primary", key="publish_go", on_click=_publish, args=(pool_version,),
          disabled=not (st.session_state.get("publish_name") or "").strip())

if versions:
    st.subheader("Versions of this collection")
    st.table(widgets.md_cells(
        [
            {"name": v.name, "parent": v.parent_version or "", "pool": v.pool_version or "", "origin": v.origin,
             "rule": v.rule, "entries": v.n_entries, "relevant": v.n_relevant, "hash": v.content_hash[:12],
             "created": f"{v.created_at:%Y-%m-%d %H:%M}"}
            for v in versions
        ]
    ))
