"""Stratified sampling of a deep pool, for judging a sample and estimating measures from it (PURE).

Judging a depth-100 pool of four runs on Cranfield is 39,619 documents. TREC
has judged a *stratified random sample* of such pools since 2006 and estimated
the measures from it (Aslam, Pavlu & Yilmaz, SIGIR 2006; Yilmaz, Kanoulas &
Aslam, SIGIR 2008). This module designs and draws that sample; the estimators
are ``workbench.scoring.estimate``.

The design, per topic:

* the *frame* is the union of the runs' top ``depth`` (``pooling.pool``); each
  document falls in the stratum of its **best rank** across the runs
  (``1-10:1.0,11-30:0.5,31-100:0.1``: ranks 1 to 10 all judged, 11 to 30 at
  half, 31 to 100 at a tenth);
* an optional **outside** stratum: the documents of the collection no run ranked
  within ``depth``, sampled uniformly at its own rate, so that an estimate can
  see relevant documents no pooled run found;
* within each stratum a simple random sample without replacement of
  ``n_h = max(1, floor(rate * N_h + 1/2))`` of its ``N_h`` documents (every
  non-empty stratum is seen at least once), so each document's inclusion
  probability is exactly ``pi_h = n_h / N_h``.

The draw is reproducible: each topic's generator is seeded with the seed and
the topic id (``numpy.random.default_rng([seed, crc32(topic_id)])``), and each
stratum's documents are ordered (best rank, then doc_id) before drawing, so
the same pool, design and seed give the same sample whatever order the runs
or topics come in.

``--budget N`` instead of fixed rates: the strata's rates (and the outside
rate) are read as *relative* weights and scaled by one common factor ``c``
(each rate capped at 1), the largest ``c`` whose sample has at most ``N``
documents in all (``solve_budget``: bisection; the minimum of one document per
non-empty stratum may already exceed a small budget, which is refused).

Source:
    Stratified sampling and the Horvitz-Thompson estimator: Cochran, "Sampling
    Techniques" (3rd ed., Wiley 1977), ch. 5; Horvitz & Thompson, JASA 1952,
    doi:10.1080/01621459.1952.10483446. In IR: Yilmaz, Kanoulas & Aslam,
    "A simple and efficient sampling method for estimating AP and NDCG",
    SIGIR 2008, doi:10.1145/1390334.1390437 (strata by rank, as here).

Example:
    >>> from pooling.pool import build_pool
    >>> pool = build_pool({"a": {"t": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}}, depth=3)
    >>> design = SampleDesign(3, parse_strata("1-1:1.0,2-3:0.5", 3), seed=7)
    >>> s = draw_sample(pool, design, ["d1", "d2", "d3", "d4"])
    >>> [(d.doc_id, d.stratum, d.inclusion) for d in s.docs if d.stratum == "1-1"]
    [('d1', '1-1', 1.0)]
    >>> [(c.stratum, c.population, c.sampled) for c in s.counts]
    [('1-1', 1, 1), ('2-3', 2, 1)]
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from pooling.pool import Pool
from workbench.errors import ValidationError
from workbench.ranking import natural_key

OUTSIDE = "outside"
"""The stratum of the collection's documents no run ranked within the depth."""

_STRATUM = re.compile(r"\s*([0-9]{1,7})\s*-\s*([0-9]{1,7})\s*:\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*")


@dataclass(frozen=True, slots=True)
class Stratum:
    """Pooled documents whose best rank is in ``lo..hi`` (inclusive), sampled at ``rate`` (0 < rate <= 1)."""

    lo: int
    hi: int
    rate: float

    @property
    def name(self) -> str:
        """``lo-hi``, as written in a strata specification."""
        return f"{self.lo}-{self.hi}"


