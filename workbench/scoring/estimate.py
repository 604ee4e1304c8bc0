"""Measures estimated from a judged stratified sample, with intervals (PURE).

When only a stratified random sample of a deep pool (and of the collection
outside it) is judged (``pooling.sample``), measures are *estimated*: each
judged document stands for the ``1 / pi`` documents of its stratum, ``pi`` its
inclusion probability. For one topic and run:

* ``R̂`` (``Rhat``), the Horvitz-Thompson estimate of |R|: ``sum over judged
  relevant d of 1 / pi_d``;
* ``R̂_k``, of the relevant documents the run retrieves within k: the same sum
  over the judged relevant documents of the run's top k;
* ``R̂@k = R̂_k / R̂`` (a ratio estimator: topics with ``R̂ = 0`` are left out,
  as |R| = 0 is for R@k) and ``P̂@k = R̂_k / k``;
* ``xinfAP`` (Yilmaz, Kanoulas & Aslam, SIGIR 2008): for each judged relevant
  document at rank k, the expected precision at k is
  ``1/k + ((k-1)/k) * (1/(k-1)) * sum over strata s of A_s * (r_s + eps) / (r_s + n_s + 2 eps)``
  where ``A_s`` counts the documents above rank k that belong to stratum s and
  ``r_s``, ``n_s`` the judged relevant and non-relevant among them (documents
  no stratum holds count as non-relevant); xinfAP is the sum of these, each
  weighted ``1 / pi``, divided by ``R̂`` (``eps`` = 0.00001, trec_eval's);
* ``infNDCG@k`` (same paper): the DCG of the top k estimated by the judged
  documents' gains weighted ``1 / pi``, over the ideal DCG of the estimated
  number of documents of each grade (``sum of 1 / pi``, rounded to the nearest
  integer), best grades first; gains and discounts as ``nDCG@k``
  (``scoring.gains``: gain = grade, 1 / log2(rank + 1));
* ``infAP`` exactly as trec_eval's ``infAP`` (``m_infap.c``, Yilmaz & Aslam,
  CIKM 2006, doi:10.1145/1183614.1183633) on qrels where every document of the
  sample's frame that has no judgment is marked -1 (``infap_qrels`` writes
  them): pooled-but-unjudged documents are skipped, documents outside the
  frame count as retrieved non-relevant ranks.

**Unjudged sampled documents** (a sample judged partially) are never read as
non-relevant: within a stratum the judged documents stand for it, so its
inclusion probability becomes ``judged / N_h`` (the unjudged ones are treated
as missing at random); a non-empty stratum with no judged document leaves the
topic's estimates undefined (the topic is listed and left out of the means).

**Intervals** (95% by default) come from the design's own variance, the topics
held fixed (what is uncertain is which documents were sampled, not which
topics): per topic, stratified simple random sampling without replacement,
``Var(T̂) = sum_h N_h^2 (1 - n_h / N_h) s_h^2 / n_h`` (Cochran 1977, 5.6), the
ratio ``R̂@k`` by linearisation (``z_d = y_kd - R̂@k * y_d``, Cochran 6.5);
the macro mean's variance is the sum of the topics' over T^2 (topics sampled
independently); the interval is the normal one, clipped to [0, 1]. A stratum
with one judged document contributes no variance term (``s_h^2`` needs two);
the documentation says where this makes intervals short (rare relevant
documents outside the pool).

Source:
    Horvitz & Thompson, JASA 1952, doi:10.1080/01621459.1952.10483446; Cochran,
    "Sampling Techniques", 3rd ed., Wiley 1977 (ch. 5, stratified; ch. 6, ratio
    estimators); Yilmaz, Kanoulas & Aslam, SIGIR 2008, doi:10.1145/1390334.1390437
    (xinfAP, infNDCG); trec_eval ``m_infap.c`` (infAP, ``INFAP_EPSILON``).

Example:
    >>> sq = SampledQrels(judged={"t": {"a": 1, "b": 0}}, frame={"t": {"a": "1-2", "b": "1-2", "c": "1-2"}},
    ...                   populations={"t": {"1-2": 4}})
    >>> e = estimate_topic(["a", "b", "c"], sq, "t", (2,))
    >>> (e.r_hat, e.recall[2], e.precision[2])         # a stands for 2 of the 4; both in the top 2
    (2.0, 1.0, 1.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from workbench.errors import ValidationError
from workbench.scoring.gains import discounts, gain

INFAP_EPSILON = 0.00001
"""trec_eval's ``INFAP_EPSILON`` (``trec_eval.h``), also xinfAP's smoothing."""

OUTSIDE = "outside"
"""``pooling.sample.OUTSIDE``: the stratum of documents no run ranked within the depth (a test pins them equal)."""

Z95 = 1.959963984540054
"""The standard normal's 0.975 quantile (scipy.stats.norm.ppf(0.975); a test pins it)."""


