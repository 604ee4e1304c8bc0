"""Measures as values: ``R@100``, ``nDCG@10``, ``RR(rel=2)@10``; a registry of names.

What a measure *is* lives here; who computes it lives in ``evaluate`` (the fast
columnar scorer) and ``reference`` (the small pure-Python one). A measure is a
frozen, hashable dataclass; ``str(m)`` is its canonical name and
``parse_measure(str(m)) == m``. Names and parameters follow ir_measures.

* ``R@k``: TREC recall, |top-k ∩ R| / |R| (trec_eval ``recall_k``).
* ``P@k``: |top-k ∩ R| / k, the denominator is k even when fewer than k
  documents were returned (trec_eval ``P_k``).
* ``nDCG@k``: DCG@k / IDCG@k with the strict ideal built from every judged
  grade of the topic; gain = grade (``dcg='log2'``, trec_eval ``ndcg_cut``) or
  2^grade - 1 (``dcg='exp-log2'``, Burges et al., ICML 2005,
  doi:10.1145/1102351.1102363); discount log2(rank + 1); negative grades give
  gain 0. The ``rel`` threshold does not apply to gains (trec_eval ignores
  ``relevance_level`` in ``ndcg_cut``).
* ``RR@k``: 1 / rank of the first relevant document within k, else 0
  (ir_measures ``RR@k``; trec_eval ``recip_rank`` on a run cut at k).
* ``Success@k``: 1 if any relevant document is in the top k, else 0
  (trec_eval ``success_k``).
* ``Judged@k``: share of the documents actually returned in the top k that
  have any judgment, negative grades included; the denominator is
  min(k, documents returned) (ir_measures ``Judged@k``, after OpenNIR).

``rel`` (inclusive minimum grade for "relevant") defaults to ``None``, meaning
"the evaluation's threshold" (``--rel``, default 1). Negative grades are never
relevant.

**Estimated measures** (``ESTIMATED``) are not computed from qrels but
estimated from a judged stratified sample (``scoring.estimate``, sampled
judging): ``Rhat@k`` (displayed R̂@k: the mean over topics of R̂_k / R̂),
``Rhat_micro@k`` (R̂@k (micro): the combined ratio sum R̂_k / sum R̂) and
``Phat@k`` (P̂@k = R̂_k / k). They are measured only against a qrels version
published from a sample pool, each beside its pooled counterpart (``POOLED``:
R@k, R@k, P@k); the pooled scorers refuse them. They take the evaluation's
threshold and no parameter. xinfAP, infNDCG@k and infAP are estimated too but
are not measures here: they have no design variance, so nothing (``compare``,
``gate``) could give their change an interval.

Source:
    ir_measures naming and parameter syntax (MacAvaney, Macdonald & Ounis,
    ECIR 2022, doi:10.1007/978-3-030-99739-7_38); trec_eval measure
    definitions (usnistgov/trec_eval ``m_*.c``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import ClassVar, Literal

from workbench.errors import UnknownNameError, ValidationError

DcgKind = Literal["log2", "exp-log2"]
"""Gain of nDCG: ``log2`` = linear gain (trec_eval), ``exp-log2`` = 2^grade - 1."""

DEFAULT_CUTOFFS: tuple[int, ...] = (5, 10, 20, 50, 100)
"""Cutoffs of the default R@k report."""


MAX_CUTOFF = 1_000_000_000
"""Largest cutoff k accepted (ranks are stored as 32-bit integers)."""


@dataclass(frozen=True, slots=True)
class Measure:
    """Base class of measures: a name, a cutoff and parameters.

    Attributes:
        cutoff: k >= 1; documents ranked below k are ignored.

    Class attributes:
        NAME: canonical name (``R``, ``P``, ``nDCG``, ...).
        USES_REL: True when the measure depends on the relevance threshold.
        HAS_MICRO: True when sum(numerator) / sum(denominator) is meaningful.
        HAS_CEILING: True when a perfect system's value is below 1 for some topics.
        ESTIMATED: True when the measure is estimated from a judged sample (``EstimatedMeasure``).
    """

    cutoff: int

    NAME: ClassVar[str] = ""
    USES_REL: ClassVar[bool] = True
    HAS_MICRO: ClassVar[bool] = True
    HAS_CEILING: ClassVar[bool] = False
    ESTIMATED: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if (isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int)
                or not 1 <= self.cutoff <= MAX_CUTOFF):
            raise ValidationError(
                f"{self.NAME}: expected a cutoff k in 1..{MAX_CUTOFF:,}, found {self.cutoff!r}. "
                f"Write e.g. {self.NAME}@10."
            )

    def params(self) -> dict[str, object]:
        """Parameters other than the cutoff that differ from their defaults, by name."""
        out: dict[str, object] = {}
        for f in fields(self):
            if f.name == "cutoff":
                continue
            value = getattr(self, f.name)
            if value != f.default:
                out[f.name] = value
        return out

    def effective_rel(self, rel: int) -> int:
        """The inclusive relevance threshold used: the measure's own ``rel`` or ``rel``."""
        own = getattr(self, "rel", None)
        return rel if own is None else int(own)

    def __str__(self) -> str:
        params = self.params()
        inner = ",".join(f"{k}={v!r}" for k, v in sorted(params.items()))
        return f"{self.NAME}({inner})@{self.cutoff}" if inner else f"{self.NAME}@{self.cutoff}"

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


