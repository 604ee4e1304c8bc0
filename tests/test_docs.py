"""The documentation: README.md (the front page) and docs/*.md (one page per capability).

- every relative link in them resolves to a file of the repository, and a ``#anchor`` to a
  heading of its target (GitHub's heading ids);
- the README's first two commands are the Makefile's targets;
- the SMART example of docs/formats.md runs as written (convert, ingest, a BM25 run, score);
- the workflow block of docs/workflow.md runs as written on a fresh store (8 Cranfield topics, the
  judgments imported from files instead of the UI), then docs/scoring.md's Python example on its files;
- every ``workbench`` command line of the pages' bash blocks parses (commands, options, required ones);
- the example of docs/scoring.md's measures of the whole ranking runs as written and prints its table;
- (slow) the README's headline tables are what ``workbench demo cranfield`` prints, verbatim.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+).*?\1", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)


def _prose(text: str) -> str:
    """The text outside fenced code blocks."""
    return FENCE.sub("", text)


def _links(text: str) -> list[str]:
    """Inline link targets outside code blocks and code spans."""
    return LINK.findall(CODE_SPAN.sub("", _prose(text)))


def _slug(heading: str) -> str:
    """GitHub's id for a heading: the text without markup, lower-cased, punctuation dropped, spaces -> '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("\\", "")
    text = text.replace("*", "").lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, heading in HEADING.findall(_prose(page.read_text(encoding="utf-8"))):
        slug = _slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_the_slug_rule_matches_githubs_on_this_projects_headings():
    assert _slug("What `make demo` does") == "what-make-demo-does"
    assert _slug("Eligibility filters: pre/post filtering, filtered scoring, leaks") == (
        "eligibility-filters-prepost-filtering-filtered-scoring-leaks")
    assert _slug("Release gate: ❌ FAIL — `bm25-stem` against `bm25`") == "release-gate--fail--bm25-stem-against-bm25"


def test_the_pages_exist_and_the_readme_and_index_link_every_docs_page():
    names = {p.name for p in DOCS.glob("*.md")}
    assert {"index.md", "workflow.md", "scoring.md", "pipelines.md", "vector-search-and-filters.md",
            "units-and-misses.md", "release-gates.md", "formats.md", "performance.md", "store.md",
            "glossary.md"} <= names
    readme_targets = {t.split("#")[0] for t in _links(README.read_text(encoding="utf-8"))}
    index_targets = {t.split("#")[0] for t in _links((DOCS / "index.md").read_text(encoding="utf-8"))}
    for name in sorted(names - {"index.md"}):
        assert f"docs/{name}" in readme_targets, f"README.md does not link docs/{name}"
        assert name in index_targets, f"docs/index.md does not link {name}"
    assert "docs/index.md" in readme_targets


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves_to_a_file_and_anchor(page):
    problems = []
    for target in _links(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            problems.append(f"{target}: no such file {dest}")
            continue
        if not dest.resolve().is_relative_to(ROOT):
            problems.append(f"{target}: outside the repository")
        if anchor:
            if dest.suffix != ".md":
                problems.append(f"{target}: an anchor into a file that is not Markdown")
            elif anchor not in _anchors(dest):
                problems.append(f"{target}: no heading with id '{anchor}' in {dest.relative_to(ROOT)}")
    assert not problems, f"{page.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_the_readmes_first_two_commands_are_makefile_targets():
    block = re.search(r"^## Quick start\n.*?^```bash\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    assert commands == ["make demo", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("demo", "test", "demo-batch"):
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), target


def _smart_example() -> str:
    text = (DOCS / "formats.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```bash\n(.*?)^```", text, re.M | re.S)
    matching = [b for b in blocks if "convert smart" in b and "printf" in b]
    assert len(matching) == 1, "docs/formats.md: expected one bash block with the SMART example"
    return matching[0]


def test_the_smart_example_of_the_formats_page_runs_as_written(tmp_path):
    script = _smart_example()
    assert script.count("/tmp/toy.duckdb") == 4
    db = tmp_path / "toy.duckdb"
    script = script.replace("/tmp/toy.duckdb", str(db))  # the one change: a store of this test's own
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    written = {p.name for p in (tmp_path / "toy").iterdir()}
    assert {"corpus.jsonl", "queries.jsonl", "qrels.reference.txt", "qrels.meta.json", "README.md"} <= written
    assert "qrels columns: 4 columns, doc ids in column 2: query doc ignore grade (SMART layout)" in done.stdout
    # the score: both judged topics find every relevant document within 10 (see tests/cli/test_convert_smart.py)
    assert "run bm25: 2 topics" in done.stdout and re.search(r"^R@10 +1\.0000 1\.0000", done.stdout, re.M), done.stdout


def test_the_measures_example_of_the_scoring_page_runs_as_written_and_prints_its_table(tmp_path):
    text = (DOCS / "scoring.md").read_text(encoding="utf-8")
    section = re.search(r"^## Measures of the whole ranking\n(.*?)(?=^## )", text, re.M | re.S)
    assert section is not None
    (script,) = re.findall(r"^```bash\n(.*?)^```", section.group(1), re.M | re.S)
    (printed,) = re.findall(r"^```text\n(.*?)^```", section.group(1), re.M | re.S)
    assert script.count("/tmp/measures.duckdb") == 1
    script = script.replace("/tmp/measures.duckdb", str(tmp_path / "m.duckdb"))  # a store of this test's own
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               HF_HUB_OFFLINE="1")
    done = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(printed), done.stdout