def normal_quantile(confidence: float) -> float:
    """The standard normal's two-sided quantile of a confidence level: ``Z95`` for 0.95, else
    ``NormalDist().inv_cdf(1/2 + confidence/2)``.

    Raises:
        ValidationError: the level is not in (0, 1).

    Example:
        >>> normal_quantile(0.95) == Z95, round(normal_quantile(0.975), 4)
        (True, 2.2414)
    """
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 < confidence < 1:
        raise ValidationError(f"expected a confidence level between 0 and 1, found {confidence!r}.")
    if confidence == 0.95:
        return Z95
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + confidence / 2)


@dataclass(frozen=True)
class SampledQrels:
    """What the estimators read of a judged sample.

    Attributes:
        judged: topic_id -> doc_id -> grade of every judged sampled document.
        frame: topic_id -> doc_id -> stratum of every pooled document (its best rank's stratum).
        populations: topic_id -> stratum -> N_h (documents in the stratum; ``outside`` included when
            the design has an outside stratum).
        sampled: topic_id -> doc_id -> stratum of every sampled document, judged or not (for the
            counts of sampled-but-unjudged documents and ``infap_qrels``); empty = the judged ones.
        outside: the design has an outside stratum (documents of the collection outside the frame
            were sampled; else they have inclusion probability 0 and cannot be estimated).
    """

    judged: Mapping[str, Mapping[str, int]]
    frame: Mapping[str, Mapping[str, str]]
    populations: Mapping[str, Mapping[str, int]]
    sampled: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    outside: bool = False

    def stratum(self, topic_id: str, doc_id: str) -> str | None:
        """The stratum of a document for a topic: its frame stratum, else ``outside`` (None: not sampleable)."""
        s = self.frame.get(topic_id, {}).get(doc_id)
        if s is not None:
            return s
        return OUTSIDE if self.outside else None

    def judged_counts(self, topic_id: str) -> dict[str, int]:
        """stratum -> judged documents (n'_h) of a topic."""
        out: dict[str, int] = {}
        for d in self.judged.get(topic_id, {}):
            s = self.stratum(topic_id, d)
            if s is not None:
                out[s] = out.get(s, 0) + 1
        return out

    def inclusion(self, topic_id: str) -> dict[str, float]:
        """stratum -> realised inclusion probability ``judged / N_h`` (only strata with judged documents)."""
        pops = self.populations.get(topic_id, {})
        return {s: n / pops[s] for s, n in self.judged_counts(topic_id).items() if pops.get(s)}

    def unobserved(self, topic_id: str) -> list[str]:
        """Non-empty strata of a topic with no judged document (its estimates are then undefined)."""
        seen = self.judged_counts(topic_id)
        return sorted(s for s, n in self.populations.get(topic_id, {}).items() if n > 0 and not seen.get(s))


