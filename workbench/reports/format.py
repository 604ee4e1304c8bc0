"""Number and table formatting shared by every renderer, and the output formats (``--format``).

Values are rounded here, for display only (4 decimals); JSON and long forms keep full precision.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from workbench.errors import UsageError

if TYPE_CHECKING:
    pass


Format = Literal["table", "json", "jsonl", "csv", "tsv", "parquet"]


FORMATS: tuple[str, ...] = ("table", "json", "jsonl", "csv", "tsv", "parquet")


TEXT_FORMATS: tuple[str, ...] = ("table", "json", "jsonl", "csv", "tsv")
"""The formats rendered as text (every format but ``parquet``, which is written to a file)."""


DIGITS = 4


def check_format(fmt: str, formats: Sequence[str] = TEXT_FORMATS) -> Format:
    """``fmt`` if it is one of ``formats`` (default: the text formats; ``FORMATS`` where a file may be written).

    Raises:
        ValidationError: it is not.
    """
    if fmt not in formats:
        raise UsageError(f"expected --format one of {', '.join(formats)}, found {fmt!r}.")
    return fmt  # type: ignore[return-value]


def number(x: float | None, digits: int = DIGITS) -> str:
    """A value for people: ``digits`` decimals, ``-`` for None, nan or infinity (not a number; the
    report's warnings say why).

    Example:
        >>> number(1 / 3), number(None), number(float("nan")), number(float("inf"))
        ('0.3333', '-', '-', '-')
    """
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}"


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def share_text(n: int, m: int) -> str:
    """``n/m (p%)`` where p never rounds up to 100% (or down to 0%) unless it is exact.

    A share below 1 is shown with its first decimal rounded down, so 1,836 of
    1,837 reads 99.9%, not 100.0%.

    Example:
        >>> share_text(1836, 1837), share_text(5, 5), share_text(1, 30000)
        ('1,836/1,837 (99.9%)', '5/5 (100%)', '1/30,000 (0.003%)')
    """
    if m == 0:
        return "0/0 (-)"
    if n == m:
        return f"{n:,}/{m:,} (100%)"
    if n == 0:
        return f"0/{m:,} (0%)"
    pct = 100 * n / m
    digits = 1
    while digits < 6 and (math.floor(pct * 10**digits) == 0 and n > 0):
        digits += 1
    shown = math.floor(pct * 10**digits) / 10**digits
    return f"{n:,}/{m:,} ({shown:.{digits}f}%)"


def number_near(x: float, threshold: float, digits: int = DIGITS) -> tuple[str, str]:
    """``x`` and ``threshold`` with enough decimals that the printed values show which side ``x`` is on.

    Starts at ``digits`` decimals and adds more (up to 17) while the two
    printed values are equal or ordered differently from the full-precision
    ones; equal values print equal.

    Example:
        >>> number_near(0.8949999, 0.895)
        ('0.8949999', '0.8950000')
        >>> number_near(0.91, 0.895)
        ('0.9100', '0.8950')
    """
    d = digits
    while d < 17:
        a, b = f"{x:.{d}f}", f"{threshold:.{d}f}"
        if x == threshold or (a != b and (float(a) < float(b)) == (x < threshold)):
            return a, b
        d += 1
    return repr(x), repr(threshold)


def _json_number(x: float | None) -> float | None:
    """JSON has no nan or infinity: None instead."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return x


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, left: int = 1) -> str:
    """A plain fixed-width table; the first ``left`` columns left-aligned, the rest right-aligned.

    Example:
        >>> print(table(["run", "R@10"], [["bm25", "0.5000"]]))
        run    R@10
        bm25 0.5000
    """
    widths = [len(h) for h in headers]
    for r in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, r, strict=True)]

    def line(cells: Sequence[str]) -> str:
        out = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return " ".join(out).rstrip()

    return "\n".join([line(headers)] + [line(r) for r in rows])


def _ids(ids: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", ... {len(ids) - limit} more" if len(ids) > limit else "")


def _delimited(rows: list[dict[str, Any]], sep: str, fieldnames: Sequence[str] | None = None) -> str:
    names = list(fieldnames) if fieldnames is not None else (list(rows[0]) if rows else [])
    if not names:
        return ""
    import csv

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=names, delimiter=sep, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: (repr(v) if isinstance(v, float) else ("" if v is None else v)) for k, v in r.items()})
    return buf.getvalue()
