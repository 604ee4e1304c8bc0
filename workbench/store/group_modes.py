"""Store methods for how duplicate groups are judged in a pool version (a mixin of ``LabelStore``).

``group_modes`` is append-only (view ``current_group_modes``: the latest row per
pool version). ``offer`` (the default when no row exists) leaves every pooled
document in the assessors' queues and offers the lead the unjudged members of a
group with a judged member, grade pre-filled (``services.judging.groups``);
``skip`` takes those members out of the assessors' queues
(``store.assignments.GROUP_SKIPPED``): once one member of a duplicate group is
graded for a topic, nobody is asked to judge the others, and ``score --dedupe
groups`` scores the group by its judged member. Judging stays blind either way:
a queue only loses entries, it never shows a grade.
"""

from __future__ import annotations

from workbench.errors import UnknownNameError, ValidationError, shown
from workbench.judging.groups import GROUP_MODES, GroupMode
from workbench.store._rows import _one
from workbench.store.users import UsersMixin


class GroupModesMixin(UsersMixin):
    """The duplicate-group judging mode of each pool version."""

    def set_group_mode(self, pool_version: str, mode: str, *, lead: str) -> int:
        """Set a pool version's duplicate-group mode (one append-only row); returns its id.

        Raises:
            ValidationError: a mode that is not one of ``GROUP_MODES``.
            UnknownNameError: unknown pool version.
            PermissionDeniedError: ``lead`` is not a lead.
        """
        if mode not in GROUP_MODES:
            raise ValidationError(f"expected a duplicate-group mode {' or '.join(GROUP_MODES)}, found {shown(mode)}")
        with self.transaction("set duplicate-group mode") as cur:
            self._require_lead(cur, lead, "set the duplicate-group mode")
            if _one(cur.execute("SELECT count(*) FROM pools WHERE pool_version = ?", [pool_version]))[0] == 0:
                known = [r[0] for r in cur.execute("SELECT pool_version FROM pools ORDER BY 1").fetchall()]
                raise UnknownNameError("pool version", pool_version, known)
            return int(_one(cur.execute(
                "INSERT INTO group_modes (pool_version, mode, set_by) VALUES (?, ?, ?) RETURNING setting_id",
                [pool_version, mode, lead]))[0])

    def group_mode(self, pool_version: str) -> GroupMode:
        """A pool version's current duplicate-group mode (``offer`` when none was set)."""
        with self.connection("read duplicate-group mode") as cur:
            row = cur.execute("SELECT mode FROM current_group_modes WHERE pool_version = ?",
                              [pool_version]).fetchone()
        return "skip" if row is not None and row[0] == "skip" else "offer"