@dataclass(frozen=True)
class TopicEstimate:
    """One topic's estimates for one run.

    Attributes:
        topic_id: the topic.
        defined: False when a non-empty stratum has no judged document (``why`` says which): every
            value below is then NaN and the topic leaves the means.
        r_hat: R̂, the estimated number of relevant documents.
        r_hat_var: its estimated variance.
        hits: k -> R̂_k, the estimated relevant documents within k.
        recall: k -> R̂@k (NaN when ``r_hat`` is 0).
        recall_var: k -> the linearised variance of R̂@k.
        precision: k -> P̂@k.
        precision_var: k -> its variance.
        xinfap: xinfAP (NaN when ``r_hat`` is 0).
        infndcg: k -> infNDCG@k (NaN when the estimated ideal DCG is 0).
        n_judged: judged sampled documents behind the estimates.
        unsampleable: k -> documents of the top k no stratum holds (inclusion probability 0: not estimable).
        why: why the topic is undefined ("" when defined).
        strata: k -> per stratum with judged documents (n_h judged, N_h, relevant judged, relevant judged
            within k): the sufficient statistics of every variance here (``ratio_variance``).
        found: k -> the judged relevant sampled documents within k (judged order): what a comparison of two
            runs on the same sample needs for the covariance of their estimates (``estimate_compare``).
    """

    topic_id: str
    defined: bool
    r_hat: float
    r_hat_var: float
    hits: Mapping[int, float]
    recall: Mapping[int, float]
    recall_var: Mapping[int, float]
    precision: Mapping[int, float]
    precision_var: Mapping[int, float]
    xinfap: float
    infndcg: Mapping[int, float]
    n_judged: int
    unsampleable: Mapping[int, int]
    why: str = ""
    strata: Mapping[int, tuple[StratumStats, ...]] = field(default_factory=dict)
    found: Mapping[int, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StratumStats:
    """One stratum of one topic as the variances need it: ``n`` judged of ``N``; ``rel`` of them relevant,
    ``hits`` relevant and within the cut-off; ``stratum`` its name (``1-10``, ``outside``)."""

    n: int
    N: int  # noqa: N815 - the population size's usual letter
    rel: int
    hits: int
    stratum: str = ""


def ratio_variance(strata: Sequence[StratumStats], r: float) -> float:
    """The linearised variance's numerator of a ratio ``r = hits / rel`` over the given strata:
    ``sum_h N_h^2 (1 - n_h / N_h) s_z^2 / n_h`` with ``z = y_k - r y`` (``y`` relevant, ``y_k`` relevant within k;
    binary, so ``sum z = H - r R`` and ``sum z^2 = H (1 - 2r) + r^2 R``). Divide by the squared denominator.

    Source: Cochran 1977, 6.5 (ratio estimators), 5.6 (stratified variance).
    """
    total = 0.0
    for st in strata:
        if st.n < 2 or st.N <= st.n:
            continue
        sz = st.hits - r * st.rel
        sz2 = st.hits * (1.0 - 2.0 * r) + r * r * st.rel
        var = (sz2 - sz * sz / st.n) / (st.n - 1)
        total += st.N * st.N * (1.0 - st.n / st.N) * max(var, 0.0) / st.n
    return total


def _sample_var(values: Sequence[float]) -> float:
    n = len(values)
    if n < 2:
        return 0.0
    mean = sum(values) / n
    return sum((v - mean) ** 2 for v in values) / (n - 1)


def _strat_var(by_stratum: Mapping[str, list[float]], pops: Mapping[str, int]) -> float:
    """``sum_h N_h^2 (1 - n_h / N_h) s_h^2 / n_h`` over strata with judged documents (Cochran 5.6)."""
    total = 0.0
    for s, values in by_stratum.items():
        n, big_n = len(values), pops.get(s, 0)
        if n < 2 or big_n <= n:
            continue
        total += big_n * big_n * (1.0 - n / big_n) * _sample_var(values) / n
    return total


def _undefined(topic_id: str, ks: Sequence[int], n_judged: int, why: str) -> TopicEstimate:
    nan = math.nan
    return TopicEstimate(topic_id, False, nan, nan, {k: nan for k in ks}, {k: nan for k in ks}, {k: nan for k in ks},
                         {k: nan for k in ks}, {k: nan for k in ks}, nan, {k: nan for k in ks}, n_judged,
                         {k: 0 for k in ks}, why)


def estimate_topic(ranked: Sequence[str], sq: SampledQrels, topic_id: str, ks: Sequence[int], *,
                   rel: int = 1) -> TopicEstimate:
    """Estimate R̂, R̂@k, P̂@k, xinfAP and infNDCG@k of one topic of one run from the judged sample.

    Args:
        ranked: the run's documents for the topic in rank order (``ranking.ranked``: score desc, doc_id desc).
        sq: the judged sample.
        topic_id: the topic.
        ks: the cut-offs (>= 1).
        rel: inclusive minimum grade of a relevant document.

    Returns:
        The ``TopicEstimate`` (undefined when a non-empty stratum has no judged document).

    Example:
        >>> sq = SampledQrels({"t": {"a": 1, "c": 1}}, {"t": {"a": "1-1", "b": "2-3", "c": "2-3"}},
        ...                   {"t": {"1-1": 1, "2-3": 2}})
        >>> e = estimate_topic(["b", "a"], sq, "t", (1, 2))     # c stands for both of 2-3: R̂ = 1 + 2
        >>> (e.r_hat, e.recall[1], e.recall[2], e.precision[2])
        (3.0, 0.0, 0.3333333333333333, 0.5)
    """
    judged = sq.judged.get(topic_id, {})
    missing = sq.unobserved(topic_id)
    if missing:
        return _undefined(topic_id, ks, len(judged), f"no judged document in stratum {', '.join(missing)}")
    pi = sq.inclusion(topic_id)
    pops = sq.populations.get(topic_id, {})
    weight = {d: 1.0 / pi[s] for d in judged if (s := sq.stratum(topic_id, d)) is not None and s in pi}
    # judged order (a dict, not a set): the sums below add in the same order in every process
    relevant = dict.fromkeys(d for d, g in judged.items() if g >= rel and d in weight)
    r_hat = sum(weight[d] for d in relevant)
    # variance of R̂: y_d = 1 for relevant, per stratum
    y_by: dict[str, list[float]] = {}
    for d in weight:
        y_by.setdefault(sq.stratum(topic_id, d) or "", []).append(1.0 if d in relevant else 0.0)
    r_var = _strat_var(y_by, pops)
    position = {d: i for i, d in enumerate(ranked, 1)}
    hits, recall, recall_var, precision, precision_var, unsampleable = {}, {}, {}, {}, {}, {}
    stats: dict[int, tuple[StratumStats, ...]] = {}
    found: dict[int, tuple[str, ...]] = {}
    strata_of = {d: sq.stratum(topic_id, d) or "" for d in weight}
    judged_n: dict[str, int] = {}
    rel_n: dict[str, int] = {}
    for d, st in strata_of.items():
        judged_n[st] = judged_n.get(st, 0) + 1
        if d in relevant:
            rel_n[st] = rel_n.get(st, 0) + 1
    for k in ks:
        top = set(ranked[:k])
        found[k] = tuple(d for d in relevant if d in top)
        hit = sum(weight[d] for d in found[k])
        hits[k] = hit
        r = hit / r_hat if r_hat > 0 else math.nan
        recall[k] = r
        hit_n: dict[str, int] = {}
        for d in relevant:
            if d in top:
                hit_n[strata_of[d]] = hit_n.get(strata_of[d], 0) + 1
        stats[k] = tuple(StratumStats(n, pops.get(st, 0), rel_n.get(st, 0), hit_n.get(st, 0), st)
                         for st, n in sorted(judged_n.items()))
        recall_var[k] = ratio_variance(stats[k], r) / (r_hat * r_hat) if r_hat > 0 else math.nan
        precision[k] = hit / k
        yk_by = {st: [1.0] * hit_n.get(st, 0) + [0.0] * (n - hit_n.get(st, 0)) for st, n in judged_n.items()}
        precision_var[k] = _strat_var(yk_by, pops) / (k * k)
        unsampleable[k] = sum(1 for d in ranked[:k] if sq.stratum(topic_id, d) is None)
    xinfap = _xinfap(ranked, sq, topic_id, judged, pi, relevant, r_hat, rel)
    infndcg = {k: _infndcg(ranked, judged, weight, position, k) for k in ks}
    return TopicEstimate(topic_id, True, r_hat, r_var, hits, recall, recall_var, precision, precision_var, xinfap,
                         infndcg, len(judged), unsampleable, strata=stats, found=found)


def estimate_recall_runs(ranks: Mapping[str, Mapping[str, int]], sq: SampledQrels, topic_id: str,
                         ks: Sequence[int], *, rel: int = 1) -> dict[str, TopicEstimate]:
    """``estimate_topic`` of one topic for several runs at once, R̂@k only (for the repeated draws).

    What depends on the topic only (inclusion probabilities, weights, R̂ and its variance, the strata's
    judged and relevant counts) is computed once; per run only the judged relevant documents' ranks are
    looked up. Every field equals ``estimate_topic``'s (a test pins them on random samples) except
    ``xinfap`` (NaN), ``infndcg`` (empty) and ``precision_var`` (NaN): ``scoring.sample_simulation`` needs
    R̂@k, its variance and the strata statistics only.

    Args:
        ranks: run name -> doc_id -> its 1-based rank for the topic (``{d: i for i, d in enumerate(ranked, 1)}``;
            built once per run and topic, it serves every draw).
        sq: the judged sample.
        topic_id: the topic.
        ks: the cut-offs (>= 1).
        rel: inclusive minimum grade of a relevant document.

    Returns:
        run name -> ``TopicEstimate`` (undefined for every run when a non-empty stratum has no judged document).
    """
    judged = sq.judged.get(topic_id, {})
    pops = sq.populations.get(topic_id, {})
    # SampledQrels.unobserved and .inclusion, with one stratum look-up per judged document
    stratum_of = {d: sq.stratum(topic_id, d) for d in judged}
    seen: dict[str, int] = {}
    for st in stratum_of.values():
        if st is not None:
            seen[st] = seen.get(st, 0) + 1
    missing = sorted(st for st, n in pops.items() if n > 0 and not seen.get(st))
    if missing:
        why = f"no judged document in stratum {', '.join(missing)}"
        return {n: _undefined(topic_id, ks, len(judged), why) for n in ranks}
    pi = {st: n / pops[st] for st, n in seen.items() if pops.get(st)}
    strata_of = {d: st for d, st in stratum_of.items() if st is not None and st in pi}
    weight = {d: 1.0 / pi[s] for d, s in strata_of.items()}
    # judged order (a dict, not a set): the sums below add in the same order in every process
    relevant = dict.fromkeys(d for d, g in judged.items() if g >= rel and d in weight)
    r_hat = sum(weight[d] for d in relevant)
    judged_n: dict[str, int] = {}
    rel_n: dict[str, int] = {}
    for d, st in strata_of.items():
        judged_n[st] = judged_n.get(st, 0) + 1
        if d in relevant:
            rel_n[st] = rel_n.get(st, 0) + 1
    y_by: dict[str, list[float]] = {}
    for d, st in strata_of.items():          # in judged order, as estimate_topic sums them
        y_by.setdefault(st, []).append(1.0 if d in relevant else 0.0)
    r_var = _strat_var(y_by, pops)
    frame = sq.frame.get(topic_id, {})
    ordered = sorted(judged_n.items())
    out: dict[str, TopicEstimate] = {}
    for name, rank_of in ranks.items():
        hits, recall, recall_var, precision, precision_var, unsampleable = {}, {}, {}, {}, {}, {}
        stats: dict[int, tuple[StratumStats, ...]] = {}
        found_at: dict[int, tuple[str, ...]] = {}
        at = {d: rank_of.get(d, 0) for d in relevant}
        for k in ks:
            found = [d for d in relevant if 0 < at[d] <= k]
            found_at[k] = tuple(found)
            hit = sum(weight[d] for d in found)
            hits[k] = hit
            r = hit / r_hat if r_hat > 0 else math.nan
            recall[k] = r
            hit_n: dict[str, int] = {}
            for d in found:
                hit_n[strata_of[d]] = hit_n.get(strata_of[d], 0) + 1
            stats[k] = tuple(StratumStats(n, pops.get(st, 0), rel_n.get(st, 0), hit_n.get(st, 0), st)
                             for st, n in ordered)
            recall_var[k] = ratio_variance(stats[k], r) / (r_hat * r_hat) if r_hat > 0 else math.nan
            precision[k] = hit / k
            precision_var[k] = math.nan
            unsampleable[k] = 0 if sq.outside else sum(1 for d, i in rank_of.items() if i <= k and d not in frame)
        out[name] = TopicEstimate(topic_id, True, r_hat, r_var, hits, recall, recall_var, precision, precision_var,
                                  math.nan, {}, len(judged), unsampleable, strata=stats, found=found_at)
    return out


def _xinfap(ranked: Sequence[str], sq: SampledQrels, topic_id: str, judged: Mapping[str, int],
            pi: Mapping[str, float], relevant: Mapping[str, None], r_hat: float, rel: int) -> float:
    """xinfAP of one topic (module docstring); NaN when ``r_hat`` is 0."""
    if r_hat <= 0:
        return math.nan
    above: dict[str, int] = {}
    rel_above: dict[str, int] = {}
    nonrel_above: dict[str, int] = {}
    total = 0.0
    for k, d in enumerate(ranked, 1):
        s = sq.stratum(topic_id, d)
        if d in relevant and s is not None:
            if k == 1:
                expected = 1.0
            else:
                est_rel_above = sum(a * (rel_above.get(t, 0) + INFAP_EPSILON)
                                    / (rel_above.get(t, 0) + nonrel_above.get(t, 0) + 2 * INFAP_EPSILON)
                                    for t, a in above.items())
                expected = 1.0 / k + ((k - 1) / k) * (est_rel_above / (k - 1))
            total += expected / pi[s]
        if s is not None:
            above[s] = above.get(s, 0) + 1
            if d in judged:
                if judged[d] >= rel:
                    rel_above[s] = rel_above.get(s, 0) + 1
                else:
                    nonrel_above[s] = nonrel_above.get(s, 0) + 1
    return total / r_hat


def _infndcg(ranked: Sequence[str], judged: Mapping[str, int], weight: Mapping[str, float],
             position: Mapping[str, int], k: int) -> float:
    """infNDCG@k of one topic (module docstring); NaN when the estimated ideal DCG is 0.

    The discount table reaches only the deepest rank either sum reads (the run's length or the
    ideal's), never k itself: ``infNDCG@1000000000`` costs what ``infNDCG@len(ranked)`` does.
    """
    by_grade: dict[int, float] = {}
    for d, g in judged.items():
        if g > 0 and d in weight:
            by_grade[g] = by_grade.get(g, 0.0) + weight[d]
    ideal: list[float] = []
    for g in sorted(by_grade, reverse=True):
        ideal.extend([gain(g, "log2")] * int(math.floor(by_grade[g] + 0.5)))
        if len(ideal) >= k:
            break
    disc = discounts(min(k, max(len(ranked), len(ideal))))
    dcg = sum(gain(judged[d], "log2") * weight[d] * disc[position[d]]
              for d in ranked[:k] if d in judged and d in weight)
    idcg = sum(x * disc[i] for i, x in enumerate(ideal[:k], 1))
    return dcg / idcg if idcg > 0 else math.nan


def infap(ranked: Sequence[str], qrels: Mapping[str, int], *, rel: int = 1) -> float:
    """trec_eval's ``infAP`` of one topic, on qrels where -1 marks a pooled document without a judgment.

    Args:
        ranked: the run's documents in rank order (all of them, as trec_eval reads the run).
        qrels: doc_id -> grade for the topic; -1 = in the pool but unjudged; documents absent are outside
            the pool.
        rel: inclusive minimum grade of a relevant document (trec_eval ``-l``).

    Returns:
        infAP; 0.0 when the topic has no relevant judgment (trec_eval leaves the sum undivided).

    Source:
        trec_eval ``m_infap.c`` (``te_calc_infap``), line by line.

    Example:
        >>> round(infap(["a", "x", "b"], {"a": 1, "b": 1, "x": -1, "n": 0}), 6)   # x: pooled, unjudged
        0.999997
    """
    nonrel_so_far = rel_so_far = pool_unjudged_so_far = 0
    total = 0.0
    for j, d in enumerate(ranked):
        g = qrels.get(d)
        if g is None:            # not in the pool: skipped (its rank still counts)
            continue
        if g == -1:              # pooled but unjudged
            pool_unjudged_so_far += 1
            continue
        if 0 <= g < rel:
            nonrel_so_far += 1
            continue
        if g < 0:                # another negative grade: trec_eval reads it as neither (RELVALUE_NONPOOL is -2)
            continue
        rel_so_far += 1
        if j == 0:
            total += 1.0
        else:
            fj = float(j)
            total += (1.0 / (fj + 1.0) + (fj / (fj + 1.0))
                      * ((rel_so_far - 1 + nonrel_so_far + pool_unjudged_so_far) / fj)
                      * ((rel_so_far - 1 + INFAP_EPSILON) / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON)))
    num_rel = sum(1 for g in qrels.values() if g >= rel and g >= 0)
    return total / num_rel if num_rel else total


