"""Option values checked while the command line is parsed: a bad one is a usage error (exit 2).

A value that is not one of an option's choices (``--by bogus``), not in its
range (``--k -5``, ``--min-id-coverage nan``), not parsable (``-m nDCG@x``) or
an empty or malformed new name (``--name ""``) is refused by click before the
command's code runs, so nothing is read, computed or written, and the message
names the option and says what it accepts::

    Error: Invalid value for '--by': expected tokens or chars, found 'bogus'.

Each function below returns a typer ``callback`` for ``typer.Option(callback=...)``
or ``typer.Argument(callback=...)``. The rules themselves stay where they are
defined (the measure parser, the registries of BM25 variants, fusion methods,
final-grade rules, the name rules of the store): ``checked`` runs the domain's
own check and turns its ``ValidationError`` / ``UnknownNameError`` into click's
``BadParameter``, so the CLI and the Python API refuse the same values with the
same words. A value left at its default is not checked (defaults are valid).

Combinations of options (``--overlap`` against ``--size``) are checked at the
top of the command, before its first read or write, with ``UsageError`` (also
exit 2).

Source:
    click's parameter callbacks ("Parameter Callbacks", click documentation);
    the exit-code convention of ``workbench.cli`` (0 ok, 1 bad input or data,
    2 usage).

No ``from __future__ import annotations`` here: typer reads each callback's
signature when a command is built (``inspect.signature(eval_str=True)`` and
``get_type_hints``), and string annotations would be compiled and evaluated
again for every option that has a callback (about 30 for ``workbench score``).
"""

import contextlib
import importlib
import math
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import typer

from workbench.errors import UnknownNameError, ValidationError, shown

Callback = Callable[[Any, Any, Any], Any]
"""A click parameter callback ``(ctx, param, value) -> value``."""


def _given(ctx: Any, param: Any) -> bool:
    """True when the value came from the command line (or the environment), not the default."""
    source = ctx.get_parameter_source(param.name) if ctx is not None else None
    return source is None or getattr(source, "name", "") != "DEFAULT"


def _values(value: Any) -> Iterable[Any]:
    return value if isinstance(value, (list, tuple)) else (value,)


def _one_line(e: Exception) -> str:
    from workbench.text import clip

    return clip(str(e)).rstrip(".")


def checked(check: Callable[[Any], object]) -> Callback:
    """A callback that runs ``check(value)`` on each given value (a repeatable option: each one).

    Args:
        check: the domain's own validation; it raises ``ValidationError`` or
            ``UnknownNameError`` for a value it refuses (its message says what
            is accepted), and its return value is ignored.

    Raises (from the callback):
        typer.BadParameter: ``check`` refused the value (click: exit 2, the option named).
    """

    def callback(ctx: Any, param: Any, value: Any) -> Any:
        if value is None or not _given(ctx, param):
            return value
        for v in _values(value):
            try:
                check(v)
            except (ValidationError, UnknownNameError) as e:
                raise typer.BadParameter(_one_line(e) + ".") from None
        return value

    return callback


def _or_list(items: Iterable[str]) -> str:
    shown = list(items)
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def choice(*accepted: str) -> Callback:
    """A callback accepting exactly the strings ``accepted`` (case-sensitive).

    Example message: ``Invalid value for '--by': expected tokens or chars, found 'bogus'.``
    """

    def check(v: str) -> None:
        if v not in accepted:
            raise ValidationError(f"expected {_or_list(accepted)}, found {shown(v)}")

    return checked(check)


def registered(module: str, attribute: str, kind: str) -> Callback:
    """A callback accepting the names of a registry: ``module.attribute``, a mapping or collection of names.

    The registry is imported when a value is given (``workbench --help`` imports nothing).
    An unknown name is refused with the registry's names, sorted.
    """

    def check(v: str) -> None:
        names = getattr(importlib.import_module(module), attribute)
        if v not in names:
            raise UnknownNameError(kind, v, names)

    return checked(check)


def number(lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
           hi_open: bool = False, what: str = "a number") -> Callback:
    """A callback accepting a finite number in the interval given (nan and infinity are never accepted).

    Args:
        lo, hi: bounds, None for none.
        lo_open, hi_open: the bound itself is excluded.
        what: what the number is, for the message (``a share``, ``a confidence level``).

    Example message: ``Invalid value for '--min-id-coverage': expected a share in [0, 1], found nan.``
    """
    left = "" if lo is None else ("(" if lo_open else "[") + f"{lo:g}"
    right = "" if hi is None else f"{hi:g}" + (")" if hi_open else "]")
    if lo is not None and hi is not None:
        rule = f"in {left}, {right}"
    elif lo is not None:
        rule = f"{'>' if lo_open else '>='} {lo:g}"
    elif hi is not None:
        rule = f"{'<' if hi_open else '<='} {hi:g}"
    else:
        rule = "(finite)"

    def check(v: float) -> None:
        ok = math.isfinite(v) and not (
            lo is not None and (v < lo or (lo_open and v == lo))
        ) and not (hi is not None and (v > hi or (hi_open and v == hi)))
        if not ok:
            raise ValidationError(f"expected {what} {rule}, found {shown(v)}")

    return checked(check)


