"""Process-level conventions of the ``workbench`` CLI: exit codes, the import-time GC pause, the help width.

A leaf module of ``workbench.cli``: the CLI's submodules (``root``, ``lazy``,
``outcome``, ``fast_score``, ``score_command``) import these from here, never
from the package ``__init__`` (which imports them in turn: that would be a
cycle). ``workbench.cli`` re-exports every name.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

EXIT_OK = 0
"""The command did what was asked."""
EXIT_ERROR = 1
"""Bad input or data (a malformed file, an unknown name, a value the rules refuse), or a workbench
error (the store is locked or damaged, a file cannot be written). Nothing was changed."""
EXIT_USAGE = 2
"""The command line is wrong: unknown command or option, missing argument, an option value of the
wrong type or not among its choices. Nothing was done. (``workbench gate`` alone uses its own codes:
0 pass, 1 fail, 2 invalid, 3 usage or output error; a usage error in the global options before
``gate`` is its 3 as well.)"""


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No automatic garbage collection inside (it resumes after, if it was on): for importing code.

    Importing modules and building the command tree allocate many objects that
    live until the process ends and almost no garbage, so the collector's passes
    over them there find nothing and cost every command a few milliseconds
    (``bench/scoring/bench_scoring.py`` measures start-up). The CLI pauses it
    while it imports the typer app, a command's modules and their imports.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def help_width() -> int:
    """The width click formats help at: ``max(min(terminal columns, 80) - 2, 50)``.

    Terminal columns as ``shutil.get_terminal_size`` gives them ($COLUMNS, else
    the terminal of stdout, else 80).

    Source:
        click ``formatting.HelpFormatter.__init__`` (typer's vendored copy), with
        its default ``max_width`` of 80.
    """
    import shutil

    return max(min(shutil.get_terminal_size().columns, 80) - 2, 50)
