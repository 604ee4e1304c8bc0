"""``compare`` and ``gate`` on estimated measures (``Rhat@k``, ``Rhat_micro@k``, ``Phat@k``) of a judged sample.

The toy project of ``test_score_sample`` (10 documents, topics 1 and 2, runs A and B at depth 4), sampled with
strata 1-2:1.0,3-4:0.5, outside 0.5, seed 1 and judged in full. What the draw holds and the grades:

* topic 1: d1 (1-2, relevant), d2 (1-2), d3 (3-4), d7 (3-4, relevant), d6 (outside, relevant), d9 (outside);
  N: 1-2 = 2, 3-4 = 4, outside = 4. R̂ = d1 (1) + d7 (2) + d6 (2) = 5. A's top 4 holds d1: R̂@4 = 1/5; B's holds
  d1 and d7: 3/5.
* topic 2: d2, d5 (1-2; d5 relevant), d6 (3-4, relevant; N = 2, one judged), d3, d7, d10 (outside, N = 6).
  R̂ = d5 (1) + d6 (2) = 3. A's top 4 holds d5, d6: R̂@4 = 1; B's d5: 1/3.

The change B - A and its variance are worked out below from the jointly linearised difference
(``scoring.estimate_compare``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.cli.helpers import run
from tests.cli.test_score_sample import LEAD, judge_and_publish, project
from workbench.cli import main
from workbench.scoring.estimate import Z95

# topic 1, D = 3/5 - 1/5 = 2/5; z = (b - a) - D y per judged document; N^2 (1 - n/N) s_z^2 / n per stratum:
#   1-2 judged in full: no term.  3-4 (2 of 4): d7 found by B only -> 1 - 2/5, d3 0 -> s^2 = 0.18 -> 16/2 * 0.18 / 2
#   outside (2 of 4): d6 found by neither -> -2/5, d9 0 -> s^2 = 0.08 -> 16/2 * 0.08 / 2
VAR_T1 = (16 * 0.5 * 0.18 / 2 + 16 * 0.5 * 0.08 / 2) / 5 ** 2
# topic 2, D = 1/3 - 1 = -2/3: 1-2 in full; 3-4 one judged document (no term); outside: three non-relevant (z = 0)
VAR_T2 = 0.0
CHANGE = ((3 / 5 - 1 / 5) + (1 / 3 - 1)) / 2
SE = math.sqrt(VAR_T1 + VAR_T2) / 2


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    """The judged sample published as ``s-q``, and a depth-2 pool of A and B published as ``p2-q`` (not a sample)."""
    root = tmp_path_factory.mktemp("sample-gate")
    store = project(root / "p", "1-2:1.0,3-4:0.5", "0.5")
    judge_and_publish(store, root)
    (root / "p2.qrels").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d2 0\n2 0 d5 1\n")
    for step in (["pool", "build", "A", "B", "--depth", "2", "--name", "p2"],
                 ["judgments", "import", root / "p2.qrels", "--pool", "p2", "--assessor", "ann", *LEAD],
                 ["publish", "p2", "--name", "p2-q", "--no-export", *LEAD]):
        assert main(["--db", str(store), "-q", *map(str, step)]) == 0, step
    return store


def _compare(capsys, db: Path, measure: str, *extra: str) -> dict:
    capsys.readouterr()
    code, out, err = run(capsys, db, "compare", "A", "B", "--qrels", "s-q", "-m", measure, "--format", "json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_compare_on_rhat_gives_the_change_with_the_interval_of_the_difference(capsys, db):
    doc = _compare(capsys, db, "Rhat@4")
    assert (doc["measure"], doc["display"], doc["estimated"], doc["aggregate"]) == ("Rhat@4", "R̂@4", True, "macro")
    assert doc["estimate_a"] == pytest.approx((1 / 5 + 1) / 2) and doc["estimate_b"] == pytest.approx((3 / 5 + 1 / 3) / 2)
    assert doc["change"] == pytest.approx(CHANGE) and doc["se"] == pytest.approx(SE)
    assert (doc["low"], doc["high"]) == pytest.approx((CHANGE - Z95 * SE, CHANGE + Z95 * SE))
    assert (doc["topics"], doc["n_judged"], doc["wins"], doc["losses"], doc["ties"]) == (2, 12, 1, 1, 0)
    # largest loss first: topic 2 lost d6 (A has it at rank 3, B does not); topic 1 gained d7
    assert [(t["topic_id"], t["lost"], t["gained"]) for t in doc["per_topic"]] == [("2", ["d6"], []),
                                                                                    ("1", [], ["d7"])]
    assert doc["per_topic"][1]["se"] == pytest.approx(math.sqrt(VAR_T1)) and doc["per_topic"][0]["se"] == 0.0
    # the pooled R@4 (judged documents only) is beside it: A t1 1/3 (d1 of d1, d7, d6), t2 1; B t1 2/3, t2 1/2
    assert (doc["pooled_measure"], doc["pooled_a"], doc["pooled_b"]) == ("R@4", pytest.approx(2 / 3),
                                                                        pytest.approx(7 / 12))
    assert doc["header"]["sample"]["pool_version"] == "s"


def test_the_joint_interval_is_narrower_than_adding_the_two_runs_variances(capsys, db):
    """The runs share the sample: their estimates covary, and the difference's variance holds the covariance."""
    capsys.readouterr()
    code, out, err = run(capsys, db, "score", "A", "B", "--qrels", "s-q", "-m", "R@4", "--format", "json",
                         "--no-record")
    assert code == 0, err
    se = {r["run"]: r["estimates"]["measures"]["Rhat@4"]["macro"]["se"] for r in json.loads(out)["runs"]}
    # A alone: its Var(R̂@4) on topic 1 is 0.16 / 25 (test_score_sample); B alone: 1.04 / 25 (z = y_B - 3/5 y)
    assert se["A"] ** 2 == pytest.approx(0.16 / 25 / 4) and se["B"] ** 2 == pytest.approx(1.04 / 25 / 4)
    # their covariance on topic 1, N^2 (1 - n/N) cov(z_A, z_B) / n per stratum with z = found - R̂@4 y:
    # 3-4: z_A = (-1/5, 0), z_B = (2/5, 0) -> 8 * (-0.04) / 2; outside: (-1/5, 0), (-3/5, 0) -> 8 * 0.06 / 2
    cov = (8 * -0.04 / 2 + 8 * 0.06 / 2) / 25 / 4
    change = _compare(capsys, db, "Rhat@4")
    assert change["se"] ** 2 == pytest.approx(se["A"] ** 2 + se["B"] ** 2 - 2 * cov)
    assert change["se"] == pytest.approx(SE) and SE < math.sqrt(se["A"] ** 2 + se["B"] ** 2)


