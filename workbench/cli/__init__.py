"""The ``workbench`` command line: a thin edge over the store and the pure rules.

``main(argv) -> int`` is what the console script (``run``), ``python -m
workbench`` and the tests call. Three invocations are answered here without
importing the CLI framework (typer, about 40 ms idle and several times that on
a busy machine, paid before anything is printed):

* ``workbench --version`` prints ``workbench <version>``;
* ``workbench --help`` prints the root help from ``workbench.cli.root_help``,
  a copy of what typer renders at the usual width (78 columns: a terminal of
  80 or more, or output that is not a terminal). At another width, or with
  any other argument (``workbench score --help``, ``workbench --db X
  --help``), typer renders it. ``tests/cli/test_fast_paths.py`` checks that
  both paths print the same bytes;
* ``workbench score RUN... --qrels QRELS`` in its plain forms (a few common
  options, ``workbench.cli.fast_score``) runs the command's body without
  typer; any other form of it goes to typer. ``tests/cli/test_fast_score.py``
  checks that both print the same bytes and exit with the same codes.

Everything else goes to ``workbench.cli.root.main`` (the typer app, the
command registry ``COMMANDS`` and the lazily imported command modules; read
its docstring to add a command). ``app`` and ``COMMANDS`` are importable from
here as before (``from workbench.cli import app, common``), and import the
typer app on first use.

Exit codes (``EXIT_*``) are the CLI's one convention.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any

from workbench.cli.runtime import EXIT_ERROR, EXIT_OK, EXIT_USAGE, help_width, paused_gc
from workbench.version import __version__

if TYPE_CHECKING:
    from workbench.cli.root import COMMANDS, app

__all__ = ["COMMANDS", "EXIT_ERROR", "EXIT_OK", "EXIT_USAGE", "app", "help_width", "main", "paused_gc", "run"]


def __getattr__(name: str) -> Any:
    if name in ("app", "COMMANDS"):
        from workbench.cli import root

        return getattr(root, name)
    raise AttributeError(f"module 'workbench.cli' has no attribute {name!r}")


def _fast(args: list[str]) -> str | None:
    """The output of ``args`` when it needs no CLI framework, else None."""
    if args == ["--version"]:
        return f"workbench {__version__}\n"
    if args == ["--help"]:
        from workbench.cli import root_help

        if help_width() == root_help.WIDTH:
            return root_help.ROOT_HELP
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 1 workbench error, 2 usage error, 130 interrupted).

    Args:
        argv: the arguments after the program name; None reads ``sys.argv[1:]``.

    Returns:
        The exit code (``EXIT_OK``, ``EXIT_ERROR``, ``EXIT_USAGE``; 130 when
        interrupted). ``--version`` and the root ``--help`` are printed here;
        the rest runs through ``workbench.cli.root.main``.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    text = _fast(args)
    if text is None:
        if "score" in args:
            from workbench.cli import fast_score

            call = fast_score.parse(args)
            if call is not None:
                return fast_score.run(call)
        with paused_gc():
            from workbench.cli.root import main as typer_main
        return typer_main(args)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `workbench --help | head -1`: not an error
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    return EXIT_OK


def run() -> None:
    """Console-script entry point (``workbench``, ``python -m workbench``)."""
    sys.exit(main())
