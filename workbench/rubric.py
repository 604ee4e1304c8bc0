"""Grade scales (rubrics) as data, each with the source of its definitions.

A rubric maps an integer grade to ``(label, definition)``. Grades are what the
qrels store; labels and definitions are what assessors read. Built-in rubrics
(``default``, ``cranfield``, ``binary``) are looked up by name in ``RUBRICS``;
an unknown name raises ``UnknownNameError``. Leads define more from TOML files
(``formats.rubric_toml``); the store keeps every version of those.

Versions: a rubric's ``version_id`` names the exact scale a judgment was made
under: ``<name>@<n>`` for the n-th stored version of a file-defined rubric,
``<name>@builtin-<hash>`` for a built-in (the hash of its definition, so a
changed built-in is a different version too). ``definition()`` is the
canonical content (name, source, relevant_from, grades) and
``content_hash()`` its sha256: a changed rubric is a new version, an
unchanged one is not.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError, shown

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""Rubric names: letters, digits, ``_ . -``, 1 to 64 characters, starting with a letter or digit."""


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
    version: str = ""

    def definition(self) -> dict[str, Any]:
        """The canonical content (no version): what ``content_hash`` covers."""
        return {
            "name": self.name, "source": self.source, "relevant_from": self.relevant_from,
            "grades": [{"grade": g.grade, "label": g.label, "definition": g.definition, "key": g.key}
                       for g in sorted(self.grades, key=lambda g: g.grade)],
        }

    def content_hash(self) -> str:
        """sha256 (hex) of the canonical JSON of ``definition()``."""
        text = json.dumps(self.definition(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def version_id(self) -> str:
        """``name@n`` for a stored version, ``name@builtin-<8 hex>`` for a built-in."""
        return f"{self.name}@{self.version or 'builtin-' + self.content_hash()[:8]}"

    def with_version(self, version: str) -> Rubric:
        """The same scale labelled with a stored version number."""
        return replace(self, version=version)

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


def rubric_from_definition(d: Mapping[str, Any], version: str = "") -> Rubric:
    """The rubric of a ``definition()`` mapping (as stored), labelled ``version``.

    Raises:
        KeyError, TypeError, ValueError: a malformed mapping (stored data is trusted).
    """
    grades = tuple(Grade(int(g["grade"]), str(g["label"]), str(g["definition"]), str(g["key"])) for g in d["grades"])
    return Rubric(str(d["name"]), grades, str(d["source"]), int(d["relevant_from"]), version)


def problems(rubric: Rubric) -> list[tuple[str, str]]:
    """What is wrong with a rubric, as (where, problem) pairs; empty when it is valid.

    ``where`` is ``name``, ``source``, ``relevant_from`` or ``grades[i].<field>``
    (0-based ``i``), so a file reader can name the line.

    Rules: a valid name; a non-empty source; at least two grades; grades unique;
    each label and definition non-empty; keys one non-space character each and
    unique; ``relevant_from`` one of the grades and above the lowest (else no
    document could be non-relevant).
    """
    out: list[tuple[str, str]] = []
    if not NAME_PATTERN.fullmatch(rubric.name):
        out.append(("name", f"expected a name of letters, digits and _ . - (1-64 characters), found {shown(rubric.name)}"))
    if not rubric.source.strip():
        out.append(("source", "expected a source (where the definitions come from), found an empty one"))
    if len(rubric.grades) < 2:
        out.append(("grades", f"expected at least two grades, found {len(rubric.grades)}"))
    seen: dict[int, int] = {}
    keys: dict[str, int] = {}
    for i, g in enumerate(rubric.grades):
        if g.grade in seen:
            out.append((f"grades[{i}].grade", f"expected each grade once, found grade {g.grade} again "
                                              f"(grade entry {seen[g.grade] + 1})"))
        seen.setdefault(g.grade, i)
        if not g.label.strip():
            out.append((f"grades[{i}].label", f"expected a label for grade {g.grade}, found an empty one"))
        if not g.definition.strip():
            out.append((f"grades[{i}].definition", f"expected a definition for grade {g.grade}, found an empty one"))
        if len(g.key) != 1 or g.key.isspace():
            out.append((f"grades[{i}].key", f"expected a one-character key for grade {g.grade}, found {shown(g.key)}"))
        elif g.key in keys:
            out.append((f"grades[{i}].key", f"expected each key once, found key {g.key!r} again (grade entry "
                                            f"{keys[g.key] + 1})"))
        keys.setdefault(g.key, i)
    values = sorted(seen)
    if values and rubric.relevant_from not in seen:
        out.append(("relevant_from", f"expected relevant_from to be one of the grades {values}, "
                                     f"found {rubric.relevant_from}"))
    elif values and rubric.relevant_from == values[0]:
        out.append(("relevant_from", f"expected relevant_from above the lowest grade {values[0]} (else every "
                                     f"judged document is relevant), found {rubric.relevant_from}"))
    return out


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
