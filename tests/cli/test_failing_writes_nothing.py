"""A command that exits non-zero has changed nothing (issue 9, "A failing command writes nothing").

Every command that writes to the store is run once with an input or option that
makes it fail, on a copy of a small project; the store (every table's row count
and content hash) and the files next to it must be exactly as before.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from tests.cli.tiny import LEAD_TOKEN
from workbench.cli import main


@pytest.fixture
def template(tiny_template):
    return tiny_template


def snapshot(db: Path) -> dict[str, object]:
    """Row count and an order-free content hash of every table and view, plus the files beside the store."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
        tables = {n: con.execute(f'SELECT count(*), sum(hash(t)::HUGEINT) FROM "{n}" t').fetchall()[0]
                  for n in names}
    files = {}
    for f in sorted(db.parent.rglob("*")):
        if f.is_file() and not f.name.startswith(db.name):
            files[str(f.relative_to(db.parent))] = hashlib.sha256(f.read_bytes()).hexdigest()
    return {"tables": tables, "files": files}


def _cases(folder: Path) -> dict[str, list[str]]:
    bad_qrels = folder / "bad.qrels"
    bad_qrels.write_text("1 0 d1 1\n1 0 nope 1\n")
    bad_run = folder / "bad.trec"
    bad_run.write_text("1 Q0 d1 1 1.0 x\n1 Q0 d2 2 notanumber x\n")
    off_scale = folder / "off.qrels"
    off_scale.write_text("1 0 d1 1\n2 0 d2 2147483647\n")
    bad_topics = folder / "topics.txt"
    bad_topics.write_text("1\nunknown-topic\n")
    bad_folder = folder / "broken"
    bad_folder.mkdir(exist_ok=True)
    (bad_folder / "corpus.jsonl").write_text('{"_id": "x1", "title": "a", "text": "b"}\n{"_id": 1\n')
    (bad_folder / "queries.jsonl").write_text('{"_id": "1", "text": "a"}\n')
    judged = folder / "judged.txt"
    judged.write_text("1 0 d1 1\n1 0 d3 9\n")  # the first line is fine, the second is off the 0-3 rubric
    rubric = folder / "rubric.toml"
    rubric.write_text('name = "mine"\nsource = "a lab"\n[[grades]]\ngrade = 0\nlabel = "no"\n')
    topic_meta = folder / "topic_meta.csv"
    topic_meta.write_text("topic_id,priority\n1,high\nnope,low\n")
    policy = folder / "gate.toml"
    policy.write_text('[gate]\nk = 3\nmeasures = ["R@3"]\nmin_topics = 2\nmin_topic_share = 0.1\n')
    (folder / "held.txt").write_text("1\n2\n3\n")
    a_folder = folder / "a-folder.png"
    a_folder.mkdir(exist_ok=True)
    (folder / "labels" / "v1.qrels").mkdir(parents=True, exist_ok=True)
    filters = folder / "filters.csv"
    filters.write_text("topic_id,filter\n1,year >= 1960\nnope,year >= 1\n")
    groups = folder / "groups.tsv"
    groups.write_text("g1\td1\ng1\td2\ng2\td3\ng2\tnope\n")
    no_answer = folder / "no_answer.csv"
    no_answer.write_text("topic_id,no_answer\n1,true\nzz,true\n")
    empty_topics = folder / "empty-topics.txt"
    empty_topics.write_text("")
    chunks = str(folder / "labels" / "chunks")  # beside the store: a stray write shows in the snapshot
    lead = ["--lead", "lead", "--token", LEAD_TOKEN]
    return {
        "score --plot out.exe": ["score", "bm25", "--qrels", "tiny-reference", "--plot", str(folder / "out.exe")],
        "score --plot /proc/x.png": ["score", "bm25", "--qrels", "tiny-reference", "--plot", "/proc/x.png"],
        "score --plot FOLDER": ["score", "bm25", "--qrels", "tiny-reference", "--plot", str(a_folder)],
        "score --format bad": ["score", "bm25", "--qrels", "tiny-reference", "--format", "xml"],
        "score unknown run": ["score", "bm25", "nope", "--qrels", "tiny-reference"],
        "ingest broken folder": ["ingest", str(bad_folder)],
        "qrels import unknown doc": ["qrels", "import", str(bad_qrels), "--name", "q2", "--collection", "tiny"],
        "qrels import off-rubric grade": ["qrels", "import", str(off_scale), "--name", "q3", "--collection", "tiny"],
        "qrels import control character": ["qrels", "import", str(folder / "tiny" / "qrels.reference.txt"), "--name", "q\x1b[31m",
                                           "--collection", "tiny"],
        "qrels export to a folder": ["qrels", "export", "tiny-reference", "--out", str(a_folder)],
        "run bm25 name taken": ["run", "bm25", "--collection", "tiny", "--name", "bm25", "--k1", "2"],
        "run bm25 control character": ["run", "bm25", "--collection", "tiny", "--name", "bm\r25"],
        "run fuse unknown run": ["run", "fuse", "bm25", "nope", "--name", "f"],
        "run import malformed": ["run", "import", str(bad_run), "--name", "bad", "--collection", "tiny"],
        "run export to /proc": ["run", "export", "bm25", "--out", "/proc/x.trec"],
        "pool build name taken": ["pool", "build", "--depth", "4", "bm25", "--name", "tiny-pool-v1"],
        "pool extend without --from, two lineages": ["pool", "extend", "imp"],
        "pool extend unknown run": ["pool", "extend", "nope", "--from", "tiny-pool-v1"],
        "users add taken": ["users", "add", "ann", "--lead", "lead", "--lead-token", LEAD_TOKEN],
        "users reset-token wrong lead token": ["users", "reset-token", "ann", "--lead", "lead",
                                               "--lead-token", "wrong-token-1"],
        "rubric unknown": ["rubric", "tiny", "nope", "--lead", "lead", "--token", LEAD_TOKEN],
        "assign unknown assessor": ["assign", "tiny-pool-v1", "--assessors", "ann,zed", "--lead", "lead",
                                    "--token", LEAD_TOKEN],
        "publish onto a folder": ["publish", "tiny-pool-v1", "--name", "v1", "--lead", "lead", "--token", LEAD_TOKEN],
        "topics set unknown topic": ["topics", "set", "smoke", "--from", str(bad_topics), "--collection", "tiny"],
        "judgments import off-rubric second line": ["judgments", "import", str(judged), "--pool", "tiny-pool-v1",
                                                    "--assessor", "ann", "--lead", "lead", "--token", LEAD_TOKEN],
        "adjudicate outside the queue": ["adjudicate", "tiny-pool-v1", "--topic", "1", "--doc", "d1", "--grade", "2",
                                         "--rationale", "r", "--lead", "lead", "--token", LEAD_TOKEN],
        "rubric define invalid file": ["rubric", "define", str(rubric), "--lead", "lead", "--token", LEAD_TOKEN],
        "metadata import-topics unknown topic": ["metadata", "import-topics", str(topic_meta), "--collection", "tiny"],
        "run rerank unknown candidates": ["run", "rerank", "--candidates", "nope", "--depth", "3", "--name", "rr"],
        "gate --out /proc, protected topic set": ["gate", "bm25", "bm25b", "--qrels", "tiny-reference", "--policy",
                                                  str(policy), "--topic-set", "held", "--out", "/proc/x.md"],
        "score --topic-set --plot out.exe": ["score", "bm25", "--qrels", "tiny-reference", "--topic-set", "held",
                                             "--plot", str(folder / "out.exe")],
        # The newer writing commands (robustness trial, item 5): each fails and must leave the store as it was.
        "misses --categorise unknown --collection": ["misses", "bm25", "--qrels", "tiny-reference", "--categorise",
                                                     "--collection", "nope"],
        "misses --categorise --cause bogus": ["misses", "bm25", "--qrels", "tiny-reference", "--categorise",
                                              "--cause", "bogus"],
        "miss-cause on a document that is not a miss": ["miss-cause", "bm25", "--qrels", "tiny-reference", *lead,
                                                        "--k", "1", "--topic", "1", "--doc", "d1", "--cause",
                                                        "found deeper", "--note", "n"],
        "miss-cause --cause bogus": ["miss-cause", "bm25", "--qrels", "tiny-reference", *lead, "--k", "1", "--topic",
                                     "2", "--doc", "d5", "--cause", "bogus", "--note", "n"],
        "run dense --index hnsw --param nope=3": ["run", "dense", "--collection", "tiny", "--name", "d", "--index",
                                                  "hnsw", "--param", "nope=3"],
        "run dense --index ivf, nlist > documents": ["run", "dense", "--collection", "tiny", "--name", "d", "--index",
                                                     "ivf", "--param", "nlist=100"],
        "run dense --index bogus": ["run", "dense", "--collection", "tiny", "--name", "d", "--index", "bogus"],
        "filters import unknown topic": ["filters", "import", str(filters), "--collection", "tiny"],
        "groups import unknown document": ["groups", "import", str(groups), "--collection", "tiny"],
        "convert chunk --overlap = --size": ["convert", "chunk", "tiny", "--name", "c1", "--size", "4", "--overlap",
                                             "4", "--out", chunks],
        "convert chunk unknown collection": ["convert", "chunk", "nope", "--name", "c1", "--size", "4", "--out",
                                             chunks],
        "no-answer marks for an unknown topic": ["metadata", "import-topics", str(no_answer), "--collection", "tiny"],
        "score --no-answer missing file": ["score", "bm25", "--qrels", "tiny-reference", "--no-answer",
                                           str(folder / "nope.txt")],
        "judgments import --format xml": ["judgments", "import", str(judged), "--pool", "tiny-pool-v1", "--assessor",
                                          "ann", *lead, "--format", "xml"],
        "run rerank deeper than the candidates": ["run", "rerank", "--candidates", "bm25", "--depth", "50", "--name",
                                                  "rr"],
        "run rerank name taken": ["run", "rerank", "--candidates", "bm25", "--depth", "3", "--name", "bm25b"],
        # QA trial (brk9b): outputs are written before the store changes; an empty selection pools nothing.
        "score --out /dev/full": ["score", "bm25", "--qrels", "tiny-reference", "-m", "R@3", "--out", "/dev/full"],
        "gate --out /dev/full, protected topic set": ["gate", "bm25", "bm25b", "--qrels", "tiny-reference",
                                                      "--policy", str(policy), "--topic-set", "held", "--out",
                                                      "/dev/full"],
        "pool build --topics empty file": ["pool", "build", "bm25", "--depth", "4", "--topics", str(empty_topics),
                                           "--name", "py"],
    }