def _check_rel(name: str, rel: int | None) -> None:
    if rel is not None and (isinstance(rel, bool) or not isinstance(rel, int) or rel < 0):
        raise ValidationError(f"{name}: expected rel to be an integer >= 0, found {rel!r}. Write e.g. {name}(rel=2)@10.")


@dataclass(frozen=True, slots=True, repr=False)
class R(Measure):
    """Recall at k: |top-k ∩ R| / |R| (trec_eval ``recall_k``)."""

    rel: int | None = None
    NAME: ClassVar[str] = "R"
    HAS_CEILING: ClassVar[bool] = True

    def __post_init__(self) -> None:
        Measure.__post_init__(self)
        _check_rel(self.NAME, self.rel)


@dataclass(frozen=True, slots=True, repr=False)
class P(Measure):
    """Precision at k: |top-k ∩ R| / k (trec_eval ``P_k``; k even when fewer were returned)."""

    rel: int | None = None
    NAME: ClassVar[str] = "P"
    HAS_CEILING: ClassVar[bool] = True

    def __post_init__(self) -> None:
        Measure.__post_init__(self)
        _check_rel(self.NAME, self.rel)


@dataclass(frozen=True, slots=True, repr=False)
class RR(Measure):
    """Reciprocal rank of the first relevant document within k (0 when none)."""

    rel: int | None = None
    NAME: ClassVar[str] = "RR"
    HAS_MICRO: ClassVar[bool] = False

    def __post_init__(self) -> None:
        Measure.__post_init__(self)
        _check_rel(self.NAME, self.rel)


@dataclass(frozen=True, slots=True, repr=False)
class Success(Measure):
    """1 when any relevant document is in the top k, else 0 (trec_eval ``success_k``)."""

    rel: int | None = None
    NAME: ClassVar[str] = "Success"

    def __post_init__(self) -> None:
        Measure.__post_init__(self)
        _check_rel(self.NAME, self.rel)


@dataclass(frozen=True, slots=True, repr=False)
class nDCG(Measure):  # noqa: N801 - the field's spelling
    """Normalised DCG at k with the strict ideal (all judged grades of the topic)."""

    dcg: DcgKind = "log2"
    NAME: ClassVar[str] = "nDCG"
    USES_REL: ClassVar[bool] = False

    def __post_init__(self) -> None:
        Measure.__post_init__(self)
        if self.dcg not in ("log2", "exp-log2"):
            raise ValidationError(
                f"nDCG: expected dcg to be 'log2' or 'exp-log2', found {self.dcg!r}. Write e.g. nDCG(dcg='exp-log2')@10."
            )


