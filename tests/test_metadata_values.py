"""Metadata values: JSON and text typing, canonical text, the per-document hash (workbench.metadata)."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime

import pytest

from workbench.metadata import (
    MetadataValueError,
    canonical,
    check_key,
    check_metadata,
    from_json,
    infer_column,
    merge_metadata,
    metadata_hash,
    parse_canonical,
    value_type,
)


def test_json_values_keep_their_type_and_iso_strings_are_dates():
    assert from_json("naca tn") == "naca tn"
    assert from_json(1958) == 1958 and isinstance(from_json(1958), int)
    assert from_json(0.5) == 0.5
    assert from_json(True) is True
    assert from_json("1958-03-01") == date(1958, 3, 1)
    assert from_json("1958-02-30") == "1958-02-30"  # not a real date: stays a string
    assert from_json("1958-3-1") == "1958-3-1"
    assert from_json(None) is None


@pytest.mark.parametrize("bad, word", [([1, 2], "an array"), ({"a": 1}, "an object"), (float("nan"), "finite")])
def test_json_arrays_objects_and_nan_are_refused(bad, word):
    with pytest.raises(MetadataValueError, match=word):
        from_json(bad)


def test_text_columns_are_typed_as_a_whole():
    assert infer_column(["1958", "", "1960"]) == ([1958, None, 1960], "number")
    assert infer_column(["1.5", "2"]) == ([1.5, 2], "number")
    assert infer_column(["1958-01-02", ""]) == ([date(1958, 1, 2), None], "date")
    assert infer_column(["TRUE", "false"]) == ([True, False], "boolean")
    # one non-number makes the whole column strings, as written
    assert infer_column(["1958", "n.d."]) == (["1958", "n.d."], "string")
    # a leading zero marks an identifier, not a number
    assert infer_column(["007", "12"]) == (["007", "12"], "string")
    assert infer_column(["", ""]) == ([None, None], None)
    assert infer_column(["nan"]) == (["nan"], "string")  # no nan/inf numbers from text


def test_canonical_text_round_trips_and_integral_floats_are_integers():
    for v, text, kind in [("x y", "x y", "string"), (1958, "1958", "number"), (1958.0, "1958", "number"),
                          (0.1, "0.1", "number"), (-3, "-3", "number"), (True, "true", "boolean"),
                          (date(1958, 1, 2), "1958-01-02", "date")]:
        assert (canonical(v), value_type(v)) == (text, kind)
        assert parse_canonical(kind, text) == v
    assert isinstance(parse_canonical("number", "1958"), int)


def test_datetimes_and_other_objects_are_not_values():
    with pytest.raises(MetadataValueError, match="without a time"):
        value_type(datetime(1958, 1, 2, 3, 4))
    with pytest.raises(MetadataValueError, match="found list"):
        value_type([1])  # type: ignore[arg-type]


def test_keys_follow_the_rule_so_filters_can_name_them():
    assert check_key("year") == "year" and check_key("_x.y-z9") == "_x.y-z9"
    for bad in ("", "9lives", "has space", "a" * 65, "ü"):
        with pytest.raises(MetadataValueError, match="expected a metadata key"):
            check_key(bad)
    with pytest.raises(MetadataValueError, match="key 'year'"):
        check_metadata({"year": float("inf")})
    assert check_metadata({"a": 1, "b": None}) == {"a": 1}


def test_metadata_hash_is_sha256_of_sorted_typed_canonical_rows():
    expected = hashlib.sha256(json.dumps([["source", "string", "naca tn"], ["year", "number", "1958"]],
                                         separators=(",", ":")).encode()).hexdigest()
    assert metadata_hash({"year": 1958, "source": "naca tn"}) == expected
    assert metadata_hash({"year": 1958.0, "source": "naca tn"}) == expected
    # the type is hashed: the string "1958" is another value than the number 1958
    assert metadata_hash({"year": "1958", "source": "naca tn"}) != expected


def test_merge_keeps_agreeing_values_and_lists_conflicts():
    merged, conflicts = merge_metadata({"1": {"a": 1}, "2": {"a": 2}}, {"1": {"a": 1.0, "b": "x"}, "2": {"a": 3}, "3": {}})
    assert merged == {"1": {"a": 1, "b": "x"}, "2": {"a": 2}}
    assert conflicts == [("2", "a", 2, 3)]