def parse_strata(spec: str, depth: int) -> tuple[Stratum, ...]:
    """The strata of ``--strata`` (``1-10:1.0,11-30:0.5,31-100:0.1``), checked against the depth.

    Args:
        spec: comma-separated ``LO-HI:RATE``; ranges 1-based, inclusive, contiguous from 1 to ``depth``,
            in increasing order; each rate in (0, 1].
        depth: the pool depth D the strata must cover.

    Raises:
        ValidationError: a malformed item, a gap or overlap, a range past ``depth`` or short of it, a rate
            outside (0, 1].

    Example:
        >>> [(s.name, s.rate) for s in parse_strata("1-10:1,11-30:0.5", 30)]
        [('1-10', 1.0), ('11-30', 0.5)]
    """
    if depth < 1:
        raise ValidationError(f"--depth: expected an integer >= 1, found {depth}")
    out: list[Stratum] = []
    expect = 1
    for item in spec.split(","):
        m = _STRATUM.fullmatch(item)
        if m is None:
            raise ValidationError(f"--strata: expected LO-HI:RATE items (e.g. 1-10:1.0,11-30:0.5), found {item[:40]!r}")
        lo, hi, rate = int(m.group(1)), int(m.group(2)), float(m.group(3))
        if lo != expect or hi < lo:
            raise ValidationError(f"--strata: ranges must run from 1 to --depth {depth} without gaps or overlaps; "
                                  f"{item.strip()!r} should start at {expect}")
        if not 0.0 < rate <= 1.0:
            raise ValidationError(f"--strata: a rate is an inclusion probability in (0, 1], found {rate!r} in "
                                  f"{item.strip()!r} (leave a rank range out by lowering --depth instead)")
        out.append(Stratum(lo, hi, rate))
        expect = hi + 1
    if expect - 1 != depth:
        raise ValidationError(f"--strata: the ranges end at {expect - 1}, --depth is {depth}: they must cover "
                              f"ranks 1 to {depth}")
    return tuple(out)


