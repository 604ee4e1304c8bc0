"""The ``workbench`` command line: a thin edge over the store and the pure rules.

Structure: ``workbench <noun> [<verb>]``. Each noun lives in its own module and
is registered here. ``main(argv) -> int`` is what the console script and the
tests call: a ``WorkbenchError`` becomes one stderr line and exit code 1 (a
traceback only with ``--debug``); usage errors exit 2.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from workbench import __version__
from workbench.cli import common
from workbench.errors import WorkbenchError

app = typer.Typer(
    name="workbench",
    help=(
        "Relevance-judgment and pooling workbench: ingest a collection, produce runs, pool them, "
        "judge the pool, publish versioned qrels and score runs against them."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"workbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    db: Annotated[
        Path | None,
        typer.Option(help="The workbench's DuckDB file. Default: $WORKBENCH_DB, else labels/workbench.duckdb."),
    ] = None,
    lock_timeout: Annotated[
        float | None,
        typer.Option(help="Seconds to wait while another process (e.g. the UI) uses the store. Default 300."),
    ] = None,
    debug: Annotated[bool, typer.Option(help="Show tracebacks.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or messages on stderr.")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    common.configure(db, lock_timeout, debug, quiet)


def _register() -> None:
    # Each module adds its commands to ``app``; imports are cheap (heavy libraries
    # are imported inside the commands).
    # Registration order is the order `workbench --help` lists them: the workflow order.
    from workbench.cli import ingest, convert, runs, pool, judging, score, gate, topics, evaluations  # noqa: F401, I001
    from workbench.cli import simulate  # noqa: F401
    from workbench.cli import metadata  # noqa: F401
    from workbench.cli import rerank, stages  # noqa: F401, I001  (issue 10: run rerank, stages, depth-sweep)
    from workbench.cli import rubric, judgments  # noqa: F401  (fmt15: rubric files; judgments in/out, adjudicate)

    try:
        from workbench.cli import demo  # noqa: F401
    except ImportError:  # pragma: no cover - demo module is optional during development
        pass


_register()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 1 workbench error, 2 usage error, 130 interrupted).

    Usage errors (unknown command, missing argument) are reported by typer/click
    with the command's usage line; a ``WorkbenchError`` becomes one
    ``workbench: error: ...`` line on stderr.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(args)
    finally:
        for store in common.STATE._stores.values():  # the command is over: let go of the file now
            store.release_file()


def _main(args: list[str]) -> int:
    try:
        app(args=args, prog_name="workbench", standalone_mode=True)
    except SystemExit as e:  # standalone mode always ends in SystemExit
        code = e.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except WorkbenchError as e:
        if common.STATE.debug:
            raise
        typer.echo(f"workbench: error: {e}", err=True)
        return 1
    except BrokenPipeError:
        # stdout closed early (e.g. `| head`): not an error for a data-producing command.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 0
    except KeyboardInterrupt:
        typer.echo("workbench: interrupted", err=True)
        return 130
    except OSError as e:  # e.g. stdout on a full disk; never a traceback for the user
        if common.STATE.debug:
            raise
        where = f" {e.filename}" if getattr(e, "filename", None) else ""
        typer.echo(f"workbench: error: cannot read or write{where}: {e.strerror or e} (--debug shows where)",
                   err=True)
        return 1
    return 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
