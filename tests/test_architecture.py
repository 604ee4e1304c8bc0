"""Import-direction rules of ../shared/STYLE.md, enforced (after PyTerrier's custom lint).

The pure layer (scoring, judging, pooling.fusion, pooling.pool, ranking) and the
base layer import no database, UI, CLI, model or BM25 library; only
``workbench.store`` imports duckdb (and ``workbench/formats/parquet.py``, which
reads Parquet files through its own in-memory DuckDB connection, never the
store); only the app imports streamlit.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = {"duckdb", "streamlit", "typer", "click", "sentence_transformers", "torch", "bm25s", "rank_bm25"}
PURE = [
    "workbench/scoring", "workbench/judging", "pooling/fusion.py", "pooling/pool.py", "pooling/reusability.py",
    "workbench/ranking.py", "workbench/types.py", "workbench/errors.py", "workbench/rubric.py",
    "workbench/config.py", "workbench/hashing.py", "workbench/metadata.py", "workbench/lineage.py",
]
DUCKDB_FILE_READERS = {"workbench/formats/parquet.py"}
"""Format adapters that read files with an in-memory DuckDB (no store, no extensions)."""
EDGE_AND_ADAPTERS = {"workbench.cli", "workbench.app", "workbench.store", "pooling.retrievers", "workbench.reports", "workbench.services"}


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
