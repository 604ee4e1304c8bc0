"""Duplicate groups scored once, and no-answer topics evaluated apart (values worked out by hand)."""

from __future__ import annotations

from workbench.scoring.abstention import abstained, evaluate_no_answer, is_marked, no_answer_topics
from workbench.scoring.evaluate import evaluate
from workbench.scoring.groups import (
    DedupeFacts,
    DuplicateGroups,
    dedupe_qrels,
    dedupe_ranking,
    identical_groups,
    merge_groups,
    normalise_text,
)
from workbench.scoring.measures import parse_measure
from workbench.scoring.units import ranked_run_of

GROUPS = DuplicateGroups.of([["m1", "m2"]], "mirrors.tsv")  # m1 and m2 are mirrors; canonical m1
QRELS = {"1": {"m1": 1, "m2": 1, "x": 1, "n": 0}}          # 3 relevant entries, 2 relevant groups


def _recall(lists, qrels, k):
    e = evaluate(qrels, ranked_run_of(lists), [f"R@{k}"])  # type: ignore[arg-type]
    t = e.per_topic[parse_measure(f"R@{k}")]["1"]
    return t.numerator, t.denominator


def test_the_denominator_counts_groups():
    q, merged, topics = dedupe_qrels(QRELS, GROUPS)
    assert q == {"1": {"m1": 1, "x": 1, "n": 0}} and (merged, topics) == (1, 1)
    assert _recall({"1": ["x"]}, q, 10) == (1, 2)          # without groups it would be 1 of 3
    assert _recall({"1": ["x"]}, QRELS, 10) == (1, 3)


def test_a_group_is_found_by_its_second_member():
    q, _, _ = dedupe_qrels(QRELS, GROUPS)
    lists, dropped = dedupe_ranking({"1": ["n", "m2"]}, GROUPS)
    assert lists == {"1": ["n", "m1"]} and dropped == 0
    assert _recall(lists, q, 2) == (1, 2)


def test_two_members_in_one_list_count_once_and_the_second_takes_no_rank():
    q, _, _ = dedupe_qrels(QRELS, GROUPS)
    lists, dropped = dedupe_ranking({"1": ["m1", "m2", "x"]}, GROUPS)
    assert lists == {"1": ["m1", "x"]} and dropped == 1
    assert _recall(lists, q, 2) == (2, 2)                  # x moves up to rank 2: the mirror was not a second hit
    assert _recall({"1": ["m1", "m2", "x"]}, QRELS, 2) == (2, 3)  # without groups: two hits for one piece of evidence


def test_group_grade_is_the_highest_member_grade():
    q, merged, _ = dedupe_qrels({"1": {"m1": 0, "m2": 2}}, GROUPS)
    assert q == {"1": {"m1": 2}} and merged == 0


def test_identical_normalised_texts_are_grouped_but_empty_texts_are_not():
    texts = {"3": ("On Flow", "Laminar,  flow."), "10": ("on flow", "laminar flow"), "4": ("", ""), "5": ("", " "),
             "6": ("", "other")}
    assert identical_groups(texts) == [["3", "10"]]
    assert normalise_text("Ｆｌｏｗ", "A-B") == "flow a b"  # NFKC folds full-width letters


def test_groups_from_two_sources_merge_transitively():
    g = merge_groups([(["a", "b"], "identical text"), (["b", "c"], "mirrors.tsv"), (["d"], "x")])
    assert dict(g.members) == {"a": ("a", "b", "c")} and g.canonical_of("c") == "a" and g.canonical_of("z") == "z"
    assert DedupeFacts(True, 1, 3, 2, 1, 4).describe() == (
        "duplicate groups: applied (1 group(s) over 3 documents); 2 relevant item(s) merged in 1 topic(s); "
        "4 run line(s) were a second member of a group")
    assert DedupeFacts(False, 5).describe().startswith("duplicate groups: not applied (5 group(s) known")


def test_no_answer_topics_are_marked_never_inferred():
    meta = {"1": {"no_answer": True}, "2": {"no_answer": "yes"}, "3": {"no_answer": False}, "4": {}}
    assert no_answer_topics(meta) == ("1", "2")
    assert no_answer_topics({}, ["9", "10"]) == ("9", "10")
    assert not is_marked(0) and is_marked(1) and not is_marked(None)


def test_abstention_is_an_empty_list_or_nothing_above_the_threshold():
    assert abstained(None) and abstained([]) and not abstained([0.0])
    assert abstained([0.5, 0.2], threshold=0.5) and not abstained([0.51], threshold=0.5)


def test_no_answer_accuracy_and_false_answer_rate_by_hand():
    # 4 no-answer topics: n1 empty (abstains), n2 best 0.3 <= 0.4 (abstains), n3 best 0.9 (answers),
    # n4 absent from the run (abstains) -> accuracy 3/4, false-answer rate 1/4.
    # 3 answerable topics: a1 answered, a2 best 0.1 (abstains), a3 empty (abstains) -> 2 of 3 abstained.
    scores = {"n1": [], "n2": [0.3, 0.1], "n3": [0.9], "a1": [2.0], "a2": [0.1], "a3": []}
    r = evaluate_no_answer(scores, ["n1", "n2", "n3", "n4"], ["a1", "a2", "a3"], threshold=0.4, run_name="r")
    assert r.abstained == ("n1", "n2", "n4") and r.answered == ("n3",)
    assert r.accuracy == 3 / 4 and r.false_answer_rate == 1 / 4
    assert r.answerable_abstained == ("a2", "a3") and len(r.answerable) == 3
    r0 = evaluate_no_answer(scores, ["n1", "n2", "n3", "n4"], ["a1", "a2", "a3"])  # no threshold: any result answers
    assert r0.abstained == ("n1", "n4") and r0.accuracy == 2 / 4 and r0.answerable_abstained == ("a3",)
    assert evaluate_no_answer(scores, [], ["a1"]).accuracy is None
