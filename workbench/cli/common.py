"""Shared plumbing of the CLI edge: configuration, the store handle, messages.

Data goes to stdout; messages, waits and progress go to stderr.
"""

from __future__ import annotations

import errno
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.config import WorkbenchConfig, resolve
from workbench.text import printable

if TYPE_CHECKING:
    from workbench.store import Store


@dataclass
class CliState:
    """Per-invocation state, set by the root callback."""

    config: WorkbenchConfig = field(default_factory=WorkbenchConfig)
    debug: bool = False
    quiet: bool = False
    _stores: dict[str, Store] = field(default_factory=dict)

    def store(self, client: str = "workbench") -> Store:
        """The store of this project (opened lazily; waits are reported on stderr)."""
        from workbench.store import Store

        if client not in self._stores:
            self._stores[client] = Store(
                self.config.db_path,
                client=client,
                lock_timeout_s=self.config.lock_timeout_s,
                on_wait=lambda msg: info(msg),
                # A command is many short leases: keep the file between them and take
                # turns of 1 s with a UI that waits, instead of one hand-over per lease.
                linger_s=1.0,
                min_turn_s=1.0,
            )
        return self._stores[client]


STATE = CliState()


def configure(db: Path | None, lock_timeout: float | None, debug: bool, quiet: bool) -> None:
    """Resolve configuration once (flag > env > default) into ``STATE``."""
    STATE.config = resolve(db, env=os.environ, lock_timeout_s=lock_timeout)
    STATE.debug = debug
    STATE.quiet = quiet
    STATE._stores.clear()


def info(message: str) -> None:
    """A message for the user, on stderr (suppressed by --quiet); control characters shown escaped."""
    if not STATE.quiet:
        err_line(printable(message))


def err_line(text: str) -> None:
    """``text`` and a line end on stderr, flushed: what ``typer.echo(text, err=True)`` writes.

    Without the CLI framework (the fast path of ``workbench score`` imports none). click's echo
    would also strip ANSI styles from output that is not a terminal; the workbench's messages
    carry none (``text.printable`` shows control characters escaped).
    """
    stream = sys.stderr
    if stream is None:  # no stderr at all (pythonw): click's echo prints nothing either
        return
    stream.write(text + "\n")
    stream.flush()


def _is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):
        return False


def out(text: str) -> None:
    """Data on stdout. On a terminal, control characters in it (user strings: names,
    descriptions, ids) are shown escaped (``\\x1b``) instead of being interpreted;
    a pipe or file gets the data unchanged.

    Raises:
        OSError: the write or flush failed (stdout on a full disk), naming ``standard output``.
    """
    if sys.stdout is None:  # started with stdout closed (`workbench ... >&-`): a write error, named
        raise OSError(errno.EBADF, "standard output is closed", "standard output")
    if _is_terminal(sys.stdout):
        text = printable(text)
    try:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left (`| head`): the root's rule (not an error) applies
        raise
    except OSError as e:  # e.g. stdout on a full disk: the message names the target
        raise _named(e, "standard output") from e


def _named(e: OSError, target: str) -> OSError:
    """``e`` naming ``target`` as its file (a write error on a stream or device carries no file name)."""
    if getattr(e, "filename", None):
        return e
    return type(e)(e.errno, e.strerror or str(e), target)


def emit(text: str, path: Path | None) -> None:
    """Text output: on stdout (``out``) when ``path`` is None, else written to ``path`` atomically
    (``formats.io.atomic_write``; ``-`` is stdout there too), with ``wrote PATH`` on stderr.

    Raises:
        OSError: the write failed (a full disk); its ``filename`` is the target
            (``path``, or ``standard output``), so the one-line error names it.
    """
    if path is None:
        out(text)
        return
    from workbench.formats.io import STDOUT, atomic_write

    try:
        with atomic_write(path) as f:
            f.write(text)
    except BrokenPipeError:
        raise
    except OSError as e:  # e.g. --out /dev/full: the message names the target
        raise _named(e, "standard output" if str(path) == STDOUT else str(path)) from e
    info(f"wrote {path}")
