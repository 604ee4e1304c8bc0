"""Lazy command modules and pydantic-free parameter coercion for the ``workbench`` CLI.

Two start-up costs are avoided here, so that ``workbench --help`` lists the
commands without importing any command module and ``workbench score FILE
--qrels FILE`` imports only ``workbench.cli.score`` and what its code needs:

* **Lazy command modules.** ``LazyGroup`` is the root click group. It lists
  the commands of a registry (``name -> LazyCommand``: the modules defining
  the command and its one-line summary) and imports a command's modules only
  when that command is resolved. ``workbench --help`` renders the summaries.
* **Coercion without pydantic.** typer >= 0.2x coerces every parameter value
  through a pydantic ``TypeAdapter`` built on first use (about 0.1 s to import
  pydantic and build the schemas, paid by every command). ``install_plain``
  gives parameters annotated ``str``, ``int``, ``float``, ``bool``, ``Path`` or
  a ``list`` of these a coercion that handles the plain cases itself (a
  decimal integer, a plain decimal number, a path string) and hands anything
  else to typer's own coercion, so values, range checks and error messages
  are typer's. It relies on typer's ``_TyperParameter`` internals
  (``type_descriptor``, ``_runtime_param``); with a typer that lacks them it
  changes nothing.

Source:
    The lazy-subcommand pattern of click's documentation ("Lazily loading
    subcommands") and of bm25s' CLI dispatch; ``../shared/STYLE.md`` rule 3.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any

import typer
import typer.main
from typer._click import Command, Context, HelpFormatter
from typer._click.exceptions import UsageError
from typer._click.utils import make_default_short_help
from typer.core import TyperGroup

from workbench.cli.runtime import paused_gc

_INT = re.compile(r"[+-]?[0-9]{1,18}")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


@dataclass(frozen=True)
class LazyCommand:
    """One entry of the command registry.

    Attributes:
        name: the command (``score``) or noun (``run``) as typed.
        modules: the modules that define it, imported in order when it is
            used (a noun's verbs may live in several modules).
        summary: the text ``workbench --help`` shows for it: the first
            paragraph of the command's help (its docstring, or the ``help`` of
            its ``typer.Typer``). ``tests/cli/test_lazy.py`` checks that they agree.
    """

    name: str
    modules: tuple[str, ...]
    summary: str


def registry(entries: Mapping[str, tuple[str, str]], package: str) -> dict[str, LazyCommand]:
    """``LazyCommand``s from ``{name: ("module [module...]", summary)}``, module names relative to ``package``."""
    return {
        name: LazyCommand(name, tuple(f"{package}.{m}" for m in modules.split()), summary)
        for name, (modules, summary) in entries.items()
    }


class DefaultCommandGroup(TyperGroup):
    """A typer group with a default command: a first argument that names none of its commands
    (and is not ``--help``) is the default command's.

    Subclass it with ``default_command`` and pass the subclass as ``typer.Typer(cls=...)``:
    with ``default_command = "build"``, ``workbench pool RUN...`` means ``workbench pool build RUN...``.
    """

    default_command: str = ""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """``args``, with the default command put first when the first argument names no command."""
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


class LazyGroup(TyperGroup):
    """A typer group whose commands are imported when first used.

    Subclass it with ``commands_registry`` (the registry) and ``source`` (a
    function returning the ``typer.Typer`` the command modules register on),
    and pass the subclass as ``typer.Typer(cls=...)``.
    """

    commands_registry: Mapping[str, LazyCommand] = {}
    source: Callable[[], typer.Typer]

    def __init__(self, **attrs: Any) -> None:
        suggest = attrs.pop("suggest_commands", True)
        super().__init__(suggest_commands=False, **attrs)  # suggestions are made below, over the registry
        self._suggest = suggest
        install_plain(self)

    def list_commands(self, ctx: Context) -> list[str]:
        """Registry order (the workflow order), then commands registered otherwise."""
        return list(dict.fromkeys([*self.commands_registry, *self.commands]))

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        """The command, importing its modules on first use; None for an unknown name."""
        cmd = self.commands.get(cmd_name)
        entry = self.commands_registry.get(cmd_name)
        # Also when a noun is known but one of its verb modules is not imported yet (another
        # command's module registered the noun, e.g. `ingest` defines `convert`): load them all.
        if entry is not None and (cmd is None or any(m not in sys.modules for m in entry.modules)):
            cmd = self._load(cmd_name)
        return cmd

    def _load(self, name: str) -> Command:
        entry = self.commands_registry[name]
        with paused_gc():  # imports and the command tree: long-lived objects, no garbage
            for module in entry.modules:
                importlib.import_module(module)
            cmd = _build_one(self.source(), name)
            if cmd is None:  # a noun (a typer group), or a typer without the internals used there
                cmd = typer.main.get_group(self.source()).commands.get(name)
        if cmd is None:  # a programming error: the registry names a module that does not define it
            raise RuntimeError(f"{', '.join(entry.modules)} registered no command {name!r} on the workbench app")
        install_plain(cmd)
        self.commands[name] = cmd
        return cmd

    def resolve_command(self, ctx: Context, args: list[str]) -> tuple[str | None, Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as e:
            if self._suggest and args:
                matches = get_close_matches(args[0], self.list_commands(ctx))
                if matches:
                    e.message = f"{e.message.rstrip('.')}. Did you mean {', '.join(repr(m) for m in matches)}?"
            raise

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The command list of ``--help`` from the registry's summaries (no command module imported)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            loaded = self.commands.get(name)
            if loaded is not None and name not in self.commands_registry:
                if loaded.hidden:
                    continue
                rows.append((name, loaded.get_short_help_str(limit)))
            else:
                rows.append((name, make_default_short_help(self.commands_registry[name].summary, limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _build_one(app: typer.Typer, name: str) -> Command | None:
    """The click command of ``app``'s plain command ``name``, built alone; None when ``name`` is not one.

    What ``typer.main.get_group(app).commands[name]`` gives (the same typer
    function, with the app's settings), without building the root callback's
    parameters and the other commands registered by the same modules (``score``
    would build ``compare`` and ``misses`` too). Nouns (typer groups) are left to
    ``get_group``, as is everything with a typer that lacks ``get_command_from_info``.
    """
    build = getattr(typer.main, "get_command_from_info", None)
    if build is None:
        return None
    for info in app.registered_commands:
        callback = info.callback
        if callback is not None and (info.name or typer.main.get_command_name(callback.__name__)) == name:
            cmd: Command = build(info, pretty_exceptions_short=app.pretty_exceptions_short,
                                 rich_markup_mode=app.rich_markup_mode)
            return cmd
    return None


# -- coercion without pydantic ---------------------------------------------------------------


class _Plain:
    """A typer ``RuntimeParam`` stand-in for a plain annotation; defers to typer for anything unusual."""

    def __init__(self, kind: type, descriptor: Any) -> None:
        self.kind = kind
        self.descriptor = descriptor
        info = descriptor.parameter_info
        self.lo = getattr(info, "min", None)
        self.hi = getattr(info, "max", None)
        self._typer: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multi = param.multiple or param.nargs == -1
        if value is None:
            return () if multi else None
        if multi:
            if isinstance(value, (list, tuple)):
                out = [self._one(v, param, ctx) for v in value]
                if all(o is not _DEFER for o in out):
                    return type(value)(out)
        else:
            out1 = self._one(value, param, ctx)
            if out1 is not _DEFER:
                return out1
        return self._slow().coerce(value, param=param, ctx=ctx)

    def _one(self, v: Any, param: Any, ctx: Any) -> Any:
        """The coerced value, or ``_DEFER`` when typer's own coercion must decide."""
        kind = self.kind
        if type(v) is kind and kind is not Path:  # a default, or a flag's bool
            value: Any = v
            return value if kind in (str, bool) or self._in_range(value) else _DEFER
        if kind is Path and isinstance(v, (str, Path)) and str(v):
            from typer._param_types import coerce_cli_path

            return coerce_cli_path(Path(v), self.descriptor.parameter_info, path_type=Path, param=param, ctx=ctx)
        if type(v) is not str:
            return _DEFER
        if kind is str:
            return v
        if kind is int and _INT.fullmatch(v):
            n = int(v)
            return n if self._in_range(n) else _DEFER
        if kind is float and _FLOAT.fullmatch(v):
            x = float(v)
            return x if x - x == 0 and self._in_range(x) else _DEFER
        return _DEFER

    def _in_range(self, x: float) -> bool:
        return (self.lo is None or x >= self.lo) and (self.hi is None or x <= self.hi)

    def _slow(self) -> Any:
        if self._typer is None:
            from typer._coercion import build_runtime_param

            self._typer = build_runtime_param(self.descriptor)
        return self._typer


_DEFER = object()
_KINDS = (str, int, float, bool, Path)


def _plain_kind(descriptor: Any) -> type | None:
    """The plain type of a parameter descriptor (``list[X]`` gives X), or None when typer must coerce it."""
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or getattr(info, "parser", None) is not None:
        return None
    if getattr(info, "click_type", None) is not None or getattr(info, "clamp", False):
        return None
    annotation = descriptor.annotation
    if getattr(annotation, "__origin__", None) is list:
        (annotation,) = getattr(annotation, "__args__", (None,))
    if annotation not in _KINDS:
        return None
    if annotation is Path and (info.path_type is not None or info.allow_dash or info.resolve_path):
        return None
    return annotation


def install_plain(cmd: Command) -> None:
    """Give ``cmd``'s parameters (and its subcommands', recursively) the pydantic-free coercion where it applies."""
    for p in _walk(cmd):
        descriptor = getattr(p, "type_descriptor", None)
        if descriptor is None or not hasattr(p, "_runtime_param") or p._runtime_param is not None:
            continue
        kind = _plain_kind(descriptor)
        if kind is not None:
            p._runtime_param = _Plain(kind, descriptor)


def _walk(cmd: Command) -> Iterable[Any]:
    yield from cmd.params
    # --help is made on first use and cached; make it now (default context settings) so it is covered too.
    help_option = cmd.get_help_option(Context(cmd))
    if help_option is not None:
        yield help_option
    for sub in (getattr(cmd, "commands", None) or {}).values():
        yield from _walk(sub)