@dataclass(frozen=True)
class SampleDesign:
    """How a sample is drawn; stored with the sample pool, fixed before any judgment.

    Attributes:
        depth: the frame is the union of the runs' top ``depth``.
        strata: by best rank, covering 1..depth.
        outside_rate: rate of the outside stratum (0: no outside stratum).
        seed: the random seed.
        budget: the judgment budget the rates were solved for (None: rates as given).
    """

    depth: int
    strata: tuple[Stratum, ...]
    outside_rate: float = 0.0
    seed: int = 0
    budget: int | None = None

    def spec(self) -> str:
        """The strata as ``--strata`` writes them (the rates in force)."""
        return ",".join(f"{s.name}:{s.rate!r}" for s in self.strata)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (stored with the pool version, recorded with its qrels versions)."""
        return {"kind": "stratified", "depth": self.depth, "strata": self.spec(),
                "outside_rate": self.outside_rate, "seed": self.seed, "budget": self.budget,
                "rule": "n_h = max(1, floor(rate * N_h + 1/2)) of N_h, simple random sampling without replacement; "
                        "strata by best rank across the runs"}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> SampleDesign:
        """The design ``as_dict`` wrote.

        Raises:
            ValidationError: not a stratified design.
        """
        if d.get("kind") != "stratified":
            raise ValidationError(f"expected a stratified sample design, found kind {d.get('kind')!r}")
        depth = int(d["depth"])
        budget = d.get("budget")
        return SampleDesign(depth, parse_strata(str(d["strata"]), depth), float(d.get("outside_rate", 0.0)),
                            int(d.get("seed", 0)), int(budget) if budget is not None else None)

    def describe(self) -> str:
        """One line, e.g. ``depth 100; strata 1-10:1.0,11-30:0.5; outside 0.01; seed 7``."""
        out = f"depth {self.depth}; strata {self.spec()}"
        if self.outside_rate:
            out += f"; outside {self.outside_rate!r}"
        out += f"; seed {self.seed}"
        if self.budget is not None:
            out += f"; rates solved for a budget of {self.budget:,} judgments"
        return out


@dataclass(frozen=True, slots=True)
class SampledDoc:
    """One sampled (topic, document).

    Attributes:
        topic_id: the topic.
        doc_id: the document.
        stratum: the stratum's name (``lo-hi``, or ``outside``).
        inclusion: its inclusion probability ``n_h / N_h``.
        best_rank: its best rank across the runs (0 for the outside stratum).
    """

    topic_id: str
    doc_id: str
    stratum: str
    inclusion: float
    best_rank: int


@dataclass(frozen=True, slots=True)
class StratumCount:
    """One stratum of one topic: ``population`` N_h documents, ``sampled`` n_h of them drawn."""

    topic_id: str
    stratum: str
    population: int
    sampled: int

    @property
    def inclusion(self) -> float:
        """``n_h / N_h`` (0 for an empty stratum)."""
        return self.sampled / self.population if self.population else 0.0


@dataclass(frozen=True)
class Sample:
    """A drawn sample: the design, the sampled documents (topic, then stratum order) and every stratum's counts.

    Attributes:
        design: how it was drawn.
        docs: the sampled documents.
        counts: per topic and stratum (empty strata included, population 0).
        frame: topic_id -> doc_id -> stratum of every pooled document (the strata of documents a run
            retrieves within the depth; documents of the collection not in it are ``outside``).
        collection_size: documents in the collection the outside stratum was drawn from (0 without one).
    """

    design: SampleDesign
    docs: tuple[SampledDoc, ...]
    counts: tuple[StratumCount, ...]
    frame: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    collection_size: int = 0

    @property
    def n_sampled(self) -> int:
        """Documents to judge."""
        return len(self.docs)

    def by_topic(self) -> dict[str, list[SampledDoc]]:
        """topic_id -> its sampled documents."""
        out: dict[str, list[SampledDoc]] = {}
        for d in self.docs:
            out.setdefault(d.topic_id, []).append(d)
        return out


def stratum_size(rate: float, population: int) -> int:
    """``n_h = max(1, floor(rate * N_h + 1/2))``, at most ``N_h`` (0 for an empty stratum or a zero rate).

    Example:
        >>> [stratum_size(0.1, n) for n in (0, 3, 15, 100)]
        [0, 1, 2, 10]
    """
    if population <= 0 or rate <= 0.0:
        return 0
    return min(population, max(1, math.floor(rate * population + 0.5)))


def _topic_rng(seed: int, topic_id: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(topic_id.encode("utf-8"))])


Frames = dict[str, dict[str, list[tuple[int, str]]]]
"""topic -> stratum -> [(best rank, doc_id)] of the pooled documents, in drawing order (``stratify``)."""


def stratify(pool: Pool, design: SampleDesign) -> Frames:
    """The frame of ``pool`` split into the design's strata: topic -> stratum -> [(best rank, doc_id)] in drawing
    order (best rank, then doc_id). It depends on the strata's rank ranges only, not on their rates: computed
    once, it serves every draw and every scaled design of the same ranges (``draw_sample(frames=...)``).

    Raises:
        ValidationError: a pool deeper than the design.
    """
    return _frames(pool, design)


def _frames(pool: Pool, design: SampleDesign) -> Frames:
    """topic -> stratum -> [(best rank, doc_id)] in drawing order (best rank, then doc_id)."""
    names = [s.name for s in design.strata]
    bounds = [s.hi for s in design.strata]
    out: dict[str, dict[str, list[tuple[int, str]]]] = {}
    for e in pool.entries:
        if e.best_rank > design.depth:
            raise ValidationError(f"pool entry {e.topic_id}/{e.doc_id} has best rank {e.best_rank}, deeper than the "
                                  f"design's depth {design.depth}: pool the runs at depth {design.depth}")
        i = next(j for j, hi in enumerate(bounds) if e.best_rank <= hi)
        out.setdefault(e.topic_id, {n: [] for n in names})[names[i]].append((e.best_rank, e.doc_id))
    for strata in out.values():
        for docs in strata.values():
            docs.sort(key=lambda x: (x[0], natural_key(x[1])))
    return out


def draw_sample(pool: Pool, design: SampleDesign, collection: Sequence[str] = (),
                topics: Sequence[str] | None = None, *, frames: Frames | None = None) -> Sample:
    """Draw the stratified sample of ``pool`` (and of the collection outside it) under ``design``.

    Args:
        pool: the depth-``design.depth`` pool of the runs (``pooling.pool.build_pool``): its entries'
            best ranks decide the strata.
        design: strata, outside rate and seed.
        collection: every doc_id of the collection (needed when ``design.outside_rate > 0``).
        topics: the topics sampled (default: the pool's); a topic the pool lacks has only an outside stratum.
        frames: ``stratify(pool, design)`` computed already (the same rank ranges), or None to compute it.

    Returns:
        The ``Sample``: documents in topic order (natural), then stratum order, then drawing order.

    Raises:
        ValidationError: an outside rate without the collection, a pool deeper than the design.
    """
    if design.outside_rate and not collection:
        raise ValidationError("--outside: the outside stratum is drawn from the collection's documents; none given")
    if frames is None:
        frames = _frames(pool, design)
    wanted = list(topics) if topics is not None else list(frames)
    ids = sorted(set(collection), key=natural_key) if design.outside_rate else []
    id_set = frozenset(ids)
    docs: list[SampledDoc] = []
    counts: list[StratumCount] = []
    frame_out: dict[str, dict[str, str]] = {}
    named = [(s.name, s.rate) for s in design.strata]
    for topic_id in sorted(wanted, key=natural_key):
        rng = _topic_rng(design.seed, topic_id)
        strata = frames.get(topic_id, {name: [] for name, _ in named})
        frame_out[topic_id] = {d: name for name, members in strata.items() for _, d in members}
        for name, rate in named:
            members = strata[name]
            n = stratum_size(rate, len(members))
            counts.append(StratumCount(topic_id, name, len(members), n))
            if not n:
                continue
            picked = sorted(rng.choice(len(members), size=n, replace=False).tolist())
            pi = n / len(members)
            docs.extend(SampledDoc(topic_id, members[i][1], name, pi, members[i][0]) for i in picked)
        if design.outside_rate:
            docs_out, count = _outside(rng, ids, id_set, frame_out[topic_id], design.outside_rate, topic_id)
            docs.extend(docs_out)
            counts.append(count)
    return Sample(design, tuple(docs), tuple(counts), frame_out, len(ids))


def _outside(rng: np.random.Generator, ids: Sequence[str], id_set: frozenset[str], pooled: Mapping[str, str],
             rate: float, topic_id: str) -> tuple[list[SampledDoc], StratumCount]:
    """A simple random sample of the collection's documents not in ``pooled`` (without listing them all)."""
    population = len(ids) - len(id_set.intersection(pooled))
    n = stratum_size(rate, population)
    if not n:
        return [], StratumCount(topic_id, OUTSIDE, population, 0)
    # A uniform random order over the collection, pooled documents skipped: the first n left are a simple
    # random sample of the outside stratum. At most n + |pooled| positions are needed.
    take = min(len(ids), n + len(pooled))
    order = rng.choice(len(ids), size=take, replace=False).tolist()
    chosen = [ids[i] for i in order if ids[i] not in pooled][:n]
    pi = n / population
    chosen.sort(key=natural_key)
    return [SampledDoc(topic_id, d, OUTSIDE, pi, 0) for d in chosen], StratumCount(topic_id, OUTSIDE, population, n)


def sample_size(pool: Pool, design: SampleDesign, collection_size: int = 0,
                topics: Sequence[str] | None = None) -> int:
    """How many documents ``draw_sample`` would draw (no drawing; the outside stratum counted from the size).

    ``collection_size`` is the number of documents of the collection (each topic's outside stratum is
    that minus the topic's pooled documents).
    """
    return _size(_frames(pool, design), design, collection_size, topics)


def _size(frames: Frames, design: SampleDesign, collection_size: int, topics: Sequence[str] | None) -> int:
    """``sample_size`` over frames already stratified."""
    wanted = list(topics) if topics is not None else list(frames)
    total = 0
    for topic_id in wanted:
        strata = frames.get(topic_id, {s.name: [] for s in design.strata})
        total += sum(stratum_size(s.rate, len(strata[s.name])) for s in design.strata)
        if design.outside_rate:
            pooled = sum(len(v) for v in strata.values())
            total += stratum_size(design.outside_rate, collection_size - pooled)
    return total


def solve_budget(pool: Pool, design: SampleDesign, budget: int, collection_size: int = 0,
                 topics: Sequence[str] | None = None) -> SampleDesign:
    """The design whose rates, the given ones scaled by one factor c (each capped at 1), draw at most ``budget``.

    The rates of ``design`` (strata and outside) are relative weights; the largest ``c`` with
    ``sample_size <= budget`` is found by bisection (60 halvings of ``[0, 1 / min rate]``) and cut down to
    three significant digits, so the rates read well (a smaller factor never draws more). The returned
    design records the budget.

    Raises:
        ValidationError: a budget below the minimum (one document per non-empty stratum).

    Example:
        >>> from pooling.pool import build_pool
        >>> pool = build_pool({"a": {"t": {f"d{i}": float(-i) for i in range(20)}}}, depth=20)
        >>> d = solve_budget(pool, SampleDesign(20, parse_strata("1-10:1.0,11-20:0.5", 20)), 10)
        >>> (d.spec(), sample_size(pool, d))
        ('1-10:0.699,11-20:0.3495', 10)
    """
    if budget < 1:
        raise ValidationError(f"--budget: expected a number of judgments >= 1, found {budget}")

    def rate(r: float, c: float) -> float:
        # nine significant digits, never rounded to 0 (a positive rate draws one document per non-empty stratum)
        return min(1.0, float(f"{r * c:.9g}"))

    def scaled(c: float) -> SampleDesign:
        strata = tuple(replace(s, rate=rate(s.rate, c)) for s in design.strata)
        return replace(design, strata=strata, outside_rate=rate(design.outside_rate, c), budget=budget)

    frames = _frames(pool, design)
    smallest = min([s.rate for s in design.strata] + ([design.outside_rate] if design.outside_rate else []))
    lo, hi = 0.0, 1.0 / smallest
    floor_size = _size(frames, scaled(1e-12), collection_size, topics)
    if floor_size > budget:
        raise ValidationError(f"--budget {budget:,}: every non-empty stratum of every topic is sampled at least once, "
                              f"which takes {floor_size:,} judgments; raise the budget or use fewer strata")
    if _size(frames, scaled(hi), collection_size, topics) <= budget:
        return scaled(hi)
    for _ in range(60):
        mid = (lo + hi) / 2
        if _size(frames, scaled(mid), collection_size, topics) <= budget:
            lo = mid
        else:
            hi = mid
    if lo <= 0:
        return scaled(1e-12)
    # Readable rates: the factor cut down to three significant digits (a smaller factor never draws more).
    digits = 2 - math.floor(math.log10(lo))
    return scaled(math.floor(lo * 10**digits) / 10**digits)


SAMPLE_STRATEGY = "stratified sample"
"""The ``strategy`` of a sample pool (``Pool.strategy``; its ``kind`` in the store is ``sample``)."""


def sample_as_pool(pool: Pool, sample: Sample, params: Mapping[str, Any] | None = None) -> Pool:
    """The sampled documents as a pool (what assignment and judging read), from the frame's pool.

    Each sampled document of the frame keeps its frame entry's best rank, number of runs and priority, and its
    contributions; an outside document has best rank 0, no run and priority 0. Priority ranks are renumbered
    within each topic by the canonical rule (priority desc, doc_id desc), so outside documents come last.

    Args:
        pool: the frame: the depth-``sample.design.depth`` pool the sample was drawn from.
        sample: the drawn sample.
        params: the pool's params (default: ``{"design": sample.design.as_dict()}``).

    Example:
        >>> from pooling.pool import build_pool
        >>> p = build_pool({"a": {"t": {"d1": 2.0, "d2": 1.0}}}, depth=2)
        >>> s = draw_sample(p, SampleDesign(2, parse_strata("1-2:1.0", 2), seed=1))
        >>> [(e.doc_id, e.best_rank, e.priority_rank) for e in sample_as_pool(p, s).entries]
        [('d1', 1, 1), ('d2', 2, 2)]
    """
    from pooling.pool import Contribution, PoolEntry

    frame = {(e.topic_id, e.doc_id): e for e in pool.entries}
    by_topic: dict[str, list[tuple[float, str, int, int]]] = {}
    for d in sample.docs:
        e = frame.get((d.topic_id, d.doc_id))
        row = (e.priority, d.doc_id, e.best_rank, e.n_runs) if e is not None else (0.0, d.doc_id, 0, 0)
        by_topic.setdefault(d.topic_id, []).append(row)
    entries: list[PoolEntry] = []
    for topic_id in sorted(by_topic, key=natural_key):
        rows = by_topic[topic_id]
        rows.sort(key=lambda r: natural_key(r[1]), reverse=True)   # doc_id desc breaks priority ties
        rows.sort(key=lambda r: r[0], reverse=True)                # stable: priority desc
        entries.extend(PoolEntry(topic_id, d, best, n, p, i) for i, (p, d, best, n) in enumerate(rows, 1))
    keep = {(d.topic_id, d.doc_id) for d in sample.docs}
    provenance = tuple(Contribution(c.topic_id, c.doc_id, c.run_name, c.rank) for c in pool.provenance
                       if (c.topic_id, c.doc_id) in keep)
    return Pool(pool.depth, pool.runs, tuple(entries), provenance, SAMPLE_STRATEGY,
                dict(params) if params is not None else {"design": sample.design.as_dict()})


def sample_content_hash(pool_hash: str, sample: Sample) -> str:
    """sha256 (hex) of a sample pool: its pool's content hash, then every sampled document (stratum, inclusion
    probability, best rank), every stratum count and the frame, in canonical order.

    Equal seeds, designs and runs give equal hashes (the draw is reproducible).
    """
    import hashlib

    h = hashlib.sha256(pool_hash.encode())
    h.update("".join(f"\ns\t{d.topic_id}\t{d.doc_id}\t{d.stratum}\t{d.inclusion!r}\t{d.best_rank}"
                     for d in sorted(sample.docs, key=lambda d: (d.topic_id, d.doc_id))).encode())
    h.update("".join(f"\nc\t{c.topic_id}\t{c.stratum}\t{c.population}\t{c.sampled}"
                     for c in sorted(sample.counts, key=lambda c: (c.topic_id, c.stratum))).encode())
    h.update("".join(f"\nf\t{t}\t{d}\t{s}" for t in sorted(sample.frame)
                     for d, s in sorted(sample.frame[t].items())).encode())
    return h.hexdigest()


def sample_problems(design: SampleDesign, docs: Sequence[SampledDoc], counts: Sequence[StratumCount],
                    limit: int = 5) -> list[str]:
    """Where a stored sample disagrees with its design: the inclusion probabilities are recomputed.

    Checked: each stratum's ``n_h`` is what the design draws from its ``N_h`` (``stratum_size`` at the
    stratum's rate); each stratum holds ``n_h`` sampled documents; each sampled document's inclusion
    probability is ``n_h / N_h`` of its topic and stratum (to 1e-12, relative).

    Returns:
        Up to ``limit`` problems, one line each (empty: the sample agrees with its design).

    Example:
        >>> d = SampleDesign(2, parse_strata("1-2:0.5", 2))
        >>> sample_problems(d, [SampledDoc("t", "a", "1-2", 0.25, 1)], [StratumCount("t", "1-2", 2, 1)])
        ['topic t document a (stratum 1-2): inclusion probability 0.25 stored, n_h / N_h = 1/2 = 0.5']
    """
    rates = {s.name: s.rate for s in design.strata}
    if design.outside_rate:
        rates[OUTSIDE] = design.outside_rate
    out: list[str] = []
    count_of: dict[tuple[str, str], StratumCount] = {}
    for c in counts:
        count_of[(c.topic_id, c.stratum)] = c
        rate = rates.get(c.stratum)
        if rate is None:
            out.append(f"topic {c.topic_id}: stratum {c.stratum!r} is not one of the design's ({', '.join(rates)})")
            continue
        expected = stratum_size(rate, c.population)
        if c.sampled != expected:
            out.append(f"topic {c.topic_id} stratum {c.stratum}: n_h = {c.sampled} stored, the design draws "
                       f"{expected} of N_h = {c.population} at rate {rate!r}")
    held: dict[tuple[str, str], int] = {}
    for d in docs:
        key = (d.topic_id, d.stratum)
        held[key] = held.get(key, 0) + 1
        found = count_of.get(key)
        if found is None or not found.population:
            out.append(f"topic {d.topic_id} document {d.doc_id}: its stratum {d.stratum!r} has no stored count")
            continue
        pi = found.sampled / found.population
        if not math.isclose(d.inclusion, pi, rel_tol=1e-12, abs_tol=0.0):
            out.append(f"topic {d.topic_id} document {d.doc_id} (stratum {d.stratum}): inclusion probability "
                       f"{d.inclusion!r} stored, n_h / N_h = {found.sampled}/{found.population} = {pi!r}")
    for key, c in count_of.items():
        if held.get(key, 0) != c.sampled:
            out.append(f"topic {key[0]} stratum {key[1]}: {held.get(key, 0)} sampled document(s) stored, "
                       f"n_h = {c.sampled}")
    return out[:limit]
