"""The documentation: README.md (the front page) and docs/*.md (one page per capability).

- every relative link in them resolves to a file of the repository, and a ``#anchor`` to a
  heading of its target (GitHub's heading ids);
- the README's first two commands are the Makefile's targets;
- the SMART example of docs/formats.md runs as written (convert, ingest, a BM25 run, score);
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
    assert 2 <= len(blocks) <= 5
    titles = [b.splitlines()[0] for b in blocks]
    assert any(t.startswith("How scores moved from cranfield-v1 to cranfield-v2") for t in titles)
    assert any(t.startswith("Pool bias: R@20 on pooled qrels v2") for t in titles)


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