def _headline_blocks() -> list[str]:
    """The fenced blocks of the README's "What the demo shows" section."""
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## What the demo shows\n(.*?)(?=^## )", text, re.M | re.S)
    assert section is not None
    return re.findall(r"^```text\n(.*?)^```", section.group(1), re.M | re.S)


def test_the_readme_shows_the_headline_tables():
    blocks = _headline_blocks()
    assert 2 <= len(blocks) <= 6
    titles = [b.splitlines()[0] for b in blocks]
    assert any(t.startswith("How scores moved from cranfield-v1 to cranfield-v2") for t in titles)
    assert any(t.startswith("Pool bias: R@20 on pooled qrels v2") for t in titles)
    assert any(t.startswith("Sampled judging: R@20 estimated from a stratified sample") for t in titles)


@pytest.mark.slow
def test_the_readmes_headline_tables_are_what_the_demo_prints(tmp_path):
    """Runs the whole demo (a few minutes on 2 cores): `pytest -m slow tests/test_docs.py`."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    done = subprocess.run([sys.executable, "-m", "workbench", "--db", str(tmp_path / "labels" / "wb.duckdb"),
                           "demo", "cranfield", "--plots", str(tmp_path / "plots")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3600)
    assert done.returncode == 0, done.stderr[-4000:]
    for block in _headline_blocks():
        assert block in done.stdout, f"README block not in the demo's output:\n{block}"


# -- the workflow, by command (docs/workflow.md), run as written ----------------------------------

WORKFLOW_TOPICS = [str(t) for t in range(1, 9)]
"""The Cranfield topics of the workflow test's collection (the commands take every topic there is)."""


def _workflow_block() -> str:
    """The bash block of docs/workflow.md's section "The workflow, by command"."""
    text = (DOCS / "workflow.md").read_text(encoding="utf-8")
    section = re.search(r"^## The workflow, by command\n(.*?)(?=^## )", text, re.M | re.S)
    assert section is not None, "docs/workflow.md: no section 'The workflow, by command'"
    blocks = re.findall(r"^```bash\n(.*?)^```", section.group(1), re.M | re.S)
    assert len(blocks) == 1, "docs/workflow.md: expected one bash block in 'The workflow, by command'"
    return blocks[0]


def _workflow_commands(block: str) -> list[list[str]]:
    """The block's commands as argument lists, as bash splits them (comments dropped, ``;`` separating
    commands); the placeholder line ``export WORKBENCH_TOKEN=<the lead's token>`` as ``["export",
    "WORKBENCH_TOKEN=<the lead's token>"]`` (as written it is for the reader to fill in, not shell syntax)."""
    import shlex

    commands: list[list[str]] = []
    for line in block.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if re.match(r"^export WORKBENCH_TOKEN=<the lead's token>$", line.strip()):
            commands.append(["export", "WORKBENCH_TOKEN=<the lead's token>"])
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";")
        lexer.whitespace_split = True
        command: list[str] = []
        for token in lexer:
            if token == ";":
                commands.append(command)
                command = []
            else:
                command.append(token)
        if command:
            commands.append(command)
    return commands


