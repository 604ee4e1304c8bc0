"""A tiny deterministic encoder for dense-retrieval tests (no model, no torch)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np


class StubEncoder:
    """Bag-of-words hashed into 64 dimensions, L2-normalised; counts what it encodes.

    Identical texts give identical vectors (so ties are exact), texts sharing
    words get a positive cosine, and ``texts_encoded`` lets tests check the cache.
    """

    def __init__(self, key: str = "stub@sha256:0000") -> None:
        self._key = key
        self.calls = 0
        self.texts_encoded: list[str] = []

    @property
    def model_key(self) -> str:
        return self._key

    def encode(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        self.calls += 1
        self.texts_encoded.extend(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(token.encode()).hexdigest(), 16) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
