"""Duplicate groups in ``skip`` mode leave the assessors' queues once one member is graded (judging stays blind).

Pool p1 (seeded): topic 1 -> d1 d2 d3, topic 2 -> d4 d5. Duplicate groups of the pool's collection version:
{d1, d2} (a groups file) and {d4, d5}. Assessors ann and bob are each assigned every entry.

* mode ``offer`` (the default): nothing leaves a queue; ann grades d1 -> the lead is offered d2 (grade 2).
* mode ``skip``: with d1 graded by ann for topic 1, d2 leaves both queues (bob never saved anything on d2);
  d1 stays (it is judged, and bob must still judge it: double judging), d3 stays; topic 2 is untouched
  (no member graded). A member someone already saved stays in that assessor's own queue.
* an unsure judgment (no grade) does not skip the other members.
"""

from __future__ import annotations

import pytest
from test_judging import j, seed

from workbench.errors import PermissionDeniedError, ValidationError


@pytest.fixture
def toy(store):
    store.users.add_user("lead", "lead", token="lead-secret")
    store.users.add_user("ann", "assessor", token="ann-secret", lead="lead")
    store.users.add_user("bob", "assessor", token="bob-secret", lead="lead")
    seed(store)
    store.units.add_duplicate_groups("toy", {"g1": ["d1", "d2"], "g2": ["d4", "d5"]}, source="mirrors.tsv", version="cv1")
    plan = [("1", "d1"), ("1", "d2"), ("1", "d3"), ("2", "d4"), ("2", "d5")]
    store.judging.assign("p1", {"ann": plan, "bob": plan}, lead="lead")
    return store


def _queue(store, who):
    return [(e.topic_id, e.doc_id) for e in store.judging.assessor_queue(who)]


ALL = [("1", "d1"), ("1", "d2"), ("1", "d3"), ("2", "d4"), ("2", "d5")]


def test_offer_mode_keeps_every_entry_and_offers_the_lead(toy):
    from workbench.services.judging.groups import pool_group_offers

    toy.judgments.record_judgment(j("1", "d1", "ann", 2), collection="toy", pool_version="p1")
    assert toy.judging.group_mode("p1") == "offer"
    assert _queue(toy, "bob") == ALL and _queue(toy, "ann") == ALL
    assert [(o.topic_id, o.doc_id, o.grade) for o in pool_group_offers(toy.pools, toy.units, toy.judgments, "p1")] == [("1", "d2", 2)]


def test_skip_mode_takes_the_other_members_out_of_the_queues(toy):
    toy.judging.set_group_mode("p1", "skip", lead="lead")
    assert toy.judging.group_mode("p1") == "skip"
    assert _queue(toy, "bob") == ALL  # nothing graded yet
    toy.judgments.record_judgment(j("1", "d1", "ann", None, unsure=True), collection="toy", pool_version="p1")
    assert _queue(toy, "bob") == ALL  # unsure is no grade
    toy.judgments.record_judgment(j("1", "d1", "ann", 2), collection="toy", pool_version="p1")
    expected = [("1", "d1"), ("1", "d3"), ("2", "d4"), ("2", "d5")]
    assert _queue(toy, "bob") == expected and _queue(toy, "ann") == expected
    # the judging view's positions follow the same queue: bob's position 2 is d3, not d2
    view = toy.judging.judging_view("bob", 2)
    assert view is not None and (view.topic.topic_id, view.document.doc_id, view.n_queue) == ("1", "d3", 4)
    assert toy.judging.judging_view("bob", 5) is None


def test_what_an_assessor_saved_stays_in_their_queue_and_offer_mode_restores_the_rest(toy):
    toy.judgments.record_judgment(j("1", "d2", "bob", 1), collection="toy", pool_version="p1")
    toy.judging.set_group_mode("p1", "skip", lead="lead")
    toy.judgments.record_judgment(j("1", "d1", "ann", 2), collection="toy", pool_version="p1")
    # ann: d2 leaves (bob graded it: another member of d1's group is graded, and ann saved nothing on d2)
    assert ("1", "d2") not in _queue(toy, "ann")
    assert ("1", "d2") in _queue(toy, "bob")  # bob's own save stays
    toy.judging.set_group_mode("p1", "offer", lead="lead")
    assert _queue(toy, "ann") == ALL


def test_only_a_lead_sets_a_known_mode(toy):
    with pytest.raises(PermissionDeniedError):
        toy.judging.set_group_mode("p1", "skip", lead="ann")
    with pytest.raises(ValidationError, match="expected a duplicate-group mode offer or skip, found 'hide'"):
        toy.judging.set_group_mode("p1", "hide", lead="lead")
    assert toy.judging.group_mode("p1") == "offer"


def test_cli_groups_mode_and_offers_follow_the_stored_mode(toy, tmp_path, capsys):
    from workbench.cli import main

    toy.judgments.record_judgment(j("1", "d1", "ann", 2), collection="toy", pool_version="p1")
    toy.release_file()
    db = str(tmp_path / "wb.duckdb")
    assert main(["--db", db, "groups", "mode", "p1", "skip", "--lead", "lead", "--token", "lead-secret"]) == 0
    assert "pool p1: duplicate groups skipped in the assessors' queues (mode skip)" in capsys.readouterr().out
    assert main(["--db", db, "groups", "offers", "p1"]) == 0
    out, err = capsys.readouterr()
    assert "1\td2\t2\td1\t2\tno" in out and "1 group member(s) skipped in p1" in err
    assert main(["--db", db, "groups", "mode", "p1", "skip", "--lead", "ann", "--token", "ann-secret"]) == 1
    assert "only a lead may do this; 'ann' is an assessor" in capsys.readouterr().err
