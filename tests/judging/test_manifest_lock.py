"""Exports into one labels folder from several processes keep every manifest entry (the manifest's lock).

The tester ran ``publish`` and ``qrels export`` at once and lost manifest entries: each read the
manifest, wrote its file, rewrote the manifest, and the last writer's manifest dropped the other's
entry. ``qrels_files.manifest_lock`` (``fcntl.flock`` on ``.manifest.json.lock``) serialises the
read-modify-write. No timing: two processes export many versions each, and every one must be there.
A killed export's temporary files are removed by the next export and listed by ``qrels verify``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.services.judging.qrels_files import export_qrels, leftovers

ROUNDS = 40


@dataclass(frozen=True)
class _Info:
    name: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "content_hash": f"h-{self.name}"}


class _Versions:
    """The three methods ``export_qrels`` uses, without a store (no database lock to contend for)."""

    def get_qrels_info(self, name: str) -> _Info:
        return _Info(name)

    def get_qrels(self, name: str) -> dict[str, dict[str, int]]:
        return {"1": {f"d-{name}": 1}}

    def record_export(self, name: str, file_name: str) -> None:  # pragma: no cover - out= is never the default
        raise AssertionError("not called: the test exports with out=")


def _export_many(folder: str, prefix: str) -> None:
    for i in range(ROUNDS):
        name = f"{prefix}{i}"
        export_qrels(_Versions(), name, out=Path(folder) / f"{name}.qrels", labels_dir=Path(folder) / "elsewhere")


def test_two_processes_exporting_into_one_folder_keep_every_entry(tmp_path):
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_export_many, args=(str(tmp_path), p)) for p in ("a", "b")]
    for w in workers:
        w.start()
    for w in workers:
        w.join(300)
        assert w.exitcode == 0
    entries = json.loads((tmp_path / "manifest.json").read_text())["qrels_versions"]
    expected = {f"{p}{i}" for p in ("a", "b") for i in range(ROUNDS)}
    assert set(entries) == expected
    for name in expected:
        assert entries[name]["file"] == f"{name}.qrels"
        assert (tmp_path / f"{name}.qrels").read_text() == f"1 0 d-{name} 1\n"
    assert leftovers(tmp_path) == []


def test_an_export_removes_what_a_killed_export_left(tmp_path):
    left = [tmp_path / ".v1.qrels.k2j_x8.tmp", tmp_path / ".manifest.json.q9zz1a.tmp"]
    other = [tmp_path / ".notes.txt.ab12.tmp", tmp_path / "v1.qrels.tmp"]  # not an export's temporary files
    for p in left + other:
        p.write_text("partial")
        os.utime(p, (1_000_000_000, 1_000_000_000))  # 2001: no live export's
    assert leftovers(tmp_path) == sorted(left)
    export_qrels(_Versions(), "v2", out=tmp_path / "v2.qrels", labels_dir=tmp_path / "elsewhere")
    assert [p for p in left + other if p.exists()] == other
    assert set(json.loads((tmp_path / "manifest.json").read_text())["qrels_versions"]) == {"v2"}
