"""BM25 over a stored collection, with two backends fed the same tokens.

``rank_bm25`` (``BM25Okapi``) is the reference implementation; ``bm25s`` is the
fast backend (sparse, precomputed per-term scores). Both receive the token lists
of ``pooling.tokenize.Tokenizer``, and positions are mapped back to ``doc_id``s
here. Scores are float64 in both, so equal formulas give equal rankings.

Notation: N documents, n(t) documents containing term t, tf = frequency of t in
document d, |d| its length in tokens, avgdl the mean length,
K = k1 * (1 - b + b * |d| / avgdl). A query term repeated in the query counts
once per occurrence (both backends add its contribution again).

Which documents are retrieved: every document that shares at least one
analysed term (after tokenization, stop words and stemming) with the query is
a candidate, whatever score an idf rule gives it; the top k of the candidates
are returned by score desc, doc_id desc. A document whose terms all have idf 0
(``okapi``: terms in at least half of the documents) scores 0 and ranks below
the others, but it is retrieved. A topic is ``empty`` only when no document
shares a term with its query (or the query has no terms).

Variants (``BM25_VARIANTS``), each with its idf rule:

``okapi`` (default; both backends, identical formula)
    score = sum_t idf(t) * tf * (k1 + 1) / (tf + K),
    idf(t) = max(0, log((N - n + 0.5) / (n + 0.5))): the Robertson/Sparck Jones
    idf, floored at 0 so that a term in more than half of the documents adds
    nothing (it would otherwise lower the score of documents containing it).
    rank_bm25: ``BM25Okapi(k1, b, epsilon=0.0)``: ``_calc_idf`` replaces a
    negative idf by ``epsilon * mean_idf``, i.e. 0.
    bm25s: ``BM25(method="atire", idf_method="robertson")``: the ATIRE tf
    component is exactly tf * (k1 + 1) / (tf + K), and ``_score_idf_robertson``
    clamps the ratio (N - n + 0.5) / (n + 0.5) at 1, i.e. log(1) = 0.
    Source: Robertson et al., "Okapi at TREC-3" (1994) for the idf;
    Kamphuis et al., ECIR 2020 for the floored variant.

``okapi-epsilon`` (rank_bm25 only): rank_bm25's *default*, ``epsilon=0.25``:
    idf(t) = log((N - n + 0.5) / (n + 0.5)), and a *negative* idf is replaced by
    0.25 * (mean idf over the vocabulary), usually a small positive value, so
    very common terms still add to the score (a term with n = N/2 keeps idf 0).
    Source: rank_bm25 ``BM25Okapi._calc_idf`` (dorianbrown/rank_bm25); not in
    the literature. bm25s has no equivalent.

``lucene`` (bm25s only): bm25s' *default*, as in Lucene >= 8:
    idf(t) = log(1 + (N - n + 0.5) / (n + 0.5)) (always > 0),
    tf component tf / (tf + K) (without the (k1 + 1) factor; that factor scales
    every score by the same constant and changes no ranking).
    Source: Lucene ``BM25Similarity.idf``; bm25s ``_score_idf_lucene``;
    Kamphuis et al., ECIR 2020.

Where the defaults differ, and why rankings then differ: rank_bm25 defaults to
k1 = 1.5, b = 0.75, epsilon = 0.25; bm25s to k1 = 1.5, b = 0.75, method "lucene"
(and float32 scores, which turn near-ties into ties or flip them). The two idf
treatments of very common terms (epsilon floor vs. log(1 + ...)) give different
weights to the same query terms, hence different rankings; only ``okapi``
configures both identically (tested in ``tests/pooling/test_bm25.py``).

Source:
    Robertson, Walker, Jones, Hancock-Beaulieu & Gatford, "Okapi at TREC-3" (1994);
    Trotman, Puurula & Burgess, "Improvements to BM25 and language models
    examined", ADCS 2014, doi:10.1145/2682862.2682863 (ATIRE variant);
    Kamphuis, de Vries, Boytsov & Lin, "Which BM25 do you mean?", ECIR 2020,
    doi:10.1007/978-3-030-45442-5_4 (the variants and their idfs);
    Lù, "BM25S: Orders of magnitude faster lexical search via eager sparse
    scoring", arXiv:2407.03618 (2024).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from pooling.retrievers.base import EmptyQuery, Retriever, top_k
from pooling.tokenize import StemmerName, Tokenizer
from workbench.errors import UnknownNameError, ValidationError

Backend = Literal["bm25s", "rank_bm25"]
BACKENDS: tuple[str, ...] = ("bm25s", "rank_bm25")


@dataclass(frozen=True, slots=True)
class Bm25Variant:
    """How one BM25 formula is configured in each backend.

    Attributes:
        name: registry key.
        formula: the scoring formula, for ``--help`` and the run's params.
        rank_bm25_epsilon: ``BM25Okapi(epsilon=...)``, or None if rank_bm25 cannot compute it.
        bm25s_method: ``(method, idf_method)`` of ``bm25s.BM25``, or None if bm25s cannot.
    """

    name: str
    formula: str
    rank_bm25_epsilon: float | None
    bm25s_method: tuple[str, str] | None

    def supports(self, backend: str) -> bool:
        """Whether ``backend`` computes this variant."""
        return (self.rank_bm25_epsilon is not None) if backend == "rank_bm25" else (
            self.bm25s_method is not None)


BM25_VARIANTS: dict[str, Bm25Variant] = {
    v.name: v
    for v in (
        Bm25Variant("okapi", "idf=max(0,log((N-n+0.5)/(n+0.5))); tf*(k1+1)/(tf+K)", 0.0,
                    ("atire", "robertson")),
        Bm25Variant("okapi-epsilon", "idf=log((N-n+0.5)/(n+0.5)), negative -> 0.25*mean idf; "
                    "tf*(k1+1)/(tf+K)", 0.25, None),
        Bm25Variant("lucene", "idf=log(1+(N-n+0.5)/(n+0.5)); tf/(tf+K)", None, ("lucene", "lucene")),
    )
}
"""name -> variant; see the module docstring for the formulas."""


K1_MAX = 1000.0
"""The largest k1 accepted. Tuned values lie in 0.5-3 (Robertson & Zaragoza, "The probabilistic
relevance framework: BM25 and beyond", FnTIR 2009, doi:10.1561/1500000019, section 3.5: 1.2-2.0). From
k1 of about 1000 the tf component tf*(k1+1)/(tf+K) is its k1 -> infinity limit tf/n, n = 1-b+b*|d|/avgdl
(within 1% while tf/n <= 10), so a larger k1 hardly ranks differently, while at very large k1 the
product tf*(k1+1) overflows (``--k1 1e308`` made every score infinite: a run of errors)."""


def check_k1(k1: float) -> float:
    """``k1`` if BM25 accepts it: a finite number in [0, ``K1_MAX``].

    Raises:
        ValidationError: nan, infinite, negative or above ``K1_MAX``.
    """
    if not (isinstance(k1, numbers.Real) and math.isfinite(k1) and 0 <= k1 <= K1_MAX):
        raise ValidationError(f"expected k1 between 0 and {K1_MAX:.0f} (a finite number), found {k1!r}; 0.9-1.5 is usual")
    return k1


def check_b(b: float) -> float:
    """``b`` if BM25 accepts it: a finite number in [0, 1].

    Raises:
        ValidationError: nan, infinite or outside [0, 1].
    """
    if not (isinstance(b, numbers.Real) and math.isfinite(b) and 0 <= b <= 1):
        raise ValidationError(f"expected b in [0, 1], found {b!r}; 0.75 is usual")
    return b


class Bm25Retriever(Retriever):
    """BM25 ranking with a choice of backend and variant.

    Args:
        backend: ``"bm25s"`` (fast, default) or ``"rank_bm25"`` (reference).
        k1: term-frequency saturation, in [0, ``K1_MAX``] (1.2 default; 0.9 in Anserini).
        b: length normalisation in [0, 1] (0.75 default).
        variant: key of ``BM25_VARIANTS`` (``okapi`` default, both backends).
        stemmer: ``None`` (default) or ``"english"`` (Snowball via PyStemmer).
        stopwords: stop-word list of the tokenizer (``english`` = Lucene's 33 words).

    Raises:
        ValidationError: k1 outside [0, ``K1_MAX``], b outside [0, 1] (nan and infinity
            included), or a variant the backend lacks.
        UnknownNameError: unknown backend, variant, stemmer or stop-word list.

    Example:
        >>> docs = {"d1": "supersonic flow", "d2": "heat transfer", "d3": "heat flux"}
        >>> Bm25Retriever().index(docs).retrieve({"q": "flow"}, k=10).run  # log(2.5/1.5)*2.2/2.2
        {'q': {'d1': 0.5108256237659907}}
    """

    kind: ClassVar[str] = "bm25"
    supports_pre_filter: ClassVar[bool] = True

    def __init__(
        self,
        *,
        backend: Backend = "bm25s",
        k1: float = 1.2,
        b: float = 0.75,
        variant: str = "okapi",
        stemmer: StemmerName | None = None,
        stopwords: str = "english",
    ) -> None:
        if backend not in BACKENDS:
            raise UnknownNameError("BM25 backend", backend, BACKENDS)
        if variant not in BM25_VARIANTS:
            raise UnknownNameError("BM25 variant", variant, BM25_VARIANTS)
        spec = BM25_VARIANTS[variant]
        if not spec.supports(backend):
            able = sorted(n for n, v in BM25_VARIANTS.items() if v.supports(backend))
            raise ValidationError(
                f"BM25 variant {variant!r} is not available in backend {backend!r}; "
                f"{backend} supports {', '.join(able)}")
        check_k1(k1)
        check_b(b)
        self.backend: Backend = backend
        self.k1 = float(k1)
        self.b = float(b)
        self.variant = spec
        self.tokenizer = Tokenizer(stopwords=stopwords, stemmer=stemmer).validate()
        self._doc_ids: list[str] = []
        self._engine: Any = None
        self._vocab: dict[str, int] = {}
        # Which documents contain each term (positions, CSR by term id): a document
        # sharing a term with the query is a candidate whatever its score.
        self._post_ptr: np.ndarray = np.zeros(1, np.int64)
        self._post_docs: np.ndarray = np.zeros(0, np.int64)

    @property
    def params(self) -> dict[str, Any]:
        """Backend, k1, b, variant (with its formula) and the tokenizer settings."""
        return {"backend": self.backend, "k1": self.k1, "b": self.b, "variant": self.variant.name,
                "formula": self.variant.formula, **self.tokenizer.params}

    @property
    def n_documents(self) -> int:
        """Number of indexed documents."""
        return len(self._doc_ids)

    def index(self, documents: Mapping[str, str]) -> Bm25Retriever:
        """Tokenize and index doc_id -> text (replaces any previous index)."""
        self._doc_ids = [str(d) for d in documents]
        tokens = self.tokenizer.many(documents.values())
        if not self._doc_ids:
            self._engine = None
            return self
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in tokens]
        if not vocab:
            raise ValidationError("every document is empty after tokenization; nothing to index")
        self._vocab = vocab
        self._index_postings(ids, len(vocab))
        if self.backend == "rank_bm25":
            from rank_bm25 import BM25Okapi  # lazy: adapter-only dependency

            self._engine = BM25Okapi(tokens, k1=self.k1, b=self.b,
                                     epsilon=self.variant.rank_bm25_epsilon)
        else:
            import bm25s  # lazy: adapter-only dependency

            method, idf_method = self.variant.bm25s_method  # type: ignore[misc]
            engine = bm25s.BM25(k1=self.k1, b=self.b, method=method, idf_method=idf_method,
                                dtype="float64")
            engine.index((ids, vocab), create_empty_token=False, show_progress=False)
            self._engine = engine
        return self

    def _index_postings(self, ids: list[list[int]], n_terms: int) -> None:
        """Term id -> sorted positions of the documents containing it (CSR arrays)."""
        lengths = np.fromiter((len(d) for d in ids), dtype=np.int64, count=len(ids))
        terms = np.fromiter((t for d in ids for t in d), dtype=np.int64, count=int(lengths.sum()))
        docs = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
        pairs = np.unique(terms * len(ids) + docs)  # sorted by term, then document; each pair once
        self._post_docs = pairs % len(ids)
        self._post_ptr = np.searchsorted(pairs // len(ids), np.arange(n_terms + 1), side="left")

    def _candidates(self, term_ids: list[int]) -> np.ndarray:
        """Positions of the documents containing at least one of the terms."""
        parts = [self._post_docs[self._post_ptr[t]:self._post_ptr[t + 1]] for t in set(term_ids)]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)

    def _scores(self, query_tokens: list[str], ids: list[int]) -> np.ndarray:
        if self.backend == "rank_bm25":
            return np.asarray(self._engine.get_scores(query_tokens), dtype=np.float64)
        return np.asarray(self._engine.get_scores_from_ids(ids), dtype=np.float64)

    def indexed_doc_ids(self) -> Sequence[str]:
        """The indexed doc ids, in index order."""
        return self._doc_ids

    def _search(self, queries: Sequence[str], k: int) -> list[dict[str, float] | EmptyQuery]:
        return self._search_eligible(queries, k, None)

    def _search_eligible(
        self, queries: Sequence[str], k: int, allowed: np.ndarray | None
    ) -> list[dict[str, float] | EmptyQuery]:
        """Top-k among the allowed documents (bool per indexed document; None = all)."""
        out: list[dict[str, float] | EmptyQuery] = []
        for query in queries:
            tokens = self.tokenizer(query)
            if not tokens:
                out.append(EmptyQuery("the query has no terms after tokenization (only stop words?)"))
                continue
            ids = [self._vocab[t] for t in tokens if t in self._vocab]
            candidates = self._candidates(ids)
            if candidates.size == 0:
                out.append(EmptyQuery("no document matched the query: none contains one of its terms (after tokenization)"))
                continue
            # Every document sharing a term is retrievable, also one an idf rule scores 0 or less
            # (okapi floors a negative idf at 0): it ranks below the others, ties by doc_id.
            out.append(top_k(self._scores(tokens, ids), self._doc_ids, k, candidates=candidates, allowed=allowed))
        return out
