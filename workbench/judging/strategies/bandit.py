"""``bandit``: multi-armed bandits over the pooled runs (PURE).

Losada, Parapar & Barreiro cast judging as a multi-armed bandit: each run is
an arm, pulling an arm judges the run's next unjudged document, and the reward
is 1 when it is relevant ("Feeling lucky? Multi-armed bandits for ordering
judgements in pooling-based evaluation", SAC 2016,
doi:10.1145/2851613.2851692; "Multi-armed bandits for adjudicating documents
in pooling-based evaluation of information retrieval systems", IP&M 53(5)
2017, doi:10.1016/j.ipm.2017.04.005). With a Beta(1, 1) prior on each arm's
probability of relevance, the posterior after ``r`` relevant and ``s``
non-relevant documents is Beta(1 + r, 1 + s):

* ``maxmean`` (MM): pull the arm of highest posterior mean (1 + r) / (2 + r + s);
* ``thompson`` (Thompson sampling): pull the arm of highest draw from its posterior.

Non-stationary variants (``stationary=False``) weigh an arm's evidence by
recency, since a run's chance of relevance falls with depth: the i-th of its L
judged documents counts ``decay ** (L - i)``, so the newest counts 1 (a
discounted Beta posterior, in the spirit of the non-stationary MM of the IP&M
paper, which the authors found best; our discount is exponential with factor
``decay``).

An arm's evidence is every judged document the run ranks above its next
unjudged one (judgments are shared by every run that ranks the document), so
the statistics are a pure function of (pool, judgments): several assessors,
in any order, feed the same bandit.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from workbench.errors import ValidationError
from workbench.judging.strategies.base import Grades, Strategy, TopicPool, check_n, fill

BanditMethod = Literal["maxmean", "thompson"]
BANDIT_METHODS: tuple[str, ...] = ("maxmean", "thompson")


@dataclass(frozen=True, slots=True)
class ArmState:
    """One run (arm) of a topic's bandit.

    Attributes:
        run: the run name.
        relevant: (weighted) relevant documents in the run's judged prefix.
        non_relevant: (weighted) non-relevant documents there.
        next_doc: the run's next unjudged document to judge, or None when exhausted.
    """

    run: str
    relevant: float
    non_relevant: float
    next_doc: str | None

    @property
    def mean(self) -> float:
        """Posterior mean (1 + relevant) / (2 + relevant + non_relevant)."""
        return (1.0 + self.relevant) / (2.0 + self.relevant + self.non_relevant)


def arm_states(pool: TopicPool, judged: Grades, *, decay: float = 1.0,
               taken: frozenset[str] | set[str] = frozenset()) -> list[ArmState]:
    """Each run's evidence and next document, in ``pool.runs`` order.

    Args:
        pool: the topic's pool.
        judged: doc_id -> grade.
        decay: weight factor per later judged document of the same run (1.0 =
            stationary: every document counts 1).
        taken: documents already chosen in the current batch (skipped, no evidence).

    Returns:
        One ``ArmState`` per run.
    """
    wanted = set(pool.documents)
    out = []
    for run, docs in pool.runs.items():
        grades: list[bool] = []
        nxt: str | None = None
        for d in docs:
            if d in judged:
                grades.append(pool.relevant(judged[d]))
            elif d in wanted and d not in taken:
                nxt = d
                break
        rel = non = 0.0
        n = len(grades)
        for i, g in enumerate(grades, 1):
            w = decay ** (n - i)
            if g:
                rel += w
            else:
                non += w
        out.append(ArmState(run, rel, non, nxt))
    return out


@dataclass(frozen=True)
class Bandit(Strategy):
    """A Bayesian bandit over the pooled runs (see the module docstring).

    Args:
        method: ``maxmean`` (MM) or ``thompson`` (Thompson sampling).
        stationary: False weighs recent evidence more (``decay``).
        decay: weight factor per later judged document, in (0, 1]; used when
            ``stationary`` is False.
        seed: seed of Thompson sampling's draws (the draw for a choice depends
            on (seed, topic, number of judged documents, place in the batch)).

    A batch of ``n`` pulls the arms ``n`` times without feedback: MM keeps
    pulling its best arm (down its ranking) until it is exhausted; Thompson
    sampling draws afresh for each pull. Ties go to the run listed first.

    Source:
        Losada, Parapar & Barreiro, SAC 2016, doi:10.1145/2851613.2851692 and
        IP&M 2017, doi:10.1016/j.ipm.2017.04.005; Thompson, Biometrika 1933,
        doi:10.1093/biomet/25.3-4.285.

    Example:
        >>> pool = TopicPool("1", ("a1", "a2", "b1", "b2"), {"A": ("a1", "a2"), "B": ("b1", "b2")})
        >>> Bandit().next_documents(pool, {"a1": 0, "b1": 1}, 1)
        ['b2']
    """

    name = "bandit"
    method: BanditMethod = "maxmean"
    stationary: bool = False
    decay: float = 0.9
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in BANDIT_METHODS:
            raise ValidationError(f"bandit method must be one of {', '.join(BANDIT_METHODS)}, found {self.method!r}")
        if not 0.0 < self.decay <= 1.0:
            raise ValidationError(f"bandit decay must be in (0, 1], found {self.decay}")

    def next_documents(self, pool: TopicPool, judged: Grades, n: int) -> list[str]:
        """Pull the arms ``n`` times; the documents the pulls judge next."""
        check_n(n)
        decay = 1.0 if self.stationary else self.decay
        rng = random.Random(f"{self.seed}\x1f{pool.topic_id}\x1f{len(judged)}")
        picked: list[str] = []
        taken: set[str] = set()
        while len(picked) < n:
            arms = [a for a in arm_states(pool, judged, decay=decay, taken=taken) if a.next_doc is not None]
            if not arms:
                break
            if self.method == "maxmean":
                best = max(range(len(arms)), key=lambda i: (arms[i].mean, -i))
            else:
                draws = [rng.betavariate(1.0 + a.relevant, 1.0 + a.non_relevant) for a in arms]
                best = max(range(len(arms)), key=lambda i: (draws[i], -i))
            doc = arms[best].next_doc
            assert doc is not None
            picked.append(doc)
            taken.add(doc)
        return fill(picked, pool, judged, n)
