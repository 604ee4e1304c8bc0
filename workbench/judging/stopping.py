"""Per-topic stopping rules: when to stop judging a topic (PURE).

A rule looks at one topic's judgments in the order they were made (True =
relevant) and says whether judging the topic should stop. A lead chooses one
per pool (``stop_after_nonrelevant(n=...)``, ``knee(...)``), and may also give a
budget per topic; judging stops at whichever comes first.

* ``budget(n)``: stop after n judgments.
* ``stop_after_nonrelevant(n)``: stop after n consecutive non-relevant judgments.
* ``knee``: the knee method of Cormack & Grossman, "Engineering quality and
  reliability in technology-assisted review", SIGIR 2016,
  doi:10.1145/2911451.2911510: on the gain curve (relevant found against
  judgments made, s judgments so far), the knee is the point of greatest
  distance below the line from the origin to (s, rel(s)); the slope ratio is

      rho = (rel(knee) / knee) / ((rel(s) - rel(knee) + 1) / (s - knee))

  and judging stops when rho >= ratio - min(rel(s), 150) and s >= min_judged
  (the paper: ratio 156, at least 150 judgments; a pool topic of a few dozen
  documents needs a smaller ``min_judged``).

Rules are values in a registry, parsed from specs like those of strategies:
``knee(min_judged=30)``, ``stop_after_nonrelevant(n=20)``, ``budget(n=50)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

from workbench.errors import UnknownNameError, ValidationError


@dataclass(frozen=True)
class StoppingRule:
    """Base class of stopping rules (frozen dataclasses with a registry ``name``)."""

    name: ClassVar[str] = ""

    def should_stop(self, relevant: Sequence[bool]) -> bool:
        """True when judging the topic should stop after these judgments (in order)."""
        raise NotImplementedError

    def __str__(self) -> str:
        defaults = type(self)()
        changed = [f"{f.name}={getattr(self, f.name)}" for f in fields(self)
                   if getattr(self, f.name) != getattr(defaults, f.name)]
        return f"{self.name}({', '.join(changed)})" if changed else self.name


@dataclass(frozen=True)
class Budget(StoppingRule):
    """Stop after ``n`` judgments of the topic (n >= 1).

    Example:
        >>> Budget(n=2).should_stop([True, False])
        True
    """

    name = "budget"
    n: int = 100

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValidationError(f"budget must be >= 1 judgment per topic, found {self.n}")

    def should_stop(self, relevant: Sequence[bool]) -> bool:
        """len(relevant) >= n."""
        return len(relevant) >= self.n


@dataclass(frozen=True)
class ConsecutiveNonRelevant(StoppingRule):
    """Stop after ``n`` consecutive non-relevant judgments (n >= 1).

    Source:
        The "disposable" stopping heuristic of TAR practice, e.g. the target and
        knee discussion of Cormack & Grossman, SIGIR 2016, doi:10.1145/2911451.2911510.

    Example:
        >>> ConsecutiveNonRelevant(n=2).should_stop([True, False, False])
        True
    """

    name = "stop_after_nonrelevant"
    n: int = 20

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValidationError(f"expected n >= 1 consecutive non-relevant judgments, found {self.n}")

    def should_stop(self, relevant: Sequence[bool]) -> bool:
        """The last ``n`` judgments are all non-relevant."""
        return len(relevant) >= self.n and not any(relevant[-self.n:])


def knee_point(relevant: Sequence[bool]) -> int:
    """The knee of a gain curve: the number of judgments i (1..s) whose point
    (i, rel(i)) lies farthest below the line from (0, 0) to (s, rel(s)); 0 for
    an empty curve. Ties go to the earliest point.

    Example:
        >>> knee_point([True, True, False, False])
        2
    """
    s = len(relevant)
    if s == 0:
        return 0
    gains = []
    total = 0
    for r in relevant:
        total += r
        gains.append(total)
    best, where = -1.0, 1
    for i, g in enumerate(gains, 1):
        # distance (up to the constant norm) of (i, g) from the line y = total/s * x, above it counted positive
        d = g * s - total * i
        if d > best:
            best, where = d, i
    return where


@dataclass(frozen=True)
class Knee(StoppingRule):
    """The knee method (Cormack & Grossman, SIGIR 2016; see the module docstring).

    Args:
        ratio: the slope-ratio target before the relevant-count adjustment (156).
        min_judged: never stop before this many judgments (150 in the paper).

    Example:
        >>> Knee(min_judged=10).should_stop([True] * 5 + [False] * 200)
        True
    """

    name = "knee"
    ratio: int = 156
    min_judged: int = 150

    def should_stop(self, relevant: Sequence[bool]) -> bool:
        """rho >= ratio - min(rel(s), 150) and s >= min_judged."""
        s = len(relevant)
        if s < max(1, self.min_judged):
            return False
        k = knee_point(relevant)
        rel_s = sum(relevant)
        rel_k = sum(relevant[:k])
        if k == 0 or k >= s or rel_k == 0:
            return False
        rho = (rel_k / k) / ((rel_s - rel_k + 1) / (s - k))
        return rho >= self.ratio - min(rel_s, 150)


STOPPING_RULES: dict[str, StoppingRule] = {
    r.name: r for r in (Budget(), ConsecutiveNonRelevant(), Knee())
}
"""Registered name -> the rule with its default parameters."""

_SPEC = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s*(?:\((.*)\))?\s*$")


def parse_stopping_rule(spec: str) -> StoppingRule:
    """A stopping rule from its spec: ``knee``, ``knee(min_judged=30)``,
    ``stop_after_nonrelevant(n=20)``, ``budget(n=50)``.

    Raises:
        UnknownNameError: unknown rule name (the message lists the names).
        ValidationError: bad syntax, parameter or value.

    Example:
        >>> str(parse_stopping_rule("knee(min_judged=30)"))
        'knee(min_judged=30)'
    """
    m = _SPEC.match(spec or "")
    if not m:
        raise ValidationError(f"expected a stopping rule such as knee or stop_after_nonrelevant(n=20), found {spec!r}")
    name, inner = m.group(1), m.group(2)
    base = STOPPING_RULES.get(name)
    if base is None:
        raise UnknownNameError("stopping rule", name, STOPPING_RULES)
    params: dict[str, Any] = {}
    allowed = {f.name for f in fields(base)}
    for part in (inner or "").split(","):
        if not part.strip():
            continue
        key, _, raw = part.partition("=")
        key, raw = key.strip(), raw.strip()
        if key not in allowed:
            raise ValidationError(f"stopping rule {spec!r}: {name} has no parameter {key!r}; "
                                  f"its parameters: {', '.join(sorted(allowed))}")
        try:
            params[key] = int(raw)
        except ValueError:
            raise ValidationError(f"stopping rule {spec!r}: expected an integer for {key}, found {raw!r}") from None
    return replace(base, **params) if params else base


@dataclass(frozen=True)
class StoppingPlan:
    """A pool's stopping settings: a rule, a default budget, and per-topic budgets.

    Attributes:
        rule: the stopping rule, or None.
        budget: judgments per topic before judging stops (None = no budget).
        topic_budgets: topic_id -> budget, overriding ``budget``.
    """

    rule: StoppingRule | None = None
    budget: int | None = None
    topic_budgets: tuple[tuple[str, int], ...] = ()

    def budget_of(self, topic_id: str) -> int | None:
        """The budget of one topic (its own, else the default, else None)."""
        return dict(self.topic_budgets).get(topic_id, self.budget)

    def stopped(self, topic_id: str, relevant: Sequence[bool]) -> str | None:
        """Why judging of the topic stops after ``relevant`` (in order), or None.

        Returns:
            ``"budget N"`` or the rule's spec, or None to go on.
        """
        b = self.budget_of(topic_id)
        if b is not None and len(relevant) >= b:
            return f"budget {b}"
        if self.rule is not None and self.rule.should_stop(relevant):
            return str(self.rule)
        return None