def infap_qrels(sq: SampledQrels, topic_id: str) -> dict[str, int]:
    """The topic's qrels as trec_eval's ``infAP`` reads them: judged grades; -1 for every frame document
    (and every sampled document) without a judgment; documents outside the frame absent."""
    out: dict[str, int] = {d: -1 for d in sq.frame.get(topic_id, {})}
    out.update({d: -1 for d in sq.sampled.get(topic_id, {})})
    out.update(sq.judged.get(topic_id, {}))
    return out


@dataclass(frozen=True)
class MacroEstimate:
    """A measure's estimate over topics, with its interval.

    Attributes:
        value: the mean of the defined topics' estimates.
        low: the interval's lower end (clipped to 0).
        high: its upper end (clipped to 1).
        n_topics: topics averaged.
        n_judged: judged sampled documents behind it (over those topics).
        se: the standard error (sqrt of the summed topic variances over T^2; NaN without a variance).
    """

    value: float
    low: float
    high: float
    n_topics: int
    n_judged: int
    se: float


def micro_recall(topics: Sequence[TopicEstimate], k: int, *, z: float = Z95) -> MacroEstimate:
    """The combined ratio over topics, ``sum_t R̂_k,t / sum_t R̂_t`` (micro R̂@k), with its linearised interval.

    Unlike the mean of per-topic ratios, the combined ratio's denominator sums every topic's sample, so it is
    nearly unbiased even where each topic's sample holds few relevant documents (Cochran 1977, 6.11: the
    combined ratio estimate). Undefined topics are left out.
    """
    defined = [t for t in topics if t.defined]
    den = sum(t.r_hat for t in defined)
    if den <= 0:
        return MacroEstimate(math.nan, math.nan, math.nan, 0, sum(t.n_judged for t in defined), math.nan)
    r = sum(t.hits[k] for t in defined) / den
    var = sum(ratio_variance(t.strata.get(k, ()), r) for t in defined) / (den * den)
    se = math.sqrt(var)
    return MacroEstimate(r, max(0.0, r - z * se), min(1.0, r + z * se), len(defined),
                         sum(t.n_judged for t in defined), se)


