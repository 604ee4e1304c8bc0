"""Macro R@k from a judged sample by empirical Bayes: a model-based estimate that borrows strength across topics (PURE).

The design-based macro ``R̂@k`` (mean over topics of the Horvitz-Thompson
ratio ``R̂_k,t / R̂_t``, ``scoring.estimate``) is badly biased where each
topic's sample holds few relevant documents of the low-rate strata: a ratio of
small-sample totals (``E[1/R̂] != 1/E[R̂]``), and topics with ``R̂ = 0`` leave
the mean. This module estimates the same quantity, ``mean over topics of
|R_t ∩ top k| / |R_t|``, under a **model**, not the design: its validity rests
on the beta-binomial model below, and ``workbench simulate-sample`` measures
how far that carries (``docs/sampling.md``).

**Cells.** For a run and cut-off k, each stratum h of topic t is split in two
*cells*: the documents of the stratum within the run's top k (``within``) and
the others. A cell c of topic t holds ``N_tc`` documents, ``n_tc`` of them
judged, ``y_tc`` of those relevant (``recall_cells``). Within a stratum the
sample is a simple random sample, so the judged documents of a cell are a
random sample of the cell (given their number).

**Model.** Per cell kind c (stratum, within or not), every document of topic t
is relevant with probability ``p_tc``, independently, and ``p_tc ~ Beta(a_c,
b_c)`` across topics. ``a_c, b_c`` are fitted by moments across the topics
with ``n_tc > 0`` (Kleinman 1973): with ``W = sum n_t``, the pooled rate
``mu = sum y_t / W``, ``S = sum n_t (y_t / n_t - mu)^2`` and
``rho = (S / (mu (1 - mu)) - (T - 1)) / (W - sum n_t^2 / W - (T - 1))``
(the intra-topic correlation, ``1 / (a + b + 1)``), ``a + b = 1 / rho - 1``,
``a = mu (a + b)``. ``rho <= 0`` (no spread between topics beyond the binomial),
``T < 2``, ``mu`` 0 or 1: complete pooling, ``p_tc = mu``. A topic's rate is
then shrunk toward the pooled one (Efron & Morris 1975):
``p̂_tc = (y_tc + a_c) / (n_tc + a_c + b_c)``.

**Prediction.** The unjudged documents of a cell are predicted from the
posterior (Royall 1970: a finite population's total is the observed part plus
the predicted rest): ``X_tc = y_tc + U_tc``, ``U_tc | p ~ Binomial(N_tc - n_tc,
p)``, ``p ~ Beta(a_c + y_tc, b_c + n_tc - y_tc)``; ``A_t = sum over within cells
of X_tc`` (relevant within k), ``R_t = sum over all cells of X_tc`` (|R_t|), and
the topic's recall ``A_t / R_t``. The estimate is the posterior mean of
``mean over topics with R_t > 0 of A_t / R_t`` (the mean of the ratio, not the
ratio of the means: ``E[A/R]`` is not ``E[A]/E[R]`` when R is small), by Monte
Carlo over ``draws`` draws. Every topic with a frame has an estimate, so the
macro averages the topics the truth averages (those with relevant documents).

**Interval.** Each draw first refits ``a_c, b_c`` on a bootstrap resample of
the topics (Laird & Louis 1987), so that the uncertainty of the fitted prior
(above all the pooled rate of a sparse cell, which every topic shares) enters;
then draws each topic's cells as above. The 95% interval is the 2.5 and 97.5
percentiles of the draws' macro values; the standard error their standard
deviation. ``bootstrap=False`` keeps the prior fitted on the topics as given
(the plain empirical-Bayes posterior: too short an interval, it ignores the
prior's own error; for tests and comparison).

**Exactness.** A cell whose documents are all judged contributes ``y_tc`` in
every draw: a topic with every stratum fully judged gets its exact R@k. A
stratum no topic has forms no cell.

**Draws** are reproducible: ``numpy.random.default_rng(seed)``; the same seed for
every run gives common random numbers (the same bootstrap resamples of topics),
so run differences carry less Monte Carlo noise.

Source:
    Kleinman, "Proportions with extraneous variance: single and independent samples", JASA 68 (1973) 46-54,
    doi:10.1080/01621459.1973.10481332 (moment estimator of the beta-binomial); Efron & Morris, "Data analysis
    using Stein's estimator and its generalizations", JASA 70 (1975) 311-319, doi:10.1080/01621459.1975.10479864
    (shrinkage); Laird & Louis, "Empirical Bayes confidence intervals based on bootstrap samples", JASA 82
    (1987) 739-750, doi:10.1080/01621459.1987.10478490; Royall, "On finite population sampling theory under
    certain linear regression models", Biometrika 57 (1970) 377-387 (model-based prediction); Rao & Molina,
    "Small Area Estimation", 2nd ed., Wiley 2015 (ch. 9-10). For context, the design-based estimators:
    Yilmaz, Kanoulas & Aslam, SIGIR 2008, doi:10.1145/1390334.1390437.

Example:
    >>> p = fit_beta_binomial([(0, 4), (1, 4), (3, 4)])
    >>> (round(p.mean, 6), round(p.a, 6), round(p.b, 6), round(p.rate(0, 4), 6))
    (0.333333, 0.282051, 0.564103, 0.058201)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from workbench.scoring.estimate import MacroEstimate, SampledQrels

DEFAULT_DRAWS = 1000
"""Monte Carlo draws of ``workbench score``'s EB estimate (``simulate-sample`` uses ``SIMULATION_DRAWS``)."""

