"""Publish (leads): freeze the final grades of a pool version into an immutable
qrels version, exported to labels/<name>.qrels.

The parent defaults to the latest version published from the pool's lineage
(so a new version keeps its lineage unless the lead chooses otherwise), and
the diff against it is shown before the button: for each added or changed
grade, the document's title and how the grade was decided (an adjudication,
unanimous assessors, or the rule's fallback). After publishing, the page says
what was published, with its note.
"""

from __future__ import annotations

import streamlit as st

from workbench.app import cached, widgets
from workbench.errors import WorkbenchError
from workbench.judging.adjudication import DEFAULT_RULE, get_rule, rule_names
from workbench.services.judging import assessments as svc

NONE = "(none: no lineage)"
DECIDED = {"adjudicated": "adjudication", "unanimous": "unanimous assessors", "fallback": "rule's fallback",
           None: "parent (kept)"}


def _parent_key(pool_version: str) -> str:
    return f"publish_parent_{pool_version}"


def _publish(pool_version: str) -> None:
    # Box and widget values first; after the publish only the box changes in place (widgets.BOXES).
    session, box = widgets.session(), widgets.box("publish")
    parent = st.session_state.get(_parent_key(pool_version)) or NONE
    note = st.session_state.get("publish_note") or ""
    name = (st.session_state.get("publish_name") or "").strip()
    rule = st.session_state.get("publish_rule") or DEFAULT_RULE
    store, labels_dir = widgets.store(), widgets.config().labels_dir
    if session is None:
        return
    try:
        res = svc.publish(store.qrels, session, pool_version, name, rule=rule,
                          parent_version=None if parent == NONE else parent, labels_dir=labels_dir, note=note)
    except WorkbenchError as e:
        box["msg"] = ("error", widgets.md_escape(e))
        return
    i = res.info
    box.update(clear=True, msg=(
        "ok",
        f"Published {widgets.md_escape(i.name)} (parent {widgets.md_escape(i.parent_version or 'none')}): "
        f"{i.n_entries} entries, {i.n_topics} topics, {i.n_relevant} relevant, hash {i.content_hash[:12]}; "
        f"written to {widgets.md_escape(res.path)}. Note: {widgets.md_escape(i.note) if i.note else '(none)'}",
    ))


def _form(pool_version: str, versions: list, default_parent: str | None) -> tuple[str, str | None]:
    parents = [NONE] + [v.name for v in versions]
    c1, c2 = st.columns(2)
    rule = c1.selectbox("Final-grade rule", rule_names(), index=rule_names().index(DEFAULT_RULE), key="publish_rule",
                        format_func=lambda r: f"{get_rule(r).name}: {get_rule(r).description}")
    parent = c2.selectbox("Parent version", parents, key=_parent_key(pool_version),
                          index=parents.index(default_parent) if default_parent in parents else 0,
                          help="Default: the latest version published from this pool version or its ancestors.")
    if parent == NONE and default_parent:
        st.warning(f"No parent: the new version starts a lineage of its own instead of revising "
                   f"{widgets.md_escape(default_parent)}.")
    st.text_input("New version name", key="publish_name", placeholder="e.g. cranfield-v1")
    st.text_input("Note", key="publish_note", placeholder="What changed and why (kept with the version)")
    return str(rule), None if parent == NONE else str(parent)


def _diff(preview: svc.PublishPreview, collection: str) -> None:
    fg = preview.final
    st.markdown(
        f"**Would freeze {preview.n_entries} entries** ({preview.rule}): "
        f"{fg.count('unanimous')} unanimous, {fg.count('adjudicated')} adjudicated, "
        f"{fg.count('fallback')} by the rule's fallback, {len(fg.unresolved)} unresolved (only unsure)."
    )
    d = preview.diff
    st.subheader(f"Diff against {widgets.md_escape(preview.parent_version or 'nothing')}")
    m1, m2, m3 = st.columns(3)
    m1.metric("Added", len(d.added))
    m2.metric("Changed", len(d.changed))
    m3.metric("Removed", len(d.removed))
    changed = svc.publish_diff_rows(preview)
    added = svc.publish_diff_rows(preview, added=True)
    titles = widgets.cached_titles(collection, "", [r.doc_id for r in changed[:500] + added[:500]])
    # fixed widths (about 650 px: 1024 px with the sidebar open; widened to the page), the title last:
    # cut to its column (whole on hover), nothing scrolls sideways
    cols = {"topic": st.column_config.TextColumn("topic", width=60),
            "document": st.column_config.TextColumn("document", width=90),
            "parent grade": st.column_config.NumberColumn("parent grade", width=100),
            "new grade": st.column_config.NumberColumn("new grade", width=85),
            "grade": st.column_config.NumberColumn("grade", width=60),
            "decided by": st.column_config.TextColumn("decided by", width=150),
            "title": st.column_config.TextColumn("title", width=150)}
    if changed:
        st.dataframe([{"topic": r.topic_id, "document": r.doc_id, "parent grade": r.parent_grade,
                       "new grade": r.grade, "decided by": DECIDED[r.decided_by], "title": titles[r.doc_id]}
                      for r in changed[:500]], hide_index=True, key="publish_changed", column_config=cols)
    if added:
        with st.expander(f"Added ({len(added)}; first 500)"):
            st.dataframe([{"topic": r.topic_id, "document": r.doc_id, "grade": r.grade,
                           "decided by": DECIDED[r.decided_by], "title": titles[r.doc_id]} for r in added[:500]],
                         hide_index=True,
                         column_config={k: v for k, v in cols.items() if k not in ("parent grade", "new grade")})


def _versions(versions: list) -> None:
    if not versions:
        return
    st.subheader("Versions of this collection")
    widgets.qrels_versions_table(versions, key="publish_versions")


def main() -> None:
    widgets.require_session(lead=True)
    store = widgets.store()
    st.title("Publish")
    pool_version = widgets.pool_picker("publish")
    if pool_version is None:
        return
    box = widgets.box("publish")
    if box["clear"]:  # after a publish: empty name and note, before the widgets exist
        st.session_state["publish_name"] = ""
        st.session_state["publish_note"] = ""
        box["clear"] = False
    kind, msg = box["msg"] or ("", "")
    if msg:
        (st.success if kind == "ok" else st.error)(msg)
    collection = svc.pool_collection(store.pools, pool_version)
    versions = store.qrels.list_qrels_versions(collection)
    rule, parent = _form(pool_version, versions, svc.default_parent(store.qrels, store.pools, pool_version))
    try:
        preview = cached.preview(pool_version, rule, parent)
    except WorkbenchError as e:
        st.error(widgets.md_escape(e))
        return
    _diff(preview, collection)
    st.button("Publish", type="primary", key="publish_go", on_click=_publish, args=(pool_version,),
              disabled=not (st.session_state.get("publish_name") or "").strip())
    _versions(versions)


main()
