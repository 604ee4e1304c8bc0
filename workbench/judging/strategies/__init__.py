"""Judging strategies: which documents of a topic's pool to judge next (PURE).

Each strategy is a small pure function over (pool, judgments so far) -> next
documents (``base``), with its paper cited in its docstring, kept in a
registry of named, parameterised values (STYLE rule 10):

=============  ==================================================================
``rank``       the pool's priority order (today's fused-rank order)
``mtf``        move-to-front (Cormack, Palmer & Clarke, SIGIR 1998)
``bandit``     MaxMean, non-stationary (Losada, Parapar & Barreiro, IP&M 2017)
``bandit-mm``  MaxMean, stationary (Losada et al., SAC 2016)
``bandit-ts``  Thompson sampling, stationary (Losada et al., SAC 2016)
``cal``        continuous active learning, tf-idf + logistic regression
               (Cormack & Grossman, AutoTAR 2015)
``cal-model``  ``cal`` also trained on a model assessor's grades (a prior)
=============  ==================================================================

A spec is a registered name, optionally with parameters:
``bandit(method='thompson', seed=3)``, ``cal(batch=5, growth=0.0)``;
``str(parse_strategy(spec))`` is the canonical spec and parses back to an
equal strategy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError
from workbench.judging.strategies.bandit import Bandit
from workbench.judging.strategies.base import (
    DocumentFeatures,
    Grades,
    Strategy,
    TopicPool,
    build_topic_pools,
    tfidf_features,
)
from workbench.judging.strategies.cal import CAL
from workbench.judging.strategies.mtf import MoveToFront
from workbench.judging.strategies.rank import Rank

STRATEGIES: dict[str, Strategy] = {}
"""Registered name -> the strategy with its default parameters."""


def register(name: str, strategy: Strategy) -> Strategy:
    """Register a strategy under a name.

    Raises:
        DuplicateNameError: the name is taken.
        ValidationError: the name is not letters, digits and '-'.
    """
    if not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        raise ValidationError(f"strategy name must be lower-case letters, digits and '-', found {name!r}")
    if name in STRATEGIES:
        raise DuplicateNameError(f"judging strategy {name!r} is already registered")
    STRATEGIES[name] = strategy
    return strategy


register("rank", Rank())
register("mtf", MoveToFront())
register("bandit", Bandit())
register("bandit-mm", Bandit(stationary=True))
register("bandit-ts", Bandit(method="thompson", stationary=True))
register("cal", CAL())
register("cal-model", CAL(prior_weight=0.5))

_SPEC = re.compile(r"^\s*([a-z][a-z0-9-]*)\s*(?:\((.*)\))?\s*$")
_PARAM = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*=\s*(.+?)\s*$")


def _value(spec: str, key: str, raw: str, default: object) -> object:
    try:
        if isinstance(default, bool):
            if raw not in ("True", "False", "true", "false"):
                raise ValueError
            return raw.lower() == "true"
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
            return raw[1:-1]
        return raw
    except ValueError:
        kind = type(default).__name__
        raise ValidationError(f"strategy {spec!r}: expected a {kind} for {key}, found {raw!r}") from None


def parse_strategy(spec: str) -> Strategy:
    """A strategy from its spec: ``name`` or ``name(param=value, ...)``.

    Args:
        spec: a registered name (``rank``, ``mtf``, ``bandit``, ``bandit-mm``,
            ``bandit-ts``, ``cal``, ``cal-model``), optionally with parameters
            of that strategy in parentheses.

    Returns:
        The strategy; ``parse_strategy(str(s)) == s``.

    Raises:
        UnknownNameError: the name is not registered (the message lists the names).
        ValidationError: bad syntax, an unknown parameter or a bad value.

    Example:
        >>> str(parse_strategy("bandit(method='thompson')"))
        "bandit(method='thompson')"
        >>> parse_strategy("bandit-mm") == Bandit(stationary=True)
        True
    """
    m = _SPEC.match(spec or "")
    if not m:
        raise ValidationError(
            f"expected a judging strategy such as cal or bandit(method='thompson'), found {spec!r}"
        )
    name, inner = m.group(1), m.group(2)
    base = STRATEGIES.get(name)
    if base is None:
        raise UnknownNameError("judging strategy", name, STRATEGIES)
    if not inner or not inner.strip():
        return base
    params: dict[str, object] = {}
    current = base.params
    for part in inner.split(","):
        pm = _PARAM.match(part)
        if not pm:
            raise ValidationError(f"strategy {spec!r}: expected param=value, found {part.strip()!r}")
        key, raw = pm.group(1), pm.group(2)
        if key not in current:
            raise ValidationError(
                f"strategy {spec!r}: {name} has no parameter {key!r}; its parameters: "
                f"{', '.join(sorted(current)) or '(none)'}"
            )
        params[key] = _value(spec, key, raw, current[key])
    return base.with_params(**params)


def strategy_names() -> list[str]:
    """The registered names, sorted."""
    return sorted(STRATEGIES)


def judging_order(strategy: Strategy, pool: TopicPool, judged: Grades) -> list[str]:
    """Every unjudged document of a topic's pool, in the strategy's order."""
    return strategy.order(pool, judged)


def restrict_prior(strategy: Strategy, prior: Mapping[str, int]) -> Mapping[str, int]:
    """The model grades a strategy may see: all of them if it ``uses_prior``, else none."""
    return prior if strategy.uses_prior else {}


__all__ = [
    "CAL",
    "STRATEGIES",
    "Bandit",
    "DocumentFeatures",
    "Grades",
    "MoveToFront",
    "Rank",
    "Strategy",
    "TopicPool",
    "build_topic_pools",
    "judging_order",
    "parse_strategy",
    "register",
    "restrict_prior",
    "strategy_names",
    "tfidf_features",
]
