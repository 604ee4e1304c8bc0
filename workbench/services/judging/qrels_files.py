"""A qrels version and its exported file as one unit: the export, its checks against the store, verify.

A qrels version exported to the labels folder (the store's folder) is three things:
the stored version, the TREC file ``<labels>/<name>.qrels``, and its entry in
``<labels>/manifest.json`` (``formats.manifest``: the version's metadata, the file
name and the sha256 of its bytes). They are written in this order:

1. the store records the export (``qrels_exports``) in the transaction that
   creates the version (``publish``), or before the file is written (``qrels export``);
2. the file (atomic write);
3. the manifest entry (atomic write).

A process killed between two steps leaves a version without its file or without
its manifest entry, never a file of a version the store lacks. The stored
version is the truth: ``export_qrels`` (``workbench qrels export NAME``) writes the
file and the entry from it, so an interrupted export is completed by running it
again, and every command that meets an incomplete or changed export says so with
that command (``check_export``: publish, score with the version, ``qrels list``,
the app's Qrels versions page). ``verify_exports`` (``workbench qrels verify``)
checks every exported file and manifest entry against the store, and reads each
file's entries (``deep``).

A qrels file given to ``score`` that a ``manifest.json`` beside it records under
another sha256 (``scored_file_mismatch``) was edited after its export: scoring
refuses it unless asked to score the edit (``docs/scoring.md``, "Exported qrels
files").
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import StoreError, UnknownNameError, ValidationError, WorkbenchError
from workbench.formats.manifest import (
    VERSIONS,
    entry_for_file,
    file_sha256,
    manifest_of,
    read_manifest,
    write_manifest,
)

if TYPE_CHECKING:
    from workbench.store.qrels import Qrels, QrelsVersionInfo


def export_file_name(name: str) -> str:
    """The file a qrels version is exported to in the labels folder: ``<name>.qrels``."""
    return f"{name}.qrels"


def export_command(name: str) -> str:
    """The command that writes a version's file and manifest entry from the store."""
    return f"`workbench qrels export {name}`"


# -- export ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportResult:
    """An exported qrels version.

    Attributes:
        path: the file written (``-``: standard output).
        sha256: the sha256 of its bytes.
        manifest: the manifest updated, or None (standard output: no manifest).
        replaced: what the export replaced that differed from the stored version, one
            line each (an edited file, an edited manifest entry); empty when nothing did.
    """

    path: Path
    sha256: str
    manifest: Path | None
    replaced: tuple[str, ...] = ()


def export_qrels(
    qrels_versions: Qrels, name: str, *, out: str | Path | None = None, labels_dir: str | Path = "labels",
) -> ExportResult:
    """Export a qrels version to a TREC qrels file and record it in the folder's ``manifest.json``.

    Exporting to the labels folder (the default target) first records the export in
    the store, then writes the file, then the manifest entry: run again, it completes
    an export that was interrupted (a publish killed after its commit).

    Args:
        qrels_versions: the store's qrels versions.
        name: the qrels version.
        out: the target file; default ``<labels_dir>/<name>.qrels``; ``-`` is standard output (no manifest).
        labels_dir: the labels folder (the database's folder).

    Returns:
        An ``ExportResult``; ``replaced`` says what differed from the stored version and was
        replaced (the file's bytes, fields of the manifest entry), so an edit is never
        overwritten silently.

    Raises:
        UnknownNameError: unknown qrels version.
        InputFormatError, ValidationError: the manifest is not valid JSON or not a manifest
            (nothing is written then).
    """
    info = qrels_versions.get_qrels_info(name)
    qrels = qrels_versions.get_qrels(name)
    if out is not None and str(out) == "-":  # standard output: the qrels only, no manifest (there is no folder)
        return _to_stdout(name, qrels)
    default = Path(labels_dir) / export_file_name(name)
    path = Path(out) if out is not None else default
    manifest = manifest_of(path.parent)
    read_manifest(manifest)  # a broken manifest refuses the export before anything is written
    if path.absolute() == default.absolute():
        qrels_versions.record_export(name, path.name)
    with manifest_lock(manifest):  # read, write the file, rewrite the manifest: one writer at a time
        clean_leftovers(path.parent)
        document = read_manifest(manifest)  # again: another export may have added its entry meanwhile
        old_sha = file_sha256(path) if path.is_file() else None
        _write_file(path, qrels)
        digest = file_sha256(path)
        replaced = _replaced(document, name, path, manifest, old_sha, digest, expected_entry(info, path.name, digest))
        document[VERSIONS][name] = expected_entry(info, path.name, digest)
        _write_manifest(manifest, document)
    return ExportResult(path, digest, manifest, tuple(replaced))


