"""Agreement figures: kappa against sklearn (oracle) and hand formulas, alpha against
hand-computed Krippendorff values, undefined cases reported, never NaN."""

from __future__ import annotations

import random

import pytest
from sklearn.metrics import cohen_kappa_score

from workbench.errors import ValidationError
from workbench.judging.agreement import agreement_report, cohen_kappa, krippendorff_alpha


def test_linear_kappa_by_hand():
    # A = 0,1,2,2; B = 0,1,1,2. Observed mean |a-b| = 1/4.
    # Expected = sum_a sum_b pA(a) pB(b) |a-b| = 1/4*(2/4+2/4) + 1/4*(1/4+1/4) + 2/4*(2/4+2/4) = 7/8.
    k = cohen_kappa([(0, 0), (1, 1), (2, 1), (2, 2)], weights="linear")
    assert k.value == pytest.approx(1 - (1 / 4) / (7 / 8))
    assert k.n_items == 4 and k.reason == ""


def test_quadratic_kappa_by_hand():
    # Same data, w = (a-b)^2. Observed = 1/4.
    # Expected = 1/4*(2/4*1 + 1/4*4) + 1/4*(1/4*1 + 1/4*1) + 2/4*(1/4*4 + 2/4*1) = 3/8 + 1/8 + 3/4 = 5/4.
    k = cohen_kappa([(0, 0), (1, 1), (2, 1), (2, 2)], weights="quadratic")
    assert k.value == pytest.approx(1 - (1 / 4) / (5 / 4))


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
@pytest.mark.parametrize("seed", range(6))
def test_kappa_matches_sklearn(weights, seed):
    rng = random.Random(seed)
    scale = [0, 1, 2, 3]
    a = [rng.choice(scale) for _ in range(40)]
    b = [x if rng.random() < 0.6 else rng.choice(scale) for x in a]
    ours = cohen_kappa(list(zip(a, b, strict=True)), weights=weights)
    oracle = cohen_kappa_score(a, b, weights=weights, labels=scale)
    assert ours.value == pytest.approx(oracle, abs=1e-12)


def test_perfect_agreement_is_one_and_chance_is_zero():
    assert cohen_kappa([(0, 0), (3, 3), (1, 1)]).value == pytest.approx(1.0)
    # Independent marginals: A = 0,0,1,1 B = 0,1,0,1 -> observed = expected.
    assert cohen_kappa([(0, 0), (0, 1), (1, 0), (1, 1)]).value == pytest.approx(0.0)


def test_undefined_kappa_is_none_with_reason():
    one = cohen_kappa([(2, 2)])
    assert one.value is None and one.n_items == 1 and "fewer than 2" in one.reason
    same = cohen_kappa([(1, 1), (1, 1), (1, 1)])
    assert same.value is None and same.n_items == 3 and "same category" in same.reason
    assert cohen_kappa([]).value is None


def test_alpha_ordinal_by_hand():
    # Two assessors, 4 items, grades (0,0) (1,1) (2,2) (0,2); scale 0..2.
    # Value counts n_0=3, n_1=2, n_2=3, n=8.
    # Ordinal metric: delta(c,k) = (sum_{g=c..k} n_g - (n_c + n_k)/2)^2.
    # delta(0,2) = (3+2+3 - (3+3)/2)^2 = 25; delta(0,1) = (5 - 2.5)^2 = 6.25; delta(1,2) = 6.25.
    # Observed coincidences: o_02 = o_20 = 1 (item 4, m_u=2 -> 1/(m-1) = 1).
    # D_o = sum o_ck delta / n = (1*25 + 1*25) / 8.
    # Expected: e_ck = n_c n_k / (n - 1); D_e = sum_{c!=k} n_c n_k delta / (n (n-1)).
    n = {0: 3, 1: 2, 2: 3}
    delta = {(0, 1): 6.25, (1, 2): 6.25, (0, 2): 25.0}
    d_e = sum(2 * n[c] * n[k] * d for (c, k), d in delta.items()) / (8 * 7)
    d_o = 50 / 8
    units = [{"a": 0, "b": 0}, {"a": 1, "b": 1}, {"a": 2, "b": 2}, {"a": 0, "b": 2}]
    alpha = krippendorff_alpha(units, scale=(0, 1, 2))
    assert alpha.value == pytest.approx(1 - d_o / d_e)
    assert alpha.n_items == 4


