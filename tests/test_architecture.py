"""Import-direction rules of ../shared/STYLE.md, enforced (after PyTerrier's custom lint).

The pure layer (scoring, judging, pooling.fusion, pooling.pool, ranking) and the
base layer import no database, UI, CLI, model or BM25 library; only
``workbench.store`` imports duckdb (and ``workbench/formats/parquet.py``, which
reads Parquet files through its own in-memory DuckDB connection, never the
store); only the app imports streamlit.

Between the project's own modules (``docs/architecture.md``): no import cycle, and
no import from a lower layer to a higher one (``LAYERS``, lowest first). Every
import counts: at module level, inside a function, and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = {"duckdb", "streamlit", "typer", "click", "sentence_transformers", "torch", "bm25s", "rank_bm25"}
PURE = [
    "workbench/scoring", "workbench/judging", "pooling/fusion.py", "pooling/pool.py", "pooling/reusability.py",
    "pooling/sample.py",
    "workbench/ranking.py", "workbench/types.py", "workbench/errors.py", "workbench/rubric.py",
    "workbench/config.py", "workbench/hashing.py", "workbench/metadata.py", "workbench/lineage.py",
]
DUCKDB_FILE_READERS = {"workbench/formats/parquet.py"}
"""Format adapters that read files with an in-memory DuckDB (no store, no extensions)."""
EDGE_AND_ADAPTERS = {"workbench.cli", "workbench.app", "workbench.store", "pooling.retrievers", "workbench.reports", "workbench.services"}


LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("workbench.errors", "workbench.types", "workbench.text", "workbench.hashing", "workbench.ranking",
              "workbench.metadata", "workbench.lineage", "workbench.config", "workbench.rubric", "workbench.jsonout",
              "workbench.version")),
    ("rules", ("workbench.scoring", "workbench.judging", "pooling.fusion", "pooling.pool", "pooling.reusability",
               "pooling.sample", "pooling.tokenize")),
    ("adapters", ("workbench.formats", "workbench.store", "pooling.retrievers", "pooling")),
    ("services", ("workbench.services",)),
    ("reports", ("workbench.reports",)),
    ("demo", ("workbench.demo",)),
    ("api", ("workbench.api", "workbench")),
    ("edges", ("workbench.cli", "workbench.app", "workbench.__main__")),
)
"""The layers, lowest first: a module may import its own layer's modules and lower layers', never a higher one's.
A module belongs to the layer of the longest prefix that names it (``workbench`` alone is the package's API)."""


def _modules() -> dict[str, Path]:
    """Every module of ``workbench`` and ``pooling``: dotted name -> file."""
    found: dict[str, Path] = {}
    for f in _files("workbench") + _files("pooling"):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = f
    return found


def _module_edges(path: Path, modules: Mapping[str, Path]) -> set[str]:
    """The project modules ``path`` imports: ``from a.b import c`` is ``a.b.c`` when that is a module, else ``a.b``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                target = sub if sub in modules else node.module
                if target in modules:
                    found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _module_edges(p, modules) - {m} for m, p in modules.items()}


def _cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _layer(module: str) -> int | None:
    best, best_len = None, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def _upward(graph: Mapping[str, set[str]]) -> list[str]:
    out = []
    for m, targets in sorted(graph.items()):
        lm = _layer(m)
        for t in sorted(targets):
            lt = _layer(t)
            if lm is not None and lt is not None and lt > lm:
                out.append(f"{m} ({LAYERS[lm][0]}) imports {t} ({LAYERS[lt][0]})")
    return out


def test_no_import_cycle_between_modules():
    assert _cycles(_graph()) == []


def test_no_import_from_a_lower_layer_to_a_higher_one():
    assert _upward(_graph()) == []


def test_every_module_has_a_layer():
    assert [m for m in _modules() if _layer(m) is None] == []


def test_the_cycle_and_direction_rules_catch_violations():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert _upward({"workbench.scoring.evaluate": {"workbench.services.evaluation.scoring"},
                    "workbench.cli.score": {"workbench.scoring.evaluate"}}) == [
        "workbench.scoring.evaluate (rules) imports workbench.services.evaluation.scoring (services)"]
    assert _layer("workbench") == _layer("workbench.api") and _layer("workbench.store.core") == 2


MAX_FUNCTION_LINES = 150
MAX_PARAMETERS = 15
"""No function outside ``workbench/cli/`` (the option parsers) is longer (``def`` to its last line, docstring
included) or takes more parameters (``self``/``cls`` not counted): a longer one is steps waiting to be named,
more parameters a request value waiting to be named (STYLE.md)."""


def _oversized(paths: list[Path]) -> list[str]:
    out = []
    for f in paths:
        for node in ast.walk(ast.parse(f.read_text(), filename=str(f))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            a = node.args
            n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
            if a.args and a.args[0].arg in ("self", "cls"):
                n -= 1
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MAX_FUNCTION_LINES or n > MAX_PARAMETERS:
                out.append(f"{f.relative_to(ROOT)}:{node.lineno} {node.name}: {lines} lines, {n} parameters")
    return out


def test_no_function_outside_the_cli_is_over_150_lines_or_15_parameters():
    files = [f for f in _files("workbench") + _files("pooling")
             if not f.relative_to(ROOT).as_posix().startswith("workbench/cli/")]
    assert _oversized(files) == []


def test_the_size_rule_catches_a_violation(tmp_path):
    long_fn = tmp_path / "long.py"
    long_fn.write_text("def f():\n" + "    x = 1\n" * 150 + "\n\ndef g(" + ", ".join(f"a{i}" for i in range(16)) + "):\n"
                       "    pass\n\n\nclass C:\n    def m(self, " + ", ".join(f"b{i}" for i in range(15)) + "):\n        pass\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = _oversized([long_fn])
    finally:
        ROOT = saved
    assert [x.split(" ", 1)[1] for x in found] == ["f: 151 lines, 0 parameters", "g: 2 lines, 16 parameters"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _files(rel: str) -> list[Path]:
    p = ROOT / rel
    return sorted(p.rglob("*.py")) if p.is_dir() else ([p] if p.exists() else [])


def test_pure_layer_imports_no_io_ui_or_model_library():
    offenders = []
    for rel in PURE:
        for f in _files(rel):
            for mod in _imports(f):
                top = mod.split(".")[0]
                if top in HEAVY or any(mod == e or mod.startswith(e + ".") for e in EDGE_AND_ADAPTERS):
                    offenders.append(f"{f.relative_to(ROOT)} imports {mod}")
    assert offenders == []


def test_only_the_store_imports_duckdb():
    offenders = []
    for f in _files("workbench") + _files("pooling"):
        rel = f.relative_to(ROOT).as_posix()
        if rel.startswith("workbench/store/") or rel in DUCKDB_FILE_READERS:
            continue
        if any(m.split(".")[0] == "duckdb" for m in _imports(f)):
            offenders.append(rel)
    assert offenders == []


def test_only_the_app_imports_streamlit():
    offenders = [
        f.relative_to(ROOT).as_posix()
        for f in _files("workbench") + _files("pooling")
        if not f.relative_to(ROOT).as_posix().startswith("workbench/app/")
        and any(m.split(".")[0] == "streamlit" for m in _imports(f))
    ]
    assert offenders == []


def test_the_rule_catches_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import duckdb\nfrom streamlit import session_state\n")
    assert _imports(bad) == {"duckdb", "streamlit"}
