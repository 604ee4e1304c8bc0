"""A bad option value is a usage error: exit 2, one message naming the option and what it accepts,
nothing written (the exit-code convention of ``workbench.cli``; robustness trial, issue 9).

Before the shared validators (``workbench.cli.options``) these exited 1 (or were silently
accepted) and some of them ran part of the command first.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.cli.test_failing_writes_nothing import snapshot
from tests.cli.tiny import LEAD_TOKEN
from workbench.cli import main

LEAD = ["--lead", "lead", "--token", LEAD_TOKEN]
SCORE = ["score", "bm25", "--qrels", "tiny-reference"]

# case: (argv, the option the message names, a word of what it accepts)
CASES: dict[str, tuple[list[str], str, str]] = {
    "score --k -5": ([*SCORE, "--k", "-5"], "'--k'", "k >= 1"),
    "score --k 5,x": ([*SCORE, "--k", "5,x"], "'--k'", "5,10,100"),
    "score -m nDCG@x": ([*SCORE, "-m", "nDCG@x"], "'--measure'", "NAME@k"),
    "score -m bogus": ([*SCORE, "-m", "bogus"], "'--measure'", "nDCG"),
    "score --min-id-coverage nan": ([*SCORE, "--min-id-coverage", "nan"], "'--min-id-coverage'", "[0, 1]"),
    "score --min-id-coverage 2": ([*SCORE, "--min-id-coverage", "2"], "'--min-id-coverage'", "[0, 1]"),
    "score --rel -1": ([*SCORE, "--rel", "-1"], "'--rel'", ">= 0"),
    "score --filters bogus": ([*SCORE, "--filters", "bogus"], "'--filters'", "auto, on or off"),
    "score --unit bogus": ([*SCORE, "--unit", "bogus"], "'--unit'", "chunk, doc"),
    "score --dedupe bogus": ([*SCORE, "--dedupe", "bogus"], "'--dedupe'", "none or groups"),
    "score --span-overlap nan": ([*SCORE, "--span-overlap", "nan"], "'--span-overlap'", "[0, 1]"),
    "score --collection ''": ([*SCORE, "--collection", ""], "'--collection'", "empty"),
    "score --by nosuch": ([*SCORE, "--by", "nosuch"], "slice key", "query_length"),
    "compare --confidence 1": (["compare", "bm25", "bm25b", "--qrels", "tiny-reference", "--confidence", "1"],
                               "'--confidence'", "(0, 1)"),
    "compare --resamples 0": (["compare", "bm25", "bm25b", "--qrels", "tiny-reference", "--resamples", "0"],
                              "'--resamples'", ">= 1"),
    "misses --cause bogus": (["misses", "bm25", "--qrels", "tiny-reference", "--cause", "bogus"], "'--cause'",
                             "vocabulary mismatch"),
    "judgments import --format xml": (["judgments", "import", "judged.txt", "--pool", "tiny-pool-v1", "--assessor",
                                       "ann", *LEAD, "--format", "xml"], "'--format'", "trec"),
    "judgments export --format xml": (["judgments", "export", "tiny-pool-v1", "--format", "xml"], "'--format'",
                                      "parquet"),
    "convert chunk --by bogus": (["convert", "chunk", "tiny", "--name", "c1", "--size", "4", "--by", "bogus"],
                                 "'--by'", "chars, tokens"),
    "convert chunk --overlap = --size": (["convert", "chunk", "tiny", "--name", "c1", "--size", "4", "--overlap", "4"],
                                         "--overlap", "0 .. size - 1 = 3"),
    "convert chunk --name ''": (["convert", "chunk", "tiny", "--name", "", "--size", "4"], "'--name'", "empty"),
    "run bm25 --name ''": (["run", "bm25", "--collection", "tiny", "--name", ""], "'--name'", "empty"),
    "run bm25 --name 'a b'": (["run", "bm25", "--collection", "tiny", "--name", "a b"], "'--name'", "without spaces"),
    "run bm25 --variant bogus": (["run", "bm25", "--collection", "tiny", "--name", "x", "--variant", "bogus"],
                                 "'--variant'", "okapi"),
    "run bm25 --b 2": (["run", "bm25", "--collection", "tiny", "--name", "x", "--b", "2"], "'--b'", "[0, 1]"),
    # breaker's trial: --k1 1e308 was accepted and stored a run of errors (every score infinite)
    "run bm25 --k1 1e308": (["run", "bm25", "--collection", "tiny", "--name", "x", "--k1", "1e308"], "'--k1'",
                            "between 0 and 1000"),
    "run bm25 --k1 inf": (["run", "bm25", "--collection", "tiny", "--name", "x", "--k1", "inf"], "'--k1'",
                          "between 0 and 1000"),
    "run bm25 --k1 -0.5": (["run", "bm25", "--collection", "tiny", "--name", "x", "--k1", "-0.5"], "'--k1'",
                           "between 0 and 1000"),
    "run bm25 --b nan": (["run", "bm25", "--collection", "tiny", "--name", "x", "--b", "nan"], "'--b'", "[0, 1]"),
    "run fuse --rrf-k 1e308": (["run", "fuse", "bm25", "bm25b", "--name", "f", "--rrf-k", "1e308"], "'--rrf-k'",
                               "between 0 and 1000000"),
    "pool build --rrf-k 1e20": (["pool", "build", "bm25b", "--rrf-k", "1e20"], "'--rrf-k'", "between 0 and 1000000"),
    "run dense --threads 0": (["run", "dense", "--collection", "tiny", "--name", "d", "--threads", "0"],
                              "'--threads'", ">= 1"),
    "run dense --index-threads 0": (["run", "dense", "--collection", "tiny", "--name", "d", "--index", "hnsw",
                                     "--index-threads", "0"], "'--index-threads'", ">= 1"),
    "run dense --param efSearch=1e20": (["run", "dense", "--collection", "tiny", "--name", "d", "--index", "hnsw",
                                         "--param", "efSearch=100000000000000000000"], "efSearch", "2147483647"),
    "run import without --collection": (["run", "import", "imported.trec", "--name", "r"], "--collection",
                                        "required"),
    "run bm25 --depth 0": (["run", "bm25", "--collection", "tiny", "--name", "x", "--depth", "0"], "'--depth'",
                           "between 1 and"),
    "run fuse --norm bogus": (["run", "fuse", "bm25", "bm25b", "--name", "f", "--norm", "bogus"], "'--norm'",
                              "min-max or none"),
    "run fuse --method bogus": (["run", "fuse", "bm25", "bm25b", "--name", "f", "--method", "bogus"], "'--method'",
                                "rrf"),
    "run dense --index bogus": (["run", "dense", "--collection", "tiny", "--name", "d", "--index", "bogus"],
                                "'--index'", "exact, hnsw, ivf"),
    "run dense --param nope=3": (["run", "dense", "--collection", "tiny", "--name", "d", "--index", "hnsw",
                                  "--param", "nope=3"], "nope", "efSearch"),
    "run import --name ''": (["run", "import", "imported.trec", "--name", "", "--collection", "tiny"], "'--name'",
                             "empty"),
    "run import --reranks without --candidate-depth": (["run", "import", "imported.trec", "--name", "r",
                                                        "--reranks", "bm25"], "--candidate-depth", "together"),
    "run list --format bogus": (["run", "list", "--format", "bogus"], "'--format'", "jsonl"),
    "collections --format bogus": (["collections", "--format", "bogus"], "'--format'", "jsonl"),
    "qrels list --format bogus": (["qrels", "list", "--format", "bogus"], "'--format'", "jsonl"),
    "metadata keys --format bogus": (["metadata", "keys", "--collection", "tiny", "--format", "bogus"], "'--format'",
                                     "csv"),
    "qrels import --name ''": (["qrels", "import", "tiny/qrels.reference.txt", "--name", "", "--collection", "tiny"],
                               "'--name'", "empty"),
    "qrels import --name -x": (["qrels", "import", "tiny/qrels.reference.txt", "--name", "-x", "--collection",
                                "tiny"], "'--name'", "not starting with '-'"),
    "qrels import --name 'a b'": (["qrels", "import", "tiny/qrels.reference.txt", "--name", "a b", "--collection",
                                   "tiny"], "'--name'", "without spaces"),
    "publish --name -x": (["publish", "tiny-pool-v1", "--name", "-x", *LEAD], "'--name'", "not starting with '-'"),
    "run import --name -x": (["run", "import", "imported.trec", "--name", "-x", "--collection", "tiny"], "'--name'",
                             "not starting with '-'"),
    "ingest --name ''": (["ingest", "tiny", "--name", ""], "'--name'", "empty"),
    "pool build --name ''": (["pool", "build", "bm25b", "--name", ""], "'--name'", "empty"),
    "pool build --budget 0": (["pool", "build", "bm25b", "--budget", "0"], "'--budget'", ">= 1"),
    "pool build --rrf-k nan": (["pool", "build", "bm25b", "--rrf-k", "nan"], "'--rrf-k'", "between 0 and 1000000"),
    "publish --rule bogus": (["publish", "tiny-pool-v1", "--name", "v2", *LEAD, "--rule", "bogus"], "'--rule'",
                             "median"),
    "publish --name ''": (["publish", "tiny-pool-v1", "--name", "", *LEAD], "'--name'", "empty"),
    "assign --double-share nan": (["assign", "tiny-pool-v1", "--assessors", "ann", *LEAD, "--double-share", "nan"],
                                  "'--double-share'", "[0, 1]"),
    "assign --strategy bogus": (["assign", "tiny-pool-v1", "--assessors", "ann", *LEAD, "--strategy", "bogus"],
                                "'--strategy'", "cal"),
    "users add ''": (["users", "add", "", "--lead", "lead", "--lead-token", LEAD_TOKEN], "'name'", "user name"),
    "topics set ''": (["topics", "set", "", "--from", "held.txt"], "'name'", "topic set name"),
    "groups offers --mode bogus": (["groups", "offers", "tiny-pool-v1", "--mode", "bogus"], "'--mode'",
                                   "offer or skip"),
    "simulate --measure bogus": (["simulate", "tiny-pool-v1", "--oracle", "tiny-reference", "--measure", "bogus"],
                                 "'--measure'", "nDCG"),
    "stages --recall-threshold 2": (["stages", "bm25", "--qrels", "tiny-reference", "--recall-threshold", "2"],
                                    "'--recall-threshold'", "[0, 1]"),
    "pool reusability --k 0": (["pool", "reusability", "tiny-pool-v1", "--qrels", "tiny-reference", "--k", "0"],
                               "'--k'", ">= 1"),
    "miss-cause --cause bogus": (["miss-cause", "bm25", "--qrels", "tiny-reference", *LEAD, "--topic", "1", "--doc",
                                  "d1", "--cause", "bogus", "--note", "n"], "'--cause'", "found deeper"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_option_value_exits_2_naming_the_option_and_writes_nothing(tiny_template, tmp_path, case, capsys):
    folder, db = tiny_template
    work = tmp_path / "project"
    shutil.copytree(folder, work, ignore=shutil.ignore_patterns("*.waiting", "*.holder.json"))
    wdb = work / db.relative_to(folder)
    (work / "held.txt").write_text("1\n2\n")
    (work / "judged.txt").write_text("1 0 d1 1\n")
    argv, option, accepted = CASES[case]
    before = snapshot(wdb)
    cwd = os.getcwd()
    os.chdir(work)
    try:
        code = main(["--db", str(wdb), *argv])
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert code == 2, (case, err)
    assert "Traceback" not in err
    assert option in err and accepted in err, err
    assert snapshot(wdb) == before, (case, err)


def test_every_name_format_and_cutoff_option_is_checked_at_parse_time():
    """The rule behind the cases above, over every command: options that take a new name, a format, a
    depth, a grade threshold, a cutoff, a measure or a budget carry a validating callback (or click's
    range), so a bad value can never reach the command's code (gate: its own exit codes, checked there)."""
    import importlib

    import typer.main

    from workbench.cli import COMMANDS, app

    for entry in COMMANDS.values():
        for module in entry.modules:
            importlib.import_module(module)
    root = typer.main.get_group(app)

    def walk(cmd, path):
        subs = getattr(cmd, "commands", None)
        if subs:
            for n, sub in subs.items():
                yield from walk(sub, [*path, n])
        else:
            yield " ".join(path), cmd

    def _minimum(p):  # typer's own range (``typer.Option(min=1)``), checked by typer at parse time too
        info = getattr(getattr(p, "type_descriptor", None), "parameter_info", None)
        return getattr(info, "min", None)

    checked = {"--format", "--name", "--as", "--rel", "--depth", "--k", "--measure", "--budget", "--missing"}
    unchecked = [f"{name} {p.opts[0]}" for name, cmd in walk(root, []) if name != "gate"
                 for p in cmd.params if set(p.opts) & checked and p.callback is None
                 and _minimum(p) is None]
    assert unchecked == []


def test_run_import_help_says_collection_is_required(capsys, monkeypatch):
    # Breaker's trial: --collection was required (a usage error without it) but its help did not say so.
    monkeypatch.setenv("COLUMNS", "300")  # no line break inside the text
    assert main(["run", "import", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert ("--collection <str> The collection the run was produced over (required; with --reranks it may be "
            "left out: the candidate run's).") in text

