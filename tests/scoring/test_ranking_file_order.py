"""The file-order rule shared by the TREC and Parquet run readers (``workbench.ranking``)."""

from workbench.ranking import file_orders, scores_from_order


def test_file_orders_sort_by_rank_column_keep_file_order_on_ties_and_first_of_a_duplicate():
    rows = {
        "q1": [("d3", 2, 0.1), ("d1", 1, 0.5), ("d2", 2, 0.9), ("d1", 3, 0.7)],
        "q2": [("d9", 1, 0.0)],
    }
    # q1: rank 1 d1; rank 2 tie d3 then d2 (file order); d1 again at rank 3 is dropped
    assert file_orders(rows) == {"q1": ["d1", "d3", "d2"], "q2": ["d9"]}


def test_scores_from_order_reproduce_the_order():
    assert scores_from_order(["d1", "d3", "d2"]) == {"d1": 3.0, "d3": 2.0, "d2": 1.0}
