"""The unit files a collection folder may hold, which ``workbench ingest`` reads beside the corpus.

``read_unit_files`` reads a folder's ``chunk_map.tsv`` (made by ``workbench
convert chunk``, ``services.collections.chunking``, or imported from elsewhere:
any ``chunk_id doc_id start end`` file), ``chunks.meta.json`` and
``duplicate_groups.tsv`` for ``ingest_folder``; ``store_groups`` stores the
groups after the collection (identical normalised texts grouped as
``identical text``, the groups file under its name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import InputFormatError, ValidationError
from workbench.formats.trec import parse_json, read_text
from workbench.formats.units import (
    CHUNK_MAP_FILE,
    CHUNK_META_FILE,
    GROUPS_FILE,
    read_chunk_map,
    read_groups,
)

if TYPE_CHECKING:
    from workbench.scoring.groups import DuplicateGroups
    from workbench.scoring.units import ChunkMap
    from workbench.store.units import ChunkSource, Units
    from workbench.types import Document


@dataclass(frozen=True)
class UnitFiles:
    """A collection folder's unit files, read and checked (nothing stored yet)."""

    chunk_map: ChunkMap | None = None
    chunk_source: ChunkSource | None = None
    groups: dict[str, list[str]] = field(default_factory=dict)
    groups_path: Path | None = None


def read_unit_files(folder: str | Path) -> UnitFiles:
    """Read ``chunk_map.tsv``, ``chunks.meta.json`` and ``duplicate_groups.tsv`` when present.

    Raises:
        InputFormatError: a malformed file (file:line).
    """
    from workbench.store.units import ChunkSource

    p = Path(folder)
    if not p.is_dir():
        return UnitFiles()
    cmap = read_chunk_map(p / CHUNK_MAP_FILE) if (p / CHUNK_MAP_FILE).is_file() else None
    source = None
    if cmap is not None:
        meta: dict[str, Any] = {}
        mp = p / CHUNK_META_FILE
        if mp.is_file():
            loaded = parse_json(read_text(mp), mp)
            if not isinstance(loaded, dict):
                raise InputFormatError(str(mp), 1, "expected a JSON object, found another JSON value. Fix the file.")
            meta = loaded
        source = ChunkSource(str(meta.get("source_collection", "")), str(meta.get("source_version", "")),
                             str(meta.get("chunk_unit", "")), int(meta.get("size", 0)), int(meta.get("overlap", 0)))
    gp = p / GROUPS_FILE
    groups = read_groups(gp) if gp.is_file() else {}
    return UnitFiles(cmap, source, groups, gp if gp.is_file() else None)


def store_groups(units: Units, collection: str, documents: list[Document], files: UnitFiles) -> list[str]:
    """Group identical normalised texts (and the folder's groups file) for the latest version; report lines.

    Raises:
        ValidationError: a groups file member that is not a document.
    """
    from workbench.scoring.groups import identical_groups
    from workbench.store.units import IDENTICAL_TEXT

    notes: list[str] = []
    same = identical_groups({d.doc_id: (d.title, d.text) for d in documents})
    if same:
        units.add_duplicate_groups(collection, same, source=IDENTICAL_TEXT)
        n = sum(len(g) for g in same)
        notes.append(f"duplicate groups: {len(same):,} group(s) of identical normalised text over {n:,} documents, "
                     f"e.g. {', '.join(same[0][:3])}")
    if files.groups and files.groups_path is not None:
        try:
            units.add_duplicate_groups(collection, files.groups, source=files.groups_path.name)
        except ValidationError as e:
            raise InputFormatError(str(files.groups_path), 0, str(e)) from None
        notes.append(f"duplicate groups: {len(files.groups):,} group(s) from {files.groups_path.name}")
    return notes


def describe_groups(groups: DuplicateGroups) -> str:
    """One line: how many groups, over how many documents, from which sources."""
    srcs = sorted({s for v in groups.sources.values() for s in v})
    return (f"{len(groups):,} duplicate group(s) over {groups.n_documents:,} documents"
            + (f" ({', '.join(srcs)})" if srcs else ""))
