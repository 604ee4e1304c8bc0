"""Content hashes that identify versions (base layer: no I/O, no database).

Each hash is sha256 (hex) over a canonical text form, so equal content gives an
equal hash whatever the input order, and a hash can be recomputed from an
exported file to check it.
"""

from __future__ import annotations

from collections.abc import Mapping

try:  # CPython's own sha256 (hashlib's fallback): the same digest without loading OpenSSL, 2-3 ms of every start-up
    from _sha256 import sha256
except ImportError:  # another interpreter, or Python >= 3.12 (``_sha2``)
    from hashlib import sha256


def qrels_content_hash(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """The content hash of a qrels version.

    sha256 hex over ``f"{topic}\\t{doc}\\t{grade}\\n"`` for every entry, sorted by
    (topic_id, doc_id) as strings.

    Example:
        >>> qrels_content_hash({"1": {"d": 1}}) == qrels_content_hash({"1": {"d": 1}})
        True
    """
    parts: list[str] = []
    for topic in sorted(qrels):  # (topic, doc) pairs are distinct: topics in order, then each topic's docs
        docs = qrels[topic]
        parts.extend([f"{topic}\t{doc}\t{int(docs[doc])}\n" for doc in sorted(docs)])
    digest: str = sha256("".join(parts).encode()).hexdigest()
    return digest
