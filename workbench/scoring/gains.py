"""nDCG's gains and discounts and RBP's weights, shared by both scorers so that their sums agree bit for bit.

* gain of a grade g: 0 for g <= 0; g (``dcg='log2'``, trec_eval ``ndcg_cut``);
  2^g - 1 (``dcg='exp-log2'``), exact for every integer grade (``ldexp``), inf
  once 2^g overflows a float64 (g >= 1024; reports say it is not finite).
* discount at rank r (1-based): 1 / log2(r + 1), from the C library's
  ``log2`` (as trec_eval), kept in one table.
* RBP's weight at rank r before its (1 - p) factor: p^(r - 1), from the C
  library's ``pow``, kept in one table per p (``rbp_powers``).

Source:
    Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques",
    ACM TOIS 2002, doi:10.1145/582415.582418; exponential gain: Burges et al.,
    ICML 2005, doi:10.1145/1102351.1102363; trec_eval ``m_ndcg_cut.c``.
"""

from __future__ import annotations

import math

_DISCOUNTS: list[float] = [0.0]


def discounts(n: int) -> list[float]:
    """The discount table through rank ``n``: element r (1 <= r <= n) is 1 / log2(r + 1); element 0 is unused.

    Args:
        n: the deepest rank needed (>= 0).

    Returns:
        A shared list of at least n + 1 floats (do not modify it).

    Example:
        >>> discounts(3)[1:4]
        [1.0, 0.6309297535714575, 0.5]
    """
    table = _DISCOUNTS
    if len(table) <= n:
        table.extend(1.0 / math.log2(r + 1.0) for r in range(len(table), n + 1))
    return table


def gain(grade: int, dcg: str) -> float:
    """The gain of one judged grade: 0 for grade <= 0; ``grade`` (``log2``); 2^grade - 1 (``exp-log2``).

    Example:
        >>> gain(3, "log2"), gain(3, "exp-log2"), gain(-1, "exp-log2")
        (3.0, 7.0, 0.0)
    """
    if grade <= 0:
        return 0.0
    if dcg == "log2":
        return float(grade)
    return math.ldexp(1.0, grade) - 1.0 if grade < 1024 else math.inf


_POWERS: dict[float, list[float]] = {}


def rbp_powers(p: float, n: int) -> list[float]:
    """RBP's weights before the (1 - p) factor through rank ``n``: element r (1 <= r <= n) is p^(r - 1).

    Each element is the C library's ``pow`` (Python's ``p ** (r - 1)``), not a
    running product, so that both scorers read the same numbers; once p^r
    underflows to 0.0 the rest of the table is 0.0. Element 0 is unused.

    Args:
        p: the persistence, 0 < p < 1.
        n: the deepest rank needed (>= 0).

    Returns:
        A shared list of at least n + 1 floats (do not modify it).

    Example:
        >>> rbp_powers(0.5, 4)[1:5]
        [1.0, 0.5, 0.25, 0.125]

    Source:
        Moffat & Zobel, "Rank-biased precision for measurement of retrieval
        effectiveness", ACM TOIS 2008, doi:10.1145/1416950.1416952.
    """
    table = _POWERS.setdefault(p, [0.0])
    if len(table) <= n:
        start = len(table)
        if start > 1 and table[-1] == 0.0:
            table.extend([0.0] * (n + 1 - start))
        else:
            for r in range(start, n + 1):
                w = p ** (r - 1)
                table.append(w)
                if w == 0.0:
                    table.extend([0.0] * (n - r))
                    break
    return table