def test_compare_on_the_micro_estimate_and_on_phat(capsys, db):
    micro = _compare(capsys, db, "Rhat_micro@4")
    # sum R̂ = 8; A finds 1 + 3, B 3 + 1: D = 0; z = b - a: topic 1's 3-4 holds d7 (B only): s^2 = 1/2 -> 16/2 / 2 / 2
    assert micro["display"] == "R̂@4 (micro)" and micro["aggregate"] == "micro"
    assert (micro["estimate_a"], micro["estimate_b"], micro["change"]) == pytest.approx((4 / 8, 4 / 8, 0.0))
    assert micro["se"] == pytest.approx(math.sqrt(16 * 0.5 * 0.5 / 2 / 64))
    phat = _compare(capsys, db, "Phat@4")
    # P̂@4 = R̂_4 / 4: A 1/4, 3/4; B 3/4, 1/4; the same z over 4^2, averaged over 2 topics
    assert (phat["estimate_a"], phat["estimate_b"], phat["change"]) == pytest.approx((0.5, 0.5, 0.0))
    assert phat["se"] == pytest.approx(math.sqrt(16 * 0.5 * 0.5 / 2 / 16) / 2)
    assert phat["pooled_measure"] == "P@4"


def test_compare_table_names_the_estimate_and_its_interval(capsys, db):
    capsys.readouterr()
    code, out, err = run(capsys, db, "compare", "A", "B", "--qrels", "s-q", "-m", "Rhat@4")
    assert code == 0, err
    assert "R̂@4 [Rhat@4]: A = A, B = B, estimated over 2 topics from 12 judged sampled documents" in out
    assert (f"estimate  A 0.6000, B 0.4667, change {CHANGE:+.4f} (B - A); 95% interval of the change "
            f"[{CHANGE - Z95 * SE:.4f}, {CHANGE + Z95 * SE:.4f}] (se {SE:.4f})") in out
    assert "linearised jointly" in out and "sample     pool s of runs A, B" in out
    assert "pooled    R@4 on the judged documents alone: A " in out
    code, out, err = run(capsys, db, "compare", "A", "B", "--qrels", "s-q", "-m", "Rhat_micro@4")
    assert code == 0 and "pooled    R@4 (micro) on the judged documents alone: A " in out, err


