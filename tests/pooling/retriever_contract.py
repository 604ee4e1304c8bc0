"""Conformance suite every retriever passes (after pyterrier's ``TransformerTestCase``).

Subclass ``RetrieverContract`` in a ``Test*`` class and implement ``make()``
returning a fresh, un-indexed retriever. The suite checks the guarantees of
``pooling.retrievers.base.Retriever.retrieve``: string doc_ids, at most k
results per topic, finite scores, deterministic tie-breaking by the canonical
rule (score desc, doc_id desc), a status for every topic, a blank or stop-word
query giving status ``empty`` (not a crash), and ``ValidationError`` for a bad k
or an empty index.
"""

from __future__ import annotations

import math

import pytest

from pooling.retrievers.base import Retriever
from workbench.errors import ValidationError

# Three documents share one text: any retriever must tie them, and the canonical
# rule (doc_id descending, string order) ranks them "d9" > "d2" > "d10".
DOCS = {
    "d1": "supersonic flow over a wedge at high mach number",
    "d2": "heat transfer in laminar boundary layers",
    "d9": "heat transfer in laminar boundary layers",
    "d10": "heat transfer in laminar boundary layers",
    "d3": "buckling of thin cylindrical shells under axial compression",
    "d4": "flutter of panels in supersonic flow",
    "d5": "turbulent skin friction on a flat plate",
}
QUERIES = {
    "1": "supersonic flow",
    "2": "laminar heat transfer boundary layers",
    "3": "buckling of shells",
}


class RetrieverContract:
    """Mix into a ``Test*`` class and implement ``make``."""

    def make(self) -> Retriever:
        raise NotImplementedError

    def indexed(self) -> Retriever:
        return self.make().index(DOCS)

    def test_doc_ids_are_strings_scores_finite_and_at_most_k_per_topic(self):
        result = self.indexed().retrieve(QUERIES, k=2)
        assert set(result.run) == set(QUERIES)
        for topic_id, docs in result.run.items():
            assert isinstance(topic_id, str)
            assert 0 < len(docs) <= 2
            assert all(isinstance(d, str) and d in DOCS for d in docs)
            assert all(isinstance(s, float) and math.isfinite(s) for s in docs.values())

    def test_every_topic_gets_a_status(self):
        result = self.indexed().retrieve(QUERIES, k=3)
        assert result.statuses == {t: "ok" for t in QUERIES}
        assert result.messages == {}

    def test_ties_at_the_cutoff_follow_the_canonical_rule_and_repeat(self):
        r = self.indexed()
        first = r.retrieve({"2": QUERIES["2"]}, k=2).run["2"]
        assert list(first) in (["d9", "d2"], ["d2", "d9"])  # dict order is not the contract
        assert set(first) == {"d9", "d2"}  # of three tied copies, "d9" and "d2" rank first
        again = self.indexed().retrieve({"2": QUERIES["2"]}, k=2).run["2"]
        assert again == first

    def test_the_tied_documents_share_one_score(self):
        run = self.indexed().retrieve({"2": QUERIES["2"]}, k=3).run["2"]
        assert set(run) == {"d9", "d2", "d10"}
        assert run["d9"] == run["d2"] == run["d10"]

    def test_blank_query_is_empty_not_a_crash(self):
        result = self.indexed().retrieve({"1": QUERIES["1"], "blank": "   "}, k=3)
        assert result.statuses == {"1": "ok", "blank": "empty"}
        assert result.run["blank"] == {}
        assert result.messages["blank"]

    def test_k_larger_than_the_collection_returns_what_there_is(self):
        result = self.indexed().retrieve({"1": QUERIES["1"]}, k=1000)
        assert 0 < len(result.run["1"]) <= len(DOCS)

    def test_bad_k_and_empty_index_are_refused(self):
        with pytest.raises(ValidationError, match="k"):
            self.indexed().retrieve(QUERIES, k=0)
        with pytest.raises(ValidationError, match="index"):
            self.make().retrieve(QUERIES, k=5)

    def test_params_are_json_serialisable(self):
        import json

        r = self.indexed()
        assert json.loads(json.dumps(r.params)) == r.params
        assert isinstance(r.kind, str) and r.kind
