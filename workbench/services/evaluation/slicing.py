"""The slice step: each measure per slice of each ``--by`` key (``scoring.slices``).

A key is a topic metadata key of the collection whose topics apply
(``audit.collection_of``), or a derived one: ``query_length`` (terms of the
query text, bucketed), ``n_relevant`` (|R| in 1, 2-5, 6-20, >20) or
``pool_coverage`` (Judged@K of the first run at its largest cut-off). The
partition is built once over the first run's evaluated topics and applied to
every run, so slices of different runs hold the same topics.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.scoring.results import Evaluation
    from workbench.scoring.slices import SliceKey, SliceSources
    from workbench.services.evaluation.report import ScoreReport
    from workbench.services.evaluation.request import ScoreEnv, ScoreRequest
    from workbench.services.evaluation.restrict import Scope


def slice_report(request: ScoreRequest, report: ScoreReport, scope: Scope, env: ScoreEnv) -> ScoreReport:
    """The slice step: ``report`` with ``slices`` and ``slice_keys`` filled in (unchanged without ``--by``).

    Raises:
        UnknownNameError: a key that is neither derived nor a topic metadata key of the collection.
        ValidationError: ``query_length`` without query texts.
    """
    if not request.slicing.by or not report.evaluations:
        return report
    from workbench.scoring.slices import slice_table
    from workbench.services.evaluation.audit import collection_of, topic_texts_and_metadata

    queries, metadata = topic_texts_and_metadata(env.open_store,
                                                 collection_of(report.runs, report.qrels, request.collection))
    sources = slice_sources(report.evaluations[0], scope.evaluator.n_relevant(), queries, metadata)
    keys = slice_keys(request.slicing.by, sources, report.evaluations[0].topics)
    slices = {e.run_name: {k: slice_table(e, sk, min_topics=request.slicing.min_topics) for k, sk in keys.items()}
              for e in report.evaluations}
    return dataclasses.replace(report, slices=slices, slice_keys=keys)


def slice_sources(
    reference: Evaluation,
    n_relevant: Mapping[str, int],
    queries: Mapping[str, str],
    metadata: Mapping[str, Mapping[str, object]],
) -> SliceSources:
    """What ``--by`` keys are built from; Judged@K of ``reference`` at its largest cutoff gives ``pool_coverage``.

    Judged@K here is 1 - (pool-novel in the top K) / (returned in the top K),
    i.e. ir_measures' Judged@K, read from the evaluation's novelty counts.
    """
    from workbench.scoring.slices import SliceSources

    k = max(reference.novelty) if reference.novelty else 0
    judged: dict[str, float] = {}
    if k:
        nov = reference.novelty[k]
        for t in reference.topics:
            returned = nov.returned[t]
            judged[t] = 1.0 - nov.unjudged[t] / returned if returned else 0.0
    return SliceSources(queries, n_relevant, judged, k, reference.run_name, metadata)


def slice_keys(keys: Sequence[str], sources: SliceSources, topics: Sequence[str]) -> dict[str, SliceKey]:
    """key -> partition of ``topics``, for every ``--by`` key (in order, each once).

    Raises:
        UnknownNameError: a key that is neither derived nor a topic-metadata key.
        ValidationError: ``query_length`` without query texts.
    """
    from workbench.scoring.slices import slice_key

    return {k: slice_key(k, sources, topics) for k in dict.fromkeys(keys)}


