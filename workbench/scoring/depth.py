"""Candidate depth versus recall versus reranking cost: the rows of a depth sweep and the cost fit.

For each candidate depth D of a sweep (10, 50, 100, 200): R@D of the candidate
run (the ceiling), R@k before and after reranking the top D, and the measured
reranking cost per topic. The cost is that of reranking from text, every
per-document step inside each topic's timed block (a bi-encoder encodes the
query and the D candidates, a cross-encoder reads the D pairs), so it grows
with D as it does for a reranker without precomputed document vectors; it is
measured on the sweep's cost topics (``cost_topics``: evenly spaced, or all).
A bi-encoder's cost with document vectors read from the embedding cache (one
query encoding and D dot products: about flat in D) is kept beside it as
``cached_ms``, labelled as such. Two derived columns price the depth:

* marginal ceiling per ms = (R@D_i - R@D_{i-1}) / (cost_i - cost_{i-1}): the
  recall ceiling bought by each added millisecond of reranking per topic;
* marginal final recall per ms = the same for R@k after reranking, what the
  user sees.

The added cost between two depths is taken from the cost fit (its slope times
the added candidates per topic), which uses every per-topic measurement at
once; the measured mean, p50 and p95 ms per topic of each depth are shown
beside it. Without a fit it is the difference of the measured means. An added
cost that is not positive (a cost that does not grow with depth) leaves the
marginal undefined (None).

``fit_cost`` says how cost scales with depth from the per-topic measurements:
an ordinary least-squares line ``ms = a + b * n`` (n = candidates scored) with
its R², and the log-log slope ``alpha`` of ``ms ~ n^alpha`` (1 = linear, 0 =
flat: a fixed cost per topic dominates).

Source:
    Least squares and R²: any regression text (e.g. Draper & Smith, *Applied
    Regression Analysis*, 3rd ed., Wiley 1998, ch. 1); percentiles:
    ``workbench.lineage.percentile`` (Hyndman & Fan type 7).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.errors import ValidationError


@dataclass(frozen=True, slots=True)
class CostFit:
    """How reranking cost per topic scales with the number of candidates.

    Attributes:
        intercept_ms: a, the fixed cost per topic (ms) of ``ms = a + b * n``.
        slope_ms: b, the cost of one more candidate (ms).
        r2: coefficient of determination of the line (nan when the costs do not vary).
        exponent: alpha of ``ms ~ n^alpha`` (least squares on logs; nan when
            fewer than two distinct n).
        n_points: (n, ms) measurements fitted.
    """

    intercept_ms: float
    slope_ms: float
    r2: float
    exponent: float
    n_points: int

    def predict(self, n: float) -> float:
        """Fitted cost (ms) of a topic with ``n`` candidates."""
        return self.intercept_ms + self.slope_ms * n

    @property
    def scaling(self) -> str:
        """``linear`` (alpha >= 0.8), ``sub-linear`` (0.2 <= alpha < 0.8), ``flat`` (alpha < 0.2) or ``unknown``."""
        a = self.exponent
        if math.isnan(a):
            return "unknown"
        return "linear" if a >= 0.8 else ("sub-linear" if a >= 0.2 else "flat")

    def describe(self) -> str:
        """One sentence for reports (values rounded for display only).

        Example:
            >>> CostFit(2.0, 3.1, 0.99, 0.97, 40).describe()
            'cost per topic = 2.00 ms + 3.1000 ms per candidate (R² 0.990); cost ~ D^0.97: linear in depth'
            >>> CostFit(92.88, -0.084, 0.1, -0.06, 40).describe()
            'cost per topic = 92.88 ms - 0.0840 ms per candidate (R² 0.100); cost ~ D^-0.06: flat in depth'
        """
        r2 = "-" if math.isnan(self.r2) else f"{self.r2:.3f}"
        alpha = "?" if math.isnan(self.exponent) else f"{self.exponent:.2f}"
        sign = "-" if self.slope_ms < 0 else "+"  # a noisy fit can slope down: "- 0.0840 ms", not "+ -0.0840 ms"
        return (f"cost per topic = {self.intercept_ms:.2f} ms {sign} {abs(self.slope_ms):.4f} ms per candidate (R² {r2}); "
                f"cost ~ D^{alpha}: {self.scaling} in depth")


def fit_cost(n_documents: Sequence[float], wall_ms: Sequence[float]) -> CostFit:
    """Fit per-topic reranking cost against the number of candidates scored.

    Args:
        n_documents: candidates scored per measurement (one per topic and depth).
        wall_ms: the measured wall ms, aligned with ``n_documents``.

    Returns:
        The ``CostFit``.

    Raises:
        ValidationError: the sequences differ in length or hold fewer than two points.

    Example:
        >>> f = fit_cost([10, 50, 100, 200], [31.0, 155.0, 310.0, 620.0])
        >>> round(f.slope_ms, 6), round(f.intercept_ms, 6), round(f.exponent, 6)
        (3.1, 0.0, 1.0)
    """
    if len(n_documents) != len(wall_ms):
        raise ValidationError(f"expected as many costs as candidate counts, found {len(wall_ms)} and {len(n_documents)}")
    n = len(n_documents)
    if n < 2:
        raise ValidationError(f"expected at least two measurements to fit the cost, found {n}")
    xs = [float(x) for x in n_documents]
    ys = [float(y) for y in wall_ms]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    syy = sum((y - my) ** 2 for y in ys)
    slope = sxy / sxx if sxx else 0.0
    intercept = my - slope * mx
    ss_res = sum((y - (intercept + slope * x)) ** 2 for x, y in zip(xs, ys, strict=True))
    r2 = 1.0 - ss_res / syy if syy else math.nan
    logs = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    exponent = math.nan
    if len({lx for lx, _ in logs}) >= 2:
        lmx = sum(lx for lx, _ in logs) / len(logs)
        lmy = sum(ly for _, ly in logs) / len(logs)
        lsxx = sum((lx - lmx) ** 2 for lx, _ in logs)
        exponent = sum((lx - lmx) * (ly - lmy) for lx, ly in logs) / lsxx
    return CostFit(intercept, slope, r2, exponent, n)


@dataclass(frozen=True, slots=True)
class DepthPoint:
    """One candidate depth of a sweep, measured.

    Attributes:
        depth: D.
        k: the final cutoff.
        candidate_recall: macro R@D of the candidate run (the ceiling).
        candidate_recall_micro: micro R@D of the candidate run.
        ceiling: mean of min(D, |R|) / |R|, the best R@D any run reaches.
        candidate_recall_k: macro R@k of the candidate run (before reranking).
        final_recall: macro R@k after reranking the top D.
        final_ndcg: macro nDCG@k after reranking.
        recall_unchanged: the reranked top D has the candidates' R@D on every topic.
        n_topics: topics whose cost was measured (the cost topics with candidates).
        n_documents: candidates scored over those topics.
        mean_ms, p50_ms, p95_ms: measured wall ms per topic (mean, median, 95th
            percentile), reranking from text (document encoding inside the timed block).
        ms_per_document: total ms / n_documents.
        cached_ms: mean wall ms per topic of the same rerank with document
            vectors read from the embedding cache (query encoding and D dot
            products), over every topic; None when nothing is cached (a cross-encoder).
    """

    depth: int
    k: int
    candidate_recall: float
    candidate_recall_micro: float
    ceiling: float
    candidate_recall_k: float
    final_recall: float
    final_ndcg: float
    recall_unchanged: bool
    n_topics: int
    n_documents: int
    mean_ms: float
    p50_ms: float
    p95_ms: float
    ms_per_document: float
    cached_ms: float | None = None


@dataclass(frozen=True, slots=True)
class SweepRow:
    """A ``DepthPoint`` with what it added over the previous (shallower) depth.

    Attributes:
        point: the depth's measurements.
        added_ms: cost per topic added over the previous depth (ms; None for the
            first): the fitted slope times the added candidates per topic when
            a ``CostFit`` was given, else the difference of the measured means.
        ceiling_per_ms: (R@D - previous R@D) / added_ms (None for the first, or
            when added_ms <= 0).
        final_per_ms: (R@k after reranking - previous) / added_ms (same rules).
    """

    point: DepthPoint
    added_ms: float | None
    ceiling_per_ms: float | None
    final_per_ms: float | None


def _per_topic(p: DepthPoint) -> float:
    return p.n_documents / p.n_topics if p.n_topics else 0.0


def sweep_rows(points: Sequence[DepthPoint], fit: CostFit | None = None) -> list[SweepRow]:
    """The sweep's rows in depth order, each with its marginal recall per added millisecond.

    Args:
        points: one per depth, any order.
        fit: the cost fit of the sweep; when given, the added cost between two
            depths is ``fit.slope_ms`` times the added candidates per topic (all
            measurements at once, robust to the noise of one depth's mean);
            None = the difference of the measured mean ms per topic.

    Raises:
        ValidationError: two points share a depth.

    Example:
        >>> def p(d, r, f, ms):
        ...     return DepthPoint(d, 10, r, r, 1.0, 0.5, f, 0.4, True, 1, d, ms, ms, ms, ms / d)
        >>> rows = sweep_rows([p(50, 0.93, 0.83, 155.0), p(10, 0.74, 0.74, 31.0)])
        >>> [r.point.depth for r in rows], rows[0].ceiling_per_ms, round(rows[1].ceiling_per_ms, 6)
        ([10, 50], None, 0.001532)
        >>> round(sweep_rows([p(10, 0.74, 0.74, 31.0), p(50, 0.93, 0.83, 155.0)], CostFit(0, 3.1, 1, 1, 2))[1].added_ms, 6)
        124.0
    """
    ordered = sorted(points, key=lambda p: p.depth)
    depths = [p.depth for p in ordered]
    if len(set(depths)) != len(depths):
        raise ValidationError(f"expected distinct depths in a sweep, found {depths}")
    out: list[SweepRow] = []
    prev: DepthPoint | None = None
    for p in ordered:
        if prev is None:
            out.append(SweepRow(p, None, None, None))
        else:
            added = (fit.slope_ms * (_per_topic(p) - _per_topic(prev)) if fit is not None
                     else p.mean_ms - prev.mean_ms)
            ok = added > 0 and math.isfinite(added)
            out.append(SweepRow(p, added, (p.candidate_recall - prev.candidate_recall) / added if ok else None,
                                (p.final_recall - prev.final_recall) / added if ok else None))
        prev = p
    return out


def parse_depths(text: str) -> tuple[int, ...]:
    """Depths from ``"10,50,100,200"``: distinct, ascending, each >= 1.

    Raises:
        ValidationError: not comma-separated positive integers.

    Example:
        >>> parse_depths("50, 10,200,100")
        (10, 50, 100, 200)
    """
    try:
        ds = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise ValidationError(f"--depths: expected comma-separated integers such as 10,50,100,200, found {text!r}") from None
    if not ds or min(ds) < 1:
        raise ValidationError(f"--depths: expected depths >= 1 such as 10,50,100,200, found {text!r}")
    return tuple(sorted(set(ds)))


@dataclass(frozen=True, slots=True)
class CappedDepths:
    """The depths a sweep can measure on a run of a given depth.

    Attributes:
        depths: the depths swept, distinct and ascending; each asked depth deeper
            than the run is replaced by the run's depth (once).
        capped: the asked depths deeper than the run, ascending (empty: none).
        run_depth: the candidate run's depth (documents per topic).
        note: what capping did, one sentence for the report and stderr ("" when nothing was capped).
    """

    depths: tuple[int, ...]
    capped: tuple[int, ...]
    run_depth: int
    note: str


def cap_depths(depths: Sequence[int], run_depth: int, run_name: str) -> CappedDepths:
    """Cap a sweep's depths at its candidate run's depth.

    A depth D deeper than the run would rerank the same documents as D = run
    depth and label them D, so it is swept at the run's depth and said so (R@D
    at a depth the run never reached would be R@run_depth under another name).

    Args:
        depths: the depths asked for, each >= 1.
        run_depth: documents per topic of the candidate run (>= 1).
        run_name: the candidate run, named in the note.

    Raises:
        ValidationError: no depth.

    Example:
        >>> c = cap_depths((10, 50, 100, 200), 100, "rrf")
        >>> c.depths, c.capped
        ((10, 50, 100), (200,))
        >>> c.note
        'run rrf holds at most 100 documents per topic: depth 200 capped to 100 (already in the sweep)'
    """
    if not depths:
        raise ValidationError("expected at least one depth, e.g. --depths 10,50,100,200")
    asked = sorted(set(depths))
    capped = tuple(d for d in asked if d > run_depth)
    swept = tuple(sorted({min(d, run_depth) for d in asked}))
    note = ""
    if capped:
        listed = ", ".join(map(str, capped))
        note = (f"run {run_name} holds at most {run_depth} documents per topic: depth{'s' if len(capped) > 1 else ''} "
                f"{listed} capped to {run_depth}" + (" (already in the sweep)" if run_depth in asked else ""))
    return CappedDepths(swept, capped, run_depth, note)
def cost_sample(topics: Sequence[str], n: int) -> tuple[str, ...]:
    """The topics a sweep's cost is measured on: ``n`` of them evenly spaced in the given order, or all.

    Reranking from text costs seconds per topic at D = 200 on a CPU, so a sweep
    can measure cost on a subset while recall is computed on every topic. The
    choice is deterministic (no seed): topic ``floor(i * len / n)`` for i in 0..n-1.

    Args:
        topics: the sweep's topics, in order.
        n: how many (>= 0); 0, or n >= len(topics), means every topic.

    Raises:
        ValidationError: n < 0.

    Example:
        >>> cost_sample(["1", "2", "3", "4", "5", "6"], 3)
        ('1', '3', '5')
        >>> cost_sample(["1", "2"], 0)
        ('1', '2')
    """
    if n < 0:
        raise ValidationError(f"--cost-topics: expected a number of topics >= 0 (0 = every topic), found {n}")
    if n == 0 or n >= len(topics):
        return tuple(topics)
    return tuple(topics[(i * len(topics)) // n] for i in range(n))