SIMULATION_DRAWS = 200
"""Draws per estimate in ``simulate-sample`` (each repeat estimates every run and cut-off)."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Cell:
    """One topic's documents of one stratum, within a run's top k or not.

    Attributes:
        stratum: the stratum (``1-10``, ``outside``).
        within: the documents are in the run's top k.
        N: documents in the cell.
        n: judged documents of the cell.
        rel: judged relevant documents of the cell.
    """

    stratum: str
    within: bool
    N: int  # noqa: N815 - the population size's usual letter
    n: int
    rel: int

    @property
    def kind(self) -> tuple[str, bool]:
        """(stratum, within): the cells the prior is fitted across."""
        return (self.stratum, self.within)


@dataclass(frozen=True, slots=True)
class BetaPrior:
    """The beta prior of one cell kind, fitted across topics.

    Attributes:
        mean: the pooled rate ``mu = sum y / sum n``.
        concentration: ``a + b`` (``math.inf``: complete pooling, every topic's rate is ``mean``).
        topics: topics with judged documents in the cell kind (the fit's T).
    """

    mean: float
    concentration: float
    topics: int

    @property
    def a(self) -> float:
        """``a = mean * (a + b)`` (inf under complete pooling)."""
        return self.mean * self.concentration

    @property
    def b(self) -> float:
        """``b = (1 - mean) * (a + b)``."""
        return (1.0 - self.mean) * self.concentration

    def rate(self, rel: int, n: int) -> float:
        """The posterior mean rate of a topic with ``rel`` relevant of ``n`` judged: ``(y + a) / (n + a + b)``."""
        if math.isinf(self.concentration):
            return self.mean
        return (rel + self.a) / (n + self.concentration)


def fit_beta_binomial(pairs: Sequence[tuple[int, int]]) -> BetaPrior:
    """The beta prior of per-topic rates by moments (Kleinman 1973; module docstring), from ``(y, n)`` per topic.

    Topics with ``n = 0`` are left out. No topic judged: mean 0, complete pooling.

    Example:
        >>> fit_beta_binomial([(1, 2), (1, 2)])          # no spread: complete pooling
        BetaPrior(mean=0.5, concentration=inf, topics=2)
    """
    mu, ab, t = _fit(np.array([[y for y, _ in pairs]], dtype=np.int64), np.array([[n for _, n in pairs]],
                                                                                dtype=np.int64))
    return BetaPrior(float(mu[0]), float(ab[0]), int(t[0]))


def _fit(y: IntArray, n: IntArray) -> tuple[FloatArray, FloatArray, IntArray]:
    """``fit_beta_binomial`` on each row of (D, T) arrays: (mean, concentration (inf = pooling), topics) per row."""
    w = n.sum(axis=1).astype(np.float64)
    t = (n > 0).sum(axis=1)
    safe_w = np.where(w > 0, w, 1.0)
    mu = np.where(w > 0, y.sum(axis=1) / safe_w, 0.0)
    rate = np.where(n > 0, y / np.maximum(n, 1), 0.0)
    s = (n * (rate - mu[:, None]) ** 2).sum(axis=1)
    den = w - (n * n).sum(axis=1) / safe_w - (t - 1)
    binom = mu * (1.0 - mu)
    ok = (t >= 2) & (binom > 0) & (den > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(ok, (s / np.where(binom > 0, binom, 1.0) - (t - 1)) / np.where(den > 0, den, 1.0), 0.0)
    ok &= rho > 0
    rho = np.minimum(np.where(ok, rho, 1.0), 1.0 - 1e-9)
    ab = np.where(ok, 1.0 / rho - 1.0, np.inf)
    return mu, ab, t.astype(np.int64)


def recall_cells(ranked: Sequence[str], sq: SampledQrels, topic_id: str, k: int, *, rel: int = 1) -> tuple[Cell, ...]:
    """The cells of one topic for a run's top k (module docstring): per non-empty stratum, the part within the
    top k and the rest (empty parts left out). Documents of the top k no stratum holds are not estimable and
    count as non-relevant (as in ``estimate.estimate_topic``); judged documents of no stratum are ignored.

    Example:
        >>> sq = SampledQrels({"t": {"a": 1, "c": 0}}, {"t": {"a": "1-2", "b": "1-2", "c": "3-4", "d": "3-4"}},
        ...                   {"t": {"1-2": 2, "3-4": 2}})
        >>> [(c.stratum, c.within, c.N, c.n, c.rel) for c in recall_cells(["a", "c", "b"], sq, "t", 2)]
        [('1-2', True, 1, 1, 1), ('1-2', False, 1, 0, 0), ('3-4', True, 1, 1, 0), ('3-4', False, 1, 0, 0)]
    """
    judged = sq.judged.get(topic_id, {})
    per: dict[str, list[int]] = {}    # stratum -> [within N, within n, within rel, n, rel]
    for d, g in judged.items():
        s = sq.stratum(topic_id, d)
        if s is not None:
            c = per.setdefault(s, [0, 0, 0, 0, 0])
            c[3] += 1
            c[4] += 1 if g >= rel else 0
    for d in ranked[:k]:
        s = sq.stratum(topic_id, d)
        if s is None:
            continue
        c = per.setdefault(s, [0, 0, 0, 0, 0])
        c[0] += 1
        if d in judged:
            c[1] += 1
            c[2] += 1 if judged[d] >= rel else 0
    out: list[Cell] = []
    for s, big_n in sorted(sq.populations.get(topic_id, {}).items()):
        if big_n <= 0:
            continue
        w_n, w_j, w_r, j, r = per.get(s, [0, 0, 0, 0, 0])
        w_n = min(w_n, big_n)
        if w_n:
            out.append(Cell(s, True, w_n, w_j, w_r))
        if big_n - w_n:
            out.append(Cell(s, False, big_n - w_n, j - w_j, r - w_r))
    return tuple(out)


@dataclass(frozen=True)
class EbRecall:
    """The empirical-Bayes macro R@k of one run and cut-off.

    Attributes:
        estimate: value (posterior mean of the macro), low / high (percentile interval), se (standard deviation
            of the draws), n_topics (topics whose expected |R_t| is > 0: those averaged), n_judged.
        topics: topic_id -> posterior mean of its R@k (NaN: |R_t| = 0 in every draw).
        priors: (stratum, within) -> the prior fitted on the topics as given.
        draws: Monte Carlo draws behind it.
    """

    estimate: MacroEstimate
    topics: Mapping[str, float]
    priors: Mapping[tuple[str, bool], BetaPrior]
    draws: int


def eb_macro_recall(cells: Mapping[str, Sequence[Cell]], *, draws: int = DEFAULT_DRAWS, seed: int = 0,
                    bootstrap: bool = True, level: float = 0.95, n_judged: int = 0) -> EbRecall:
    """The empirical-Bayes macro R@k over the topics of ``cells`` (module docstring), with its interval.

    Args:
        cells: topic_id -> its cells for the run and cut-off (``recall_cells``); a topic without cells has no
            frame and is left out.
        draws: Monte Carlo draws (>= 1).
        seed: the generator's seed (``numpy.random.default_rng``).
        bootstrap: refit the prior on a bootstrap resample of topics in each draw (Laird & Louis 1987); False
            keeps the prior fitted on the topics as given.
        level: the interval's coverage (0.95: the 2.5 and 97.5 percentiles).
        n_judged: judged documents behind it (reported only).

    Raises:
        ValueError: ``draws`` < 1 or ``level`` outside (0, 1).
    """
    if draws < 1 or not 0.0 < level < 1.0:
        raise ValueError(f"eb_macro_recall: draws >= 1 and 0 < level < 1 expected, found {draws}, {level}")
    topics = [t for t, cs in cells.items() if cs]
    kinds = sorted({c.kind for t in topics for c in cells[t]})
    nan = math.nan
    if not topics:
        return EbRecall(MacroEstimate(nan, nan, nan, 0, n_judged, nan), {t: nan for t in cells}, {}, draws)
    col = {kind: j for j, kind in enumerate(kinds)}
    shape = (len(topics), len(kinds))
    big_n, n, y = np.zeros(shape, np.int64), np.zeros(shape, np.int64), np.zeros(shape, np.int64)
    for i, t in enumerate(topics):
        for c in cells[t]:
            j = col[c.kind]
            big_n[i, j], n[i, j], y[i, j] = c.N, c.n, c.rel
    within = np.array([w for _, w in kinds], dtype=bool)
    priors = {kind: fit_beta_binomial(list(zip(y[:, j].tolist(), n[:, j].tolist(), strict=True)))
              for kind, j in col.items()}
    rng = np.random.default_rng(seed)
    t_count = len(topics)
    rows = (rng.integers(0, t_count, size=(draws, t_count)) if bootstrap
            else np.broadcast_to(np.arange(t_count), (draws, t_count)))
    x = np.empty((draws, t_count, len(kinds)), dtype=np.float64)
    for j in range(len(kinds)):
        x[:, :, j] = y[:, j] + _predict(big_n[:, j], n[:, j], y[:, j], rows, rng)
    hits = x[:, :, within].sum(axis=2)
    total = x.sum(axis=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = np.where(total > 0, hits / np.where(total > 0, total, 1.0), np.nan)
    present = ~np.isnan(recall)
    counts = present.sum(axis=1)
    macro = np.where(counts > 0, np.where(present, recall, 0.0).sum(axis=1) / np.maximum(counts, 1), np.nan)
    good = macro[~np.isnan(macro)]
    per_topic: dict[str, float] = {t: nan for t in cells}
    for i, t in enumerate(topics):
        m = int(present[:, i].sum())
        per_topic[t] = float(np.where(present[:, i], recall[:, i], 0.0).sum() / m) if m else nan
    averaged = sum(1 for i in range(t_count) if _expected_total(cells[topics[i]], priors) > 0)
    if not good.size:
        return EbRecall(MacroEstimate(nan, nan, nan, 0, n_judged, nan), per_topic, priors, draws)
    tail = (1.0 - level) / 2.0
    low, high = (float(v) for v in np.quantile(good, [tail, 1.0 - tail]))
    se = float(good.std(ddof=1)) if good.size > 1 else 0.0
    return EbRecall(MacroEstimate(float(good.mean()), low, high, averaged, n_judged, se), per_topic, priors, draws)


def _predict(big_n: IntArray, n: IntArray, y: IntArray, rows: npt.NDArray[np.int_],
             rng: np.random.Generator) -> FloatArray:
    """Posterior predictive draws (D, T) of the unjudged relevant documents of one cell kind, the prior refitted
    on each draw's topics (``rows``: (D, T) topic indices)."""
    rest = big_n - n
    draws, t_count = rows.shape
    if not rest.any():
        return np.zeros((draws, t_count))
    mu, ab, _ = _fit(y[rows], n[rows])
    pooled = ~np.isfinite(ab)
    ab_f = np.where(pooled, 0.0, ab)
    alpha = (mu * ab_f)[:, None] + y[None, :]
    beta = ((1.0 - mu) * ab_f)[:, None] + (n - y)[None, :]
    # a Beta(0, .) or Beta(., 0) posterior (a pooled rate of 0 or 1 with every judged document alike) is a point mass
    p = rng.beta(np.maximum(alpha, 1e-300), np.maximum(beta, 1e-300))
    p = np.where(pooled[:, None], mu[:, None], np.where(alpha <= 0, 0.0, np.where(beta <= 0, 1.0, p)))
    return rng.binomial(np.broadcast_to(rest, p.shape), p).astype(np.float64)


def _expected_total(cells: Sequence[Cell], priors: Mapping[tuple[str, bool], BetaPrior]) -> float:
    """The posterior mean of |R_t| under the priors as fitted: ``sum_c y_c + (N_c - n_c) p̂_c``."""
    return sum(c.rel + (c.N - c.n) * priors[c.kind].rate(c.rel, c.n) for c in cells)


def eb_recall_run(ranked: Mapping[str, Sequence[str]], sq: SampledQrels, topics: Sequence[str], ks: Sequence[int], *,
                  rel: int = 1, draws: int = DEFAULT_DRAWS, seed: int = 0) -> dict[int, EbRecall]:
    """``eb_macro_recall`` of one run at each k over ``topics`` (a topic the run lacks is an empty ranking)."""
    out: dict[int, EbRecall] = {}
    judged = sum(len(sq.judged.get(t, {})) for t in topics)
    for k in ks:
        cells = {t: recall_cells(ranked.get(t, ()), sq, t, k, rel=rel) for t in topics}
        out[k] = eb_macro_recall(cells, draws=draws, seed=seed, n_judged=judged)
    return out
