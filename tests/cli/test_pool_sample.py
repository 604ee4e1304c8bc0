"""``workbench pool sample``: the design and size printed, reproducible from the seed, usage errors naming the option."""

from __future__ import annotations

import pytest

from tests.cli.helpers import copy_project, run
from workbench.store import Store

SAMPLE = ["pool", "sample", "s1", "--runs", "bm25,bm25b", "--runs", "imp", "--depth", "5",
          "--strata", "1-2:1.0,3-5:0.5", "--outside", "0.5", "--seed", "3"]


def test_the_same_command_draws_the_same_sample_and_says_what_it_drew(capsys, tiny_template, tmp_path):
    outs, entries = [], []
    for copy in ("a", "b"):
        _folder, db = copy_project(tiny_template, tmp_path / copy)
        code, out, err = run(capsys, db, *SAMPLE)
        assert code == 0, err
        outs.append(out)
        entries.append(Store(db).pools.pool_entries("s1"))
    assert outs[0] == outs[1] and entries[0] == entries[1]
    first = outs[0].splitlines()
    assert first[0].startswith("sample pool s1 stored: ") and "runs bm25, bm25b, imp; hash " in first[0]
    assert first[1] == "design: depth 5; strata 1-2:1.0,3-5:0.5; outside 0.5; seed 3"
    assert first[2].split() == ["stratum", "population", "sampled", "share"]
    n = len(entries[0])
    assert f": {n} documents to judge (" in first[0]
    # again in the same store: the identical sample is there, nothing written
    code, out, err = run(capsys, db, *SAMPLE)
    assert code == 0 and "unchanged (identical sample exists)" in out
    assert len(Store(db).pools.list_pools()) == 2                    # tiny-pool-v1 and s1


@pytest.mark.parametrize(("change", "option"), [
    ({"--strata": "1-2:1.0,3-5"}, "'--strata'"),
    ({"--strata": "1-2:1.0,3-4:0.5"}, "'--strata'"),            # does not reach --depth 5
    ({"--strata": "1-2:1.0,3-5:1.5"}, "'--strata'"),
    ({"--outside": "1.5"}, "'--outside'"),
    ({"--budget": "0"}, "'--budget'"),
    ({"--depth": "0"}, "'--depth'"),
    ({"--seed": None}, "'--seed'"),
    ({"--seed": "-1"}, "'--seed'"),                              # numpy refuses a negative seed: refuse it here
    ({"--runs": None}, "'--runs'"),
])
def test_a_bad_option_is_a_usage_error_naming_it(capsys, tiny_template, tmp_path, change, option):
    _folder, db = copy_project(tiny_template, tmp_path / "p")
    argv = list(SAMPLE)
    for key, value in change.items():
        while key in argv:
            i = argv.index(key)
            del argv[i:i + 2]
        if value is not None:
            argv += [key, value]
    code, out, err = run(capsys, db, *argv)
    assert code == 2 and option.strip("'") in err, err
    assert "Traceback" not in err and out == ""
    assert [p.pool_version for p in Store(db).pools.list_pools()] == ["tiny-pool-v1"]   # nothing written


def test_data_errors_name_the_problem_and_write_nothing(capsys, tiny_template, tmp_path):
    _folder, db = copy_project(tiny_template, tmp_path / "p")
    code, _out, err = run(capsys, db, *SAMPLE[:3], "--runs", "nope", *SAMPLE[7:])
    assert code == 1 and "unknown run 'nope'; known: bm25, bm25b, imp" in err
    code, _out, err = run(capsys, db, *SAMPLE, "--budget", "2")
    # 3 topics, each with a non-empty 1-2 stratum and outside stratum: at least 6 judgments
    assert code == 1 and "--budget 2: every non-empty stratum of every topic is sampled at least once" in err
    code, _out, err = run(capsys, db, "pool", "sample", "tiny-pool-v1", *SAMPLE[3:])
    assert code == 1 and "'tiny-pool-v1' already exists" in err
    assert "choose another name" in err and "--name" not in err  # pool sample takes its name as an argument
    assert [p.pool_version for p in Store(db).pools.list_pools()] == ["tiny-pool-v1"]


def test_pool_show_of_a_sample_rounds_for_the_table_and_shows_no_rank_outside_the_runs(capsys, tiny_template, tmp_path):
    # A trial found `pool show` printing 0.15217391304347827 and a best rank 0 for outside-stratum documents.
    import json
    import re

    _folder, db = copy_project(tiny_template, tmp_path / "p")
    assert run(capsys, db, *SAMPLE)[0] == 0
    code, out, err = run(capsys, db, "pool", "show", "s1", "--format", "jsonl")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    outside = [r for r in rows if r["stratum"] == "outside"]
    assert outside and all(r["best_rank"] is None and r["runs"] == "" for r in outside)
    assert all(isinstance(r["best_rank"], int) for r in rows if r["stratum"] != "outside")
    code, out, err = run(capsys, db, "pool", "show", "s1")
    table = out.splitlines()
    starts = {m.group(): m.start() for m in re.finditer(r"\S+", table[0])}  # aligned columns: the header's offsets
    ends = dict(zip(starts, [*list(starts.values())[1:], None], strict=True))
    for line, r in zip(table[1:], rows, strict=True):
        cells = {c: line[starts[c]:ends[c]].strip() for c in starts}
        assert cells["doc"] == r["doc"] and cells["inclusion"] == f"{r['inclusion']:.4g}"
        assert cells["priority"] == f"{r['priority']:.4g}"
        assert cells["best_rank"] == ("-" if r["best_rank"] is None else str(r["best_rank"]))
