"""``cal``: continuous active learning over the collection's tf-idf features (PURE).

Cormack & Grossman's continuous active learning (CAL), in its autonomous form
AutoTAR ("Autonomy and reliability of continuous active learning for
technology-assisted review", arXiv:1504.06868, 2015; CAL: "Evaluation of
machine-learning protocols for technology-assisted review", SIGIR 2014,
doi:10.1145/2600428.2609601; applied to pooling as HiCAL, Abualsaud et al.,
SIGIR 2018, doi:10.1145/3209978.3210176):

1. the topic's query is a synthetic relevant document;
2. a logistic regression is trained on the judged documents (relevant = 1,
   non-relevant = 0), the synthetic document, and ``negatives`` documents drawn
   at random and presumed non-relevant (redrawn each round; AutoTAR draws them
   from the whole collection, by default we draw them from outside the topic's
   pool); besides the words, each document has one feature per run that falls
   with its rank in that run (``rank_weight``), so the model also learns how far
   each run can be trusted;
3. the unjudged pool documents are judged in decreasing order of the model's
   score, in batches (AutoTAR grows the batch by a tenth each round), and the
   model is retrained as judgments arrive.

``cal-model`` (``prior_weight > 0``) also trains on a model assessor's grades of
documents no person judged, each with weight ``prior_weight``: the lead's
choice to let a model's judgments steer the order (the assessor never sees them).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.errors import ValidationError
from workbench.judging.strategies.base import Grades, Strategy, TopicPool, check_n

NEGATIVE_SOURCES: tuple[str, ...] = ("outside", "collection")


@dataclass(frozen=True)
class CAL(Strategy):
    """Continuous active learning: logistic regression over tf-idf, retrained per batch.

    Args:
        negatives: documents drawn at random each round and presumed
            non-relevant (AutoTAR: 100); 0 for none.
        negatives_from: ``outside`` draws them from the collection's documents
            outside the topic's pool (no pooled run ranked them within the
            depth, so they are safer to presume non-relevant); ``collection``
            from the whole collection, as AutoTAR does.
        c: inverse regularisation strength of the logistic regression (> 0).
        rank_weight: weight of the rank features (0 = text only): for each run r,
            ``rank_weight * (1 - ln(rank_r(d)) / ln(D + 1))`` for a document the
            run pooled at ``rank_r(d)`` (D = the deepest pooled rank), else 0;
            the synthetic query document gets ``rank_weight`` on each. The model
            learns from the judgments how far each run's ranking can be trusted.
        batch: first batch size of a simulation (>= 1).
        growth: a simulation's batch grows by ``ceil(batch * growth)`` each
            round (AutoTAR: 0.1); 0 keeps it fixed.
        prior_weight: weight of a model assessor's grade on a document no
            person judged (0 = ignore model judgments; ``cal-model`` uses 0.5).
        seed: seed of the random presumed non-relevant documents.

    The defaults (c = 10, 300 negatives from outside the pool, rank weight 0.3,
    features over Snowball-stemmed words) were chosen on a third of the
    Cranfield topics and checked on another third (README, "Judging
    strategies"); ``cal(negatives=100, negatives_from='collection', c=1.0,
    rank_weight=0.0)`` is AutoTAR's plain setting.

    Needs ``TopicPool.features`` (``tfidf_features``); documents without a
    feature row are ordered after the scored ones, in priority order. Ties of
    score keep the pool's priority order.

    Source:
        Cormack & Grossman, arXiv:1504.06868 (AutoTAR, 2015) and SIGIR 2014,
        doi:10.1145/2600428.2609601; logistic regression: scikit-learn
        ``LogisticRegression`` (liblinear).
    """

    name = "cal"
    negatives: int = 300
    negatives_from: str = "outside"
    c: float = 10.0
    rank_weight: float = 0.3
    batch: int = 1
    growth: float = 0.1
    prior_weight: float = 0.0
    seed: int = 0

    gives_estimate = True

    def __post_init__(self) -> None:
        if self.negatives < 0 or self.batch < 1 or self.growth < 0 or not self.c > 0 or self.prior_weight < 0 \
                or self.rank_weight < 0:
            raise ValidationError(
                f"cal parameters: expected negatives >= 0, batch >= 1, growth >= 0, c > 0, rank_weight >= 0 "
                f"and prior_weight >= 0, found negatives={self.negatives}, batch={self.batch}, "
                f"growth={self.growth}, c={self.c}, rank_weight={self.rank_weight}, "
                f"prior_weight={self.prior_weight}"
            )
        if self.negatives_from not in NEGATIVE_SOURCES:
            raise ValidationError(
                f"cal negatives_from must be one of {', '.join(NEGATIVE_SOURCES)}, found {self.negatives_from!r}"
            )

    @property
    def uses_prior(self) -> bool:
        """True when model judgments take part (``prior_weight > 0``)."""
        return self.prior_weight > 0

    def batch_sizes(self) -> Iterator[int]:
        """AutoTAR's schedule: ``batch``, then each batch ``ceil(b * growth)`` larger."""
        b = self.batch
        while True:
            yield b
            b += math.ceil(b * self.growth) if self.growth > 0 else 0

    def _matrix(self, pool: TopicPool) -> tuple[Any, Any]:
        """(the collection's rows with this pool's rank features appended, the query's row),
        computed once per pool and rank weight (``TopicPool.cache``)."""
        import numpy as np
        import scipy.sparse as sp

        f = pool.features
        assert f is not None
        key = f"cal-matrix:{self.rank_weight}"
        if key not in pool.cache:
            query = f.query_row(pool.query or pool.topic_id)
            if self.rank_weight == 0 or not pool.runs:
                pool.cache[key] = (f.matrix, query)
            else:
                deepest = max((len(v) for v in pool.runs.values()), default=1)
                rows: list[int] = []
                cols: list[int] = []
                vals: list[float] = []
                for j, r in enumerate(pool.runs):
                    for k, d in enumerate(pool.runs[r], 1):
                        i = f.index.get(d)
                        if i is not None:
                            rows.append(i)
                            cols.append(j)
                            vals.append(self.rank_weight * (1.0 - math.log(k) / math.log(deepest + 1)))
                ranks = sp.csr_matrix((vals, (rows, cols)), shape=(f.matrix.shape[0], len(pool.runs)))
                top = sp.csr_matrix(np.full((1, len(pool.runs)), self.rank_weight))
                pool.cache[key] = (sp.hstack([f.matrix, ranks]).tocsr(), sp.hstack([query, top]).tocsr())
        return pool.cache[key]  # type: ignore[no-any-return]

    def _rows(self, pool: TopicPool, docs: Sequence[str]) -> Any:
        f = pool.features
        assert f is not None
        return self._matrix(pool)[0][[f.index[d] for d in docs]]

    def _scores(self, pool: TopicPool, judged: Grades) -> tuple[list[str], Any, Any]:
        """(scored candidates, decision values, the fitted model) for the unjudged documents."""
        import numpy as np
        import scipy.sparse as sp
        import sklearn
        from sklearn.linear_model import LogisticRegression

        f = pool.features
        if f is None:
            raise ValidationError(
                f"strategy 'cal' needs the collection's tf-idf features for topic {pool.topic_id!r}; "
                "build them with tfidf_features()"
            )
        candidates = [d for d in pool.unjudged(judged) if d in f.index]
        query = self._matrix(pool)[1]
        rows: list[Any] = [query]
        labels = [1]
        weights = [1.0]
        known = [d for d in sorted(judged) if d in f.index]
        if known:
            rows.append(self._rows(pool, known))
            labels += [1 if pool.relevant(judged[d]) else 0 for d in known]
            weights += [1.0] * len(known)
        if self.prior_weight > 0:
            prior = [d for d in sorted(pool.prior) if d not in judged and d in f.index]
            if prior:
                rows.append(self._rows(pool, prior))
                labels += [1 if pool.relevant(pool.prior[d]) else 0 for d in prior]
                weights += [self.prior_weight] * len(prior)
        if self.negatives:
            rng = random.Random(f"{self.seed}\x1f{pool.topic_id}\x1f{len(judged)}")
            pooled = set(pool.documents) if self.negatives_from == "outside" else set()
            if pooled:
                pooled.update(d for docs in pool.runs.values() for d in docs)
            free = [d for d in f.doc_ids if d not in judged and d not in pooled]
            drawn = rng.sample(free, min(self.negatives, len(free)))
            if drawn:
                rows.append(self._rows(pool, drawn))
                labels += [0] * len(drawn)
                weights += [1.0] * len(drawn)
        if not candidates:
            return [], np.zeros(0), None
        x_candidates = self._rows(pool, candidates)
        if len(set(labels)) < 2:  # no negative at all: nothing to learn from, query similarity only
            values = np.asarray((x_candidates @ query.T).todense()).ravel()
            return candidates, values, None
        x = sp.vstack(rows).tocsr()
        model = LogisticRegression(C=self.c, solver="liblinear")
        with sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
            model.fit(x, np.asarray(labels), sample_weight=np.asarray(weights))
            values = model.decision_function(x_candidates)
        return candidates, values, model

    def next_documents(self, pool: TopicPool, judged: Grades, n: int) -> list[str]:
        """The ``n`` unjudged documents of highest score after training on ``judged``."""
        check_n(n)
        candidates, values, _model = self._scores(pool, judged)
        position = {d: i for i, d in enumerate(pool.documents)}
        order = sorted(range(len(candidates)), key=lambda i: (-float(values[i]), position[candidates[i]]))
        picked = [candidates[i] for i in order[:n]]
        if len(picked) < n:
            scored = set(candidates)
            picked += [d for d in pool.unjudged(judged) if d not in scored][: n - len(picked)]
        return picked

    def estimate_remaining(self, pool: TopicPool, judged: Grades) -> float | None:
        """Sum of the model's probabilities of relevance over the unjudged documents.

        A rough figure: the presumed non-relevant random documents bias the
        probabilities down, and they are not calibrated. None before the
        first negative evidence (no model is fitted).
        """
        candidates, _values, model = self._scores(pool, judged)
        if model is None:
            return None if candidates else 0.0
        import sklearn

        with sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
            return float(model.predict_proba(self._rows(pool, candidates))[:, 1].sum())