SETUP = {  # steps a case needs first (not part of the snapshot comparison)
    "pool extend without --from, two lineages": [["pool", "build", "--depth", "3", "bm25b"]],  # a second root
    "gate --out /proc, protected topic set": [["topics", "set", "held", "--from", "held.txt", "--collection", "tiny",
                                               "--protected"]],
    "score --topic-set --plot out.exe": [["topics", "set", "held", "--from", "held.txt", "--collection", "tiny",
                                          "--protected"]],
    "gate --out /dev/full, protected topic set": [["topics", "set", "held", "--from", "held.txt", "--collection",
                                                   "tiny", "--protected"]],
}



def _case_names() -> list[str]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "labels").mkdir()
        (Path(tmp) / "imported.trec").write_text("")
        return list(_cases(Path(tmp)))


@pytest.mark.parametrize("case", _case_names())
def test_a_failing_command_leaves_the_store_and_its_folder_unchanged(template, tmp_path, case, capsys):
    folder, db = template
    work = tmp_path / "project"
    shutil.copytree(folder, work, ignore=shutil.ignore_patterns("*.waiting", "*.holder.json"))
    wdb = work / db.relative_to(folder)
    argv = _cases(work)[case]
    cwd = os.getcwd()
    os.chdir(work)  # nothing may land in the working folder either
    try:
        for step in SETUP.get(case, []):
            assert main(["--db", str(wdb), "-q", *step]) == 0, step
        before = snapshot(wdb)
        code = main(["--db", str(wdb), *argv])
    finally:
        os.chdir(cwd)
    err = capsys.readouterr().err
    assert code != 0, (case, err)
    if case.startswith("gate"):
        assert code == 3, err  # the gate's usage code: 1 would read as a failed gate
    assert "Traceback" not in err
    assert snapshot(wdb) == before, (case, err)
