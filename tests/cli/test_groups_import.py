"""`workbench groups import` across files: one group per document, idempotent re-import, unknown ids first."""

from __future__ import annotations

from workbench.cli import main
from workbench.store import Store
from workbench.types import Document, Topic


def _db(tmp_path):
    path = tmp_path / "wb.duckdb"
    Store(path, client="seed").collections.ingest_collection(
        "c", [Document(f"d{i}", "", f"text {i}") for i in range(1, 6)], [Topic("1", "q")])
    return path


def _rows(db):
    with Store(db, client="test").connection() as cur:
        return cur.execute("SELECT group_id, doc_id, source FROM duplicate_groups ORDER BY 1, 2, 3").fetchall()


def test_groups_across_imports(tmp_path, capsys):
    db = _db(tmp_path)
    a, b, c, d = (tmp_path / n for n in ("a.tsv", "b.tsv", "c.tsv", "d.tsv"))
    a.write_text("g1 d1\ng1 d2\n")
    b.write_text("g1 d1\ng1 d2\n")           # the same group from another file
    c.write_text("g2 d3\ng2 d1\n")           # d1 is in g1 already
    d.write_text("g3 d4\ng3 nosuch\ng4 d5\n")  # an unknown id, and a group of one (d5)
    assert main(["--db", str(db), "groups", "import", str(a), "--collection", "c"]) == 0
    assert main(["--db", str(db), "groups", "import", str(b), "--collection", "c"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"1 group(s) from {b}: 0 row(s) added to collection c"
    assert main(["--db", str(db), "groups", "import", str(c), "--collection", "c"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"workbench: error: {c}:2: document 'd1' is already in group 'g1' of collection 'c' (imported "
                   "before), found it here in group 'g2'; a document belongs to one group. Merge the groups "
                   "(use group id 'g1').")
    assert main(["--db", str(db), "groups", "import", str(d), "--collection", "c"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"workbench: error: {d}:2: expected documents of collection 'c' version ")
    assert err.endswith(", found doc id 'nosuch'; check the ids")
    assert _rows(db) == [("g1", "d1", "a.tsv"), ("g1", "d2", "a.tsv")]
