"""The Python API for notebooks and scripts: ``from workbench import evaluate``.

``evaluate(runs, qrels)`` scores one or several runs against qrels with the
same scorer, rules and lineage as ``workbench score`` and returns an
``EvaluationResults`` holding both shapes a notebook wants, as pandas
DataFrames: ``per_topic`` (one row per run, measure and topic) and
``aggregates`` (one row per run and measure: macro, micro, ceiling, pool-novel).

Accepted inputs (converted at this boundary, ``formats``):

* a run: a TREC run file or a Parquet run (path, ``str`` or ``os.PathLike``),
  a DataFrame (``topic_id, doc_id, score[, rank]``; ir_measures' and
  PyTerrier's column names work too; a ``run`` column holds several runs),
  or a mapping topic_id -> doc_id -> score;
* several runs: a list of those, or a mapping run name -> run;
* qrels: a TREC qrels file or Parquet qrels (path), a DataFrame
  (``topic_id, doc_id, grade``), or a mapping topic_id -> doc_id -> grade.

Example:
    >>> from workbench import evaluate
    >>> res = evaluate({"bm25": {"1": {"d1": 2.0, "d2": 1.0}}}, {"1": {"d2": 1}}, measures=["R@1", "RR@10"])
    >>> res.aggregates[["run", "measure", "macro"]].to_dict("records")
    [{'run': 'bm25', 'measure': 'R@1', 'macro': 0.0}, {'run': 'bm25', 'measure': 'RR@10', 'macro': 0.5}]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from workbench.errors import InputFormatError, ValidationError
from workbench.formats import frames

if TYPE_CHECKING:
    import pandas as pd

    from workbench.scoring.evaluate import Evaluation
    from workbench.services.evaluation.refs import QrelsRef, RunSource
    from workbench.services.evaluation.report import ScoreReport

AGGREGATE_COLUMNS = ("run", "measure", "macro", "micro", "ceiling", "n_topics", "pool_novel", "pool_novel_share",
                     "optimistic")
PER_TOPIC_COLUMNS = ("run", "measure", "topic_id", "value", "numerator", "denominator")


@dataclass(frozen=True)
class EvaluationResults:
    """What ``evaluate`` returns: the score report and its two DataFrame views.

    Attributes:
        report: the ``services.evaluation.report.ScoreReport`` (lineage: qrels hash,
            runs, evaluator version, threshold, missing-topic policy, warnings).
    """

    report: ScoreReport

    @property
    def evaluations(self) -> tuple[Evaluation, ...]:
        """One ``scoring.evaluate.Evaluation`` per run, in input order (every number with its evidence)."""
        return self.report.evaluations

    @property
    def lineage(self) -> dict[str, object]:
        """The lineage block (JSON-ready), as ``workbench score --format json`` prints it."""
        return self.report.header()

    @cached_property
    def aggregates(self) -> pd.DataFrame:
        """One row per (run, measure), in report order.

        Columns: ``run``, ``measure`` (canonical name), ``macro`` (mean of
        per-topic values), ``micro`` (sum of numerators / sum of denominators;
        NaN where not meaningful), ``ceiling`` (R@k and P@k: best reachable
        mean; else NaN), ``n_topics``, and for R@k: ``pool_novel`` (unjudged
        documents in the top k, all topics), ``pool_novel_share`` (of the
        returned ones) and ``optimistic`` (macro R@k if every pool-novel
        document were relevant); NaN for other measures. Full precision.
        """
        import pandas as pd

        from workbench.scoring.measures import R

        nan = float("nan")
        rows = []
        for e in self.report.evaluations:
            for m in e.measures:
                a = e.aggregates[m]
                nov = e.novelty.get(m.cutoff) if isinstance(m, R) else None
                rows.append((e.run_name, str(m), a.macro, nan if a.micro is None else a.micro,
                             nan if a.ceiling is None else a.ceiling, a.n_topics,
                             nan if nov is None else nov.total_unjudged, nan if nov is None else nov.unjudged_share,
                             nan if nov is None else nov.macro_high))
        df = pd.DataFrame.from_records(rows, columns=list(AGGREGATE_COLUMNS))
        df["pool_novel"] = df["pool_novel"].astype("Int64")  # a count; <NA> for measures other than R@k
        return df

    @cached_property
    def per_topic(self) -> pd.DataFrame:
        """One row per (run, measure, topic) over the evaluated topics (``report.topics``).

        Columns: ``run``, ``measure``, ``topic_id`` (str), ``value``,
        ``numerator`` and ``denominator`` (e.g. hits and |R| for R@k). Full precision.
        """
        import numpy as np
        import pandas as pd

        from workbench.scoring.evaluate import TopicMetrics

        parts = []
        for e in self.report.evaluations:
            for m in e.measures:
                metrics = e.per_topic[m]
                if isinstance(metrics, TopicMetrics):
                    topics, values, num, den = metrics.arrays()
                else:  # another scorer's plain mapping
                    topics = tuple(metrics)
                    values = np.array([metrics[t].value for t in topics], dtype=np.float64)
                    num = np.array([metrics[t].numerator for t in topics], dtype=np.float64)
                    den = np.array([metrics[t].denominator for t in topics], dtype=np.float64)
                n = len(topics)
                parts.append(pd.DataFrame({
                    "run": np.full(n, e.run_name, dtype=object), "measure": np.full(n, str(m), dtype=object),
                    "topic_id": np.asarray(topics, dtype=object), "value": values, "numerator": num,
                    "denominator": den,
                }))
        if not parts:
            return pd.DataFrame(columns=list(PER_TOPIC_COLUMNS))
        return pd.concat(parts, ignore_index=True)

    def to_parquet(self, path: str | os.PathLike[str], *, per_topic: bool = True) -> Path:
        """Write the results in long form (as ``workbench score --format parquet``) to a Parquet file.

        Rows: per run and measure its ``macro``, ``micro``, ``ceiling``,
        ``optimistic`` and ``unjudged`` values, then (``per_topic``) one row
        per topic; each with numerator, denominator and the lineage columns.
        """
        from workbench.reports.scores import write_scores_parquet

        return write_scores_parquet(self.report.header(), self.report.evaluations, Path(path), per_topic=per_topic)

    def __repr__(self) -> str:
        runs = ", ".join(e.run_name for e in self.report.evaluations)
        return (f"EvaluationResults(runs=[{runs}], measures={len(self.report.measures)}, "
                f"topics={len(self.report.topics)}, qrels={self.report.qrels.name!r})")


def _require_file(path: str, what: str) -> None:
    if not Path(path).is_file():
        raise InputFormatError(path, 0, f"expected a {what} file, found nothing at this path. Check the path.")


def _is_path(value: object) -> TypeGuard[str | os.PathLike[str]]:
    return isinstance(value, (str, os.PathLike))


def _is_single_mapping_run(value: Mapping[Any, Any]) -> bool:
    """topic -> doc -> score (a run), as opposed to name -> run."""
    for docs in value.values():
        if not isinstance(docs, Mapping):
            return False
        for score in docs.values():
            return not isinstance(score, Mapping)
    return True


def _named_runs(runs: object) -> list[tuple[str, object]]:
    """(name or '', run) pairs of the ``runs`` argument; '' = name from the file or position."""
    if _is_path(runs) or frames.is_frame(runs):
        return [("", runs)]
    if isinstance(runs, Mapping):
        if not runs:
            raise ValidationError("expected at least one run, found an empty mapping.")
        if _is_single_mapping_run(runs):
            return [("", runs)]
        return [(str(name), run) for name, run in runs.items()]
    if isinstance(runs, Sequence) and not isinstance(runs, (bytes, bytearray)):
        if not runs:
            raise ValidationError("expected at least one run, found an empty list.")
        return [("", r) for r in runs]
    raise ValidationError(f"expected runs as a file path, a DataFrame, a mapping or a list of them, "
                          f"found {type(runs).__name__}.")


def _sources(runs: object, trust_file_order: bool) -> list[tuple[str, RunSource]]:
    from workbench.formats.trec import odd_ranks_warning
    from workbench.scoring.columns import rank_run, run_columns_from_mapping
    from workbench.services.evaluation.load import load_run
    from workbench.services.evaluation.refs import RunRef

    out: list[tuple[str, RunSource]] = []
    for position, (name, run) in enumerate(_named_runs(runs), 1):
        if _is_path(run):
            path = os.fspath(run)

            def from_file(path: str = path, name: str = name) -> Any:
                _require_file(path, "run")
                ref, rr = load_run(path, None, trust_file_order=trust_file_order)
                return ((RunRef(name, "file", path, n_lines=ref.n_lines, rank_warning=ref.rank_warning), rr) if name
                        else (ref, rr))

            out.append((path, from_file))
        elif frames.is_frame(run):
            for run_name, part in frames.split_runs(run, name or f"run{position}").items():

                def from_frame(part: Any = part, run_name: str = run_name) -> Any:
                    cols = frames.run_columns_from_frame(part, run_name, trust_file_order=trust_file_order)
                    where = f"DataFrame {run_name}"
                    warning = "" if cols.odd_ranks is None else odd_ranks_warning(
                        where, cols.odd_ranks, trust_file_order=trust_file_order, rows=True)
                    return RunRef(run_name, "frame", where, n_lines=cols.n_lines, rank_warning=warning), \
                        rank_run(cols, reuse=True)

                out.append((run_name, from_frame))
        elif isinstance(run, Mapping):
            run_name = name or f"run{position}"
            frames.check_mapping_run(run, run_name)

            def from_mapping(run: Any = run, run_name: str = run_name) -> Any:
                cols = run_columns_from_mapping(run, run_name)
                return RunRef(run_name, "mapping", f"mapping {run_name}", n_lines=cols.n_lines), \
                    rank_run(cols, reuse=True)

            out.append((run_name, from_mapping))
        else:
            raise ValidationError(f"expected a run as a file path, a DataFrame or a mapping topic_id -> doc_id -> "
                                  f"score, found {type(run).__name__}.")
    return out


def _qrels(qrels: object) -> tuple[QrelsRef, Any]:
    from workbench.hashing import qrels_content_hash
    from workbench.scoring.columns import qrels_columns_from_mapping
    from workbench.services.evaluation.load import load_qrels
    from workbench.services.evaluation.refs import QrelsRef

    if _is_path(qrels):
        _require_file(os.fspath(qrels), "qrels")
        return load_qrels(os.fspath(qrels), None)
    if frames.is_frame(qrels):
        mapping = frames.qrels_from_frame(qrels)
        origin = "frame"
    elif isinstance(qrels, Mapping):
        frames.check_mapping_qrels(qrels)
        mapping = {t: dict(d) for t, d in qrels.items()}
        origin = "mapping"
    else:
        raise ValidationError(f"expected qrels as a file path, a DataFrame or a mapping topic_id -> doc_id -> grade, "
                              f"found {type(qrels).__name__}.")
    ref = QrelsRef(f"{origin} qrels", origin, qrels_content_hash(mapping), n_topics=len(mapping),  # type: ignore[arg-type]
                   n_entries=sum(len(d) for d in mapping.values()))
    return ref, qrels_columns_from_mapping(mapping)


def evaluate(
    runs: object,
    qrels: object,
    *,
    measures: Sequence[str] | None = None,
    cutoffs: Sequence[int] | None = None,
    rel: int = 1,
    missing: str = "fail",
    trust_file_order: bool = False,
) -> EvaluationResults:
    """Score runs against qrels; the same numbers as ``workbench score``, as DataFrames.

    Args:
        runs: one run or several (see the module docstring for the shapes).
        qrels: the qrels (a path, a DataFrame or a mapping).
        measures: measure names, e.g. ``["R@100", "nDCG@10", "RR(rel=2)@10"]``;
            a name without ``@k`` is taken at every cutoff. None = the default
            report (R@k for each cutoff, nDCG@10, RR@10, P@10, Success@10, Judged@10).
        cutoffs: the k of the default R@k rows and of names without ``@k``
            (default 5, 10, 20, 50, 100).
        rel: inclusive minimum grade of a relevant document (>= 0).
        missing: qrels topics a run has no results for: ``"fail"`` (raise
            ``MissingTopicsError``), ``"zero"`` (score 0) or ``"exclude"``
            (left out of every run's averages).
        trust_file_order: order by the rank column instead of score desc,
            doc_id desc (trec_eval's rule).

    Returns:
        ``EvaluationResults`` with ``aggregates`` and ``per_topic`` DataFrames
        (one return type whatever the arguments).

    Raises:
        InputFormatError: a malformed file or frame (path or frame name, line or row).
        MissingTopicsError: ``missing="fail"`` and a run lacks a qrels topic.
        ValidationError, UnknownNameError: a bad measure, cutoff, policy or input type.

    Source:
        ``services.evaluation.pipeline.score`` (the evaluation path behind ``workbench score``),
        without a store: no identifier audit against a collection, nothing recorded.
    """
    from workbench.services.evaluation.pipeline import score
    from workbench.services.evaluation.request import Output, ScoreEnv, ScoreRequest

    qref, qcols = _qrels(qrels)
    sources = _sources(runs, trust_file_order)
    request = ScoreRequest(tuple(label for label, _ in sources), qref.name, measures=tuple(measures or ()),
                           cutoffs=tuple(cutoffs or ()), rel=rel, missing=missing, trust_file_order=trust_file_order,
                           output=Output(record=False))
    report = score(request, ScoreEnv(run_sources=tuple(load for _, load in sources), qrels=(qref, qcols)))
    return EvaluationResults(report)
