"""No-answer topics: topics the corpus has no answer for, evaluated apart from recall.

A topic is *no-answer* only when it is marked so, explicitly: topic metadata
``no_answer = true`` (``NO_ANSWER_KEY``) or a side file listing its id. It is
never inferred from |R| = 0 after pooling, which says only that the pool
found nothing (``no_answer_topics`` takes marks, never qrels).

A run **abstains** on a topic when it returns nothing for it, or, with a
score threshold ``t`` given by the user, nothing scored *above* ``t``
(strictly: a result scored exactly ``t`` is no answer). On the no-answer
topics:

* no-answer accuracy = abstained no-answer topics / no-answer topics;
* false-answer rate = answered no-answer topics / no-answer topics
  (= 1 - accuracy);

and on the answerable topics (every other topic of the qrels with |R| > 0)
the abstentions are counted: the run gave nothing where there was something
to find. These figures are reported *beside* the recall averages; no-answer
topics never enter them (they have no denominator; ``shared/seeds/004``:
"counting them as zero punishes correct abstention; counting them as one
rewards any behavior").

Source:
    ``shared/seeds/004_f124302079e96b46.txt`` (no-answer accuracy beside
    recall); abstention in QA evaluation after Rajpurkar, Jia & Liang, ACL 2018
    (SQuAD 2.0, doi:10.18653/v1/P18-2124).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from workbench.ranking import natural_key

NO_ANSWER_KEY = "no_answer"
"""The topic-metadata key that marks a no-answer topic (value ``true``)."""

_TRUE = ("true", "yes", "1")


def is_marked(value: object) -> bool:
    """True for a no-answer mark: boolean true, 1, or the text true/yes/1 (any case)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value == 1
    return isinstance(value, str) and value.strip().lower() in _TRUE


def no_answer_topics(
    metadata: Mapping[str, Mapping[str, object]], listed: Iterable[str] = (), *, key: str = NO_ANSWER_KEY
) -> tuple[str, ...]:
    """The topics marked no-answer: topic metadata ``key`` true, or listed (a side file), natural id order.

    Example:
        >>> no_answer_topics({"1": {"no_answer": True}, "2": {"no_answer": False}, "3": {}}, ["7"])
        ('1', '7')
    """
    marked = {t for t, m in metadata.items() if is_marked(m.get(key))}
    return tuple(sorted(marked | set(listed), key=natural_key))


def abstained(scores: Iterable[float] | None, threshold: float | None = None) -> bool:
    """True when a topic's results hold no answer: none at all, or none scored above ``threshold``.

    Example:
        >>> abstained([]), abstained([0.2, 0.1], 0.2), abstained([0.3], 0.2), abstained([0.3])
        (True, True, False, False)
    """
    values = list(scores or ())
    if not values:
        return True
    return threshold is not None and max(values) <= threshold


@dataclass(frozen=True)
class NoAnswerResult:
    """No-answer figures of one run (numerators and denominators kept).

    Attributes:
        run_name: the run.
        threshold: the score threshold (None: only an empty result list abstains).
        no_answer: the no-answer topics.
        abstained: no-answer topics the run abstained on (correct).
        answered: no-answer topics the run answered (false answers).
        answerable: answerable topics considered (qrels topics with |R| > 0, not marked).
        answerable_abstained: answerable topics the run abstained on.
    """

    run_name: str
    threshold: float | None
    no_answer: tuple[str, ...]
    abstained: tuple[str, ...]
    answered: tuple[str, ...]
    answerable: tuple[str, ...]
    answerable_abstained: tuple[str, ...]

    @property
    def accuracy(self) -> float | None:
        """abstained / no-answer topics (None without no-answer topics)."""
        return len(self.abstained) / len(self.no_answer) if self.no_answer else None

    @property
    def false_answer_rate(self) -> float | None:
        """answered / no-answer topics (None without no-answer topics)."""
        return len(self.answered) / len(self.no_answer) if self.no_answer else None


def evaluate_no_answer(
    run_scores: Mapping[str, Collection[float]],
    no_answer: Iterable[str],
    answerable: Iterable[str],
    *,
    threshold: float | None = None,
    run_name: str = "run",
) -> NoAnswerResult:
    """Abstentions of one run on the no-answer and the answerable topics.

    Args:
        run_scores: topic_id -> the scores of the run's results (a topic absent = nothing returned).
        no_answer: the marked no-answer topics.
        answerable: the answerable topics (qrels topics with |R| > 0 that are not marked).
        threshold: results must score above it to count as an answer (None: any result answers).
        run_name: the run's name.

    Returns:
        A ``NoAnswerResult``.

    Example:
        >>> r = evaluate_no_answer({"1": [0.9], "2": [], "3": [0.1], "5": [0.4]}, ["1", "2", "3"], ["4", "5"],
        ...                        threshold=0.2)
        >>> r.abstained, r.answered, r.accuracy, r.answerable_abstained
        (('2', '3'), ('1',), 0.6666666666666666, ('4',))
    """
    na = tuple(sorted(set(no_answer), key=natural_key))
    ans = tuple(sorted(set(answerable) - set(na), key=natural_key))
    absent = [t for t in na if abstained(run_scores.get(t), threshold)]
    return NoAnswerResult(
        run_name, threshold, na, tuple(absent), tuple(t for t in na if t not in set(absent)), ans,
        tuple(t for t in ans if abstained(run_scores.get(t), threshold)),
    )