def _cranfield_subset(dest: Path) -> dict[str, dict[str, int]]:
    """Cranfield in ``dest`` (the sample's layout) with WORKFLOW_TOPICS only, their judged documents
    and the first 60 of the corpus; returns its reference qrels (grades below 0 read as 0)."""
    import json

    sample = ROOT / "sample_corpus" / "cranfield"
    lines = [line for line in (sample / "qrels.reference.txt").read_text().splitlines()
             if line.split()[0] in WORKFLOW_TOPICS]
    docs = [json.loads(x) for x in (sample / "corpus.jsonl").read_text().splitlines()]
    keep = {line.split()[2] for line in lines} | {d["_id"] for d in docs[:60]}
    dest.mkdir(parents=True)
    (dest / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs if d["_id"] in keep))
    queries = [json.loads(x) for x in (sample / "queries.jsonl").read_text().splitlines()]
    (dest / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries if q["_id"] in WORKFLOW_TOPICS))
    (dest / "qrels.reference.txt").write_text("\n".join(lines) + "\n")
    (dest / "qrels.meta.json").write_text((sample / "qrels.meta.json").read_text())
    reference: dict[str, dict[str, int]] = {}
    for line in lines:
        t, _, d, g = line.split()
        reference.setdefault(t, {})[d] = max(0, int(g))
    return reference


def _judgment_file(path: Path, pool: str, assessor: str, reference: dict[str, dict[str, int]]) -> dict:
    """One assessor's judgments of a pool's own documents, made from the reference judgments: ``ann``
    gives the reference grade (0 where it has none), ``bob`` the same but 3 where it says 4."""
    from workbench.store import Store

    store = Store(os.environ.get("WORKBENCH_DB", "labels/workbench.duckdb"), client="pytest")
    try:
        pooled = store.pools.pool_documents(pool, with_ancestors=False)
    finally:
        store.release_file()
    grades = {(t, d): reference.get(t, {}).get(d, 0) for t, ds in pooled.items() for d in ds}
    if assessor == "bob":
        grades = {k: 3 if g == 4 else g for k, g in grades.items()}
    path.write_text("".join(f"{t} 0 {d} {g}\n" for (t, d), g in sorted(grades.items())))
    return grades


