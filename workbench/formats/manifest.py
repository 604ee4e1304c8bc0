"""The labels folder's ``manifest.json``: which exported qrels file is which qrels version.

Shape (JSON, keys sorted, two-space indent, a final newline; written atomically)::

    {"qrels_versions": {"v1": {"name": "v1", "collection": "cranfield", ..., "content_hash": "...",
                               "created_at": "2025-01-01T10:00:00+00:00",
                               "file": "v1.qrels", "file_sha256": "..."}}}

Each entry is the version's metadata as the store holds it
(``store.qrels.QrelsVersionInfo.as_dict``) plus the exported file's name (in the
manifest's folder) and the sha256 of its bytes. Other top-level keys are kept as
they are. Reading and writing only: what an entry must agree with is
``services.judging.qrels_files``'s business.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.errors import InputFormatError, ValidationError

MANIFEST = "manifest.json"
"""The manifest's file name, in the folder of the files it records."""

VERSIONS = "qrels_versions"
"""The top-level key holding qrels version name -> entry."""


def manifest_of(folder: str | Path) -> Path:
    """The manifest of a folder of exported qrels files."""
    return Path(folder) / MANIFEST


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The manifest document (``{"qrels_versions": {}}`` when the file does not exist).

    Args:
        path: the ``manifest.json`` file.

    Returns:
        The whole JSON object; ``document["qrels_versions"]`` maps version names to entries
        (an entry is whatever the file holds: a dict unless edited into something else).

    Raises:
        InputFormatError: not valid JSON (path and line).
        ValidationError: a folder, unreadable, not UTF-8, or not an object with ``qrels_versions``.
    """
    path = Path(path)
    if path.is_dir():
        raise ValidationError(f"{path}: expected the manifest file, found a folder; remove or rename it")
    if not path.exists():
        return {VERSIONS: {}}
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputFormatError(
            str(path), e.lineno, f"expected JSON, found invalid JSON ({e.msg}). Fix or delete the manifest."
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValidationError(f"{path}: expected a readable UTF-8 manifest, found {e}; fix or delete it") from None
    if not (isinstance(loaded, dict) and isinstance(loaded.get(VERSIONS), dict)):
        raise ValidationError(f"{path}: expected an object with '{VERSIONS}', found something else; fix or delete it")
    return loaded


def write_manifest(path: str | Path, document: Mapping[str, Any]) -> None:
    """Write the manifest document atomically (keys sorted, two-space indent, final newline)."""
    from workbench.formats.io import atomic_write  # here: scoring a file only reads manifests

    with atomic_write(path) as f:
        json.dump(document, f, indent=2, sort_keys=True, default=str)
        f.write("\n")


def entry_for_file(document: Mapping[str, Any], file_name: str) -> tuple[str, Any] | None:
    """(version name, entry) of the entry that records the file ``file_name``, else None.

    The entry named ``<stem>`` is looked at first (the usual ``<name>.qrels``), then every other.
    """
    entries = document.get(VERSIONS, {})
    stem = file_name.rsplit(".", 1)[0]
    first = entries.get(stem)
    if isinstance(first, dict) and first.get("file") == file_name:
        return stem, first
    for name, entry in entries.items():
        if isinstance(entry, dict) and entry.get("file") == file_name:
            return str(name), entry
    return None


def file_sha256(path: str | Path) -> str:
    """sha256 (hex) of a file's bytes, read in 1 MiB blocks: an exported qrels file's and every scored input
    file's content hash (recorded with an evaluation and printed by the gate).

    Raises:
        OSError: the file cannot be read.
    """
    import hashlib  # here, not at start-up: OpenSSL takes 2-3 ms to load

    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()