def _replaced(document: Mapping[str, Any], name: str, path: Path, manifest: Path, old_sha: str | None, digest: str,
              entry: Mapping[str, Any]) -> list[str]:
    """What an export replaces that differed from the stored version (``ExportResult.replaced``)."""
    old = document[VERSIONS].get(name)
    replaced = []
    if old_sha is not None and old_sha != digest:
        replaced.append(f"replaced {path}, which had changed since its export (sha256 {old_sha[:12]}, "
                        f"the stored version's {digest[:12]})")
    if old is not None:
        differences = entry_differences(old, entry)
        if differences:
            replaced.append(f"replaced the entry of {name} in {manifest}, which differed from the stored version: "
                            + "; ".join(differences))
    return replaced


LOCK_SUFFIX = ".lock"
"""The lock file beside a manifest: ``.manifest.json.lock`` (empty; its ``flock`` is the lock)."""

_LOADED_AT = time.time()
"""When this process loaded the module: a leftover temporary file older than this is no live export's."""


def lock_file_of(manifest: Path) -> Path:
    """The lock file of a manifest: ``<folder>/.manifest.json.lock``."""
    return manifest.parent / f".{manifest.name}{LOCK_SUFFIX}"


@contextlib.contextmanager
def manifest_lock(manifest: Path) -> Iterator[None]:
    """Hold the exclusive lock of a folder's manifest (``fcntl.flock`` on ``.manifest.json.lock``).

    Every export takes it around reading the manifest, writing its file and rewriting
    the manifest, so two processes exporting into one folder (``publish``, ``qrels export``)
    both keep their entries: without it the last writer's manifest dropped the other's entry.
    Blocks until the lock is free. Where ``fcntl`` does not exist (Windows) it does nothing.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - POSIX only
        yield
        return
    lock = lock_file_of(manifest)
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+b") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def leftovers(folder: str | Path) -> list[Path]:
    """Temporary files a killed export left in a labels folder: ``.NAME.qrels.*.tmp``, ``.manifest.json.*.tmp``.

    (``formats.io.atomic_write`` names its temporary file ``.<target>.<random>.tmp``.)
    """
    found = []
    with contextlib.suppress(OSError):
        for p in Path(folder).glob(".*.tmp"):
            target = p.name[1:].rsplit(".", 2)[0]
            if p.is_file() and (target.endswith(".qrels") or target == manifest_of(folder).name):
                found.append(p)
    return sorted(found)


def clean_leftovers(folder: Path) -> list[Path]:
    """Remove the leftovers (``leftovers``) older than this process; call it holding ``manifest_lock``.

    Every export writes its temporary files while holding the lock, so one present when the
    lock is taken belongs to a process that was killed (a file newer than this process is left
    alone: it may be a writer that does not take the lock).
    """
    removed = []
    for p in leftovers(folder):
        with contextlib.suppress(OSError):
            if p.stat().st_mtime < _LOADED_AT:
                p.unlink()
                removed.append(p)
    return removed


def _to_stdout(name: str, qrels: Mapping[str, Mapping[str, int]]) -> ExportResult:
    import hashlib
    import sys
    import tempfile

    from workbench.formats import trec

    with tempfile.TemporaryDirectory(prefix="wb-qrels-") as tmp:
        staged = Path(tmp) / export_file_name(name)
        trec.write_qrels(staged, qrels)
        data = staged.read_bytes()
    sys.stdout.write(data.decode("utf-8"))
    sys.stdout.flush()
    return ExportResult(Path("-"), hashlib.sha256(data).hexdigest(), None)


def _write_file(path: Path, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Step 2 of an export: the TREC file (atomic)."""
    from workbench.formats import trec

    trec.write_qrels(path, qrels)


def _write_manifest(path: Path, document: Mapping[str, Any]) -> None:
    """Step 3 of an export: the manifest with the version's entry (atomic)."""
    write_manifest(path, document)


def expected_entry(info: QrelsVersionInfo, file_name: str, file_digest: str) -> dict[str, Any]:
    """The manifest entry of a stored version exported to ``file_name`` with bytes of sha256 ``file_digest``."""
    return info.as_dict() | {"file": file_name, "file_sha256": file_digest}


