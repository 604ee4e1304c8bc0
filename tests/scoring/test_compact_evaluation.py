"""A compact evaluation (``Evaluation.without_documents``) keeps every number and lets the document
lists go, so a report of many runs holds a few numbers per topic and run, not one row per document."""

from __future__ import annotations

import pytest

from tests.scoring.conftest import make_data
from workbench.scoring.evaluate import Evaluator, value_rows


def test_the_numbers_are_unchanged_and_the_lists_refuse_to_be_read():
    qrels, run = make_data(4)
    e = Evaluator(qrels, ["R@5", "R@50", "nDCG@10", "Judged@10"], missing="zero").evaluate(run)
    c = e.without_documents()
    assert value_rows(c) == value_rows(e)
    assert c.curve == e.curve and c.novelty == e.novelty and c.n_results == e.n_results
    assert e.documents_kept and not c.documents_kept and c.relevant == ()
    assert e.novel_documents.count(50) == sum(e.novelty[50].unjudged.values()) > 0
    with pytest.raises(ValueError, match="not kept"):
        c.novel_documents.at(5)
    with pytest.raises(ValueError, match="not kept"):
        c.misses(5)
    assert c.novel_documents.max_cutoff == e.novel_documents.max_cutoff == 50


def test_a_score_keeps_the_lists_only_when_asked(write):
    from workbench.services.evaluation.pipeline import score
    from workbench.services.evaluation.request import Output, ScoreRequest

    qrels, run = make_data(5)
    q = write("q.txt", "".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items()))
    files = [write(f"r{i}.trec", "".join(f"{t} Q0 {d} 1 {s!r} r{i}\n" for t, docs in run.items()
                                        for d, s in docs.items())) for i in range(3)]
    full = score(ScoreRequest(tuple(str(f) for f in files), str(q), missing="zero"))
    compact = score(ScoreRequest(tuple(str(f) for f in files), str(q), missing="zero",
                                 output=Output(keep_documents=False)))
    assert all(e.documents_kept for e in full.evaluations) and not any(e.documents_kept for e in compact.evaluations)
    assert [value_rows(e) for e in full.evaluations] == [value_rows(e) for e in compact.evaluations]
