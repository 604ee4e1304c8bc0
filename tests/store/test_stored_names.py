"""Run, pool version and qrels version names follow one rule (``workbench.text.check_stored_name``):
no white space, no '/' or '\\', no leading '-' (breaker's trial: a qrels version named "-x" or
"a b" was stored, then collided with option parsing wherever it was given as an argument)."""

from __future__ import annotations

import pytest

from workbench.errors import ValidationError
from workbench.store import Store
from workbench.store.pools import check_pool_name
from workbench.store.qrels import check_qrels_name
from workbench.store.runs import check_run_name
from workbench.types import Document, Topic

RULES = [check_run_name, check_pool_name, check_qrels_name]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", ["-x", "--qrels", "a b", " v2", "v2 ", "a/b", "a\\b", "", "a\u2003b"])
def test_the_three_kinds_refuse_the_same_names(rule, name):
    with pytest.raises(ValidationError, match=r"expected a .* without spaces, '/' or '\\', not starting with '-'"):
        rule(name)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", ["cranfield-v2", "bm25_stem.k1-0.9", "x-", "v2@lead"])
def test_the_three_kinds_accept_the_same_names(rule, name):
    rule(name)


def test_the_store_refuses_a_qrels_version_named_like_an_option_and_writes_nothing(tmp_path):
    store = Store(tmp_path / "wb.duckdb", client="test")
    store.collections.ingest_collection("toy", [Document("d1", "", "text")], [Topic("1", "topic 1")])
    for name in ("-x", "my qrels"):
        with pytest.raises(ValidationError, match="qrels version name"):
            store.qrels.create_qrels_version(name, "toy", {"1": {"d1": 1}}, origin="imported", rule="file")
    assert store.qrels.list_qrels_versions() == []


def test_a_collection_name_cannot_start_with_a_dash_either():
    # It prefixes the default pool and qrels version names (``-x-pool-v1`` would be refused later).
    from workbench.store.collections import check_collection_name

    with pytest.raises(ValidationError, match="not starting with '-'"):
        check_collection_name("-x")
    assert check_collection_name("x-") == "x-"
