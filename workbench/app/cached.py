"""Service reads of the lead pages, cached and keyed by the store's revision
(``Store.revision``): a page visited again with nothing changed in the
store renders from the cache (the "under 1 s after the first visit" target),
and any write (a judgment, an adjudication, a publish, a CLI command) changes
the revision, so nothing stale is shown. Entries are plain, immutable data (no
cursor), shared read-only by every session through ``st.cache_resource``
(``st.cache_data`` would unpickle a copy on every hit: 2 MB for a Cranfield
scoreboard); pages never modify them. Each cache is bounded with ``max_entries``.

The revision is read once per script run (``revision()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import streamlit as st

from workbench.app import widgets

if TYPE_CHECKING:
    from workbench.judging.adjudication import QrelsDiff
    from workbench.judging.agreement import AgreementReport, Weights
    from workbench.services.evaluation.scoreboard import RunCoverage
    from workbench.services.judging.assessments import (
        AdjudicationDesk,
        PoolOverview,
        PublishPreview,
    )
    from workbench.store.progress import AssessorProgress
    from workbench.types import Document, Topic

Rev = tuple[int, ...]


def revision() -> Rev:
    """The store's revision, read once per script run (after the run's callbacks)."""
    return widgets.per_run("revision", lambda: widgets.store().revision())  # type: ignore[no-any-return]


def _db() -> str:
    return str(widgets.config().db_path)


@st.cache_resource(max_entries=8, show_spinner=False)
def _agreement(db: str, rev: Rev, pool_version: str, weights: str) -> AgreementReport:
    from workbench.services.judging import assessments as svc

    store = widgets.store()
    return svc.agreement(store.judging, store.rubrics, store.pools, pool_version, weights=weights)  # type: ignore[arg-type]


def agreement(pool_version: str, weights: Weights) -> AgreementReport:
    """``services.judging.assessments.agreement`` (cached by store revision)."""
    return _agreement(_db(), revision(), pool_version, weights)


@st.cache_resource(max_entries=8, show_spinner=False)
def _desk(db: str, rev: Rev, pool_version: str, rule: str, include_adjudicated: bool) -> AdjudicationDesk:
    from workbench.services.judging import assessments as svc

    store = widgets.store()
    return svc.adjudication_desk(store.adjudications, store.judgments, store.pools, pool_version, rule=rule,
                                 include_adjudicated=include_adjudicated)


def desk(pool_version: str, rule: str, include_adjudicated: bool) -> AdjudicationDesk:
    """``services.judging.assessments.adjudication_desk`` (cached by store revision)."""
    return _desk(_db(), revision(), pool_version, rule, include_adjudicated)


@st.cache_resource(max_entries=8, show_spinner=False)
def _preview(db: str, rev: Rev, pool_version: str, rule: str, parent: str | None) -> PublishPreview:
    from workbench.services.judging import assessments as svc

    return svc.preview_publish(widgets.store().qrels, pool_version, rule=rule, parent_version=parent)


def preview(pool_version: str, rule: str, parent: str | None) -> PublishPreview:
    """``services.judging.assessments.preview_publish`` (cached by store revision)."""
    return _preview(_db(), revision(), pool_version, rule, parent)


@st.cache_resource(max_entries=8, show_spinner=False)
def _pool_overview(db: str, rev: Rev, pool_version: str) -> PoolOverview:
    from workbench.services.judging import assessments as svc

    store = widgets.store()
    return svc.pool_overview(store.judging, store.pools, pool_version)


def pool_overview(pool_version: str) -> PoolOverview:
    """``services.judging.assessments.pool_overview`` (cached by store revision)."""
    return _pool_overview(_db(), revision(), pool_version)


@st.cache_resource(max_entries=4, show_spinner=False)
def _assessors(db: str, rev: Rev) -> list[AssessorProgress]:
    from workbench.services.judging import assessments as svc

    return svc.assessor_overview(widgets.store().judging)


def assessor_overview() -> list[AssessorProgress]:
    """``services.judging.assessments.assessor_overview`` (cached by store revision)."""
    return _assessors(_db(), revision())


@st.cache_resource(max_entries=8, show_spinner=False)
def _coverage(db: str, rev: Rev, qrels_version: str, runs: tuple[str, ...]) -> list[RunCoverage]:
    from workbench.services.evaluation.scoreboard import run_coverage

    return run_coverage(widgets.store(), qrels_version, runs)


def coverage(qrels_version: str, runs: Sequence[str]) -> list[RunCoverage]:
    """``services.evaluation.scoreboard.run_coverage`` (cached by store revision)."""
    return _coverage(_db(), revision(), qrels_version, tuple(runs))


@st.cache_resource(max_entries=8, show_spinner=False)
def _topics(db: str, rev: Rev, collection: str) -> dict[str, Topic]:
    return dict(widgets.store().collections.get_topics(collection))


def topics(collection: str) -> dict[str, Topic]:
    """The topics of a collection (cached by store revision)."""
    return _topics(_db(), revision(), collection)


@st.cache_resource(max_entries=256, show_spinner=False)
def _document(db: str, rev: Rev, collection: str, doc_id: str) -> Document:
    return widgets.store().collections.get_document(collection, doc_id)


def document(collection: str, doc_id: str) -> Document:
    """A document of a collection's latest version (cached by store revision)."""
    return _document(_db(), revision()[6:7], collection, doc_id)


@st.cache_resource(max_entries=16, show_spinner=False)
def _qrels_diff(db: str, old: str, old_hash: str, new: str, new_hash: str) -> QrelsDiff:
    return widgets.store().qrels.qrels_diff(old, new)


def qrels_diff(old: str, new: str) -> QrelsDiff:
    """``store.qrels.qrels_diff`` (qrels versions are immutable: cached by name and content hash)."""
    store = widgets.store()
    return _qrels_diff(_db(), old, store.qrels.get_qrels_info(old).content_hash, new, store.qrels.get_qrels_info(new).content_hash)