@dataclass(frozen=True, slots=True, repr=False)
class Judged(Measure):
    """Share of the returned top-k documents that have any judgment (ir_measures ``Judged@k``)."""

    NAME: ClassVar[str] = "Judged"
    USES_REL: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, repr=False)
class EstimatedMeasure(Measure):
    """Base class of the measures estimated from a judged sample (module docstring).

    Class attributes:
        POOLED: the pooled measure it is estimated beside (R for R̂@k, P for P̂@k).
        ESTIMATE: the estimate's name in a score report's estimates without ``@k`` (``Rhat``, ``Phat``).
        AGGREGATE: ``macro`` (mean of per-topic estimates) or ``micro`` (combined ratio over topics).
        DISPLAY: how reports write it (``R̂``, ``P̂``).
    """

    ESTIMATED: ClassVar[bool] = True
    HAS_MICRO: ClassVar[bool] = False
    POOLED: ClassVar[type[Measure]] = R
    ESTIMATE: ClassVar[str] = ""
    AGGREGATE: ClassVar[str] = "macro"
    DISPLAY: ClassVar[str] = ""

    @property
    def pooled(self) -> Measure:
        """The pooled counterpart at the same cutoff (``Rhat@20`` -> ``R@20``)."""
        return self.POOLED(self.cutoff)

    @property
    def estimate_name(self) -> str:
        """The estimate's name in a score report (``Rhat@20`` for both ``Rhat@20`` and ``Rhat_micro@20``)."""
        return f"{self.ESTIMATE}@{self.cutoff}"

    def display(self) -> str:
        """How reports write it: ``R̂@20``, ``R̂@20 (micro)``, ``P̂@10``."""
        return f"{self.DISPLAY}@{self.cutoff}" + (" (micro)" if self.AGGREGATE == "micro" else "")


@dataclass(frozen=True, slots=True, repr=False)
class Rhat(EstimatedMeasure):
    """R̂@k macro: the mean over topics of R̂_k / R̂ (Horvitz-Thompson, ``scoring.estimate``)."""

    NAME: ClassVar[str] = "Rhat"
    POOLED: ClassVar[type[Measure]] = R
    ESTIMATE: ClassVar[str] = "Rhat"
    DISPLAY: ClassVar[str] = "R̂"


@dataclass(frozen=True, slots=True, repr=False)
class RhatMicro(EstimatedMeasure):
    """R̂@k micro: the combined ratio sum_t R̂_k,t / sum_t R̂_t (``scoring.estimate.micro_recall``)."""

    NAME: ClassVar[str] = "Rhat_micro"
    POOLED: ClassVar[type[Measure]] = R
    ESTIMATE: ClassVar[str] = "Rhat"
    AGGREGATE: ClassVar[str] = "micro"
    DISPLAY: ClassVar[str] = "R̂"


@dataclass(frozen=True, slots=True, repr=False)
class Phat(EstimatedMeasure):
    """P̂@k macro: the mean over topics of R̂_k / k."""

    NAME: ClassVar[str] = "Phat"
    POOLED: ClassVar[type[Measure]] = P
    ESTIMATE: ClassVar[str] = "Phat"
    DISPLAY: ClassVar[str] = "P̂"


def pooled_measures(measures: Iterable[Measure]) -> tuple[Measure, ...]:
    """The measures with each estimated one replaced by its pooled counterpart (order kept, repeats dropped).

    Example:
        >>> [str(m) for m in pooled_measures(parse_measures(["Rhat@20", "R@20", "Rhat_micro@20", "nDCG@10"]))]
        ['R@20', 'nDCG@10']
    """
    return tuple(dict.fromkeys(m.pooled if isinstance(m, EstimatedMeasure) else m for m in measures))


REGISTRY: dict[str, type[Measure]] = {}
"""Measure name -> class. Add with ``register``; names are unique."""


