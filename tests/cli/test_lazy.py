"""Lazy command modules: the registry is complete and truthful, start-up imports only what a
command needs, and the pydantic-free coercion gives exactly typer's values and messages.

The import checks run the CLI in a fresh interpreter and read its ``sys.modules``:
they are correctness tests (what is imported), not timings.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
from typer._click.utils import make_default_short_help

import workbench.cli.lazy as lazy
from workbench.cli import COMMANDS, app, main

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("duckdb", "pyarrow", "torch", "altair", "streamlit", "pandas", "scipy", "sentence_transformers",
         "pydantic", "vl_convert", "bm25s", "faiss", "ray")
"""Never imported to score files: the issue's list (duckdb, pyarrow, torch, altair, streamlit) and
the other libraries whose import costs more than scoring a small run."""


def _modules_after(argv: list[str], cwd: Path, env_extra: dict[str, str] | None = None) -> tuple[int, set[str], str]:
    """(exit code, top-level and workbench modules imported, stdout) of ``workbench argv`` in a fresh process."""
    code = (
        "import json, sys\n"
        "from workbench.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "sys.stdout.flush()\n"
        "mods = sorted({m.split('.')[0] for m in sys.modules} | {m for m in sys.modules if m.startswith('workbench')})\n"
        "print('\\nMODULES ' + json.dumps(mods))\n"
        "sys.exit(rc)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(cwd), **(env_extra or {})}
    p = subprocess.run([sys.executable, "-c", code, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=120)
    out, _, mods = p.stdout.rpartition("\nMODULES ")
    return p.returncode, set(json.loads(mods)), out


def _load_all() -> None:
    """Import every module of the CLI package (not only those the registry names)."""
    import pkgutil

    import workbench.cli

    for info in pkgutil.iter_modules(workbench.cli.__path__):
        importlib.import_module(f"workbench.cli.{info.name}")


def test_every_registered_command_is_in_the_registry_with_its_own_summary():
    _load_all()
    built = typer.main.get_group(app)
    assert set(built.commands) == set(COMMANDS), "add the missing commands to workbench.cli.COMMANDS"
    for name, cmd in built.commands.items():
        summary = COMMANDS[name].summary
        assert make_default_short_help(summary, 10_000) == make_default_short_help(cmd.help or "", 10_000), (
            f"workbench.cli.COMMANDS[{name!r}]: the summary differs from the first sentence of its help")


def test_help_lists_every_command_in_registry_order_with_the_loaded_commands_text(capsys):
    assert main(["--help"]) == 0
    lazy_help = capsys.readouterr().out
    _load_all()
    built = typer.main.get_group(app)
    listed = [line.split()[0] for line in lazy_help.split("Commands:\n")[1].splitlines() if line.startswith("  ")
              and not line.startswith("    ")]
    assert listed == list(COMMANDS)
    for name in COMMANDS:  # each line as click writes it from the loaded command's own help
        assert make_default_short_help(built.commands[name].help or "", 45).split("...")[0][:30] in lazy_help


def test_help_and_version_import_no_command_module(tmp_path):
    for argv, expected in ((["--help"], 0), (["--version"], 0), ([], 2)):    # no arguments: help, as a usage error
        code, mods, out = _modules_after(argv, tmp_path)
        assert code == expected
        loaded = sorted(m for m in mods if m.startswith("workbench.cli.") and m not in
                        ("workbench.cli.common", "workbench.cli.lazy", "workbench.cli.outcome",
                         "workbench.cli.root", "workbench.cli.root_help", "workbench.cli.runtime"))
        assert loaded == [], f"workbench {' '.join(argv)} imported {loaded}"
        assert not mods & {"numpy", *HEAVY}, f"workbench {' '.join(argv)} imported {sorted(mods & set(HEAVY))}"


def test_scoring_files_imports_no_heavy_module_and_opens_no_store(tmp_path, write):
    qrels = write("q.txt", "1 0 a 1\n1 0 b 2\n2 0 c 1\n")
    run = write("r.run", "1 Q0 a 1 3.0 bm25\n1 Q0 x 2 2.0 bm25\n2 Q0 c 1 1.0 bm25\n")
    db = tmp_path / "labels" / "wb.duckdb"
    code, mods, out = _modules_after(["score", str(run), "--qrels", str(qrels)], tmp_path,
                                     {"WORKBENCH_DB": str(db)})
    r5 = next(line.split() for line in out.splitlines() if line.startswith("R@5 "))
    assert code == 0 and r5[1:3] == [f"{(1 / 2 + 1) / 2:.4f}", f"{2 / 3:.4f}"]   # topic 1: a of {a, b}; 2: c of {c}
    assert sorted(mods & {"numpy", *HEAVY}) == []      # a small run file: the pure-Python scorer
    # Nor the rules of options nobody gave (units, slices, paired tests, eligibility, no-answer topics), the
    # strict readers (the plain files were read by formats.plain_run) or writers of output nobody asked for.
    unused = {"workbench.services.evaluation.units", "workbench.scoring.units", "workbench.scoring.groups",
              "workbench.scoring.slices", "workbench.scoring.compare", "workbench.scoring.eligibility",
              "workbench.scoring.filters", "workbench.scoring.abstention", "workbench.services.evaluation.no_answer",
              "workbench.scoring.idaudit", "workbench.scoring.leakage", "workbench.formats.trec",
              "workbench.formats.columnar", "workbench.formats.io", "workbench.metadata", "csv", "tempfile",
              "hashlib",           # OpenSSL: the qrels content hash is CPython's own sha256 (workbench.hashing)
              "workbench.types"}   # records the aggregates never build (per-topic rows build them on access)
    assert sorted(mods & unused) == []
    assert not db.parent.exists() and not (tmp_path / "labels").exists()
    db.parent.mkdir()
    db.write_bytes(b"")              # a store file exists (not even a valid one): files still need none
    code, mods, _ = _modules_after(["score", str(run), "--qrels", str(qrels)], tmp_path, {"WORKBENCH_DB": str(db)})
    assert code == 0 and sorted(mods & {"numpy", *HEAVY}) == [] and db.read_bytes() == b""
    cli_modules = sorted(m for m in mods if m.startswith("workbench.cli."))
    # The plain form: the fast path (cli.fast_score) runs the command's body without the CLI framework.
    assert cli_modules == ["workbench.cli.common", "workbench.cli.fast_score", "workbench.cli.outcome",
                           "workbench.cli.runtime", "workbench.cli.score_command"]
    assert sorted(m for m in mods if m == "typer" or m.startswith("typer.")) == []
    # Any other form goes through typer, which loads the command module itself.
    code, mods, _ = _modules_after(["score", str(run), "--qrels", str(qrels), "--k", "5,10"], tmp_path,
                                   {"WORKBENCH_DB": str(db)})
    assert code == 0 and sorted(mods & {"numpy", *HEAVY}) == [] and db.read_bytes() == b""
    assert sorted(m for m in mods if m.startswith("workbench.cli.")) == [
        "workbench.cli.common", "workbench.cli.fast_score", "workbench.cli.lazy", "workbench.cli.options",
        "workbench.cli.outcome", "workbench.cli.root", "workbench.cli.runtime", "workbench.cli.score",
        "workbench.cli.score_command"]


def test_a_command_of_a_noun_loads_only_that_nouns_modules(tmp_path):
    code, mods, _ = _modules_after(["run", "--help"], tmp_path)
    assert code == 0
    assert sorted(m for m in mods if m.startswith("workbench.cli.")) == sorted(
        ["workbench.cli.common", "workbench.cli.lazy", "workbench.cli.options", "workbench.cli.outcome",
         "workbench.cli.root", "workbench.cli.runtime", *COMMANDS["run"].modules])
    assert "workbench.cli.score" not in mods and "workbench.cli.judging" not in mods


def test_each_noun_loaded_alone_has_all_its_verbs(tmp_path):
    """A noun's entry lists every module adding verbs to it (``workbench <noun> --help`` in a fresh process)."""
    _load_all()
    built = typer.main.get_group(app)
    nouns = {n: sorted(c.commands) for n, c in built.commands.items() if getattr(c, "commands", None)}
    assert nouns, "no noun with verbs found"
    code = ("import json, sys\nfrom workbench.cli import app, main\nimport typer.main\n"
            "main([sys.argv[1], '--help'])\n"
            "g = typer.main.get_group(app)\nprint('VERBS ' + json.dumps(sorted(g.commands[sys.argv[1]].commands)))\n")
    for noun, verbs in nouns.items():
        p = subprocess.run([sys.executable, "-c", code, noun], cwd=tmp_path, capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}, timeout=120)
        alone = json.loads(p.stdout.rpartition("VERBS ")[2])
        assert alone == verbs, f"workbench.cli.COMMANDS[{noun!r}] lacks the module(s) defining {set(verbs) - set(alone)}"


