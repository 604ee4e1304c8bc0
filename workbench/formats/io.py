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


STDOUT = "-"
"""The path that means standard output (``--out -``)."""


def _stdout(mode: str) -> Iterator[IO[Any]]:
    import io
    import sys

    from workbench.errors import ValidationError

    if mode != "w":
        raise ValidationError("--out -: this output is binary (e.g. Parquet); standard output takes text only. "
                              "Give a file path.")
    buf = io.StringIO(newline="\n")
    yield buf
    sys.stdout.write(buf.getvalue())
    sys.stdout.flush()


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
    ``/dev/stdout``, a FIFO) is written through, not replaced. ``-`` is
    standard output (text only; the text is written when the block ends
    without an error, so a failing command prints nothing): every command's
    ``--out -`` means stdout, as ``-`` means stdin for run and qrels files.

    Example:
        >>> with atomic_write("labels/x.qrels") as f:  # doctest: +SKIP
        ...     f.write("1 0 d1 1\\n")
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', found {mode!r}")
    if str(path) == STDOUT:
        yield from _stdout(mode)
        return
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
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:  # name the target the user gave, not a temporary file
        raise type(e)(e.errno, e.strerror, str(target)) from None
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
        try:
            os.replace(tmp, target)
        except OSError as e:
            raise type(e)(e.errno, e.strerror, str(target)) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def check_writable_folder(path: str | Path, *, what: str = "output folder") -> Path:
    """Check, before any work is done, that files can be written into the folder ``path``.

    The folder may not exist yet (it is created later); its nearest existing
    ancestor must then be a folder that accepts a new file.

    Raises:
        ValidationError: ``path`` is a file (or another non-folder); a parent is a
            file; or no file can be created in it (tried with a temporary file).
    """
    from workbench.errors import ValidationError

    target = Path(path)
    if target.exists() and not target.is_dir():
        raise ValidationError(f"{what} {target}: expected a folder (new or existing), found a file. "
                              "Choose another folder.")
    _probe_nearest_folder(target, target, what)
    return target


def check_writable(path: str | Path, *, what: str = "output", suffixes: tuple[str, ...] | None = None) -> Path:
    """Check, before any work is done, that ``atomic_write`` can create ``path``.

    A command that writes a file after it has changed the store (``score
    --plot`` records evaluations first) checks its targets with this first, so
    a bad target fails the command before anything is written.

    Args:
        path: the target file.
        what: how the user named it in messages (``--plot``, ``--out``).
        suffixes: the accepted suffixes (lower case, with the dot), or None for any.

    Returns:
        ``path`` as a ``Path``.

    Raises:
        ValidationError: a suffix not in ``suffixes``; the target is a folder;
            a parent is a file; or no file can be created in its folder (tried
            with a temporary file, removed at once; missing folders are not
            created). An existing device or FIFO must be writable.
    """
    from workbench.errors import ValidationError

    target = Path(path)
    if str(path) == STDOUT and suffixes is None:  # standard output (atomic_write); binary outputs have suffixes
        return target
    suffix = target.suffix.lower()
    if suffixes is not None and suffix not in suffixes:
        raise ValidationError(
            f"{what} {target}: expected a file ending in {', '.join(suffixes)}, found {suffix or 'no suffix'!r}.")
    if target.is_dir():
        raise ValidationError(f"{what} {target}: is a folder; expected a file path such as {target / 'out'}"
                              f"{suffixes[0] if suffixes else ''}.")
    if target.exists() and not target.is_file():
        if not os.access(target, os.W_OK):
            raise ValidationError(f"{what} {target}: cannot be written (permission denied).")
        return target
    _probe_nearest_folder(target, target.parent, what)
    return target


def _probe_nearest_folder(target: Path, start: Path, what: str) -> None:
    """Create and remove a temporary file in the nearest existing folder at or above ``start``.

    Raises:
        ValidationError: that nearest existing path is a file, or no file can be created in it.
    """
    from workbench.errors import ValidationError

    folder = start
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise ValidationError(f"{what} {target}: {folder} is a file, not a folder; choose another path.")
    try:
        fd, probe = tempfile.mkstemp(prefix=".wb-probe.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise ValidationError(
            f"{what} {target}: cannot create a file in {folder} ({e.strerror or e}); choose a writable folder."
        ) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