def register(cls: type[Measure]) -> type[Measure]:
    """Add a measure class to ``REGISTRY`` under ``cls.NAME``.

    Raises:
        ValueError: the name is empty or already registered (a programming error).
    """
    if not cls.NAME or cls.NAME in REGISTRY:
        raise ValueError(f"measure name {cls.NAME!r} is empty or already registered")
    REGISTRY[cls.NAME] = cls
    return cls


for _cls in (R, P, nDCG, RR, Success, Judged, Rhat, RhatMicro, Phat):
    register(_cls)

_SYNTAX = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*@\s*(\d+)\s*$")
_PARAM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+?)\s*$")


def _param_value(text: str) -> object:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if text in ("True", "False"):
        return text == "True"
    raise ValueError(text)


def parse_measure(text: str) -> Measure:
    """Parse a measure name such as ``R@100``, ``R(rel=2)@100`` or ``nDCG(dcg='exp-log2')@10``.

    Args:
        text: ``NAME@k`` or ``NAME(param=value,...)@k``; values are integers
            or quoted strings. Names are case-sensitive (``nDCG``, not ``ndcg``).

    Returns:
        The measure; ``parse_measure(str(m)) == m``.

    Raises:
        UnknownNameError: the name is not in ``REGISTRY`` (the message lists the known names).
        ValidationError: the syntax, a parameter name or a value is not accepted.

    Example:
        >>> parse_measure("R@100")
        Measure('R@100')
        >>> str(parse_measure("nDCG(dcg=\\"exp-log2\\")@10"))
        "nDCG(dcg='exp-log2')@10"
    """
    m = _SYNTAX.match(text)
    if not m:
        raise ValidationError(
            f"expected a measure such as R@100 or nDCG(dcg='exp-log2')@10, found {text!r}. "
            f"Write NAME@k with NAME one of {', '.join(sorted(REGISTRY))}."
        )
    name, inner, cutoff = m.group(1), m.group(2), int(m.group(3))
    cls = REGISTRY.get(name)
    if cls is None:
        raise UnknownNameError("measure", name, REGISTRY)
    allowed = {f.name for f in fields(cls)} - {"cutoff"}
    kwargs: dict[str, object] = {}
    if inner and inner.strip():
        for part in inner.split(","):
            pm = _PARAM.match(part)
            if not pm:
                raise ValidationError(f"{text}: expected param=value inside the parentheses, found {part.strip()!r}.")
            key, raw = pm.group(1), pm.group(2)
            if key not in allowed:
                known = ", ".join(sorted(allowed)) or "(none)"
                raise ValidationError(f"{text}: {name} has no parameter {key!r}; its parameters: {known}.")
            try:
                kwargs[key] = _param_value(raw)
            except ValueError:
                raise ValidationError(
                    f"{text}: expected an integer or a quoted string for {key}, found {raw!r}."
                ) from None
    return cls(cutoff, **kwargs)


def parse_measures(texts: Iterable[str | Measure]) -> tuple[Measure, ...]:
    """Parse several measures, keeping order and dropping repeats.

    Raises:
        UnknownNameError, ValidationError: as ``parse_measure``.
    """
    out: list[Measure] = []
    for t in texts:
        m = t if isinstance(t, Measure) else parse_measure(t)
        if m not in out:
            out.append(m)
    return tuple(out)


def default_measures(cutoffs: Iterable[int] = DEFAULT_CUTOFFS) -> tuple[Measure, ...]:
    """The default report: R@k for each cutoff, then nDCG@10, RR@10, P@10, Success@10, Judged@10.

    Example:
        >>> [str(m) for m in default_measures([10, 100])]
        ['R@10', 'R@100', 'nDCG@10', 'RR@10', 'P@10', 'Success@10', 'Judged@10']
    """
    ks = sorted(set(cutoffs))
    return tuple([R(k) for k in ks] + [nDCG(10), RR(10), P(10), Success(10), Judged(10)])