def test_a_mistyped_command_is_a_usage_error_with_a_suggestion(capsys):
    assert main(["scor", "x"]) == 2
    err = capsys.readouterr().err
    assert "No such command 'scor'" in err and "Did you mean 'score'" in err


# -- pydantic-free coercion: same values and messages as typer's own ------------------------------

def _outcome(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


CASES = [
    ["score", "{run}", "--qrels", "{qrels}", "--k", "1,2", "--rel", "2", "--format", "jsonl"],
    ["score", "{run}", "--qrels", "{qrels}", "--rel", "+1", "-m", "R@1", "-m", "P@2"],
    ["score", "{run}", "--qrels", "{qrels}", "--rel", "x1"],
    ["score", "{run}", "--qrels", "{qrels}", "--rel", " 1"],
    ["score", "{run}", "--qrels", "{qrels}", "--rel", "1.5"],
    ["misses", "{run}", "--qrels", "{qrels}", "--k", "0"],
    ["misses", "{run}", "--qrels", "{qrels}", "--k", "007"],
    ["--lock-timeout", "abc", "score", "{run}", "--qrels", "{qrels}"],
    ["--lock-timeout", "1e3", "--db", "{dir}/x.duckdb", "score", "{run}", "--qrels", "{qrels}", "--format", "csv"],
    ["--lock-timeout", "inf", "score", "{run}", "--qrels", "{qrels}", "--format", "tsv"],
    ["compare", "{run}", "{run}", "--qrels", "{qrels}", "--resamples", "200", "--confidence", ".9", "--format", "json"],
    ["compare", "{run}", "{run}", "--qrels", "{qrels}", "--confidence", "9e"],
    ["score", "{run}", "--qrels", "{qrels}", "--plot", ""],
]


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c[-4:]) for c in CASES])
def test_plain_coercion_gives_typers_values_and_messages(capsys, write, tmp_path, monkeypatch, argv):
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "none" / "wb.duckdb"))
    files = {"run": write("r.run", "1 Q0 a 1 3.0 bm25\n1 Q0 b 2 2.0 bm25\n2 Q0 c 1 1.0 bm25\n"),
             "qrels": write("q.txt", "1 0 a 1\n1 0 b 2\n2 0 c 1\n"), "dir": tmp_path}
    args = [a.format(**files) for a in argv]
    fast = _outcome(capsys, args)
    monkeypatch.setattr(lazy, "install_plain", lambda cmd: None)     # typer's own (pydantic) coercion
    slow = _outcome(capsys, args)
    def strip(text: str) -> str:  # what differs between two runs of one command: times
        return "\n".join(line for line in text.splitlines() if '"created_at"' not in line and "[elapsed]" not in line)

    assert (fast[0], strip(fast[1]), strip(fast[2])) == (slow[0], strip(slow[1]), strip(slow[2]))


