"""Concurrency and durability through exactly the code path the UI's judging
page uses (``services.judging.assessments``: sign_in, queue_state, load_view, save_judgment):

* 8 assessor sessions in threads each save 200 judgments while `workbench`
  CLI processes extend the pool, publish, score (recording evaluations) and
  list: every judgment lands once and every CLI command exits 0;
* a process killed with SIGKILL in the middle of judging loses no judgment
  it had acknowledged.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

from workbench.types import Document, RunInfo, Topic

N_ASSESSORS = 8
PER_ASSESSOR = 200
LEAD_TOKEN = "lead-token-1"
WORKBENCH = str(Path(sys.executable).with_name("workbench"))


def _seed(db: Path) -> None:
    """150 documents, 2 topics; run `base` pooled to depth 100 (200 entries) as p1,
    run `newer` (documents 100-149) stored for `pool extend`; 8 assessors each
    assigned all 200 entries."""
    from pooling.pool import build_pool
    from workbench.services.judging import assessments as svc
    from workbench.store import Store

    store = Store(db, client="seed", lock_timeout_s=60)
    docs = [Document(f"doc{i:03d}", f"Title {i}", f"flow text {i} " * 5) for i in range(150)]
    store.collections.ingest_collection("big", docs, [Topic("1", "flow"), Topic("2", "text")])
    version = store.collections.latest_collection_version("big")
    base = {t: {f"doc{i:03d}": float(200 - i) for i in range(100)} for t in ("1", "2")}
    newer = {t: {f"doc{i:03d}": float(200 - i) for i in range(100, 150)} for t in ("1", "2")}
    store.runs.save_run(RunInfo("base", "imported", {}, 100, "big", version), base)
    store.runs.save_run(RunInfo("newer", "imported", {}, 50, "big", version), newer)
    store.pools.save_pool("p1", build_pool({"base": base}, 100), collection="big", collection_version=version)
    store.users.add_user("lead", "lead", token=LEAD_TOKEN)
    for k in range(N_ASSESSORS):
        store.users.add_user(f"a{k}", "assessor", token=f"a{k}-token-1", lead="lead")
    lead = svc.sign_in(store.users, "lead", LEAD_TOKEN)
    svc.assign_pool(store, lead, "p1", [f"a{k}" for k in range(N_ASSESSORS)], overlap=N_ASSESSORS, seed=5)


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([WORKBENCH, "--db", str(db), *args], capture_output=True, text=True, timeout=600)


def test_eight_sessions_save_while_cli_commands_run(tmp_path):
    from workbench.services.judging import assessments as svc
    from workbench.store import Store

    db = tmp_path / "wb.duckdb"
    _seed(db)
    from workbench.app import STORE_LINGER_S

    # One store object per process, configured as the UI's st.cache_resource holds it.
    store = Store(db, client="workbench ui (test)", lock_timeout_s=120, linger_s=STORE_LINGER_S)
    saved: dict[str, list[tuple[int, str, str, int]]] = {f"a{k}": [] for k in range(N_ASSESSORS)}
    errors: list[BaseException] = []
    progress = threading.Semaphore(0)

    def session(name: str) -> None:
        try:
            s = svc.sign_in(store.users, name, f"{name}-token-1")
            position = svc.queue_state(store.judging, s).resume
            for _ in range(PER_ASSESSOR):
                state = svc.queue_state(store.judging, s)  # the sidebar and the page read it on every run
                assert state.n_total == 200
                view = svc.load_view(store.judging, s, position)
                assert view is not None
                grade = (int(view.document.doc_id[3:]) + int(name[1:])) % 4
                jid = svc.save_judgment(store, s, view, grade=grade, duration_ms=5, save_token=uuid.uuid4().hex)
                saved[name].append((jid, view.topic.topic_id, view.document.doc_id, grade))
                position += 1
                progress.release()
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=session, args=(f"a{k}",)) for k in range(N_ASSESSORS)]
    for t in threads:
        t.start()
    for _ in range(80):  # let the sessions get going before the lead's CLI commands start
        progress.acquire(timeout=120)

    commands = [
        ("pool", "extend", "newer", "--from", "p1", "--name", "p2"),
        ("publish", "p1", "--name", "mid-judging", "--lead", "lead", "--token", LEAD_TOKEN),
        ("score", "base", "newer", "--qrels", "mid-judging", "-m", "R@100", "--missing", "zero", "--record"),
        ("qrels", "list"),
        ("pool", "stats", "p2"),
    ]
    results = []
    for cmd in commands:
        before = sum(len(v) for v in saved.values())
        res = _cli(db, *cmd)
        results.append((cmd, res, before, sum(len(v) for v in saved.values())))
    for t in threads:
        t.join(timeout=600)
    for cmd, res, before, after in results:
        print(f"{' '.join(cmd)}: rc={res.returncode}, saves during it: {after - before}")
        print(res.stderr.strip()[-500:])

    assert not errors, errors[:3]
    for cmd, res, _before, _after in results:
        assert res.returncode == 0, (cmd, res.stdout, res.stderr)
        assert "Traceback" not in res.stderr
    # The CLI ran while the sessions were saving: saves landed during the commands.
    assert any(after > before for _c, _r, before, after in results), [(c, b, a) for c, _r, b, a in results]

    every = [row for rows in saved.values() for row in rows]
    assert len(every) == N_ASSESSORS * PER_ASSESSOR
    current = store.judgments.current_judgments("big")
    assert store.judgments.count_judgments("big") == N_ASSESSORS * PER_ASSESSOR  # none duplicated
    assert len(current) == N_ASSESSORS * PER_ASSESSOR
    stored = {(j.assessor, j.topic_id, j.doc_id): (j.judgment_id, j.grade) for j in current}
    for name, rows in saved.items():
        for jid, topic_id, doc_id, grade in rows:
            assert stored[(name, topic_id, doc_id)] == (jid, grade)
    assert store.pools.get_pool("p2").n_entries == 100  # 50 pool-novel documents per topic
    assert store.qrels.get_qrels_info("mid-judging").pool_version == "p1"


KILLED = textwrap.dedent(
    """
    import sys, uuid
    from workbench.services.judging import assessments as svc
    from workbench.store import Store

    store = Store(sys.argv[1], client="killed ui", lock_timeout_s=60)
    s = svc.sign_in(store.users, "a0", "a0-token-1")
    position = svc.queue_state(store.judging, s).resume
    while True:
        view = svc.load_view(store.judging, s, position)
        if view is None:
            break
        jid = svc.save_judgment(store, s, view, grade=position % 4, save_token=uuid.uuid4().hex)
        print(f"ack {jid} {view.topic.topic_id} {view.document.doc_id} {position % 4}", flush=True)
        position += 1
    """
)


def test_sigkill_mid_judging_loses_no_acknowledged_judgment(tmp_path):
    from workbench.store import Store

    db = tmp_path / "wb.duckdb"
    _seed(db)
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(db)], stdout=subprocess.PIPE, text=True)
    acked: list[tuple[int, str, str, int]] = []
    assert proc.stdout is not None
    try:
        deadline = time.monotonic() + 120
        while len(acked) < 40 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            _ack, jid, topic_id, doc_id, grade = line.split()
            acked.append((int(jid), topic_id, doc_id, int(grade)))
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    acked.extend(
        (int(j), t, d, int(g)) for _a, j, t, d, g in (ln.split() for ln in proc.stdout.read().splitlines() if ln)
    )
    assert len(acked) >= 40

    store = Store(db, client="after kill")
    current = {(j.topic_id, j.doc_id): (j.judgment_id, j.grade) for j in store.judgments.current_judgments("big")}
    for jid, topic_id, doc_id, grade in acked:
        assert current[(topic_id, doc_id)] == (jid, grade)
    assert len(current) in (len(acked), len(acked) + 1)  # at most one committed but not yet acknowledged
