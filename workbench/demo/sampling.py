"""The demo's sampled-judging step: R@20 estimated from a stratified sample, beside the pooled and full values.

After the workflow, ``sampling_step`` takes the path a team would take
(``docs/sampling.md``): it draws a stratified sample of the depth-``run_depth``
pool of the four runs and of the collection outside it, over the topics the
reference judged (``workbench pool sample``: the 1-``pool_depth`` stratum in
full, deeper ranks and the outside at small rates), has the reference
assessor judge it through the save path the workflow's judging uses
(``workflow.judge_with_reference``, passed in as ``judge``; the top
stratum's documents were judged for pools v1 and v2 already, so only the
deeper and outside documents are new judgments), publishes it as a sample
qrels version, and scores the runs against it with the evaluation pipeline
(``services.evaluation``: the estimates with their 95% intervals). The
pooled value (qrels v2) and the full judgments (the collection's reference)
sit beside them, over the same topics (those scored on qrels v2). Nothing
is recorded in ``evaluations``; a second demo run reuses the sample, its
judgments and its qrels version.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from pooling.sample import SampleDesign
    from workbench.scoring.estimate_run import EstimatedValue
    from workbench.store import Store
    from workbench.store.pools import PoolInfo
    from workbench.store.qrels import QrelsVersionInfo

DEEP_RATE = 0.02
"""Inclusion rate of the pool's ranks below the judged depth (``pool_depth + 1 .. run_depth``)."""
OUTSIDE_RATE = 0.002
"""Inclusion rate of the outside stratum (documents no run ranked within the run depth)."""
SEED = 7
"""The sample's seed."""


@dataclass(frozen=True)
class SamplingRow:
    """One run: R@k on the pooled qrels, on the full judgments, and estimated from the sample (macro and micro).

    Attributes:
        run: the run.
        pooled: macro R@k on the pooled qrels (v2).
        full: macro R@k on the full judgments.
        full_micro: micro R@k on the full judgments.
        macro: the macro estimate (mean of per-topic R̂_k / R̂) with its interval.
        micro: the micro estimate (sum R̂_k / sum R̂) with its interval.
    """

    run: str
    pooled: float
    full: float
    full_micro: float
    macro: EstimatedValue
    micro: EstimatedValue


@dataclass(frozen=True)
class SamplingDemo:
    """The sampled-judging step's result.

    Attributes:
        pool: the sample pool version.
        qrels: its qrels version.
        design: the design it was drawn under.
        frame_size: documents of the depth-D pool (the frame).
        n_sampled: documents sampled (the judgments behind the estimates).
        n_new: judgments the reference assessor saved now (0 when resumed).
        k: the cut-off of R@k.
        pooled_qrels: the pooled qrels version (v2); full_qrels: the full judgments.
        n_topics: topics compared.
        rows: one per run.
        file: the qrels version's exported file (None when no labels folder was given).
    """

    pool: PoolInfo
    qrels: QrelsVersionInfo
    design: SampleDesign
    frame_size: int
    n_sampled: int
    n_new: int
    k: int
    pooled_qrels: str
    full_qrels: str
    n_topics: int
    rows: tuple[SamplingRow, ...]
    file: Path | None = None


