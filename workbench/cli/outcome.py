"""How a command's end becomes an exit code and at most one stderr line: the rules of both command lines.

``finish`` holds the rules of ``workbench.cli.root.main`` (the typer app):
a ``WorkbenchError`` is one ``workbench: error: ...`` line and exit 1 (2 for a
``UsageError``), a closed stdout is not an error, an interrupt is 130, any
other ``OSError`` is one line naming the file. ``in_command`` is what typer
itself does with an exception a command raises (an interrupt exits 130
silently, a broken pipe 1, an end of input ``Aborted!``), for the fast path of
``workbench score`` (``workbench.cli.fast_score``), which runs the command body
without typer. Imports no CLI framework.

Source:
    typer's ``core._main`` (its copy of click's ``BaseCommand.main`` in
    standalone mode) for ``in_command``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable

from workbench.cli import common
from workbench.cli.runtime import EXIT_ERROR, EXIT_USAGE
from workbench.errors import UsageError, WorkbenchError
from workbench.text import clip, cut, printable


def finish(call: Callable[[], int]) -> int:
    """``call()``'s exit code, or the exit code of the exception it raised (see the module docstring).

    The stores the command opened are let go of afterwards (``Store.release_file``), whatever happened.

    Raises:
        WorkbenchError, OSError: only with ``--debug`` (``common.STATE.debug``), to show the traceback.
    """
    try:
        return _finish(call)
    finally:
        for store in common.STATE._stores.values():  # the command is over: let go of the file now
            store.release_file()


def _finish(call: Callable[[], int]) -> int:
    try:
        return call()
    except WorkbenchError as e:
        if common.STATE.debug:
            raise
        common.err_line(printable(clip(f"workbench: error: {e}")))
        return EXIT_USAGE if isinstance(e, UsageError) else EXIT_ERROR
    except BrokenPipeError:
        # stdout closed early (e.g. `| head`): not an error for a data-producing command.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 0
    except KeyboardInterrupt:
        common.err_line("workbench: interrupted")
        return 130
    except OSError as e:  # e.g. stdout on a full disk; never a traceback for the user
        if common.STATE.debug:
            raise
        where = f" {cut(str(e.filename))}" if getattr(e, "filename", None) else ""
        common.err_line(printable(f"workbench: error: cannot read or write{where}: {e.strerror or e} "
                                  "(--debug shows where)"))
        return EXIT_ERROR


def in_command(call: Callable[[], None]) -> int:
    """0 when ``call()`` returns; what typer makes of the exceptions it catches from a command, else.

    An interrupt exits 130 without a message; a broken pipe (EPIPE) makes stdout and stderr ignore
    further EPIPE errors and exits 1; an end of input prints an empty line and ``Aborted!`` and exits 1.
    Anything else propagates (to ``finish``).
    """
    try:
        call()
    except EOFError:
        common.err_line("")
        common.err_line("Aborted!")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except OSError as e:
        if e.errno != errno.EPIPE:
            raise
        from typer._click.utils import (
            PacifyFlushWrapper,  # only here: typer's own wrapper, as it does
        )

        sys.stdout = PacifyFlushWrapper(sys.stdout)  # type: ignore[assignment]
        sys.stderr = PacifyFlushWrapper(sys.stderr)  # type: ignore[assignment]
        return EXIT_ERROR
    return 0
