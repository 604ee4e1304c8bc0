"""The assessor's queue follows the pool's judging strategy live, through the store:
re-ordering after each save (or batch), several assessors feeding one strategy,
overlap kept, per-topic stopping, and the lead's strategy command."""

from __future__ import annotations

import pytest

from workbench.errors import PermissionDeniedError, UnknownNameError
from workbench.services.judging import assessments as svc
from workbench.services.judging import order
from workbench.types import Document, RunInfo, Topic

# One topic, two runs with disjoint documents: A ranks a1..a4, B ranks b1..b4.
RUNS = {
    "A": {"1": {"a1": 4.0, "a2": 3.0, "a3": 2.0, "a4": 1.0}},
    "B": {"1": {"b1": 4.0, "b2": 3.0, "b3": 2.0, "b4": 1.0}},
}
DOCS = ["a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"]


@pytest.fixture
def store(tmp_path):
    from pooling.pool import build_pool
    from workbench.store import Store

    s = Store(tmp_path / "wb.duckdb", client="test")
    s.collections.ingest_collection("toy", [Document(d, "", f"text of {d}") for d in DOCS], [Topic("1", "topic one")])
    v = s.collections.latest_collection_version("toy")
    for name, run in RUNS.items():
        s.runs.save_run(RunInfo(name, "imported", {}, 10, "toy", v), run)
    s.pools.save_pool("p1", build_pool(RUNS, 10), collection="toy", collection_version=v)
    s.users.add_user("boss", "lead", token="boss-token")
    for a in ("ann", "bob"):
        s.users.add_user(a, "assessor", token=f"{a}-token-1", lead="boss")
    return s


def lead(store):
    return svc.Session("boss", "lead")


def person(store, name):
    return svc.Session(name, "assessor")


def queue(store, name):
    return [e.doc_id for e in store.judging.assessor_queue(name)]


def judge_next(store, name, grade):
    """Judge the assessor's first unjudged document (what the Judge page shows next)."""
    state = svc.queue_state(store.judging, person(store, name))
    view = svc.load_view(store.judging, person(store, name), state.resume)
    svc.save_judgment(store, person(store, name), view, grade=grade)
    return view.document.doc_id


def test_mtf_queue_follows_each_save(store):
    svc.assign_pool(store, lead(store), "p1", ["ann"], strategy="mtf")
    assert queue(store, "ann") == ["a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"]
    assert judge_next(store, "ann", 2) == "a1"      # relevant: stay on A
    assert queue(store, "ann")[:2] == ["a1", "a2"]
    assert judge_next(store, "ann", 0) == "a2"      # non-relevant: MTF moves to B
    assert queue(store, "ann")[:3] == ["a1", "a2", "b1"]
    view = svc.load_view(store.judging, person(store, "ann"), 3)
    assert view.document.doc_id == "b1" and not view.judged
    # Blind: the view carries the topic, the document and the assessor's own grade only, and a model
    # assessor's grade only where a lead turned pre-fill on (issue 26; off here).
    assert set(type(view).__dataclass_fields__) == {
        "position", "n_queue", "collection", "pool_version", "topic", "document", "own_grade", "own_unsure",
        "own_note", "prefill"}
    assert view.prefill is None


def test_two_assessors_feed_one_strategy_and_overlap_still_applies(store):
    svc.assign_pool(store, lead(store), "p1", ["ann", "bob"], overlap=2, strategy="mtf")
    judge_next(store, "ann", 0)                      # ann: a1 non-relevant
    # bob's next document reflects ann's judgment: MTF left A for B ...
    assert queue(store, "bob")[:2] == ["a1", "b1"]   # ... and a1 stays in bob's queue (double judging)
    assert judge_next(store, "bob", 1) == "a1"
    assert judge_next(store, "bob", 3) == "b1"      # b1 relevant: B keeps yielding
    assert queue(store, "ann")[:3] == ["a1", "b1", "b2"]
    grades = store.adjudications.item_grades("toy", "p1")
    assert grades[("1", "a1")] == {"ann": 0, "bob": 1}


def test_refresh_every_batches_the_reordering(store):
    svc.assign_pool(store, lead(store), "p1", ["ann"], strategy="mtf", refresh_every=2)
    judge_next(store, "ann", 0)                      # a1 non-relevant: one save, no re-ordering yet
    assert queue(store, "ann")[:2] == ["a1", "a2"]
    judge_next(store, "ann", 0)                      # a2: the second save re-orders (A failed twice)
    assert queue(store, "ann")[:3] == ["a1", "a2", "b1"]


