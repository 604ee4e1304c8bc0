"""Run fusion: reciprocal rank fusion and score-based combination (PURE).

Every method maps a sequence of runs (``Run``: topic_id -> doc_id -> score) to one
fused run of the same shape. Ranks are always those of ``workbench.ranking.ranked``
(score desc, doc_id desc, 1-based), never a file's rank column.

Topics: the fused run holds the union of the input runs' topics; a run without a
topic simply contributes nothing to it. Documents: the union of the documents of
the runs (cut at ``depth`` when given); a document absent from a run contributes 0.

Methods are values with their parameters (``RRF(k=60)``, ``CombSUM(norm="min-max")``)
kept in the ``FUSION_METHODS`` registry; ``fusion_method(name, **params)`` builds
one and an unknown name raises ``UnknownNameError``.

Example:
    >>> rrf([{"t": {"a": 3.0, "b": 2.0}}, {"t": {"b": 9.0}}], k=60)["t"]["b"] == 1/62 + 1/61
    True
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal, Protocol

from workbench.errors import DuplicateNameError, UnknownNameError, ValidationError
from workbench.ranking import ranked
from workbench.types import Run

Normalization = Literal["min-max", "none"]


class FusionMethod(Protocol):
    """A fusion method: a name, its parameters, and ``fuse(runs) -> Run``."""

    name: ClassVar[str]

    def fuse(self, runs: Sequence[Run]) -> dict[str, dict[str, float]]:
        """Fuse the runs into one run (topic_id -> doc_id -> fused score)."""
        ...

    @property
    def params(self) -> dict[str, Any]:
        """Parameters to record with the fused run (JSON-serialisable)."""
        ...


def _topics(runs: Sequence[Run]) -> list[str]:
    seen: dict[str, None] = {}
    for run in runs:
        for topic_id in run:
            seen.setdefault(topic_id, None)
    return sorted(seen)


def _check_depth(depth: int | None) -> None:
    if depth is not None and depth < 1:
        raise ValidationError(f"fusion depth must be >= 1, found {depth}; omit it to use every document")


RRF_K_MAX = 1e6
"""The largest RRF rank constant accepted. The paper's k is 60; at k = 1e6 consecutive ranks still differ
by about 1e-6 of a document's share, but much beyond it 1/(k + rank) stops telling ranks apart (in
float64 from about k = 1e13 they round together), so the fusion degenerates into counting the runs that
hold a document, in doc_id order: never what a larger k was meant to ask."""


def check_rrf_k(k: float) -> float:
    """``k`` if it can be RRF's rank constant: a finite number in [0, ``RRF_K_MAX``].

    Raises:
        ValidationError: nan, infinite, negative or above ``RRF_K_MAX``.
    """
    if not (isinstance(k, numbers.Real) and math.isfinite(k) and 0 <= k <= RRF_K_MAX):
        raise ValidationError(f"expected rrf k between 0 and {RRF_K_MAX:.0f} (a finite number), found {k!r}; the paper uses 60")
    return k


def rrf(runs: Sequence[Run], k: float = 60.0, *, depth: int | None = None) -> dict[str, dict[str, float]]:
    """Reciprocal rank fusion.

    RRF(d) = sum over runs r containing d of 1 / (k + rank_r(d)).

    Args:
        runs: the runs to fuse (at least one).
        k: the rank constant, in [0, ``RRF_K_MAX``] (60 in the paper; larger
            flattens the difference between top and lower ranks).
        depth: only the top ``depth`` documents of each run take part
            (None = all of them).

    Returns:
        topic_id -> doc_id -> fused score, for the union of topics and documents.

    Raises:
        ValidationError: no runs, ``k`` outside [0, ``RRF_K_MAX``] or ``depth < 1``.

    Source:
        Cormack, Clarke & Büttcher, "Reciprocal rank fusion outperforms Condorcet
        and individual rank learning methods", SIGIR 2009, doi:10.1145/1571941.1572114.

    Example:
        >>> rrf([{"t": {"a": 1.0}}, {"t": {"a": 5.0, "b": 9.0}}], k=60)["t"]["a"] == 1/61 + 1/62
        True
    """
    if not runs:
        raise ValidationError("rrf needs at least one run, found none")
    check_rrf_k(k)
    _check_depth(depth)
    fused: dict[str, dict[str, float]] = {}
    for topic_id in _topics(runs):
        acc: dict[str, float] = {}
        for run in runs:
            rows = ranked(run.get(topic_id, {}))
            for row in rows if depth is None else rows[:depth]:
                acc[row.doc_id] = acc.get(row.doc_id, 0.0) + 1.0 / (k + row.rank)
        fused[topic_id] = acc
    return fused


def _normalize(scores: Mapping[str, float], norm: Normalization) -> dict[str, float]:
    if norm == "none":
        return {d: float(s) for d, s in scores.items()}
    if norm == "min-max":
        if not scores:
            return {}
        lo, hi = min(scores.values()), max(scores.values())
        if hi == lo:  # one document, or all tied: every document gets the top value
            return {d: 1.0 for d in scores}
        span = hi - lo
        return {d: (s - lo) / span for d, s in scores.items()}
    raise UnknownNameError("score normalization", str(norm), ("min-max", "none"))


def _combine(
    runs: Sequence[Run], norm: Normalization, depth: int | None, mnz: bool
) -> dict[str, dict[str, float]]:
    if not runs:
        raise ValidationError("score fusion needs at least one run, found none")
    _check_depth(depth)
    fused: dict[str, dict[str, float]] = {}
    for topic_id in _topics(runs):
        acc: dict[str, float] = {}
        hits: dict[str, int] = {}
        for run in runs:
            scores = run.get(topic_id, {})
            if depth is not None:
                scores = {r.doc_id: r.score for r in ranked(scores)[:depth]}
            for doc_id, s in _normalize(scores, norm).items():
                acc[doc_id] = acc.get(doc_id, 0.0) + s
                hits[doc_id] = hits.get(doc_id, 0) + 1
        fused[topic_id] = {d: s * hits[d] for d, s in acc.items()} if mnz else acc
    return fused


def comb_sum(
    runs: Sequence[Run], norm: Normalization = "min-max", *, depth: int | None = None
) -> dict[str, dict[str, float]]:
    """CombSUM: the sum of each run's (normalised) scores.

    CombSUM(d) = sum over runs r containing d of norm_r(s_r(d)), where min-max
    normalisation is (s - min_r) / (max_r - min_r) over run r's documents for the
    topic (after the ``depth`` cut). A run whose documents all have the same score
    gives each of them 1.0.

    Args:
        runs: the runs to fuse (at least one).
        norm: ``"min-max"`` (default) or ``"none"`` (raw scores; only meaningful
            when the runs' scores are on one scale).
        depth: only the top ``depth`` documents of each run take part (None = all).

    Returns:
        topic_id -> doc_id -> fused score.

    Raises:
        ValidationError: no runs or ``depth < 1``.
        UnknownNameError: unknown ``norm``.

    Source:
        Fox & Shaw, "Combination of multiple searches", TREC-2 (1994), NIST SP
        500-215; min-max normalisation as in Lee, SIGIR 1997,
        doi:10.1145/258525.258587.

    Example:
        >>> comb_sum([{"t": {"a": 2.0, "b": 0.0}}, {"t": {"b": 5.0, "c": 1.0}}])["t"]
        {'a': 1.0, 'b': 1.0, 'c': 0.0}
    """
    return _combine(runs, norm, depth, mnz=False)


def comb_mnz(
    runs: Sequence[Run], norm: Normalization = "min-max", *, depth: int | None = None
) -> dict[str, dict[str, float]]:
    """CombMNZ: CombSUM multiplied by the number of runs that retrieved the document.

    CombMNZ(d) = |{r : d in r}| * CombSUM(d).

    Args:
        runs: the runs to fuse (at least one).
        norm: ``"min-max"`` (default) or ``"none"``.
        depth: only the top ``depth`` documents of each run take part (None = all).

    Returns:
        topic_id -> doc_id -> fused score.

    Raises:
        ValidationError: no runs or ``depth < 1``.
        UnknownNameError: unknown ``norm``.

    Source:
        Fox & Shaw, "Combination of multiple searches", TREC-2 (1994), NIST SP 500-215.
    """
    return _combine(runs, norm, depth, mnz=True)


class _Recorded:
    """Gives a fusion value the ``params`` a stored run records: its name and fields."""

    __slots__ = ()
    name: ClassVar[str]

    @property
    def params(self) -> dict[str, Any]:
        """``{"method": <name>, <field>: <value>, ...}`` (JSON-serialisable)."""
        return {"method": self.name, **asdict(self)}  # type: ignore[call-overload]


@dataclass(frozen=True, slots=True)
class RRF(_Recorded):
    """Reciprocal rank fusion as a value: ``RRF(k=60).fuse(runs)``; see ``rrf``."""

    name: ClassVar[str] = "rrf"
    k: float = 60.0
    depth: int | None = None

    def fuse(self, runs: Sequence[Run]) -> dict[str, dict[str, float]]:
        """Fuse ``runs`` with ``rrf(runs, k=self.k, depth=self.depth)``."""
        return rrf(runs, self.k, depth=self.depth)


@dataclass(frozen=True, slots=True)
class CombSUM(_Recorded):
    """CombSUM as a value: ``CombSUM(norm="min-max").fuse(runs)``; see ``comb_sum``."""

    name: ClassVar[str] = "combsum"
    norm: Normalization = "min-max"
    depth: int | None = None

    def fuse(self, runs: Sequence[Run]) -> dict[str, dict[str, float]]:
        """Fuse ``runs`` with ``comb_sum``."""
        return comb_sum(runs, self.norm, depth=self.depth)


@dataclass(frozen=True, slots=True)
class CombMNZ(_Recorded):
    """CombMNZ as a value: ``CombMNZ(norm="min-max").fuse(runs)``; see ``comb_mnz``."""

    name: ClassVar[str] = "combmnz"
    norm: Normalization = "min-max"
    depth: int | None = None

    def fuse(self, runs: Sequence[Run]) -> dict[str, dict[str, float]]:
        """Fuse ``runs`` with ``comb_mnz``."""
        return comb_mnz(runs, self.norm, depth=self.depth)


FUSION_METHODS: dict[str, Callable[..., FusionMethod]] = {}
"""name -> constructor of the fusion method (parameters as keyword arguments)."""


def register_fusion(name: str, factory: Callable[..., FusionMethod]) -> None:
    """Add a fusion method to the registry.

    Raises:
        DuplicateNameError: the name is already registered.
    """
    if name in FUSION_METHODS:
        raise DuplicateNameError(f"fusion method {name!r} is already registered")
    FUSION_METHODS[name] = factory


for _cls in (RRF, CombSUM, CombMNZ):
    register_fusion(_cls.name, _cls)


def fusion_method(name: str, **params: Any) -> FusionMethod:
    """Build a registered fusion method with its parameters.

    Args:
        name: a key of ``FUSION_METHODS`` (``rrf``, ``combsum``, ``combmnz``).
        **params: the method's own parameters (``k`` for rrf, ``norm`` for combsum).

    Returns:
        The method object, e.g. ``RRF(k=60.0, depth=None)``.

    Raises:
        UnknownNameError: ``name`` is not registered.
        ValidationError: a parameter the method does not take.

    Example:
        >>> fusion_method("rrf", k=10)
        RRF(k=10, depth=None)
    """
    if name not in FUSION_METHODS:
        raise UnknownNameError("fusion method", name, FUSION_METHODS)
    try:
        return FUSION_METHODS[name](**params)
    except TypeError as e:
        raise ValidationError(f"fusion method {name!r} does not accept {sorted(params)}: {e}") from e
