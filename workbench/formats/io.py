"""Atomic file writes: the file appears whole or not at all.

Source:
    pyterrier's ``finalized_open``: write to a temporary file in the target's
    folder, flush and ``fsync``, then ``os.replace`` (atomic on POSIX within a
    file system), so a crash or an exception never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal


def _mode_for(target: Path) -> int:
    """The target's current permissions, else what ``open()`` would give (0o666 minus umask)."""
    try:
        return target.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: Literal["w", "wb"] = "w") -> Iterator[IO[Any]]:
    """Open ``path`` for writing so that it is replaced atomically on success.

    Args:
        path: the target file. Its folder is created if missing.
        mode: ``"w"`` (UTF-8 text, ``\\n`` line endings) or ``"wb"`` (bytes).

    Returns:
        A context manager yielding the open temporary file. On normal exit the
        data is flushed, fsynced and moved onto ``path``; on an exception the
        temporary file is removed and ``path`` is left as it was. The new file
        keeps the permissions of the file it replaces (else 0o666 minus umask).

    Raises:
        ValueError: ``mode`` is not ``"w"`` or ``"wb"``.
        IsADirectoryError: ``path`` is a folder.

    A target that exists and is not a regular file (a device such as
    ``/dev/stdout``, a FIFO) is written through, not replaced.

    Example:
        >>> with atomic_write("labels/x.qrels") as f:  # doctest: +SKIP
        ...     f.write("1 0 d1 1\\n")
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', found {mode!r}")
    target = Path(path)
    if target.exists() and not target.is_file():
        if target.is_dir():
            raise IsADirectoryError(21, "is a folder, not a file", str(target))
        # A device, FIFO or /dev/stdout: write through it; replacing it would
        # swap the device node for a regular file.
        dev: IO[Any] = (open(target, "w", encoding="utf-8", newline="\n") if mode == "w"  # noqa: SIM115
                         else open(target, "wb"))  # noqa: SIM115
        with dev:
            yield dev
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        os.chmod(tmp, _mode_for(target))
        if mode == "w":
            f: IO[Any] = os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        else:
            f = os.fdopen(fd, "wb")
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
