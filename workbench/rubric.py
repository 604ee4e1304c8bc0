"""Grade scales (rubrics) as data, each with the source of its definitions.

A rubric maps an integer grade to ``(label, definition)``. Grades are what the
qrels store; labels and definitions are what assessors read. Rubrics are looked
up by name in ``RUBRICS``; an unknown name raises ``UnknownNameError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError


@dataclass(frozen=True)
class Grade:
    """One point of a scale: integer grade, short label, definition, shortcut key."""

    grade: int
    label: str
    definition: str
    key: str


@dataclass(frozen=True)
class Rubric:
    """A graded relevance scale.

    Attributes:
        name: registry name (``default``, ``cranfield``).
        grades: the scale, ordered from lowest to highest grade.
        source: where the definitions come from.
        relevant_from: the lowest grade counted as relevant by default.
    """

    name: str
    grades: tuple[Grade, ...]
    source: str
    relevant_from: int = 1

    @property
    def values(self) -> tuple[int, ...]:
        """The allowed grades, ascending."""
        return tuple(g.grade for g in self.grades)

    def check(self, grade: int) -> int:
        """Return ``grade`` if it belongs to the scale.

        Raises:
            ValidationError: the grade is not one of ``values``.
        """
        if grade not in self.values:
            raise ValidationError(
                f"grade {grade!r} is not on the {self.name!r} scale; allowed: {list(self.values)}"
            )
        return grade

    def label(self, grade: int) -> str:
        """The label of a grade (``str(grade)`` if off-scale, e.g. imported qrels)."""
        for g in self.grades:
            if g.grade == grade:
                return g.label
        return str(grade)


_RUBRICS: dict[str, Rubric] = {}


def register(rubric: Rubric) -> Rubric:
    """Add a rubric to the registry. Raises DuplicateNameError on a taken name."""
    if rubric.name in _RUBRICS:
        raise DuplicateNameError(f"rubric {rubric.name!r} is already registered")
    _RUBRICS[rubric.name] = rubric
    return rubric


RUBRICS: Mapping[str, Rubric] = MappingProxyType(_RUBRICS)


def get_rubric(name: str) -> Rubric:
    """Look a rubric up by name. Raises UnknownNameError listing the known names."""
    try:
        return _RUBRICS[name]
    except KeyError:
        raise UnknownNameError("rubric", name, _RUBRICS) from None


DEFAULT = register(
    Rubric(
        name="default",
        grades=(
            Grade(0, "not relevant", "The document does not address the topic.", "0"),
            Grade(1, "related", "On the topic's subject but does not answer the need.", "1"),
            Grade(2, "highly relevant", "Answers a substantial part of the need.", "2"),
            Grade(3, "perfectly relevant", "Dedicated to the topic; answers the need fully.", "3"),
        ),
        source=(
            "Four-point scale after the TREC Deep Learning track guidelines "
            "(Craswell et al., TREC 2019 DL overview, arXiv:2003.07820)."
        ),
    )
)

CRANFIELD = register(
    Rubric(
        name="cranfield",
        grades=(
            Grade(0, "no interest", "Cleverdon code 5 (written -1 in cranqrel): references of no interest.", "0"),
            Grade(1, "minimum interest", "Code 4: of minimum interest, e.g. included from a historical viewpoint.", "1"),
            Grade(2, "useful", "Code 3: useful as general background or for suggesting methods.", "2"),
            Grade(3, "high relevance", "Code 2: lack of it would have made the research impracticable or much harder.", "3"),
            Grade(4, "complete answer", "Code 1: a complete answer to the question.", "4"),
        ),
        source=(
            "Cleverdon's relevance codes for Cranfield II, as given in cranqrel.readme; "
            "grade = 5 - code, and code -1 (i.e. 5) -> 0."
        ),
    )
)

BINARY = register(
    Rubric(
        name="binary",
        grades=(
            Grade(0, "not relevant", "The document does not address the topic.", "0"),
            Grade(1, "relevant", "The document is relevant to the topic.", "1"),
        ),
        source=(
            "Binary relevance, as in the early TREC ad hoc tracks (Voorhees & Harman, TREC: Experiment and "
            "Evaluation in Information Retrieval, MIT Press 2005) and the classic SMART collections' qrels."
        ),
    )
)
