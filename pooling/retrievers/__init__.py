"""Retrievers (adapters over BM25 and sentence-transformers libraries).

Importing this package is cheap: the heavy libraries (``bm25s``, ``rank_bm25``,
``sentence_transformers``, ``torch``) are imported inside the methods that need
them.

Registry: ``RETRIEVER_KINDS`` maps a kind to its class.
"""

from __future__ import annotations

from pooling.retrievers.base import EmptyQuery, RetrievalResult, Retriever, top_k
from pooling.retrievers.bm25 import BM25_VARIANTS, Bm25Retriever
from pooling.retrievers.dense import DenseRetriever

RETRIEVER_KINDS: dict[str, type[Retriever]] = {
    Bm25Retriever.kind: Bm25Retriever,
    DenseRetriever.kind: DenseRetriever,
}

__all__ = [
    "BM25_VARIANTS",
    "Bm25Retriever",
    "DenseRetriever",
    "EmptyQuery",
    "RETRIEVER_KINDS",
    "RetrievalResult",
    "Retriever",
    "top_k",
]