def entry_differences(entry: object, expected: Mapping[str, Any]) -> list[str]:
    """How a manifest entry differs from the expected one, one ``field: manifest X, store Y`` each.

    ``created_at`` values are compared as instants (the same time written in another
    time zone is the same value). An extra field is a difference too.
    """
    if not isinstance(entry, Mapping):
        return [f"the entry is {type(entry).__name__} {_shown(entry)}, not an object"]
    out = []
    for key in sorted(set(expected) | set(entry)):
        if key not in entry:
            out.append(f"{key}: missing, store {_shown(expected[key])}")
        elif key not in expected:
            out.append(f"{key}: manifest {_shown(entry[key])}, not a field of the store's")
        elif not _same(key, entry[key], expected[key]):
            out.append(f"{key}: manifest {_shown(entry[key])}, store {_shown(expected[key])}")
    return out


def _same(key: str, found: object, expected: object) -> bool:
    if key == "created_at" and isinstance(found, str) and isinstance(expected, str):
        with contextlib.suppress(ValueError):
            return dt.datetime.fromisoformat(found) == dt.datetime.fromisoformat(expected)
    return found == expected


def _shown(value: object, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- checks ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportCheck:
    """How a qrels version's export agrees with the store.

    Attributes:
        name: the qrels version (or the name a manifest entry gives).
        file: its exported file in the labels folder.
        exported: the version is exported, or meant to be: the store records its export,
            the manifest has an entry for it, or its file exists.
        stored: the store holds the version.
        problems: each disagreement, one phrase each (empty: the export agrees, or there is none).
        short: the problems in a word or two each, for lists (``missing file``, ``edited file``, ...).
    """

    name: str
    file: Path
    exported: bool
    stored: bool = True
    problems: tuple[str, ...] = ()
    short: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when there is nothing to mend."""
        return not self.problems

    def status(self) -> str:
        """One word for lists: ``ok``, ``-`` (not exported) or the problems' short names."""
        if self.problems:
            return ", ".join(self.short)
        return "ok" if self.exported else "-"

    def remedy(self) -> str:
        """How to mend it."""
        if "edited store entries" in self.short:
            return ("restore the store from a backup (the stored version is the truth an export is checked "
                    "against), or import or publish the qrels again under a new name")
        if "unreadable manifest" in self.short:
            return (f"fix or delete {manifest_of(self.file.parent)}, then run {export_command(self.name)} (and the "
                    "same for every other exported version)")
        if not self.stored:
            return (f"remove the entry {self.name!r} (and its file) from {manifest_of(self.file.parent)}, or use "
                    "the store it was exported from (--db)")
        how = f"{export_command(self.name)} writes the file and its manifest entry from the stored version"
        if "edited file" in self.short:
            how += (" (it replaces the edited file: to keep the edit, copy it first and import the copy as a new "
                    "version with `workbench qrels import COPY --name NEW --collection ...`)")
        return how

    def describe(self) -> str:
        """One line: the version, each problem, and the remedy."""
        return f"qrels version {self.name}: {'; '.join(self.problems)}. Mend it: {self.remedy()}"


def check_export(qrels_versions: Qrels, labels_dir: str | Path, name: str, *, deep: bool = False) -> ExportCheck:
    """How one qrels version's export agrees with the store (see ``check_exports``).

    Raises:
        UnknownNameError: neither the store nor the manifest knows ``name``.
    """
    [check] = check_exports(qrels_versions, labels_dir, [name], deep=deep)
    return check


def check_exports(
    qrels_versions: Qrels, labels_dir: str | Path, names: Sequence[str] | None = None, *, deep: bool = False,
) -> list[ExportCheck]:
    """How each qrels version's export in the labels folder agrees with the store.

    A version is exported when the store records its export, the manifest has an entry
    for it, or its file ``<name>.qrels`` exists; then the file must exist, the manifest
    entry must exist and equal the stored version's metadata with the file's name, and
    the file's bytes must have the sha256 the entry records. ``deep`` also reads the
    file and compares its entries' content hash with the stored version's.

    Args:
        qrels_versions: the store's qrels versions.
        labels_dir: the labels folder.
        names: the versions to check; None = every stored version and every manifest entry.
        deep: also read each file (``qrels verify``); otherwise no file is parsed.

    Returns:
        One ``ExportCheck`` per version, stored versions first (oldest first), then the
        manifest entries naming versions the store does not hold. A manifest that cannot
        be read is a problem of every version it should record.

    Raises:
        UnknownNameError: a name in ``names`` that neither the store nor the manifest knows.
    """
    folder = Path(labels_dir)
    infos = {v.name: v for v in qrels_versions.list_qrels_versions()}
    recorded = qrels_versions.exported_files()
    try:
        entries: dict[str, Any] = read_manifest(manifest_of(folder))[VERSIONS]
        manifest_error = ""
    except WorkbenchError as e:
        entries, manifest_error = {}, str(e)
    if names is None:
        wanted = list(infos) + [n for n in entries if n not in infos]
    else:
        wanted = list(dict.fromkeys(names))
        unknown = [n for n in wanted if n not in infos and n not in entries]
        if unknown:
            raise UnknownNameError("qrels version", unknown[0], list(infos))
    return [_check_one(n, infos.get(n), recorded.get(n), entries.get(n), folder, manifest_error, deep)
            for n in wanted]


def _check_one(name: str, info: QrelsVersionInfo | None, recorded: str | None, entry: Any, folder: Path,
               manifest_error: str, deep: bool) -> ExportCheck:
    """The checks of one version: see ``check_exports``."""
    entry_file = entry.get("file") if isinstance(entry, Mapping) else None
    file_name = recorded or (entry_file if isinstance(entry_file, str) and entry_file else export_file_name(name))
    path = folder / file_name
    exists = path.is_file()
    manifest = manifest_of(folder)
    if info is None:
        return ExportCheck(name, path, True, False,
                           (f"{manifest} has an entry for qrels version {name!r}, which this store does not hold",),
                           ("no stored version",))
    exported = recorded is not None or entry is not None or exists
    if not exported:
        return ExportCheck(name, path, False)
    problems: list[tuple[str, str]] = []
    if not exists:
        problems.append(("missing file", f"its file {path} is missing (an export or publish was interrupted "
                                         "after its commit, or the file was removed)"))
    if manifest_error:
        problems.append(("unreadable manifest", f"the manifest cannot be read: {manifest_error}"))
    elif entry is None:
        problems.append(("no manifest entry", f"{manifest} has no entry for it"))
    else:
        digest = file_sha256(path) if exists else None
        recorded_sha = entry.get("file_sha256") if isinstance(entry, Mapping) else None
        differences = entry_differences(entry, expected_entry(info, file_name, str(recorded_sha)))
        if differences:
            problems.append(("edited manifest entry", f"its entry in {manifest} differs from the stored version: "
                                                      + "; ".join(differences)))
        if digest is not None and recorded_sha != digest:
            problems.append(("edited file", f"{path} has sha256 {digest[:12]}, the manifest records "
                                            f"{str(recorded_sha)[:12]} (the file was changed after its export)"))
    if deep and exists:
        problems.extend(_content_problems(path, info))
    return ExportCheck(name, path, True, True, tuple(p for _, p in problems),
                       tuple(dict.fromkeys(k for k, _ in problems)))


def _content_problems(path: Path, info: QrelsVersionInfo) -> list[tuple[str, str]]:
    """The file's entries against the stored version's content hash (``deep``)."""
    from workbench.formats import trec
    from workbench.hashing import qrels_content_hash

    try:
        found = qrels_content_hash(trec.read_qrels(path))
    except WorkbenchError as e:
        return [("unreadable file", f"{path} is not a qrels file any more: {e}")]
    if found != info.content_hash:
        return [("edited file", f"{path} holds other entries than the stored version (content hash "
                                f"{found[:12]}, stored {info.content_hash[:12]})")]
    return []


@dataclass(frozen=True)
class Verification:
    """What ``verify_exports`` found.

    Attributes:
        checks: one per version checked (see ``check_exports``).
        manifest: the manifest checked.
        manifest_error: why the manifest cannot be read ("" when it can, or there is none).
        leftovers: temporary files a killed export left in the folder (``leftovers``): listed, not
            a disagreement (the next export removes them).
    """

    checks: tuple[ExportCheck, ...]
    manifest: Path
    manifest_error: str = ""
    leftovers: tuple[Path, ...] = ()

    @property
    def problems(self) -> tuple[ExportCheck, ...]:
        """The checks with something to mend."""
        return tuple(c for c in self.checks if not c.ok)

    @property
    def ok(self) -> bool:
        """True when the manifest and every checked version agree with the store."""
        return not self.problems and not self.manifest_error

    def lines(self) -> list[str]:
        """Each mismatch, one line naming it and how to mend it (the manifest's own first)."""
        head = [f"{self.manifest_error} Then export every exported version again (`workbench qrels export NAME`)."
                ] if self.manifest_error else []
        tail = [f"{p}: a temporary file an interrupted export left; remove it (the next export into "
                f"{self.manifest.parent} removes it)" for p in self.leftovers]
        return head + [c.describe() for c in self.problems] + tail

    def summary(self) -> str:
        """One line: how many exported files agree (and how many versions are not exported)."""
        exported = [c for c in self.checks if c.exported]
        unexported = [c.name for c in self.checks if not c.exported]
        not_exported = len(unexported)
        if not self.ok:
            return (f"{len(self.problems)} of {len(self.checks)} qrels version(s) disagree with the store"
                    + (" and the manifest cannot be read" if self.manifest_error else "")
                    + f" (manifest {self.manifest}); each is named above with how to mend it")
        return (f"verified: {len(exported)} exported qrels file(s) and their entries in {self.manifest} agree "
                f"with the store" + (f" ({not_exported} version(s) not exported: {_names(unexported)})"
                                     if not_exported else ""))


def _names(names: list[str], shown: int = 5) -> str:
    """Up to ``shown`` names, then how many more."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more:,} more" if more > 0 else "")


def _with_store_check(qrels_versions: Qrels, check: ExportCheck) -> ExportCheck:
    """``check`` with one more problem when the stored version's entries no longer hash to its recorded
    content hash (``Qrels.get_qrels`` recomputes it: an SQL edit of ``qrels_entries``)."""
    if not check.stored:
        return check
    try:
        qrels_versions.get_qrels(check.name)
    except StoreError as e:
        return dataclasses.replace(check, problems=(*check.problems, f"the store's entries were edited: {e}"),
                                   short=(*check.short, "edited store entries"))
    return check


def verify_exports(qrels_versions: Qrels, labels_dir: str | Path, names: Sequence[str] | None = None) -> Verification:
    """Check exported qrels files and the manifest against the store, reading every file (``deep``).

    Every stored version's entries are also hashed again (``Qrels.get_qrels``): a version whose
    ``qrels_entries`` were edited outside the workbench is a problem, exported or not.

    With ``names``, each named version must be exported and agree: a named version that
    was never exported is a problem (there is no file to trust).

    Raises:
        UnknownNameError: a name neither the store nor the manifest knows.
    """
    checks = check_exports(qrels_versions, labels_dir, names, deep=True)
    if names is not None:
        checks = [c if c.exported or not c.stored else
                  ExportCheck(c.name, c.file, False, True,
                              (f"it was never exported to {c.file.parent} (no file, no manifest entry)",),
                              ("not exported",))
                  for c in checks]
    checks = [_with_store_check(qrels_versions, c) for c in checks]
    try:
        read_manifest(manifest_of(labels_dir))
        manifest_error = ""
    except WorkbenchError as e:
        manifest_error = str(e)
    return Verification(tuple(checks), manifest_of(labels_dir), manifest_error, tuple(leftovers(labels_dir)))


# -- a qrels file given to score -----------------------------------------------------------


@dataclass(frozen=True)
class ScoredFileMismatch:
    """A qrels file that a ``manifest.json`` beside it records under another sha256.

    Attributes:
        path: the file given.
        name: the qrels version the manifest says the file is.
        recorded: the sha256 the manifest records.
        found: the sha256 of the file's bytes now.
    """

    path: str
    name: str
    recorded: str
    found: str

    def describe(self) -> str:
        """What is wrong, in one phrase."""
        return (f"{self.path} is recorded in {manifest_of(Path(self.path).parent)} as qrels version {self.name} "
                f"with sha256 {self.recorded[:12]}, but its bytes now have sha256 {self.found[:12]}: it was edited "
                "after its export, so it is not qrels version " + self.name)


def scored_file_mismatch(path: str | Path) -> ScoredFileMismatch | None:
    """The mismatch of a qrels file with the manifest beside it, or None when it agrees.

    None also when there is no ``manifest.json`` beside the file, it is not a workbench
    manifest (not JSON, or not an object with ``qrels_versions``: the name is common), or it
    records no entry for the file: a plain qrels file. ``qrels verify`` reports a broken
    manifest of the labels folder. Costs one ``stat`` for a file without a manifest; with
    one, the manifest is read and the file hashed.
    """
    path = Path(path)
    manifest = manifest_of(path.parent)
    if not manifest.is_file():
        return None
    try:
        document = read_manifest(manifest)
    except WorkbenchError:
        return None
    found = entry_for_file(document, path.name)
    if found is None:
        return None
    name, entry = found
    digest = file_sha256(path)
    recorded = entry.get("file_sha256")
    if recorded == digest:
        return None
    return ScoredFileMismatch(str(path), name, str(recorded), digest)


class EditedQrelsError(ValidationError):
    """A qrels file given to score was edited after its export (``ScoredFileMismatch``)."""

    def __init__(self, mismatch: ScoredFileMismatch, how_to_allow: str) -> None:
        self.mismatch = mismatch
        super().__init__(
            f"{mismatch.describe()}. Nothing was scored. Score the stored version by name (--qrels {mismatch.name}), "
            f"restore the file with {export_command(mismatch.name)}, or copy the edited file to a name the manifest "
            f"does not record and score the copy" + (f" ({how_to_allow})" if how_to_allow else "")
        )
