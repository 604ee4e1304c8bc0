"""Store methods for a collection's rubric (a mixin of ``LabelStore``): the
grade scale judgments and adjudications are checked against."""

from __future__ import annotations

from typing import Any

from workbench.errors import UnknownNameError, ValidationError
from workbench.rubric import Rubric, get_rubric
from workbench.store._rows import _one
from workbench.store.users import UsersMixin


class RubricsMixin(UsersMixin):
    """The rubric of each collection; setting one is a lead's action."""

    def collection_rubric(self, collection: str) -> Rubric:
        """The grade scale judged on for a collection.

        A lead's choice (``set_collection_rubric``) wins; otherwise ``cranfield``
        for a collection whose name contains "cranfield", else ``default``.
        """
        with self.connection("read rubric") as cur:
            return self._rubric(cur, collection)

    def _rubric(self, cur: Any, collection: str) -> Rubric:
        row = _one(cur.execute("SELECT value FROM meta WHERE key = ?", [f"rubric:{collection}"]))
        if row:
            return get_rubric(row[0])
        return get_rubric("cranfield" if "cranfield" in collection.lower() else "default")

    def set_collection_rubric(self, collection: str, rubric: str, *, lead: str) -> Rubric:
        """Choose the rubric of a collection (a lead's action).

        Refused while a current judgment or adjudication of the collection has a
        grade outside the new scale (agreement and publishing would meet grades
        the rubric does not define).

        Raises:
            UnknownNameError: unknown rubric, or unknown collection (listing the known ones).
            PermissionDeniedError: ``lead`` is not a lead.
            ValidationError: current grades outside the new scale (listed with counts).
        """
        chosen = get_rubric(rubric)
        with self.transaction(f"set rubric of {collection}") as cur:
            self._require_lead(cur, lead, "set rubric")
            if not _one(cur.execute("SELECT 1 FROM collections WHERE collection = ?", [collection])):
                known = [r[0] for r in cur.execute("SELECT collection FROM collections").fetchall()]
                raise UnknownNameError("collection", collection, known)
            scale = list(chosen.values)
            marks = ", ".join("?" for _ in scale)
            off = cur.execute(
                f"SELECT what, grade, count(*) FROM ("
                f"SELECT 'judgment' AS what, grade FROM current_judgments WHERE collection = ? "
                f"AND grade IS NOT NULL AND grade NOT IN ({marks}) "
                f"UNION ALL SELECT 'adjudication' AS what, grade FROM current_adjudications WHERE collection = ? "
                f"AND grade NOT IN ({marks})) GROUP BY what, grade ORDER BY what DESC, grade",
                [collection, *scale, collection, *scale],
            ).fetchall()
            if off:
                found = ", ".join(f"grade {g} in {n} current {w}(s)" for w, g, n in off)
                raise ValidationError(
                    f"rubric {chosen.name!r} for collection {collection!r}: expected every current grade in "
                    f"its scale {scale}, found {found}; keep the rubric the documents were judged on, "
                    "or re-judge those documents first"
                )
            cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [f"rubric:{collection}", chosen.name])
        return chosen
