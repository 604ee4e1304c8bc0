"""Duplicate groups in judging: a judged member's grade offered to the lead for the others, or the others skipped."""

from __future__ import annotations

from workbench.cli import main
from workbench.judging.groups import group_offers
from workbench.scoring.groups import DuplicateGroups
from workbench.types import Judgment


def test_offers_prefill_the_highest_judged_grade_and_flag_conflicts():
    g = DuplicateGroups.of([["d1", "d2", "d3"], ["d7", "d8"]])
    pooled = [("1", "d1"), ("1", "d2"), ("1", "d3"), ("2", "d2"), ("1", "d7"), ("1", "d8"), ("1", "d9")]
    judged = {("1", "d1"): [1], ("1", "d3"): [2], ("1", "d7"): [], ("2", "d9"): [3]}
    offers = group_offers(g, pooled, judged)
    assert [(o.topic_id, o.doc_id, o.grade, o.from_docs, o.conflict) for o in offers] == [
        ("1", "d2", 2, ("d1", "d3"), True)]   # d7 was judged unsure only: nothing to offer; topic 2 has no judged member


def test_only_a_lead_accepts_offers_and_accepting_twice_saves_nothing_new(capsys, toy_pool):
    db = toy_pool({"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "2": {"d1": 1.0, "d4": 0.5}})
    from workbench.store import Store

    store = Store(db, client="test")
    store.users.add_user("boss", "lead", token="boss-token")
    store.users.add_user("ann", "assessor", token="ann-token", lead="boss")
    store.units.add_duplicate_groups("toy", [["d1", "d2"]], source="mirrors.tsv")
    store.judgments.record_judgment(Judgment("1", "d1", "ann", 2), collection="toy", pool_version="p1")
    assert main(["--db", str(db), "groups", "offers", "p1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ["1\td2\t2\td1\t2\tno"]
    assert main(["--db", str(db), "groups", "offers", "p1", "--mode", "skip"]) == 0
    assert "1 group member(s) skipped in p1" in capsys.readouterr().err
    assert main(["--db", str(db), "groups", "offers", "p1", "--accept", "--lead", "ann", "--token", "ann-token"]) == 1
    assert "only a lead" in capsys.readouterr().err
    assert main(["--db", str(db), "groups", "offers", "p1", "--accept", "--lead", "boss", "--token", "boss-token"]) == 0
    assert "saved 1 judgment(s) as boss; 0 conflicting offer(s) left" in capsys.readouterr().out
    rows = [j for j in store.judgments.current_judgments("toy") if j.doc_id == "d2"]
    assert [(j.assessor, j.grade, j.note) for j in rows] == [("boss", 2, "duplicate group of d1: grade pre-filled")]
    assert main(["--db", str(db), "groups", "offers", "p1"]) == 0  # judged now: nothing left to offer
    assert capsys.readouterr().out.splitlines()[1:] == []
