"""Store methods for publishing (a mixin of ``LabelStore``).

Publishing a pool version: the final grades of every document of the pool
version **and its ancestors** (the pool lineage, root first) are derived from
the current judgments and adjudications with a named rule
(``workbench.judging.adjudication``); with a parent qrels version, the new
version is the parent's entries overlaid with those final grades. So
"qrels v2 (parent v1)" for a delta pool holds v1's judgments plus the delta's,
and a re-judged v1 document shows up as *changed* in the diff.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.errors import ValidationError
from workbench.judging.adjudication import FinalGrades, QrelsDiff, diff_qrels, get_rule
from workbench.store.adjudications import AdjudicationsMixin

if TYPE_CHECKING:
    from workbench.store.qrels import QrelsVersionInfo


class PublishingMixin(AdjudicationsMixin):
    """Freezing final grades into qrels versions, and diffs between versions."""

    def proposed_qrels(
        self, pool_version: str, rule: str, parent_version: str | None = None, *, include_model: bool = False
    ) -> tuple[dict[str, dict[str, int]], FinalGrades]:
        """What ``publish_qrels`` would freeze: the parent's entries (if any)
        overlaid with the final grades of the pool lineage (with model grades
        where no person judged, when ``include_model``)."""
        fg = self.final_grades_detail(pool_version, rule, include_model=include_model)
        merged: dict[str, dict[str, int]] = {}
        if parent_version is not None:
            for t, docs in self.get_qrels(parent_version).items():  # type: ignore[attr-defined]
                merged[t] = dict(docs)
        for t, docs in fg.qrels.items():
            merged.setdefault(t, {}).update(docs)
        return merged, fg

    def publish_qrels(
        self,
        name: str,
        pool_version: str,
        *,
        rule: str,
        parent_version: str | None = None,
        created_by: str,
        note: str = "",
        include_model: bool = False,
    ) -> QrelsVersionInfo:
        """Freeze the final grades of a pool version into an immutable qrels version.

        The entries are the final grades (``rule``) of every document of the
        pool version and its ancestors that has a current judgment or
        adjudication; with ``parent_version``, the parent's entries overlaid
        with those grades (see the module docstring).

        Args:
            name: the new qrels version's name (unique).
            pool_version: the pool version judged.
            rule: final-grade rule; its canonical name is recorded.
            parent_version: the qrels version this one revises (same collection).
            created_by: the publishing lead (role checked).
            note: free text recorded with the version.
            include_model: documents no person judged take model assessors'
                grades; the version records which models supplied how many
                entries (``qrels_model_inputs``) and says so in its note.
                Default: model judgments are left out.

        Returns:
            The new version's ``QrelsVersionInfo`` (counts, content hash, time).

        Raises:
            PermissionDeniedError: ``created_by`` is not a lead.
            DuplicateNameError: ``name`` is taken.
            UnknownNameError: unknown pool version, rule or parent version.
            ValidationError: nothing to publish.
        """
        canonical = get_rule(rule).name
        with self.connection("publish: check lead") as cur:
            self._require_lead(cur, created_by, "publish")
            collection, _v, _p = self._pool_row(cur, pool_version)
        fg, used = self._final_grades_and_models(pool_version, canonical, include_model=include_model)
        qrels: dict[str, dict[str, int]] = {}
        if parent_version is not None:
            for t, docs in self.get_qrels(parent_version).items():  # type: ignore[attr-defined]
                qrels[t] = dict(docs)
        for t, docs in fg.qrels.items():
            qrels.setdefault(t, {}).update(docs)
        if not any(qrels.values()):
            raise ValidationError(
                f"publish {name!r}: pool version {pool_version!r} has no judged documents yet; judge some first"
            )
        summary = (
            f"{fg.count('unanimous')} unanimous, {fg.count('adjudicated')} adjudicated, "
            f"{fg.count('fallback')} by fallback, {len(fg.unresolved)} unresolved (unsure only)"
        )
        if include_model:
            summary += (f"; {fg.count('model')} from model assessors where no person judged"
                        + (f" ({', '.join(f'{m}: {n}' for m, n in sorted(used.items()))})" if used else ""))
        return self.create_qrels_version(  # type: ignore[attr-defined,no-any-return]
            name,
            collection,
            qrels,
            origin="published",
            rule=canonical,
            parent_version=parent_version,
            pool_version=pool_version,
            created_by=created_by,
            note=(note + "; " if note else "") + summary,
            model_inputs=used if include_model else None,
        )

    def qrels_diff(self, old_version: str | None, new_version: str) -> QrelsDiff:
        """Entries added, changed and removed from ``old_version`` (None = empty) to ``new_version``.

        Raises:
            UnknownNameError: unknown qrels version.
        """
        new = self.get_qrels(new_version)  # type: ignore[attr-defined]
        old = self.get_qrels(old_version) if old_version else {}  # type: ignore[attr-defined]
        return diff_qrels(old, new)