@pytest.mark.parametrize("command", ["compare", "score"])
def test_an_estimated_measure_against_a_version_that_is_not_a_sample_is_an_error(capsys, db, command):
    runs = ["A", "B"] if command == "compare" else ["A"]
    for qrels, what in (("p2-q", "qrels version 'p2-q' was not published from a sample pool"),
                        (str(db.parent.parent / "s.qrels"), "is a file, not a stored qrels version")):
        capsys.readouterr()
        code, out, err = run(capsys, db, command, *runs, "--qrels", qrels, "-m", "Rhat@4")
        assert code == 2 and out == "" and "Traceback" not in err, err
        assert "measure Rhat@4 (R̂@4) is estimated from a judged sample" in err and what in err, err
        assert "use the pooled measure R@4" in err


def test_compare_by_slices_of_an_estimated_measure_is_a_usage_error(capsys, db):
    capsys.readouterr()
    code, out, err = run(capsys, db, "compare", "A", "B", "--qrels", "s-q", "-m", "Rhat@4", "--by", "query_length")
    assert code == 2 and out == "" and "--by: Rhat@4 is estimated from a judged sample" in err


POLICY = "[gate]\nk = 4\nmeasures = [{measures}]\nmin_topics = 2\n[macro]\nmin_ci_low = {bound}\n"


def _gate(capsys, db: Path, tmp_path: Path, bound: float, measures: str = '"Rhat@4"', qrels: str = "s-q",
          extra: str = "") -> tuple[int, dict | None, str]:
    policy = tmp_path / "gate.toml"
    policy.write_text(POLICY.format(measures=measures, bound=bound) + extra)
    capsys.readouterr()
    code, out, err = run(capsys, db, "gate", "A", "B", "--qrels", qrels, "--policy", policy, "--format", "json")
    return code, (json.loads(out) if out else None), err


def _macro_rule(doc: dict, measure: str) -> dict:
    return next(r for r in doc["candidates"][0]["rules"] if r["rule"] == "macro_change" and r["subject"] == measure)


def test_a_gate_rule_on_an_estimate_passes_and_fails_by_the_lower_end_of_its_interval(capsys, db, tmp_path):
    low = CHANGE - Z95 * SE                      # -0.3332: one gated measure, so the corrected level is 95% too
    code, doc, err = _gate(capsys, db, tmp_path, round(low - 0.005, 4))
    assert code == 0 and doc["verdict"] == "pass", err
    r = _macro_rule(doc, "Rhat@4")
    assert r["verdict"] == "pass" and r["measured"] == pytest.approx(low) and r["raw"] == pytest.approx(low)
    assert "linearised jointly" in r["detail"] and "the topics held fixed" in r["detail"]
    test = doc["candidates"][0]["tests"][0]
    assert test["measure"] == "Rhat@4" and test["bootstrap"] is None and test["estimated"]["se"] == pytest.approx(SE)
    assert (test["mean_baseline"], test["mean_candidate"]) == pytest.approx((0.6, 7 / 15))
    code, doc, err = _gate(capsys, db, tmp_path, round(low + 0.005, 4))
    assert code == 1 and doc["verdict"] == "fail", err
    assert _macro_rule(doc, "Rhat@4")["verdict"] == "fail"