def test_alpha_skips_single_graded_items_and_handles_three_assessors():
    units = [{"a": 0, "b": 0, "c": 1}, {"a": 3, "b": 3}, {"a": 2}, {"b": 1, "c": 1}]
    alpha = krippendorff_alpha(units, scale=(0, 1, 2, 3))
    assert alpha.n_items == 3 and alpha.value is not None and 0 < alpha.value < 1


def test_alpha_undefined_cases():
    few = krippendorff_alpha([{"a": 1, "b": 2}, {"a": 1}], scale=(0, 1, 2))
    assert few.value is None and few.n_items == 1 and "fewer than 2" in few.reason
    same = krippendorff_alpha([{"a": 1, "b": 1}, {"a": 1, "c": 1}], scale=(0, 1, 2))
    assert same.value is None and same.n_items == 2 and "same category" in same.reason
    with pytest.raises(ValidationError, match=r"expected grades in the rubric scale \[0, 1, 2\], found \[7\]"):
        krippendorff_alpha([{"a": 1, "b": 7}, {"a": 1, "b": 1}], scale=(0, 1, 2))


def test_report_pairs_topics_and_unsure():
    grades = {
        ("1", "d1"): {"ann": 0, "bob": 0, "cat": 1},
        ("1", "d2"): {"ann": 2, "bob": 3},
        ("1", "d3"): {"ann": 1, "bob": None},  # unsure: not an item
        ("2", "d1"): {"ann": 3, "bob": 3},
        ("2", "d2"): {"ann": 0, "bob": 1},
        ("2", "d3"): {"cat": 2},  # single-graded
    }
    rep = agreement_report(grades, scale=(0, 1, 2, 3), weights="linear")
    assert rep.n_multi_graded == 4
    by = {(p.assessor_a, p.assessor_b): p for p in rep.pairs}
    assert set(by) == {("ann", "bob"), ("ann", "cat"), ("bob", "cat")}
    ab = by[("ann", "bob")]
    assert ab.kappa.n_items == 4 and ab.n_agree == 2
    assert ab.kappa.value == pytest.approx(
        cohen_kappa_score([0, 2, 3, 0], [0, 3, 3, 1], weights="linear", labels=[0, 1, 2, 3])
    )
    assert by[("ann", "cat")].kappa.value is None  # one shared item
    assert set(rep.alpha_by_topic) == {"1", "2"}
    assert rep.alpha_by_topic["1"].n_items == 2 and rep.alpha_by_topic["2"].n_items == 2
    assert rep.alpha_overall.n_items == 4


def _random_units(rng: random.Random, n_items: int, n_assessors: int, scale: list[int],
                  missing: float) -> list[dict[str, int]]:
    units = []
    for _ in range(n_items):
        truth = rng.choice(scale)
        u = {f"a{k}": (truth if rng.random() < 0.6 else rng.choice(scale)) for k in range(n_assessors)
             if rng.random() >= missing}
        units.append(u)
    return units


def _oracle_alpha(units: list[dict[str, int]], scale: list[int]) -> float:
    import krippendorff
    import numpy as np

    rows = [u for u in units if len(u) >= 2]
    names = sorted({a for u in rows for a in u})
    data = np.full((len(names), len(rows)), np.nan)
    for j, u in enumerate(rows):
        for a, g in u.items():
            data[names.index(a), j] = g
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=scale))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("size", [12, 400])
def test_alpha_from_counts_equals_the_krippendorff_package_two_assessors(seed, size):
    """Two assessors per item (the campaign's case): coincidence counts are integers and
    the value is the package's to the last bit."""
    rng = random.Random(seed)
    scale = [0, 1, 2, 3]
    units = _random_units(rng, size, 2, scale, missing=0.0)
    assert krippendorff_alpha(units, scale=scale).value == _oracle_alpha(units, scale)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("size", [12, 400])
