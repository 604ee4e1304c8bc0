"""The eligibility filter language: grammar, two-valued semantics, errors with the column, key checks."""

from __future__ import annotations

from datetime import date

import pytest

from workbench.scoring.filters import (
    FilterSyntaxError,
    MetadataColumns,
    UnknownMetadataKeyError,
    check_keys,
    eligible_by_filter,
    parse_filter,
)

DOCS = {
    "d1": {"year": 1950, "source": "naca tn", "published": date(1950, 3, 1), "open": True},
    "d2": {"year": 1958, "source": "arc r & m", "published": date(1958, 7, 1)},
    "d3": {"year": 1956.0, "source": "j.ae.scs", "open": False},
    "d4": {"source": "naca tn"},                       # no year
    "d5": {"year": "n.d.", "source": "NACA TN"},        # a string year, other case
    "d6": {},
}
COLUMNS = MetadataColumns(list(DOCS), DOCS)


def eligible(text: str) -> list[str]:
    """Both evaluators must agree; returns the eligible doc ids."""
    f = parse_filter(text)
    one_by_one = [d for d, m in DOCS.items() if f.matches(m)]
    assert sorted(f.eligible(COLUMNS)) == one_by_one, text
    return one_by_one


@pytest.mark.parametrize("text, expected", [
    ("year <= 1956", ["d1", "d3"]),                    # 1956.0 is the number 1956
    ("year < 1956", ["d1"]),
    ("year > 1956", ["d2"]),
    ("year = 1956", ["d3"]),
    ("year == 1958", ["d2"]),
    ("year != 1956", ["d1", "d2"]),                    # no year / a string year: no comparison holds
    ('source = "naca tn"', ["d1", "d4"]),              # case-sensitive
    ('source in ["naca tn", "arc r & m"]', ["d1", "d2", "d4"]),
    ('source not in ["naca tn"]', ["d2", "d3", "d5"]),  # needs the key
    ("source in []", []),
    ("published >= 1955-01-01", ["d2"]),
    ("published < 1950-03-02", ["d1"]),
    ("open = true", ["d1"]),
    ("open = false", ["d3"]),
    ("has(year)", ["d1", "d2", "d3", "d5"]),
    ("not has(year)", ["d4", "d6"]),
    ("not year <= 1956", ["d2", "d4", "d5", "d6"]),    # not is two-valued negation
    ('year <= 1956 and source in ["naca tn", "arc r & m"]', ["d1"]),   # the example
    ('year <= 1956 or source = "naca tn"', ["d1", "d3", "d4"]),
    ('year > 1956 or year < 1951 and source = "j.ae.scs"', ["d2"]),    # and binds tighter than or
    ('(year > 1956 or year < 1951) and source = "naca tn"', ["d1"]),
    ("YEAR_x = 1 OR year = 1950", ["d1"]),             # keywords in any case
    ("year <= 1956.5 AND NOT (open = false)", ["d1"]),
    ("year = 1950.0", ["d1"]),
    ("year >= -1e9", ["d1", "d2", "d3"]),
])
def test_semantics(text, expected):
    assert eligible(text) == expected


def test_strings_take_either_quote_and_backslash_escapes():
    meta = {"t": 'say "hi"', "u": "it's"}
    assert parse_filter(r't = "say \"hi\""').matches(meta)
    assert parse_filter("u = 'it\\'s'").matches(meta)
    assert parse_filter("u = \"it's\"").matches(meta)


def test_canonical_text_normalises_spelling():
    a = parse_filter("year<=1956 AND source IN ['naca tn','arc r & m']")
    b = parse_filter('year <= 1956 and source in ["naca tn", "arc r & m"]')
    assert str(a) == str(b) == '(year <= 1956 and source in ["naca tn", "arc r & m"])' and a == b
    assert str(parse_filter("year == 1956.0")) == "year = 1956"
    assert parse_filter(str(a)) == a  # the canonical text parses back to the same filter


@pytest.mark.parametrize("text, column, problem", [
    ("year <= ", 9, "expected a value after '<=', found the end of the filter"),
    ("year in [1, 2", 14, "expected ',' or ']' in the list, found the end of the filter"),
    ("(year = 1", 10, "expected ')' to close the '(' at column 1, found the end of the filter"),
    ("year = naca", 8, "expected a value after '=' (quote text: \"naca\"), found 'naca'"),
    ('source < "x"', 8, "expected a number or a date after '<' (ranges compare numbers or dates), found string \"x\""),
    ('year = "abc', 8, "expected a key, value, operator or parenthesis, found '\"' (close the string with its quote)"),
    ("year = 1 2", 10, "expected 'and', 'or' or the end of the filter, found '2'"),
    ("", 1, "expected a filter such as year <= 1956, found the end of the filter"),
    ("and = 1", 1, "expected a metadata key (e.g. year), 'has(key)', 'not' or '(', found 'and'"),
    ("year ~ 1", 6, "expected a key, value, operator or parenthesis, found '~'"),
    ("year 1956", 6, "expected an operator (= != < <= > >= in, not in) after the key 'year', found '1956'"),
    ("published = 1958-02-30", 13, "expected a real date YYYY-MM-DD, found '1958-02-30'"),
    ("has year", 5, "expected '(' after 'has', found 'year'"),
])
def test_parse_errors_give_the_column_and_a_caret(text, column, problem):
    with pytest.raises(FilterSyntaxError) as e:
        parse_filter(text)
    assert (e.value.column, e.value.problem) == (column, problem)
    first, shown, caret = str(e.value).split("\n")
    assert first == f"filter {text!r}: column {column}: {problem}"
    assert shown == f"  {text}" and caret == "  " + " " * (column - 1) + "^"


def test_unknown_keys_are_named_with_the_known_ones():
    with pytest.raises(UnknownMetadataKeyError) as e:
        check_keys(parse_filter('yaer <= 1956 and source = "x"'), COLUMNS.key_types)
    assert e.value.key == "yaer"
    assert str(e.value) == ("filter 'yaer <= 1956 and source = \"x\"' names the metadata key 'yaer', which no document "
                            "has; known keys: open, published, source, year")
    with pytest.raises(UnknownMetadataKeyError, match="compares 'source' with the number 1956, but 'source' holds string values"):
        check_keys(parse_filter("source = 1956"), COLUMNS.key_types)
    check_keys(parse_filter('year = "n.d."'), COLUMNS.key_types)  # year holds numbers and strings: fine
    with pytest.raises(UnknownMetadataKeyError, match="no document metadata"):
        check_keys(parse_filter("year = 1"), {})


def test_topics_with_equal_filters_share_one_evaluation():
    f1, f2, f3 = parse_filter("year <= 1956"), parse_filter("year<=1956"), parse_filter("year > 1956")
    out = eligible_by_filter({"1": f1, "2": f2, "3": f3}, COLUMNS)
    assert out["1"] is out["2"] and out["1"] == frozenset({"d1", "d3"}) and out["3"] == frozenset({"d2"})