def test_the_workflow_block_runs_as_written_on_a_fresh_store(tmp_path, monkeypatch, capsys):
    """docs/workflow.md "The workflow, by command", command by command through ``main(argv)`` in a fresh
    folder holding ``sample_corpus/cranfield`` (8 topics of it) and nothing else; the `ui` line aside,
    the judgment files it imports made from the reference judgments (see ``_judgment_file``)."""
    commands = _workflow_commands(_workflow_block())
    assert sum(1 for c in commands if c[:2] == ["workbench", "ui"]) == 1
    assert sum(1 for c in commands if c[:3] == ["workbench", "judgments", "import"]) == 4
    reference = _cranfield_subset(tmp_path / "sample_corpus" / "cranfield")
    monkeypatch.chdir(tmp_path)
    for name in ("WORKBENCH_DB", "WORKBENCH_TOKEN", "WORKBENCH_LOCK_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    import torch

    # `run dense` keeps torch's thread default (one per core), which crawls on cores other processes use
    # (bench/results/encoding.md); one thread for this process only, the command lines stay as written.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        outputs, files = _run_workflow(commands, tmp_path, reference, monkeypatch, capsys)
        _check_the_workflows_results(outputs, files, tmp_path)
        _check_the_python_example_of_the_scoring_page(tmp_path, capsys)
    finally:
        torch.set_num_threads(threads)


def _check_the_python_example_of_the_scoring_page(tmp_path, capsys):
    """docs/scoring.md's notebook example, as written, where it says it runs: after the workflow and
    `workbench run export dense --out out/dense.trec`; its numbers against pytrec_eval."""
    import pytrec_eval

    from workbench.cli import main

    text = (DOCS / "scoring.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S) if "from workbench import evaluate" in b]
    assert len(blocks) == 1, "docs/scoring.md: expected one python block with `from workbench import evaluate`"
    assert "`workbench run export dense --out out/dense.trec`" in blocks[0]
    assert main(["run", "export", "dense", "--out", "out/dense.trec"]) == 0, capsys.readouterr().err
    scope: dict = {}
    exec(compile(blocks[0], "docs/scoring.md", "exec"), scope)  # noqa: S102 - the page's own example
    res = scope["res"]
    qrels: dict[str, dict[str, int]] = {}
    for line in (tmp_path / "labels" / "workflow" / "v1.qrels").read_text().splitlines():
        t, _, d, g = line.split()
        qrels.setdefault(t, {})[d] = int(g)
    for name in ("bm25", "dense"):
        run: dict[str, dict[str, float]] = {}
        for line in (tmp_path / "out" / f"{name}.trec").read_text().splitlines():
            t, _, d, _, score, _ = line.split()
            run.setdefault(t, {})[d] = float(score)
        per = pytrec_eval.RelevanceEvaluator(qrels, {"recall_100"}).evaluate(run)
        topics = [t for t, ds in qrels.items() if any(g >= 1 for g in ds.values())]
        got = res.aggregates.set_index(["run", "measure"]).loc[(name, "R@100"), "macro"]
        assert got == pytest.approx(sum(per[t]["recall_100"] for t in topics) / len(topics), abs=1e-12)
    assert (tmp_path / "out" / "scores.parquet").is_file()


def _run_workflow(commands, tmp_path, reference, monkeypatch, capsys):
    """Run the commands in-process; (outputs by the command's first two words, the judgment files made)."""
    from workbench.cli import main

    capsys.readouterr()
    outputs: dict[str, list[tuple[str, str]]] = {}
    files: dict[str, dict] = {}
    token = ""
    for command in commands:
        if command[0] == "." or command[:2] == ["workbench", "ui"]:
            continue  # the venv's activate (this is its python); the UI is judged by the files below
        if command[0] == "export":
            name, _, value = command[1].partition("=")
            if value == "<the lead's token>":
                assert token, "the lead's token is exported before `users add lead` printed it"
                value = token
            monkeypatch.setenv(name, value)
            continue
        assert command[0] == "workbench", command
        if command[1:3] == ["judgments", "import"]:
            args = dict(zip(command[4::2], command[5::2], strict=False))
            files[command[3]] = _judgment_file(tmp_path / command[3], args["--pool"], args["--assessor"], reference)
        code = main(command[1:])
        out, err = capsys.readouterr()
        assert code == 0, f"{' '.join(command)} exited {code}:\n{err[-3000:]}"
        outputs.setdefault(" ".join(command[1:3]), []).append((out, err))
        if command[1:4] == ["users", "add", "lead"]:
            token = out.strip()
    return outputs, files


def _check_the_workflows_results(outputs, files, tmp_path):
    """What the workflow printed and wrote, against values computed here and by pytrec_eval."""
    import json

    import pytrec_eval

    # publish v1: ann and bob disagree exactly where the reference says 4; the lower median decides them
    ann, bob = files["ann.qrels"], files["bob.qrels"]
    disagree = sum(1 for k in ann if ann[k] != bob[k])
    assert disagree > 0
    out, err = outputs["publish cranfield-pool-v1"][0]
    table = dict(line.split(None, 1) for line in out.splitlines())
    assert (table["entries"], table["unanimous"], table["adjudicated"], table["by_fallback"], table["fallback"]) == (
        str(len(ann)), str(len(ann) - disagree), "0", str(disagree), "median")
    assert (f"decided: {len(ann) - disagree:,} unanimous, 0 adjudicated, {disagree:,} by the fallback median "
            "(lower median of the grades") in err
    # labels/workflow/v1.qrels: in the store's folder, each grade the lower median of ann's and bob's (their minimum)
    assert (tmp_path / "labels" / "workflow" / "workbench.duckdb").is_file()
    lines = (tmp_path / "labels" / "workflow" / "v1.qrels").read_text().splitlines()
    v1 = {(t, d): int(g) for t, _, d, g in (x.split() for x in lines)}
    assert v1 == {k: min(ann[k], bob[k]) for k in ann}
    # the file-scoring line: R@100 per topic of out/bm25.trec on labels/v1.qrels, against pytrec_eval
    out, _ = outputs["score out/bm25.trec"][0]
    doc = json.loads(out)
    qrels = {}
    for (t, d), g in v1.items():
        qrels.setdefault(t, {})[d] = g
    run: dict[str, dict[str, float]] = {}
    for line in (tmp_path / "out" / "bm25.trec").read_text().splitlines():
        t, _, d, _, score, _ = line.split()
        run.setdefault(t, {})[d] = float(score)
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"recall_20", "recall_100", "ndcg_cut_10"}).evaluate(run)
    per_topic = doc["runs"][0]["per_topic"]
    assert set(per_topic) == {t for t, ds in qrels.items() if any(g >= 1 for g in ds.values())}
    for measure, name in (("R@20", "recall_20"), ("R@100", "recall_100"), ("nDCG@10", "ndcg_cut_10")):
        assert {t: m[measure]["value"] for t, m in per_topic.items()} == pytest.approx(
            {t: oracle[t][name] for t in per_topic}, abs=1e-12), measure
    assert (tmp_path / "out" / "curve.png").is_file()
    # v2: v1's entries plus the delta of bm25-stem, judged by both; qrels diff lists exactly the delta
    ann2, bob2 = files["ann-v2.qrels"], files["bob-v2.qrels"]
    assert ann2 and not set(ann2) & set(ann)
    diff, _ = outputs["qrels diff"][0]
    assert sorted(tuple(x.split("\t")) for x in diff.splitlines()) == sorted(
        ("+", t, d, str(min(ann2[t, d], bob2[t, d]))) for t, d in ann2)