def test_alpha_from_counts_equals_the_krippendorff_package_with_missing_values(seed, size):
    """Up to 5 assessors with missing grades (items graded by 2..5): equal to the package
    up to float rounding of the 1/(m-1) weights (summed in another order)."""
    rng = random.Random(100 + seed)
    scale = [0, 1, 2, 3, 4]
    units = _random_units(rng, size, 5, scale, missing=0.45)
    assert krippendorff_alpha(units, scale=scale).value == pytest.approx(_oracle_alpha(units, scale),
                                                                          rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_report_from_sql_counts_equals_the_package_per_topic_and_overall(tmp_path, seed):
    """The store's SQL aggregation (``store.judging.agreement_counts``) gives the figures
    of the package (alpha) and of sklearn (kappa) on the same stored judgments."""
    from workbench.judging.agreement import agreement_from_counts
    from workbench.store import Store
    from workbench.types import Document, Topic

    rng = random.Random(seed)
    scale = [0, 1, 2, 3]
    store = Store(tmp_path / "wb.duckdb")
    docs = [Document(f"d{i}", "", "text") for i in range(60)]
    store.collections.ingest_collection("c", docs, [Topic(str(t), "q") for t in (1, 2, 10)])
    for name in ("ann", "bob", "cat"):
        store.users.add_user(name, "assessor")
    grades: dict[tuple[str, str], dict[str, int | None]] = {}
    rows = []
    for t in ("1", "2", "10"):
        for i in range(60):
            for who in ("ann", "bob", "cat"):
                if rng.random() < 0.3:
                    continue
                g = None if rng.random() < 0.05 else rng.choice(scale)
                for _ in range(rng.choice([1, 1, 2])):  # a re-grade: only the latest counts
                    g = None if g is None else rng.choice(scale)
                    rows.append(["c", t, f"d{i}", who, g, g is None])
                grades.setdefault((t, f"d{i}"), {})[who] = g
    with store.transaction("seed judgments") as cur:  # one transaction: the test stays fast
        cur.executemany("INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade, unsure) "
                        "VALUES (?, ?, ?, ?, ?, ?)", rows)
    from_sql = agreement_from_counts(store.judging.agreement_counts("c"), scale=scale)
    in_python = agreement_report(grades, scale=scale)
    assert from_sql == in_python
    units = [{a: g for a, g in u.items() if g is not None} for u in grades.values()]
    assert from_sql.alpha_overall.value == pytest.approx(_oracle_alpha(units, scale), rel=1e-12, abs=1e-12)
    for t in ("1", "2", "10"):
        per_topic = [{a: g for a, g in u.items() if g is not None} for (tt, _d), u in grades.items() if tt == t]
        assert from_sql.alpha_by_topic[t].value == pytest.approx(_oracle_alpha(per_topic, scale), rel=1e-12,
                                                                 abs=1e-12)
    assert list(from_sql.alpha_by_topic) == ["1", "2", "10"]
    for pair in from_sql.pairs:
        both = [(u[pair.assessor_a], u[pair.assessor_b]) for u in units
                if pair.assessor_a in u and pair.assessor_b in u]
        a, b = zip(*both, strict=True)
        assert pair.kappa.value == pytest.approx(cohen_kappa_score(a, b, weights="linear", labels=scale), abs=1e-12)
        assert pair.kappa.n_items == len(both) and pair.n_agree == sum(x == y for x, y in both)


def test_counts_from_profiles_by_hand():
    """Each profile stands for n_items items: pair cells and coincidences are counted n_items times."""
    from workbench.judging.agreement import agreement_from_counts, counts_from_profiles

    profiles = [("1", [("bob", 2), ("ann", 1)], 3), ("1", [("ann", 1), ("bob", 1), ("cat", 1)], 2),
                ("2", [("ann", 0)], 5), ("1", [("ann", 1), ("bob", 2)], 1)]
    c = counts_from_profiles(profiles)
    assert {k: dict(v) for k, v in c.pairs.items()} == {
        ("ann", "bob"): {(1, 2): 3 + 1, (1, 1): 2}, ("ann", "cat"): {(1, 1): 2}, ("bob", "cat"): {(1, 1): 2}}
    assert dict(c.items_by_topic) == {"1": 3 + 2 + 1}  # topic 2's items have one grade each
    # m = 2, grades {1, 2}: n_1 * n_2 = 1 for (1, 2) and (2, 1), 4 items; m = 3, grades {1, 1, 1}: 3 * (3 - 1), 2 items
    assert {m: dict(x) for m, x in c.coincidences_by_topic["1"].items()} == {2: {(1, 2): 4, (2, 1): 4},
                                                                             3: {(1, 1): 6 * 2}}
    # the same figures as agreement_report over the items spelled out one by one
    items: dict[tuple[str, str], dict[str, int | None]] = {}
    for i, (t, grades, n) in enumerate(profiles):
        for j in range(n):
            items[(t, f"p{i}-{j}")] = dict(grades)
    assert agreement_from_counts(c, scale=[0, 1, 2, 3]) == agreement_report(items, scale=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="appears twice"):
        counts_from_profiles([("1", [("ann", 1), ("ann", 2)], 1)])


def test_store_counts_use_the_latest_row_people_only_and_the_pool_lineage(tmp_path):
    """The store's one-scan aggregation by hand: a re-grade replaces, a later unsure or
    undone row removes the grade, an unsure mark followed by a grade keeps the grade,
    a model assessor never counts, and a document outside the pool counts only without it."""
    from pooling.pool import build_pool
    from workbench.store import Store
    from workbench.types import Document, RunInfo, Topic

    store = Store(tmp_path / "wb.duckdb")
    store.collections.ingest_collection("c", [Document(f"d{i}", "", "text") for i in range(1, 5)], [Topic("1", "q"), Topic("2", "q")])
    version = store.collections.latest_collection_version("c")
    run = {"1": {"d1": 2.0, "d2": 1.0}, "2": {"d1": 2.0, "d3": 1.0}}
    store.runs.save_run(RunInfo("r", "imported", {}, 2, "c", version), run)
    store.pools.save_pool("p", build_pool({"r": run}, 2), collection="c", collection_version=version)
    rows = [("1", "d1", "ann", 2, False), ("1", "d1", "bob", 1, False), ("1", "d1", "cat", 0, False),
            ("1", "d1", "cat", 2, False),                                   # re-grade: cat's grade is 2
            ("1", "d2", "ann", 3, False), ("1", "d2", "bob", 3, False),
            ("1", "d2", "bob", None, True),                                 # bob now unsure: ann alone
            ("2", "d1", "ann", None, True), ("2", "d1", "ann", 1, False),   # unsure, then a grade
            ("2", "d1", "bob", 0, False), ("2", "d1", "m1", 3, False),      # m1 is a model assessor
            ("2", "d3", "ann", 2, False), ("2", "d3", "bob", 2, False), ("2", "d3", "cat", 2, False),
            ("2", "d3", "bob", None, False),                                # bob's save undone: no judgment
            ("1", "d4", "ann", 1, False), ("1", "d4", "bob", 2, False)]     # d4 is not pooled
    with store.transaction("seed") as cur:
        cur.execute("INSERT INTO model_assessors (user_name, model, model_kind, weights_hash, grade_mapping, "
                    "created_by) VALUES ('m1', 'minilm', 'bi-encoder', 'h', '0:<0.5,1', 'lead')")
        cur.executemany("INSERT INTO judgments (collection, topic_id, doc_id, assessor, grade, unsure) "
                        "VALUES ('c', ?, ?, ?, ?, ?)", [list(r) for r in rows])
    pooled = store.judging.agreement_counts("c", "p")
    assert {k: dict(v) for k, v in pooled.pairs.items()} == {
        ("ann", "bob"): {(2, 1): 1, (1, 0): 1}, ("ann", "cat"): {(2, 2): 2}, ("bob", "cat"): {(1, 2): 1}}
    assert dict(pooled.items_by_topic) == {"1": 1, "2": 2}
    # topic 1: one item graded 2, 1, 2 by three: n_2 (n_2 - 1) = 2, n_2 n_1 = 2 both ways
    assert {m: dict(x) for m, x in pooled.coincidences_by_topic["1"].items()} == {3: {(2, 2): 2, (2, 1): 2, (1, 2): 2}}
    assert {m: dict(x) for m, x in pooled.coincidences_by_topic["2"].items()} == {2: {(1, 0): 1, (0, 1): 1, (2, 2): 2}}
    everything = store.judging.agreement_counts("c")
    assert dict(everything.pairs[("ann", "bob")]) == {(2, 1): 1, (1, 0): 1, (1, 2): 1}
    assert dict(everything.items_by_topic) == {"1": 2, "2": 2}
    assert dict(everything.coincidences_by_topic["1"][2]) == {(1, 2): 1, (2, 1): 1}
    assert store.judging.agreement_counts("other") == type(pooled)({}, {}, {})