def test_plain_coercion_is_installed_and_defers_the_unusual():
    _load_all()
    group = typer.main.get_group(app)
    lazy.install_plain(group)
    params = [p for p in lazy._walk(group) if hasattr(p, "type_descriptor")]
    plain = [p for p in params if isinstance(p._runtime_param, lazy._Plain)]
    assert len(plain) == len(params), sorted({str(p.type_descriptor.annotation) for p in params} -
                                             {str(p.type_descriptor.annotation) for p in plain})
    k = next(p for p in lazy._walk(group.commands["misses"]) if p.name == "k")._runtime_param
    assert k._one("5", None, None) == 5 and k._one("0", None, None) is lazy._DEFER   # min=1: typer says why
    assert k._one("٣", None, None) is lazy._DEFER                                       # non-ASCII digit


def test_the_scorer_knows_the_default_filter_key_without_importing_the_eligibility_rules():
    from workbench.scoring.eligibility import DEFAULT_FILTER_KEY
    from workbench.services.evaluation import restrict

    assert restrict._DEFAULT_FILTER_KEY == DEFAULT_FILTER_KEY


def test_the_request_knows_the_slices_minimum_without_importing_the_rules():
    from workbench.scoring.results import MIN_TOPICS
    from workbench.services.evaluation.request import MIN_SLICE_TOPICS, Slicing

    assert MIN_SLICE_TOPICS == MIN_TOPICS == Slicing().min_topics


def test_the_functions_typer_reads_at_every_run_have_evaluated_annotations():
    """String annotations (``from __future__ import annotations``) would be compiled and evaluated again each
    time typer builds the commands: the root callback, ``score``'s commands and every option callback."""
    import workbench.cli.options as options
    import workbench.cli.root as root
    import workbench.cli.score as score

    functions = [root._root, root._version, score.score, score.compare_cmd, score.misses_cmd,
                 options.checked(lambda _v: None), options.measure, options.cutoffs, options.share]
    strings = {f.__qualname__: a for f in functions for a in f.__annotations__.values() if isinstance(a, str)}
    assert strings == {}


def test_a_command_built_alone_is_the_one_the_whole_app_builds():
    _load_all()
    whole = typer.main.get_group(app).commands

    def shape(cmd):
        return (cmd.name, cmd.help, [(type(p).__name__, p.name, p.opts, repr(p.default), p.required, p.multiple,
                                      getattr(getattr(p, "type", None), "name", None), p.callback is None)
                                     for p in cmd.params])

    plain = [n for n, c in whole.items() if not getattr(c, "commands", None)]
    assert "score" in plain and "compare" in plain and len(plain) > 10
    for name in plain:
        alone = lazy._build_one(app, name)
        assert alone is not None and shape(alone) == shape(whole[name]), name
    assert lazy._build_one(app, "run") is None       # a noun: built by typer.main.get_group


def test_paused_gc_resumes_collection_as_it_was():
    import gc

    from workbench.cli import paused_gc

    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), paused_gc():
        assert not gc.isenabled()
        _ = 1 / 0
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()      # it was off: it stays off
    finally:
        gc.enable()