_NAME_RULES: dict[str, tuple[str, str]] = {
    "run": ("workbench.store.runs", "check_run_name"),
    "pool": ("workbench.store.pools", "check_pool_name"),
    "qrels": ("workbench.store.qrels", "check_qrels_name"),
    "collection": ("workbench.store.collections", "check_collection_name"),
    "topic set": ("workbench.store.topic_sets", "check_topic_set_name"),
    "user": ("workbench.store.users", "check_user_name"),
}
NAME_KINDS: tuple[str, ...] = tuple(_NAME_RULES)
"""The kinds of names ``name`` checks, each by the store's own rule for it."""


def name(kind: str) -> Callback:
    """A callback for a NEW name of ``kind`` (one of ``NAME_KINDS``): the store's rule, at parse time.

    An empty name, a name with a control character or one the kind's rule
    refuses (spaces in a run name, '/' in a qrels version name) is a usage error.
    """
    module, attribute = _NAME_RULES[kind]

    label = {"qrels": "qrels version", "pool": "pool version"}.get(kind, kind)

    def check(v: str) -> None:
        if not v.strip():
            raise ValidationError(f"expected a {label} name, found {shown(v)} (empty)")
        getattr(importlib.import_module(module), attribute)(v)

    return checked(check)


def nonempty(what: str) -> Callback:
    """A callback refusing an empty or blank value of an option naming something stored (``--collection ""``)."""

    def check(v: str) -> None:
        if not v.strip():
            raise ValidationError(f"expected {what}, found {shown(v)} (empty)")

    return checked(check)


def _check_measure(v: str) -> None:
    from workbench.scoring.measures import needs_cutoffs, parse_measure

    parse_measure(f"{v}@10" if needs_cutoffs(v) else v)  # a name that needs @k and has none is taken at every --k


measure: Callback = checked(_check_measure)
"""A callback for a measure name (``R@100``, ``nDCG(dcg='exp-log2')@10``, ``AP``, or ``R`` without ``@k``)."""


def parse_cutoffs(text: str) -> list[int]:
    """The cutoffs of a ``--k`` value such as ``5,10,100``: integers >= 1, at least one.

    Raises:
        ValidationError: not comma-separated integers >= 1.

    Example:
        >>> parse_cutoffs("5, 10,100")
        [5, 10, 100]
    """
    try:
        ks = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        ks = []
    if not ks or min(ks) < 1:
        raise ValidationError(f"expected comma-separated cutoffs k >= 1 such as 5,10,100, found {shown(text)}")
    return ks


cutoffs: Callback = checked(parse_cutoffs)
"""A callback for a comma-separated list of cutoffs (``--k 5,10,100``)."""

share: Callback = number(0.0, 1.0, what="a share")
"""A callback for a share (a fraction in [0, 1])."""


depth: Callback = checked(lambda v: importlib.import_module("workbench.services.runs.pooling").check_depth(v))
"""A callback for a run's or pool's depth (1 .. the workbench's maximum)."""

rrf_k: Callback = checked(lambda v: importlib.import_module("pooling.fusion").check_rrf_k(v))
"""A callback for RRF's rank constant k (``pooling.fusion.check_rrf_k``: 0 .. 1e6)."""

count: Callback = number(1, what="a count")
"""A callback for a positive count (a budget, a batch size, threads, resamples)."""


@contextlib.contextmanager
def usage_errors() -> Iterator[None]:
    """A context manager: a ``ValidationError`` or ``UnknownNameError`` raised inside is a usage error (exit 2).

    For the checks of option values and combinations at the top of a command, before its
    first read or write, that need the domain's rules (``--param`` of an index kind).
    """
    from workbench.errors import UsageError

    try:
        yield
    except UsageError:
        raise
    except (ValidationError, UnknownNameError) as e:
        raise UsageError(str(e)) from None


def _check_strategy(v: str) -> None:
    from workbench.judging.strategies import parse_strategy

    parse_strategy(v)


def _check_stopping(v: str) -> None:
    from workbench.judging.stopping import parse_stopping_rule

    if v:
        parse_stopping_rule(v)


def _check_rule(v: str) -> None:
    from workbench.judging.adjudication import get_rule

    get_rule(v)


def _check_cause(v: str) -> None:
    from workbench.scoring.misses import check_cause

    check_cause(v)


def _check_strategies(v: str) -> None:
    from workbench.services.judging.simulation import parse_strategies

    parse_strategies(v)


strategy: Callback = checked(_check_strategy)
"""A callback for a judging strategy spec (``cal``, ``bandit(method='thompson')``)."""
strategies: Callback = checked(_check_strategies)
"""A callback for a comma-separated list of judging strategy specs (``rank,mtf,bandit(method='thompson')``)."""
stopping: Callback = checked(_check_stopping)
"""A callback for a per-topic stopping rule spec (``knee(min_judged=30)``; empty = none)."""
final_grade_rule: Callback = checked(_check_rule)
"""A callback for a final-grade rule name (``median``, ``majority``, ``max``, ``min``)."""
miss_cause: Callback = checked(_check_cause)
"""A callback for a miss cause (``found deeper``, ``vocabulary mismatch``, ...; ``scoring.misses.check_cause``)."""