def test_with_two_gated_measures_the_estimates_corrected_interval_decides(capsys, db, tmp_path):
    # Holm over 2 measures: intervals at the Bonferroni level 97.5%, z = 2.2414
    raw_low, cor_low = CHANGE - Z95 * SE, CHANGE - 2.241402727604947 * SE     # -0.3332, -0.3619
    code, doc, err = _gate(capsys, db, tmp_path, -0.35, '"Rhat@4", "Rhat_micro@4"',
                           extra='[macro.bounds]\n"Rhat_micro@4" = -1.0\n[permutation]\nalpha = 0.05\n')
    assert code == 1, err
    r = _macro_rule(doc, "Rhat@4")
    assert r["verdict"] == "fail" and r["raw"] == pytest.approx(raw_low) and r["corrected"] == pytest.approx(cor_low)
    assert r["measured"] == pytest.approx(cor_low)
    perm = next(x for x in doc["candidates"][0]["rules"] if x["rule"] == "permutation" and x["subject"] == "Rhat@4")
    assert perm["verdict"] == "skipped" and "its interval decides" in perm["detail"]
    text = (tmp_path / "gate.toml").read_text().replace("min_topics = 2\n", "min_topics = 2\ndecide = \"raw\"\n")
    (tmp_path / "gate.toml").write_text(text)
    capsys.readouterr()
    code, out, err = run(capsys, db, "gate", "A", "B", "--qrels", "s-q", "--policy", tmp_path / "gate.toml",
                         "--format", "json")
    assert code == 0, err                         # decide = "raw": the 95% lower end -0.3332 reaches -0.35
    assert _macro_rule(json.loads(out), "Rhat@4")["measured"] == pytest.approx(raw_low)


def test_a_gate_on_an_estimate_against_a_version_that_is_not_a_sample_is_a_usage_error(capsys, db, tmp_path):
    code, doc, err = _gate(capsys, db, tmp_path, -0.1, qrels="p2-q")
    assert code == 3 and doc is None
    assert ("measure Rhat@4 (R̂@4) is estimated from a judged sample, and qrels version 'p2-q' was not published "
            "from a sample pool") in err


def test_the_gates_table_and_markdown_show_the_estimates_interval(capsys, db, tmp_path):
    policy = tmp_path / "gate.toml"
    policy.write_text(POLICY.format(measures='"Rhat@4"', bound=-0.5))
    for fmt in ("table", "markdown"):
        capsys.readouterr()
        code, out, err = run(capsys, db, "gate", "A", "B", "--qrels", "s-q", "--policy", policy, "--format", fmt)
        assert code == 0, err
        assert f"95% [{CHANGE - Z95 * SE:.4f}, {CHANGE + Z95 * SE:.4f}] (design)" in out, out


def test_compare_refuses_a_second_measure_instead_of_keeping_the_last(capsys, db):
    # A trial found `compare -m Rhat_micro@20 -m R@20` printed only R@20 (click keeps the last value of an option).
    capsys.readouterr()
    code, out, err = run(capsys, db, "compare", "A", "B", "--qrels", "s-q", "-m", "Rhat@4", "-m", "R@4")
    assert code == 2 and not out
    assert "compare takes one measure, found 2 (Rhat@4, R@4)" in " ".join(err.split())


def test_compare_on_an_estimate_says_which_resampling_options_it_ignored(capsys, db):
    capsys.readouterr()
    code, out, err = run(capsys, db, "compare", "A", "B", "--qrels", "s-q", "-m", "Rhat@4", "--resamples", "100",
                         "--seed", "3")
    assert code == 0, err
    assert "--resamples and --seed ignored: an estimated measure's interval comes from the sample's design" in err
    code, out, err = run(capsys, db, "compare", "A", "B", "--qrels", "s-q", "-m", "Rhat@4")
    assert code == 0 and "ignored" not in err


def test_the_gates_rule_details_round_for_display_and_json_keeps_the_values(capsys, db, tmp_path):
    code, doc, err = _gate(capsys, db, tmp_path, -0.9)
    r = _macro_rule(doc, "Rhat@4")
    assert f"estimated R̂@4 {0.6:.4f} -> {7 / 15:.4f} (change {7 / 15 - 0.6:+.4f})" in r["detail"], r["detail"]
    assert f"[{r['raw']:.4f}, " in r["detail"] and f"se {SE:.4g}:" in r["detail"]
    assert r["raw"] == pytest.approx(CHANGE - Z95 * SE)  # the value itself, unrounded, in its own field
