"""The ``workbench`` command line: a thin edge over the store and the pure rules.

Structure: ``workbench <noun> [<verb>]``. Each noun lives in its own module and
is registered here. ``main(argv) -> int`` is what the console script and the
tests call: a ``WorkbenchError`` becomes one stderr line and exit code 1 (a
traceback only with ``--debug``); usage errors exit 2.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import click
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
    from workbench.cli import ingest, runs, pool, judging, score  # noqa: F401, I001

    try:
        from workbench.cli import demo  # noqa: F401
    except ImportError:  # pragma: no cover - demo module is optional during development
        pass


_register()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 1 workbench error, 2 usage error)."""
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        app(args=args, prog_name="workbench", standalone_mode=False)
    except WorkbenchError as e:
        if common.STATE.debug:
            raise
        typer.echo(f"workbench: error: {e}", err=True)
        return 1
    except click.exceptions.Exit as e:
        return int(e.exit_code or 0)
    except click.exceptions.Abort:
        typer.echo("workbench: aborted", err=True)
        return 130
    except click.ClickException as e:
        e.show()
        return e.exit_code
    except BrokenPipeError:
        # stdout closed early (e.g. `| head`): not an error for a data-producing command.
        try:
            sys.stdout = open(__import__("os").devnull, "w")  # noqa: SIM115
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        typer.echo("workbench: interrupted", err=True)
        return 130
    return 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
