"""Sample pools: a stratified random sample of the runs' depth-D pool, stored for judging (``workbench pool sample``).

``sample_pool`` pools the stored runs at depth D (``pooling.pool.build_pool``,
the frame), draws the stratified sample of the design
(``pooling.sample.draw_sample``: strata by best rank, an optional outside
stratum drawn from the collection version's documents; with a budget, the
rates scaled to meet it, ``solve_budget``) and stores it as a pool version of
kind ``sample`` in one transaction (``store.pools.save_sample_pool``): the
sampled documents as the pool's entries, each with its stratum and inclusion
probability, the strata counts, the frame and the design. The sample is fixed
before any judgment, and the same runs, design and seed draw the same sample
(same entries, same content hash).

A qrels version published from it records that it is a sample and its design;
``workbench score --qrels`` then estimates the measures from it
(``services.evaluation.sampled``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pooling.sample import Sample, SampleDesign, draw_sample, parse_strata, solve_budget

if TYPE_CHECKING:
    from workbench.scoring.sample_simulation import SamplingSimulation
    from workbench.services.runs.pool_topics import TopicSelection
    from workbench.store import Store
    from workbench.store.collections import Collections
    from workbench.store.pools import PoolInfo, Pools
    from workbench.store.runs import Runs

Say = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass(frozen=True)
class SampleOutcome:
    """A sample pool drawn and stored.

    Attributes:
        info: the stored pool version (kind ``sample``).
        created: False when the identical sample was stored under this name already (nothing written).
        sample: the sample (design in force, documents, strata counts, frame).
        frame_size: documents of the frame (the runs' depth-D pool).
    """

    info: PoolInfo
    created: bool
    sample: Sample
    frame_size: int


def design_of(depth: int, strata: str, *, seed: int, outside: float = 0.0) -> SampleDesign:
    """The design of ``--depth --strata --seed --outside``.

    Raises:
        ValidationError: a bad depth or strata specification (naming ``--strata``), an outside rate outside [0, 1].
    """
    from workbench.errors import ValidationError

    if not 0.0 <= outside <= 1.0:
        raise ValidationError(f"--outside: expected a rate in [0, 1] (0: no outside stratum), found {outside!r}")
    return SampleDesign(depth, parse_strata(strata, depth), outside, seed)


def sample_pool(
    pools: Pools,
    runs: Runs,
    collections: Collections,
    name: str,
    run_names: Sequence[str],
    design: SampleDesign,
    *,
    budget: int | None = None,
    topics: TopicSelection | None = None,
    say: Say = _quiet,
) -> SampleOutcome:
    """Draw a stratified sample of the depth-``design.depth`` pool of stored runs and store it as a pool version.

    Args:
        pools: the store's pools.
        runs: the store's runs.
        collections: the store's collections (the outside stratum's documents: the runs' collection version).
        name: the sample pool's name.
        run_names: stored runs of one collection version.
        design: depth, strata, outside rate and seed (``design_of``).
        budget: judgments in all: the design's rates are scaled to meet it (``pooling.sample.solve_budget``);
            None = the rates as given.
        topics: sample only these topics (recorded in the pool's params); None = every topic the runs answer.
        say: progress lines.

    Returns:
        ``SampleOutcome``.

    Raises:
        UnknownNameError: an unknown run.
        ValidationError: no runs, runs of different collections or versions, a budget below one document per
            non-empty stratum.
        DuplicateNameError: ``name`` is taken by another pool version.
    """
    from pooling.pool import build_pool
    from pooling.sample import sample_as_pool
    from workbench.services.runs.pooling import _same_collection, check_depth

    check_depth(design.depth)
    collection, version, _ = _same_collection(runs, run_names)
    say(f"[starting] sample of the depth-{design.depth} pool of {', '.join(run_names)} ({collection})")
    stored = {r: runs.get_run(r, depth=design.depth) for r in run_names}
    if topics is not None and topics.topics is not None:
        stored = {r: topics.restrict(run) for r, run in stored.items()}
        say(f"topics: {topics.description}")
    frame = build_pool(stored, design.depth)
    doc_ids = collections.version_doc_ids(version) if design.outside_rate else []
    if budget is not None:
        design = solve_budget(frame, design, budget, len(set(doc_ids)))
        say(f"rates solved for a budget of {budget:,} judgments: {design.spec()}"
            + (f"; outside {design.outside_rate!r}" if design.outside_rate else ""))
    sample = draw_sample(frame, design, doc_ids)
    params: dict[str, object] = {"design": design.as_dict(), "collection_size": sample.collection_size}
    if topics is not None and topics.topics is not None:
        params["topics"] = topics.description
    pool = sample_as_pool(frame, sample, params)
    info, created = pools.save_sample_pool(name, pool, sample, collection=collection, collection_version=version)
    verb = "stored" if created else "unchanged (the identical sample is stored under this name)"
    say(f"[finished] sample pool {info.pool_version} {verb}: {sample.n_sampled:,} documents to judge of "
        f"{frame.n_entries:,} pooled, {len({d.topic_id for d in sample.docs})} topics")
    return SampleOutcome(info, created, sample, frame.n_entries)


@dataclass(frozen=True)
class SamplingSimulationRun:
    """``workbench simulate-sample``: what was simulated, against what, and the results.

    Attributes:
        truth: the truth's name (a qrels version or file).
        pool_version: the sample pool the runs and design came from ("" with ``--runs``).
        simulation: ``scoring.sample_simulation.simulate_sampling``'s result.
        warnings: what makes the numbers less than they seem, one line each (the truth covers only some
            of the runs' topics).
    """

    truth: str
    pool_version: str
    simulation: SamplingSimulation
    warnings: tuple[str, ...] = ()


def simulate_sample(
    store: Store,
    truth: str,
    *,
    runs: Sequence[str] = (),
    design: SampleDesign | None = None,
    pool: str | None = None,
    budgets: Sequence[float] = (5, 10, 20, 40),
    repeats: int = 200,
    seed: int | None = None,
    ks: Sequence[int] = (20, 100),
    rel: int = 1,
    say: Say = _quiet,
) -> SamplingSimulationRun:
    """Draw the sample again and again against known judgments: are the estimates right? Nothing is stored.

    Either ``runs`` and ``design`` (``--runs --depth --strata --outside``) or ``pool``, a stored sample pool
    whose runs and design are taken (its rates as relative weights, scaled to each budget).

    Args:
        store: the store (runs, the truth when stored, the collection's documents for the outside stratum).
        truth: the judgments taken as complete: a TREC qrels file (an existing path wins) or a qrels version.
        runs: stored runs of one collection version.
        design: the base design (its seed is the first repeat's unless ``seed`` is given).
        pool: a stored sample pool instead of ``runs`` and ``design``.
        budgets: percentages of the frame's size.
        repeats: draws per budget (>= 2).
        seed: the first repeat's seed (repeat i uses seed + i); None = the design's.
        ks: the cut-offs of R@k.
        rel: inclusive minimum grade of a relevant document.
        say: progress lines.

    Raises:
        UsageError: both or neither of ``pool`` and ``runs``/``design``.
        UnknownNameError: an unknown run, pool or qrels version.
        ValidationError: runs of different collections or versions, a pool that is not a sample, bad budgets or
            repeats.
    """
    from workbench.errors import UsageError
    from workbench.scoring.sample_simulation import simulate_sampling
    from workbench.services.judging.simulation import load_oracle
    from workbench.services.runs.pooling import _same_collection

    if (pool is None) == (design is None):
        raise UsageError("simulate-sample: give --pool SAMPLE_POOL, or --runs with --depth and --strata (not both)")
    if pool is not None:
        info, sample = store.pools.read_sample(pool)
        runs, design = info.runs, sample.design
    assert design is not None
    if seed is not None:
        design = dataclasses.replace(design, seed=seed)
    _collection, version, _ = _same_collection(store.runs, runs)
    truth_name, qrels = load_oracle(store.qrels, truth)
    stored = {r: store.runs.get_run(r, depth=max(design.depth, *ks)) for r in runs}
    warnings = truth_coverage(truth_name, qrels, stored)
    doc_ids = store.collections.version_doc_ids(version) if design.outside_rate else []
    say(f"[starting] simulate-sample: {len(runs)} runs, {design.describe()}, budgets "
        f"{', '.join(f'{b:g}%' for b in budgets)}, {repeats} repeats against {truth_name}")
    sim = simulate_sampling(stored, qrels, doc_ids, design, budgets, repeats, ks=ks, rel=rel, progress=say)
    say(f"[finished] simulate-sample: {len(budgets)} budget(s) x {repeats} repeats")
    return SamplingSimulationRun(truth_name, pool or "", sim, warnings)


def truth_coverage(truth: str, qrels: Mapping[str, Mapping[str, int]],
                   runs: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """How the truth's topics meet the runs': refused when they share none, a warning when only some.

    The simulation averages R@k over the truth's topics: a truth topic no run answers counts
    R@k = 0 for every run, and a run topic the truth lacks is left out; with no topic in common
    (the truth of another collection) every number would be meaningless.

    Returns:
        The warnings (empty: every truth topic is answered by a run and every run topic is judged).

    Raises:
        ValidationError: the truth and the runs share no topic.

    Example:
        >>> truth_coverage("t", {"1": {"d": 1}, "2": {"d": 1}}, {"a": {"1": {}, "3": {}}})[0][:60]
        '--truth t judges 2 topics and the runs answer 2; 1 in common:'
    """
    from workbench.errors import ValidationError

    truth_topics = set(qrels)
    run_topics = {t for ranked in runs.values() for t in ranked}
    shared = truth_topics & run_topics
    if not shared:
        raise ValidationError(
            f"--truth {truth} shares no topic with the runs {', '.join(runs)} (the truth judges {len(truth_topics):,} "
            f"topic(s), e.g. {_some(truth_topics)}; the runs answer {len(run_topics):,}, e.g. {_some(run_topics)}): "
            "it is not the judgments of the runs' collection. Nothing was simulated; give the truth of the runs' "
            "topics.")
    if shared == truth_topics == run_topics:
        return ()
    return (f"--truth {truth} judges {len(truth_topics):,} topics and the runs answer {len(run_topics):,}; "
            f"{len(shared):,} in common: {len(truth_topics - shared):,} truth topic(s) no run answers (e.g. "
            f"{_some(truth_topics - shared)}) count R@k = 0 for every run, {len(run_topics - shared):,} run topic(s) "
            f"the truth does not judge (e.g. {_some(run_topics - shared)}) are left out",)


def _some(topics: set[str], n: int = 3) -> str:
    """Up to ``n`` topic ids in natural order, for messages ('-' for none)."""
    from workbench.ranking import natural_key

    shown = sorted(topics, key=natural_key)[:n]
    return ", ".join(shown) + (", ..." if len(topics) > n else "") if shown else "-"