def macro(values: Sequence[float], variances: Sequence[float] | None, n_judged: int, *,
          z: float = Z95) -> MacroEstimate:
    """The mean of per-topic estimates and its normal interval (topics independent; NaN values left out).

    Args:
        values: per-topic estimates (NaN = undefined, left out).
        variances: per-topic variances in the same order, or None (no interval: low = high = NaN).
        n_judged: judged documents behind the topics averaged.
        z: the normal quantile (1.96 for 95%).

    Example:
        >>> m = macro([0.5, 0.7], [0.01, 0.03], 40)
        >>> (round(m.value, 4), round(m.se, 4), round(m.low, 4), round(m.high, 4))
        (0.6, 0.1, 0.404, 0.796)
    """
    pairs = [(v, variances[i] if variances is not None else math.nan) for i, v in enumerate(values)
             if not math.isnan(v)]
    if not pairs:
        return MacroEstimate(math.nan, math.nan, math.nan, 0, n_judged, math.nan)
    t = len(pairs)
    mean = sum(v for v, _ in pairs) / t
    if variances is None:
        return MacroEstimate(mean, math.nan, math.nan, t, n_judged, math.nan)
    se = math.sqrt(sum(var for _, var in pairs)) / t
    return MacroEstimate(mean, max(0.0, mean - z * se), min(1.0, mean + z * se), t, n_judged, se)