def test_budget_per_topic_stops_the_topic_and_a_lead_can_lift_it(store):
    svc.assign_pool(store, lead(store), "p1", ["ann", "bob"], overlap=2, strategy="mtf", budget=2)
    judge_next(store, "ann", 1)
    judge_next(store, "ann", 1)
    assert queue(store, "ann") == ["a1", "a2"]       # budget reached: the rest left the queue
    assert queue(store, "bob") == ["a1", "a2"]       # bob keeps what ann judged (overlap)
    assert store.judging.topic_orders("p1")["1"].stopped == "budget 2"
    assert svc.load_view(store.judging, person(store, "ann"), 3) is None
    order.set_strategy(store, lead(store), "p1", "mtf", budget=3)
    assert len(queue(store, "ann")) == 8 and store.judging.topic_orders("p1")["1"].stopped == ""


def test_stopping_rule_consecutive_non_relevant(store):
    svc.assign_pool(store, lead(store), "p1", ["ann"], strategy="bandit", stopping="stop_after_nonrelevant(n=2)")
    judge_next(store, "ann", 0)
    assert store.judging.topic_orders("p1")["1"].stopped == ""
    judge_next(store, "ann", 0)
    assert store.judging.topic_orders("p1")["1"].stopped == "stop_after_nonrelevant(n=2)"
    assert len(queue(store, "ann")) == 2


def test_cal_gives_an_estimate_and_rank_keeps_the_assigned_order(store):
    svc.assign_pool(store, lead(store), "p1", ["ann"], band_size=2, seed=3)
    before = queue(store, "ann")
    order.set_strategy(store, lead(store), "p1", "rank")
    assert queue(store, "ann") == before             # rank: the order assign gave
    order.set_strategy(store, lead(store), "p1", "cal(negatives=0)")
    judge_next(store, "ann", 2)
    progress = order.strategy_progress(store.judging, store.pools, lead(store), "p1")
    row = progress.rows[0]
    assert (row.topic_id, row.n_judged, row.n_relevant) == ("1", 1, 1)
    assert row.estimate is None or 0.0 <= row.estimate <= 7.0
    with pytest.raises(PermissionDeniedError):
        order.strategy_progress(store.judging, store.pools, person(store, "ann"), "p1")


def test_only_a_lead_sets_a_strategy_and_names_are_checked(store):
    with pytest.raises(PermissionDeniedError):
        order.set_strategy(store, person(store, "ann"), "p1", "mtf")
    with pytest.raises(UnknownNameError, match="judging strategy 'greedy'"):
        order.set_strategy(store, lead(store), "p1", "greedy")
    with pytest.raises(UnknownNameError, match="stopping rule 'soon'"):
        order.set_strategy(store, lead(store), "p1", "mtf", stopping="soon")
    assert store.judging.judging_setting("p1") is None


def test_strategy_command_shows_and_sets(store, capsys):
    from workbench.cli import main

    db = str(store.path)
    svc.assign_pool(store, lead(store), "p1", ["ann"])
    store.release_file()
    assert main(["--db", db, "strategy", "p1"]) == 0
    assert capsys.readouterr().out.startswith("strategy\trank\t")
    assert main(["--db", db, "strategy", "p1", "bandit(method='thompson', seed=2)", "--lead", "boss",
                 "--token", "boss-token", "--stop", "knee(min_judged=4)", "--topic-budget", "1=5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("strategy\tbandit(method='thompson', seed=2)\trefresh_every=1\t"
                             "stopping=knee(min_judged=4)")
    assert out[1] == "topic\tjudged\trelevant\testimated_left\tstopped" and out[2] == "1\t0\t0\t\t"
    assert main(["--db", db, "strategy", "p1", "cal", "--lead", "boss", "--token", "boss-token",
                 "--topic-budget", "x"]) == 2  # usage
    assert "expected --topic-budget TOPIC=N" in capsys.readouterr().err
    assert main(["--db", db, "strategy", "p1", "cal"]) == 2
    assert "needs --lead" in capsys.readouterr().err
    assert main(["--db", db, "assign", "p1", "--assessors", "bob", "--budget", "3", "--lead", "boss",
                 "--token", "boss-token"]) == 2
    assert "--budget and --refresh-every need --strategy" in capsys.readouterr().err
    assert main(["--db", db, "assign", "p1", "--assessors", "bob", "--strategy", "mtf", "--budget", "3",
                 "--lead", "boss", "--token", "boss-token"]) == 0
    capsys.readouterr()
    setting = store.judging.judging_setting("p1")
    assert (setting.strategy, setting.budget, setting.stopping) == ("mtf", 3, "")
    assert [e.doc_id for e in store.judging.assessor_queue("bob")][:5] == ["a1", "a2", "a3", "a4", "b1"]
