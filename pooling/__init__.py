"""Pooling: retrievers, fusion and depth-k pools.

Public names (imported lazily, so ``import pooling`` loads nothing heavy):

* fusion (pure): ``rrf``, ``comb_sum``, ``comb_mnz``, ``RRF``, ``CombSUM``, ``CombMNZ``,
  ``fusion_method``, ``FUSION_METHODS``;
* pools (pure): ``build_pool``, ``extend_pool``, ``pool_statistics``, ``Pool``,
  ``PoolColumns``, ``PoolEntry``, ``Contribution``, ``PoolExtension``, ``PoolStats``;
* tokenizer: ``Tokenizer``;
* retrievers (adapters): ``Bm25Retriever``, ``DenseRetriever``, ``Retriever``,
  ``RetrievalResult``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_PUBLIC = {
    **{n: "pooling.fusion" for n in ("rrf", "comb_sum", "comb_mnz", "RRF", "CombSUM", "CombMNZ",
                                     "fusion_method", "FUSION_METHODS")},
    **{n: "pooling.pool" for n in ("build_pool", "extend_pool", "pool_statistics", "Pool", "PoolColumns",
                                   "PoolEntry", "Contribution", "PoolExtension", "PoolStats")},
    "Tokenizer": "pooling.tokenize",
    **{n: "pooling.retrievers" for n in ("Bm25Retriever", "DenseRetriever", "Retriever", "RetrievalResult")},
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'pooling' has no attribute {name!r}")
