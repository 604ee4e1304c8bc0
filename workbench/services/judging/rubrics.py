"""Rubric services: define a rubric from a TOML file (lead only), list rubrics, suggest one for qrels."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.formats.rubric_toml import read_rubric_file

if TYPE_CHECKING:
    from workbench.services.judging.sessions import Session
    from workbench.store.rubrics import RubricDefinition, Rubrics


def define_rubric_file(rubrics: Rubrics, session: Session, path: str | Path) -> RubricDefinition:
    """Read, validate and store a rubric file as a new version of its rubric (lead only).

    Raises:
        InputFormatError: the file breaks the format or a rule (file:line).
        PermissionDeniedError: the session is not a lead's.
        ValidationError: a built-in name, or a new version dropping grades still in use.
    """
    from workbench.services.judging.sessions import require_lead

    require_lead(session, "define a rubric")
    rubric = read_rubric_file(path)
    return rubrics.define_rubric(rubric, lead=session.user, source_file=Path(path).as_posix())


def suggested_rubric(qrels: Mapping[str, Mapping[str, int]]) -> str | None:
    """``binary`` when every grade of the qrels is 0 or 1 (and there is one), else None."""
    grades = {g for docs in qrels.values() for g in docs.values()}
    return "binary" if grades and grades <= {0, 1} else None
