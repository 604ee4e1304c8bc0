"""Rubric files (TOML): a lead's grade scale, validated with errors naming file and line.

Layout::

    name = "trec-dl"                       # letters, digits, _ . - (not a built-in name)
    source = "TREC 2019 Deep Learning track guidelines, arXiv:2003.07820"
    relevant_from = 2                      # default relevance threshold (inclusive); default 1

    [[grades]]
    grade = 0
    label = "irrelevant"
    definition = "The passage has nothing to do with the query."
    key = "0"                              # keyboard key in the judging UI; default str(grade)

    [[grades]]
    grade = 1
    ...

Syntax errors carry the line tomllib reports; every rule of
``workbench.rubric.problems`` (unique grades and keys, non-empty labels and
definitions, a threshold on the scale, ...) and every type or unknown-key
error is reported at the line of the offending key (or of its ``[[grades]]``
header when the key is missing).

Source:
    TOML v1.0.0 (toml.io/en/v1.0.0), read with the standard library's ``tomllib``.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from workbench.errors import InputFormatError, shown
from workbench.formats.trec import read_text
from workbench.rubric import RUBRICS, Grade, Rubric, problems
from workbench.text import NESTING_MAX, nesting_error

TOP_KEYS = ("name", "source", "relevant_from", "grades")
GRADE_KEYS = ("grade", "label", "definition", "key")
_KEY_LINE = re.compile(r"""\s*("?)([A-Za-z0-9_-]+)\1\s*=""")
_HEADER = re.compile(r"\s*\[\[\s*grades\s*\]\]\s*(#.*)?$")
_TABLE = re.compile(r"\s*\[")
_AT_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")


class _Lines:
    """Where keys are written: top-level keys and the keys of each ``[[grades]]`` entry."""

    def __init__(self, text: str) -> None:
        self.top: dict[str, int] = {}
        self.grade_headers: list[int] = []
        self.grade_keys: list[dict[str, int]] = []
        in_grades = False
        for lineno, line in enumerate(text.split("\n"), 1):
            if _HEADER.match(line):
                self.grade_headers.append(lineno)
                self.grade_keys.append({})
                in_grades = True
                continue
            if _TABLE.match(line):
                in_grades = False
                continue
            m = _KEY_LINE.match(line)
            if m:
                target = self.grade_keys[-1] if in_grades and self.grade_keys else self.top
                target.setdefault(m.group(2), lineno)

    def of(self, where: str) -> int:
        """The line of ``name`` / ``grades[i].key`` (its entry's header if the key is absent; else 1)."""
        m = re.fullmatch(r"grades\[(\d+)\]\.(\w+)", where)
        if m:
            i, key = int(m.group(1)), m.group(2)
            if i < len(self.grade_keys):
                return self.grade_keys[i].get(key, self.grade_headers[i])
            return 1
        if where == "grades":
            return self.grade_headers[0] if self.grade_headers else self.top.get("grades", 1)
        return self.top.get(where, 1)


def parse_rubric(text: str, path: str | Path = "<rubric>") -> Rubric:
    """Parse and validate a rubric file's text.

    Args:
        text: the TOML text.
        path: the file, for messages.

    Returns:
        The ``Rubric`` (``version`` empty: the store numbers versions).

    Raises:
        InputFormatError: a TOML syntax error, an unknown or missing key, a
            value of the wrong type, a built-in rubric's name, or any rule of
            ``workbench.rubric.problems``, naming the line.
    """
    p = str(path)
    too_deep = nesting_error(text, p, "toml")  # tomllib is recursive: refused before it runs out of stack
    if too_deep is not None:
        raise too_deep
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise InputFormatError(p, 0, f"expected arrays and inline tables nested at most {NESTING_MAX} levels deep, "
                                     "found deeper nesting. Flatten the value.") from None
    except tomllib.TOMLDecodeError as e:
        m = _AT_LINE.search(str(e))
        msg = _AT_LINE.sub("", str(e)).strip().rstrip(".")
        raise InputFormatError(p, int(m.group(1)) if m else 0,
                               f"expected valid TOML, found a syntax error ({msg}"
                               f"{', column ' + m.group(2) if m else ''}). Fix the line.") from None
    lines = _Lines(text)

    def fail(where: str, problem: str) -> InputFormatError:
        return InputFormatError(p, lines.of(where), problem)

    for key in data:
        if key not in TOP_KEYS:
            raise fail(key, f"expected one of the keys {', '.join(TOP_KEYS)}, found {shown(key)}. Remove or rename it.")
    for key in ("name", "source", "grades"):
        if key not in data:
            raise InputFormatError(p, 0, f"expected a {key!r} key, found none. Add it (see `workbench rubric define --help`).")
    name, source = data["name"], data["source"]
    if not isinstance(name, str):
        raise fail("name", f"expected name to be a string, found {shown(name)}. Quote it.")
    if name in RUBRICS:
        raise fail("name", f"expected a name that is not a built-in rubric ({', '.join(sorted(RUBRICS))}), found "
                           f"{name!r}. Choose another name.")
    if not isinstance(source, str):
        raise fail("source", f"expected source to be a string, found {shown(source)}. Quote it.")
    relevant_from = data.get("relevant_from", 1)
    if isinstance(relevant_from, bool) or not isinstance(relevant_from, int):
        raise fail("relevant_from", f"expected relevant_from to be an integer grade, found {shown(relevant_from)}.")
    entries = data["grades"]
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise fail("grades", "expected grades as [[grades]] tables, found another value. Write one [[grades]] "
                             "table per grade.")
    grades: list[Grade] = []
    for i, entry in enumerate(entries):
        grades.append(_grade(entry, i, fail))
    rubric = Rubric(name, tuple(grades), source.strip(), relevant_from)
    found = problems(rubric)
    if found:
        where, problem = found[0]
        raise fail(where, problem + ". Fix the rubric file.")
    return rubric


def _grade(e: dict[str, Any], i: int, fail: Any) -> Grade:
    for key in e:
        if key not in GRADE_KEYS:
            raise fail(f"grades[{i}].{key}", f"expected one of the keys {', '.join(GRADE_KEYS)} in a [[grades]] "
                                              f"table, found {shown(key)}. Remove or rename it.")
    for key in ("grade", "label", "definition"):
        if key not in e:
            raise fail(f"grades[{i}].{key}", f"expected a {key!r} in this [[grades]] table, found none. Add it.")
    g = e["grade"]
    if isinstance(g, bool) or not isinstance(g, int):
        raise fail(f"grades[{i}].grade", f"expected grade to be an integer, found {shown(g)}.")
    for key in ("label", "definition"):
        if not isinstance(e[key], str):
            raise fail(f"grades[{i}].{key}", f"expected {key} to be a string, found {shown(e[key])}. Quote it.")
    key_value = e.get("key", str(g))
    if not isinstance(key_value, str):
        raise fail(f"grades[{i}].key", f"expected key to be a string such as \"0\", found {shown(key_value)}. Quote it.")
    return Grade(g, e["label"].strip(), " ".join(e["definition"].split()), key_value)


def read_rubric_file(path: str | Path) -> Rubric:
    """Read and validate a rubric TOML file (see ``parse_rubric``).

    Raises:
        InputFormatError: the file is missing, not UTF-8, or breaks a rule (file:line).
    """
    return parse_rubric(read_text(path), path)
