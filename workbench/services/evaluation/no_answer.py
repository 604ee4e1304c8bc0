"""No-answer topics in a score: the marks, and each run's abstentions (over ``scoring.abstention``).

A topic is no-answer only when it is marked: topic metadata ``no_answer`` of the
collection the qrels (or runs) belong to, or a file of topic ids (``--no-answer
FILE``); never because |R| = 0. Marked topics are left out of every recall
average (they have no denominator) and evaluated apart: no-answer accuracy
(abstained / no-answer topics) and the false-answer rate beside the averages,
and the answerable topics a run abstained on. Used by plain ``workbench
score`` (``services.evaluation.restrict`` and ``evaluate``, ``ScoreRequest.no_answer``) and by the unit views
(``services.evaluation.units``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.scoring.abstention import (
    NO_ANSWER_KEY,
    NoAnswerResult,
    evaluate_no_answer,
    no_answer_topics,
)

if TYPE_CHECKING:
    from workbench.services.evaluation.refs import RunRef
    from workbench.store import Store

StoreOpener = Callable[[], "Store"]


@dataclass(frozen=True)
class NoAnswerMarks:
    """The marked no-answer topics of a score.

    Attributes:
        topics: the marked topics, natural id order.
        source: where the marks came from, in words ("" when none).
        judged: marked topics that have relevant judgments (the mark wins; a warning says so).
    """

    topics: tuple[str, ...]
    source: str
    judged: tuple[str, ...] = ()

    def warning(self) -> str:
        """The warning about marked topics with relevant judgments ("" when none)."""
        if not self.judged:
            return ""
        return (f"{len(self.judged)} topic(s) marked no-answer have relevant judgments (e.g. {self.judged[0]}); "
                "the mark wins: they are left out of the recall averages")


def find_marks(open_store: StoreOpener | None, collection: str, no_answer_file: Path | None,
               qrels: Mapping[str, Mapping[str, int]], rel: int = 1) -> NoAnswerMarks:
    """The no-answer topics marked in ``collection``'s topic metadata or listed in ``no_answer_file``.

    Raises:
        InputFormatError: a bad topic list file.
        UnknownNameError: unknown collection.
    """
    marks: dict[str, dict[str, object]] = {}
    if open_store is not None and collection:
        marks = {t: dict(m) for t, m in open_store().metadata.get_topic_metadata(collection).items()}
    listed: list[str] = []
    if no_answer_file is not None:
        from workbench.formats.topic_list import read_topic_list

        listed = read_topic_list(no_answer_file)
    topics = no_answer_topics(marks, listed)
    from_metadata = bool(no_answer_topics(marks))
    sources = [s for s, on in ((f"topic metadata {NO_ANSWER_KEY} of {collection}", from_metadata),
                               (str(no_answer_file), bool(listed))) if on]
    judged = tuple(t for t in topics if any(g >= rel for g in qrels.get(t, {}).values()))
    return NoAnswerMarks(topics, "; ".join(sources), judged)


def run_scores(ref: str, run_ref: RunRef, open_store: StoreOpener | None) -> dict[str, list[float]]:
    """topic_id -> the scores of a run's results (stored run or run file), for abstention."""
    if run_ref.origin == "stored" and open_store is not None:
        return {t: list(d.values()) for t, d in open_store().runs.get_run(run_ref.location or ref).items()}
    from workbench.formats.columnar import read_run_columns

    cols = read_run_columns(ref)
    out: dict[str, list[float]] = {}
    for code, score in zip(cols.topic_codes.tolist(), cols.scores.tolist(), strict=True):
        out.setdefault(cols.topic_ids[code], []).append(score)
    return out


def answerable_topics(qrels: Mapping[str, Mapping[str, int]], marks: NoAnswerMarks, rel: int = 1) -> list[str]:
    """Qrels topics with |R| > 0 that are not marked no-answer."""
    marked = set(marks.topics)
    return [t for t, g in qrels.items() if t not in marked and any(x >= rel for x in g.values())]


def evaluate_run(scores: Mapping[str, Sequence[float]], marks: NoAnswerMarks, answerable: Sequence[str], *,
                 threshold: float | None, run_name: str) -> NoAnswerResult:
    """The no-answer figures of one run (``scoring.abstention.evaluate_no_answer``)."""
    return evaluate_no_answer(scores, marks.topics, answerable, threshold=threshold, run_name=run_name)


def no_answer_json(results: Sequence[NoAnswerResult], source: str) -> dict[str, object] | None:
    """The no-answer block of a report header (None when no topic is marked); numerators and denominators kept."""
    if not results:
        return None
    r0 = results[0]
    return {
        "source": source, "threshold": r0.threshold, "topics": list(r0.no_answer),
        "runs": [{"run": r.run_name, "no_answer_accuracy": r.accuracy, "abstained": list(r.abstained),
                  "false_answer_rate": r.false_answer_rate, "answered": list(r.answered),
                  "n_no_answer": len(r.no_answer), "n_answerable": len(r.answerable),
                  "answerable_abstained": list(r.answerable_abstained)} for r in results],
    }