def sampling_step(
    store: Store,
    lead: object,
    judge: Callable[[str], int],
    runs: Sequence[str],
    pooled: Mapping[str, object],
    *,
    pooled_qrels: str,
    full_qrels: str,
    run_depth: int,
    pool_depth: int,
    k: int = 20,
    say: Callable[[str], None] = lambda _m: None,
    labels_dir: Path | None = None,
) -> SamplingDemo:
    """Sample, judge, publish and score (see the module docstring).

    Args:
        store: the demo's store.
        lead: the demo lead's session (publishes).
        judge: judges a pool version as the workflow's pools are judged (``workflow.judge_with_reference``
            with the reference assessor) and returns the judgments it saved.
        runs: the four runs.
        pooled: run -> its ``Evaluation`` on the pooled qrels v2 (the topics compared, the pooled values).
        pooled_qrels: qrels v2's name; full_qrels: the reference's name.
        run_depth: D of the frame (the runs' depth).
        pool_depth: the judged pools' depth: ranks 1..pool_depth are sampled in full.
        k: the cut-off of R@k.
        say: progress lines.
        labels_dir: the folder the sample's qrels version is exported to, as every published
            version is (None: not exported).

    Raises:
        WorkbenchError: a step's error (nothing half-written: each step is its own transaction).
    """
    from workbench.errors import UnknownNameError
    from workbench.services.judging.assessments import export_qrels, publish
    from workbench.services.runs.pool_topics import select_topics
    from workbench.services.runs.sampling import design_of, sample_pool

    collection = store.runs.get_run_info(runs[0]).collection
    # the topics the workflow pools: those the reference judged (a topic it never judged is not sampled)
    selection = select_topics(store.collections, store.pools, store.qrels, collection, f"judged:{full_qrels}")
    name = f"{collection}-sample-v1"
    strata = f"1-{pool_depth}:1.0" + (f",{pool_depth + 1}-{run_depth}:{DEEP_RATE!r}" if run_depth > pool_depth else "")
    design = design_of(run_depth, strata, seed=SEED, outside=OUTSIDE_RATE)
    say(f"[sampling] sample of the depth-{run_depth} pool of {', '.join(runs)} and the collection outside it: "
        f"{design.describe()}")
    outcome = sample_pool(store.pools, store.runs, store.collections, name, runs, design, topics=selection, say=say)
    saved = judge(name)
    file: Path | None = None
    try:
        qrels = store.qrels.get_qrels_info(name)
        if labels_dir is not None:
            file = export_qrels(store.qrels, name, labels_dir)
    except UnknownNameError:
        result = publish(store.qrels, lead, name, name, rule="median",  # type: ignore[arg-type]
                         labels_dir=labels_dir, note="a stratified sample, published by the workbench demo")
        qrels, file = result.info, result.path
    first = next(iter(pooled.values()))
    topics = tuple(getattr(first, "topics"))  # noqa: B009 - an Evaluation
    rows = _rows(store, runs, pooled, name, full_qrels, topics, k)
    say(f"[sampling] {len(rows)} runs scored against the sample {name} ({outcome.sample.n_sampled:,} judgments, "
        f"{saved:,} new)")
    return SamplingDemo(outcome.info, qrels, outcome.sample.design, outcome.frame_size, outcome.sample.n_sampled,
                        saved, k, pooled_qrels, full_qrels, len(topics), rows, file)


def _rows(store: Store, runs: Sequence[str], pooled: Mapping[str, object], sample_qrels: str, full_qrels: str,
          topics: tuple[str, ...], k: int) -> tuple[SamplingRow, ...]:
    """Score the runs against the sample's qrels version (the pipeline, over ``topics``) and the full judgments."""
    from workbench.scoring.evaluate import Evaluator
    from workbench.scoring.measures import parse_measure
    from workbench.services.evaluation.pipeline import score
    from workbench.services.evaluation.request import Output, ScoreEnv, ScoreRequest, TopicChoice

    measure = parse_measure(f"R@{k}")
    sampled_topics = {t for t, docs in store.qrels.get_qrels(sample_qrels).items() if docs}
    request = ScoreRequest(tuple(runs), sample_qrels, measures=(str(measure),), missing="zero",
                           topics=TopicChoice(exclude=tuple(sorted(sampled_topics - set(topics)))),
                           output=Output(record=False, keep_documents=False))
    report = score(request, ScoreEnv(lambda: store))
    full = Evaluator(store.qrels.get_qrels(full_qrels), [measure], rel=1, missing="fail")
    out = []
    for name, est in zip(runs, report.estimates, strict=True):
        e = full.evaluate(store.runs.get_run(name), run_name=name, topics=topics)
        p = getattr(pooled[name], "aggregates")[measure]  # noqa: B009 - an Evaluation
        a = e.aggregates[measure]
        out.append(SamplingRow(name, float(p.macro), float(a.macro), math.nan if a.micro is None else float(a.micro),
                               est.value(f"Rhat@{k}", "macro"), est.value(f"Rhat@{k}", "micro")))
    return tuple(out)
