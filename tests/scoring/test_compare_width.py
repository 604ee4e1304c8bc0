"""`compare` prints lost/gained documents readable in a 100-column terminal (a second, wrapped section)."""

from __future__ import annotations

from workbench.reports.comparison import render_comparison
from workbench.scoring.compare import compare
from workbench.scoring.evaluate import Evaluator
from workbench.scoring.measures import parse_measure


def test_long_lost_and_gained_lists_wrap_at_100_columns():
    # topic 1: 60 relevant documents; A ranks all of them, B none (and B finds 40 of topic 2's that A misses)
    qrels = {"1": {f"doc-{i:04d}": 1 for i in range(60)}, "2": {f"other-{i:04d}": 2 for i in range(40)}}
    a = {"1": {f"doc-{i:04d}": 100.0 - i for i in range(60)}, "2": {"x": 1.0}}
    b = {"1": {"x": 1.0}, "2": {f"other-{i:04d}": 50.0 - i for i in range(40)}}
    m = parse_measure("R@100")
    ev = Evaluator(qrels, [m], rel=1)
    c = compare(ev.evaluate(a, run_name="A"), ev.evaluate(b, run_name="B"), m, n_resamples=99, seed=0)
    text = render_comparison({}, c, "table")
    tail = text[text.index("per topic, largest losses first"):]
    assert max(len(line) for line in tail.splitlines()) <= 100
    table = tail.splitlines()
    assert table[1].split() == ["topic", "A", "B", "delta", "lost", "gained"]
    assert table[2].split() == ["1", "1.0000", "0.0000", "-1.0000", "60", "0"]
    section = text.split("lost and gained in the top 100: doc(grade: rank in A -> rank in B; - = not returned)")[1]
    lost = [line for line in section.splitlines() if line.startswith("1 ") or line.startswith("         ")]
    assert lost[0].startswith("1        lost    doc-0000(g1:1->-) doc-0001(g1:2->-)")
    assert sum(line.count("(g1:") for line in section.splitlines()) == 60  # every lost document, once
    assert sum(line.count("(g2:") for line in section.splitlines()) == 40
    assert "2        gained  other-0000(g2:-->1)" in section
