"""Rubric TOML files: a valid file, then one defect per test, each naming its line."""

from __future__ import annotations

import pytest

from workbench.errors import InputFormatError
from workbench.formats.rubric_toml import parse_rubric
from workbench.rubric import BINARY, Grade

GOOD = """\
name = "trec-dl"
source = "TREC 2019 DL track guidelines"
relevant_from = 2

[[grades]]
grade = 0
label = "irrelevant"
definition = "Nothing to do with the query."

[[grades]]
grade = 2
label = "highly relevant"
definition = "Answers   the query."
key = "h"
"""


def _err(text: str) -> str:
    with pytest.raises(InputFormatError) as e:
        parse_rubric(text, "r.toml")
    return str(e.value)


def test_a_valid_file():
    r = parse_rubric(GOOD, "r.toml")
    assert (r.name, r.source, r.relevant_from, r.version) == ("trec-dl", "TREC 2019 DL track guidelines", 2, "")
    assert r.grades == (Grade(0, "irrelevant", "Nothing to do with the query.", "0"),
                        Grade(2, "highly relevant", "Answers the query.", "h"))


def test_syntax_error_carries_tomllibs_line():
    assert _err(GOOD.replace('label = "irrelevant"', 'label = irrelevant')).startswith(
        "r.toml:7: expected valid TOML, found a syntax error (Invalid value, column 9). Fix the line.")


@pytest.mark.parametrize("edit, expected", [
    (('grade = 2\n', 'grade = 0\n'),
     "r.toml:11: expected each grade once, found grade 0 again (grade entry 1). Fix the rubric file."),
    (('key = "h"', 'key = "0"'),
     "r.toml:14: expected each key once, found key '0' again (grade entry 1). Fix the rubric file."),
    (('relevant_from = 2', 'relevant_from = 3'),
     "r.toml:3: expected relevant_from to be one of the grades [0, 2], found 3. Fix the rubric file."),
    (('relevant_from = 2', 'relevant_from = 0'),
     "r.toml:3: expected relevant_from above the lowest grade 0 (else every judged document is relevant), "
     "found 0. Fix the rubric file."),
    (('label = "highly relevant"', 'label = "  "'),
     "r.toml:12: expected a label for grade 2, found an empty one. Fix the rubric file."),
    (('definition = "Nothing to do with the query."\n', ''),
     "r.toml:5: expected a 'definition' in this [[grades]] table, found none. Add it."),
    (('key = "h"', 'keys = "h"'),
     "r.toml:14: expected one of the keys grade, label, definition, key in a [[grades]] table, found 'keys'. "
     "Remove or rename it."),
    (('grade = 2\n', 'grade = "2"\n'), "r.toml:11: expected grade to be an integer, found '2'."),
    (('name = "trec-dl"', 'name = "binary"'),
     "r.toml:1: expected a name that is not a built-in rubric (binary, cranfield, default), found 'binary'. "
     "Choose another name."),
    (('name = "trec-dl"', 'name = "trec dl"'),
     "r.toml:1: expected a name of letters, digits and _ . - (1-64 characters), found 'trec dl'. Fix the rubric file."),
    (('source = "TREC 2019 DL track guidelines"', 'sources = "x"'),
     "r.toml:2: expected one of the keys name, source, relevant_from, grades, found 'sources'. Remove or rename it."),
])
def test_semantic_errors_name_the_line(edit, expected):
    old, new = edit
    assert old in GOOD
    assert _err(GOOD.replace(old, new, 1)) == expected


def test_one_grade_is_not_a_scale():
    text = GOOD.split("[[grades]]")[0] + "[[grades]]" + GOOD.split("[[grades]]")[1]
    assert _err(text.replace("relevant_from = 2", "relevant_from = 0")).startswith(
        "r.toml:5: expected at least two grades, found 1")


def test_builtin_binary_rubric():
    assert BINARY.values == (0, 1) and BINARY.relevant_from == 1
    assert BINARY.version_id.startswith("binary@builtin-")