# -- every workbench command line of the pages parses ---------------------------------------------


def _bash_commands(text: str) -> list[list[str]]:
    """The ``workbench ...`` commands of a page's bash blocks, as bash splits them (the words after
    ``workbench``; continuation lines joined, comments dropped; lines with a placeholder such as
    ``<the lead's token>`` left out)."""
    import shlex

    found = []
    for block in re.findall(r"^```(?:bash|sh)\n(.*?)^```", text, re.M | re.S):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            if not line.strip() or line.lstrip().startswith("#") or re.search(r"<[a-z][^>]*>", line):
                continue
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";|&<>")
            lexer.whitespace_split = True
            words: list[str] = []
            for token in [*lexer, ";"]:
                if token.strip(";|&<>"):
                    words.append(token)
                    continue
                if "workbench" in words:
                    found.append(words[words.index("workbench") + 1:])
                words = []
    return found


def _parse_problem(args: list[str]) -> str | None:
    """Why click refuses ``workbench ARGS`` (unknown command or option, a required one missing, a bad
    value), or None; nothing runs: each command's context is made, not invoked."""
    import typer.main
    from typer._click.exceptions import ClickException

    from workbench.cli.root import app

    group = typer.main.get_command(app)
    try:
        ctx = group.make_context("workbench", list(args))
        current, rest = group, [*getattr(ctx, "_protected_args", []), *ctx.args]
        while rest:
            name, command, rest = current.resolve_command(ctx, rest)
            ctx = command.make_context(name, list(rest), parent=ctx)
            rest = [*getattr(ctx, "_protected_args", []), *ctx.args] if hasattr(command, "resolve_command") else []
            current = command
    except ClickException as e:
        return e.format_message()
    return None


def test_the_parse_check_names_what_is_wrong():
    assert _bash_commands("```bash\nworkbench a --b 'c d'   # e\nx; workbench f\n```\n") == [["a", "--b", "c d"], ["f"]]
    assert _parse_problem(["pool", "stats", "cranfield-pool-v1", "--table", "overlap"]) is None
    assert "No such option: --nope" in _parse_problem(["adjudicate", "p", "--nope", "3"])
    assert "Missing option '--lead'" in _parse_problem(["judgments", "import", "x.csv", "--pool", "p", "--assessor", "a"])
    assert "No such command" in _parse_problem(["pools", "stats", "p"])


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_workbench_command_line_of_the_page_parses(page, monkeypatch):
    """Commands, options, required options and option values of every example line, without running it
    (the workflow block runs in full above; lead-only steps still need --lead on the line)."""
    monkeypatch.setenv("WORKBENCH_TOKEN", "a-token-for-parsing")  # the lead commands' --token
    problems = [f"workbench {' '.join(args)}\n    {problem}" for args in _bash_commands(page.read_text(encoding="utf-8"))
                if args and "--help" not in args and (problem := _parse_problem(args))]
    assert not problems, f"{page.relative_to(ROOT)}:\n" + "\n".join(problems)
