"""Corrections for multiple comparisons: adjusted p-values and interval levels.

A gate that tests several measures (or slices, or candidates) at once runs a
*family* of tests; the chance that at least one of m true-null tests comes out
"significant" at level alpha grows towards 1 - (1 - alpha)^m. The corrections
here control that family-wise error rate:

* ``holm`` (the default): Holm-Bonferroni step-down. Sort the m p-values
  ascending, p_(1) <= ... <= p_(m); the adjusted value of p_(i) is
  max_{j <= i} min(1, (m - j + 1) * p_(j)). Uniformly more powerful than
  Bonferroni, same guarantee, no assumption on the dependence between tests.
* ``bonferroni``: min(1, m * p).
* ``none``: the raw p-values.

Intervals: the step-down procedure has no matching family of simultaneous
confidence intervals in general, so a corrected interval is the Bonferroni one
at level 1 - (1 - confidence) / m for ``holm`` and ``bonferroni`` alike
(documented in the report), and the raw level for ``none``.

Source:
    Holm, "A simple sequentially rejective multiple test procedure",
    Scandinavian Journal of Statistics 6(2), 1979, 65-70 (jstor 4615733);
    Dunn, "Multiple comparisons among means", JASA 56, 1961,
    doi:10.1080/01621459.1961.10482090 (Bonferroni intervals); Strassburger &
    Bretz, Statistics in Medicine 27, 2008, doi:10.1002/sim.3338 (why step-down
    tests lack simple compatible intervals).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from workbench.errors import UnknownNameError, ValidationError

Correction = Literal["holm", "bonferroni", "none"]
"""A multiple-comparison correction by name."""


def holm(p_values: Sequence[float]) -> tuple[float, ...]:
    """Holm-Bonferroni adjusted p-values, in the input order.

    Args:
        p_values: raw p-values in [0, 1], any order (one per test of the family).

    Returns:
        The adjusted p-values, same length and order; each >= its raw value, <= 1.

    Raises:
        ValidationError: a value outside [0, 1] (or nan).

    Example:
        >>> holm([0.01, 0.04, 0.03])
        (0.03, 0.06, 0.06)
    """
    ps = _check(p_values)
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [0.0] * m
    running = 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * ps[i]))
        out[i] = running
    return tuple(out)


def bonferroni(p_values: Sequence[float]) -> tuple[float, ...]:
    """Bonferroni adjusted p-values: min(1, m * p), in the input order.

    Example:
        >>> bonferroni([0.01, 0.04, 0.5])
        (0.03, 0.12, 1.0)
    """
    ps = _check(p_values)
    return tuple(min(1.0, len(ps) * p) for p in ps)


def _none(p_values: Sequence[float]) -> tuple[float, ...]:
    return _check(p_values)


CORRECTIONS: dict[str, Callable[[Sequence[float]], tuple[float, ...]]] = {
    "holm": holm,
    "bonferroni": bonferroni,
    "none": _none,
}
"""Registry of corrections: name -> adjusted-p-value function."""


def check_correction(name: str) -> Correction:
    """``name`` if it is a registered correction.

    Raises:
        UnknownNameError: it is not (lists the registered ones).
    """
    if name not in CORRECTIONS:
        raise UnknownNameError("multiple-comparison correction", name, CORRECTIONS)
    return name  # type: ignore[return-value]


def adjust(p_values: Sequence[float], correction: str = "holm") -> tuple[float, ...]:
    """Adjusted p-values under a named correction (see the module docstring).

    Raises:
        UnknownNameError: unknown correction.
        ValidationError: a p-value outside [0, 1].

    Example:
        >>> adjust([0.02, 0.2], "holm"), adjust([0.02, 0.2], "none")
        ((0.04, 0.2), (0.02, 0.2))
    """
    return CORRECTIONS[check_correction(correction)](p_values)


def corrected_confidence(confidence: float, m: int, correction: str = "holm") -> float:
    """Confidence level of each corrected interval in a family of m intervals.

    Args:
        confidence: the family's level, in (0, 1), e.g. 0.95.
        m: intervals in the family, >= 1.
        correction: ``holm`` or ``bonferroni`` (both give Bonferroni intervals),
            or ``none`` (the raw level).

    Returns:
        1 - (1 - confidence) / m, or ``confidence`` for ``none`` or m = 1.

    Raises:
        ValidationError: a level outside (0, 1) or m < 1.
        UnknownNameError: unknown correction.

    Example:
        >>> round(corrected_confidence(0.95, 2), 6)
        0.975
    """
    check_correction(correction)
    if not 0 < confidence < 1:
        raise ValidationError(f"expected a confidence level between 0 and 1, found {confidence!r}.")
    if m < 1:
        raise ValidationError(f"expected at least 1 interval in the family, found {m}.")
    if correction == "none" or m == 1:
        return confidence
    return 1.0 - (1.0 - confidence) / m


def _check(p_values: Sequence[float]) -> tuple[float, ...]:
    ps = tuple(float(p) for p in p_values)
    bad = [p for p in ps if not 0.0 <= p <= 1.0]
    if bad:
        raise ValidationError(f"expected p-values in [0, 1], found {bad[0]!r}.")
    return ps
