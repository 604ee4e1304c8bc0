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

Measures of the whole ranking (trec_eval's summary measures; a cutoff is
optional where ir_measures allows one, ``AP@100``, and refused where the
measure has none, ``Rprec``):

* ``AP``: average precision, the sum over the relevant retrieved documents of
  P@rank, divided by |R| (trec_eval ``map``; ``AP@k`` = trec_eval ``map_cut_k``,
  still divided by |R|). MAP is its macro mean.
* ``Rprec``: precision at rank |R| (trec_eval ``Rprec``): |top-|R| ∩ R| / |R|.
* ``Bpref``: binary preference over judged documents only (trec_eval ``bpref``,
  ``m_bpref.c``): for each judged relevant document retrieved, 1 - min(n, |R|) /
  min(|N|, |R|), n = judged non-relevant documents ranked above it, |N| = judged
  non-relevant documents of the topic (0 <= grade < rel); summed and divided by
  |R|. Unjudged documents and negative grades are skipped (trec_eval reads a
  negative grade as "in the pool, not judged").
* ``RBP(p=0.8)``: rank-biased precision, (1 - p) * sum over the relevant
  retrieved of p^(rank - 1) (Moffat & Zobel, ACM TOIS 2008,
  doi:10.1145/1416950.1416952; trec_eval ``rbp``; ir_measures ``RBP``), binary
  at ``rel``. ``p`` is always written out (ir_measures' default 0.8, trec_eval's
  0.9).
* ``RBP_residual(p=0.8)``: the RBP residual, the most RBP could still rise:
  (1 - p) * sum over the unjudged retrieved of p^(rank - 1), plus p^d for the
  ranks beyond the run's depth d (or beyond k). A report that asks for
  ``RBP(p=...)`` gets it on the next row (``with_residuals``).
* ``NumRelRet``, ``NumRel``, ``NumRet``: counts per topic (trec_eval
  ``num_rel_ret``, ``num_rel``, ``num_ret``; ir_measures names): relevant
  retrieved (``@k``: within k), |R|, documents retrieved (``@k``: min(k,
  retrieved)). Their macro aggregate is the mean per topic, their micro the
  total (trec_eval's ``all`` line prints the total).

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

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import ClassVar, Literal

from workbench.errors import UnknownNameError, ValidationError

DcgKind = Literal["log2", "exp-log2"]
"""Gain of nDCG: ``log2`` = linear gain (trec_eval), ``exp-log2`` = 2^grade - 1."""

CutoffRule = Literal["required", "optional", "none"]
"""Whether a measure takes a cutoff ``@k``: must (``R@k``), may (``AP``, ``AP@k``), must not (``Rprec``)."""

DEFAULT_CUTOFFS: tuple[int, ...] = (5, 10, 20, 50, 100)
"""Cutoffs of the default R@k report."""


MAX_CUTOFF = 1_000_000_000
"""Largest cutoff k accepted (ranks are stored as 32-bit integers)."""


@dataclass(frozen=True, slots=True)
class Measure:
    """Base class of measures: a name, a cutoff and parameters.

    Attributes:
        cutoff: k >= 1; documents ranked below k are ignored. None for a
            measure of the whole ranking (``AP``, ``Rprec``): every document
            the run returned counts, as in trec_eval without ``-M``. A measure
            that needs a cutoff (``R``) declares ``cutoff: int``.

    Class attributes:
        NAME: canonical name (``R``, ``P``, ``nDCG``, ...).
        CUTOFF: ``"required"`` (``R@k``), ``"optional"`` (``AP`` or ``AP@k``)
            or ``"none"`` (``Rprec``: the measure has no cutoff).
        USES_REL: True when the measure depends on the relevance threshold.
        HAS_MICRO: True when sum(numerator) / sum(denominator) is meaningful.
        HAS_CEILING: True when a perfect system's value is below 1 for some topics.
        IS_COUNT: True for a count per topic (``NumRelRet``): its micro
            aggregate is the total over the topics, not a ratio.
        SHOWN: parameters written in the name even at their default
            (``RBP(p=0.8)``: RBP's default p differs between tools).
        ESTIMATED: True when the measure is estimated from a judged sample (``EstimatedMeasure``).
    """

    cutoff: int | None = None

    NAME: ClassVar[str] = ""
    CUTOFF: ClassVar[CutoffRule] = "required"
    USES_REL: ClassVar[bool] = True
    HAS_MICRO: ClassVar[bool] = True
    HAS_CEILING: ClassVar[bool] = False
    IS_COUNT: ClassVar[bool] = False
    SHOWN: ClassVar[tuple[str, ...]] = ()
    ESTIMATED: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if self.cutoff is None:
            if self.CUTOFF == "required":
                raise ValidationError(
                    f"{self.NAME}: expected a measure such as {self.NAME}@10 ({self.NAME} needs a cutoff k), "
                    f"found none. Write e.g. {self.NAME}@10."
                )
            return
        if self.CUTOFF == "none":
            raise ValidationError(
                f"{self.NAME}: expected no cutoff ({self.NAME} has none, as in trec_eval and ir_measures), found "
                f"@{self.cutoff!r}. Write {self.NAME}."
            )
        if (isinstance(self.cutoff, bool) or not isinstance(self.cutoff, int)
                or not 1 <= self.cutoff <= MAX_CUTOFF):
            raise ValidationError(
                f"{self.NAME}: expected a cutoff k in 1..{MAX_CUTOFF:,}, found {self.cutoff!r}. "
                f"Write e.g. {self.NAME}@10."
            )

    def params(self) -> dict[str, object]:
        """Parameters other than the cutoff that differ from their defaults (or are in ``SHOWN``), by name."""
        out: dict[str, object] = {}
        for f in fields(self):
            if f.name == "cutoff":
                continue
            value = getattr(self, f.name)
            if value != f.default or f.name in self.SHOWN:
                out[f.name] = value
        return out

    def effective_rel(self, rel: int) -> int:
        """The inclusive relevance threshold used: the measure's own ``rel`` or ``rel``."""
        own = getattr(self, "rel", None)
        return rel if own is None else int(own)

    def __str__(self) -> str:
        params = self.params()
        inner = ",".join(f"{k}={v!r}" for k, v in sorted(params.items()))
        name = f"{self.NAME}({inner})" if inner else self.NAME
        return name if self.cutoff is None else f"{name}@{self.cutoff}"

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


def _check_rel(name: str, rel: int | None) -> None:
    if rel is not None and (isinstance(rel, bool) or not isinstance(rel, int) or rel < 0):
        raise ValidationError(f"{name}: expected rel to be an integer >= 0, found {rel!r}. Write e.g. {name}(rel=2)@10.")


def _check_p(name: str, p: object) -> None:
    if isinstance(p, bool) or not isinstance(p, float) or not 0.0 < p < 1.0:
        raise ValidationError(
            f"{name}: expected the persistence p to be a number strictly between 0 and 1, found {p!r}. "
            f"Write e.g. {name}(p=0.8)."
        )


# Each @dataclass costs a few tenths of a millisecond at import (it writes and compiles __init__,
# __eq__, __hash__, ...), which every `workbench score` pays; measures that add no field subclass a
# decorated base (_WithRel, _RelAtK) and are plain classes: the same methods, none generated again.


@dataclass(frozen=True, slots=True, repr=False)
class _WithRel(Measure):
    """A measure with its own relevance threshold ``rel`` (None: the evaluation's)."""

    rel: int | None = None

    def __post_init__(self) -> None:
        Measure.__post_init__(self)
        _check_rel(self.NAME, self.rel)


@dataclass(frozen=True, slots=True, repr=False)
class _RelAtK(_WithRel):
    """A measure with a required cutoff and its own relevance threshold (``R(rel=2)@10``)."""

    cutoff: int


class R(_RelAtK):
    """Recall at k: |top-k ∩ R| / |R| (trec_eval ``recall_k``)."""

    __slots__ = ()
    NAME: ClassVar[str] = "R"
    HAS_CEILING: ClassVar[bool] = True


class P(_RelAtK):
    """Precision at k: |top-k ∩ R| / k (trec_eval ``P_k``; k even when fewer were returned)."""

    __slots__ = ()
    NAME: ClassVar[str] = "P"
    HAS_CEILING: ClassVar[bool] = True


class RR(_RelAtK):
    """Reciprocal rank of the first relevant document within k (0 when none)."""

    __slots__ = ()
    NAME: ClassVar[str] = "RR"
    HAS_MICRO: ClassVar[bool] = False


class Success(_RelAtK):
    """1 when any relevant document is in the top k, else 0 (trec_eval ``success_k``)."""

    __slots__ = ()
    NAME: ClassVar[str] = "Success"


@dataclass(frozen=True, slots=True, repr=False)
class nDCG(Measure):  # noqa: N801 - the field's spelling
    """Normalised DCG at k with the strict ideal (all judged grades of the topic)."""

    cutoff: int
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

    cutoff: int
    NAME: ClassVar[str] = "Judged"
    USES_REL: ClassVar[bool] = False


class AP(_WithRel):
    """Average precision: sum over the relevant retrieved of P@rank, divided by |R| (trec_eval ``map``).

    ``AP@k`` counts the relevant documents within k and still divides by |R|
    (trec_eval ``map_cut_k``); its ceiling is min(k, |R|) / |R|.
    """

    __slots__ = ()
    NAME: ClassVar[str] = "AP"
    CUTOFF: ClassVar[CutoffRule] = "optional"
    HAS_MICRO: ClassVar[bool] = False
    HAS_CEILING: ClassVar[bool] = True


class Rprec(_WithRel):
    """R-precision: |top-|R| ∩ R| / |R|, precision at rank |R| (trec_eval ``Rprec``)."""

    __slots__ = ()
    NAME: ClassVar[str] = "Rprec"
    CUTOFF: ClassVar[CutoffRule] = "none"


class Bpref(_WithRel):
    """Binary preference over judged documents only (trec_eval ``bpref``).

    Bpref = (1 / |R|) * sum over the judged relevant retrieved d of
    (1 - min(n_d, |R|) / min(|N|, |R|)), with n_d the judged non-relevant
    documents ranked above d (the term is 1 when n_d = 0) and |N| the judged
    non-relevant documents of the topic, 0 <= grade < rel. Unjudged documents
    and negative grades are skipped, neither relevant nor non-relevant.

    Source:
        Buckley & Voorhees, "Retrieval evaluation with incomplete information",
        SIGIR 2004, doi:10.1145/1008992.1009000; trec_eval ``m_bpref.c``
        (usnistgov/trec_eval: the min(|N|, |R|) normaliser, ``te_form_res_rels``'s
        negative grade = in the pool but unjudged).
    """

    __slots__ = ()
    NAME: ClassVar[str] = "Bpref"
    CUTOFF: ClassVar[CutoffRule] = "none"
    HAS_MICRO: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, repr=False)
class RBP(Measure):
    """Rank-biased precision: (1 - p) * sum over the relevant retrieved of p^(rank - 1) (Moffat & Zobel 2008)."""

    p: float = 0.8
    rel: int | None = None
    NAME: ClassVar[str] = "RBP"
    CUTOFF: ClassVar[CutoffRule] = "optional"
    HAS_MICRO: ClassVar[bool] = False
    SHOWN: ClassVar[tuple[str, ...]] = ("p",)

    def __post_init__(self) -> None:
        Measure.__post_init__(self)
        _check_p(self.NAME, self.p)
        _check_rel(self.NAME, self.rel)


@dataclass(frozen=True, slots=True, repr=False)
class RBPResidual(Measure):
    """RBP's residual: the weight of the unjudged retrieved documents plus p^d beyond the depth d.

    RBP_residual = (1 - p) * sum over the unjudged retrieved (within k) of
    p^(rank - 1) + p^d, d = min(k, returned): the most RBP could still rise if
    every unjudged document and every rank the run did not reach were relevant.
    Named ``RBP_residual(p=...)`` so that ``parse_measure(str(m)) == m``; a
    report of ``RBP(p=...)`` gets it beside the value (``with_residuals``).

    Source:
        Moffat & Zobel, ACM TOIS 2008, doi:10.1145/1416950.1416952 (the
        residual); trec_eval ``m_rbp_resid.c`` (which drops the p^d tail when
        nothing is unjudged, and counts a negative grade as unjudged: not here).
    """

    p: float = 0.8
    NAME: ClassVar[str] = "RBP_residual"
    CUTOFF: ClassVar[CutoffRule] = "optional"
    USES_REL: ClassVar[bool] = False
    HAS_MICRO: ClassVar[bool] = False
    SHOWN: ClassVar[tuple[str, ...]] = ("p",)

    def __post_init__(self) -> None:
        Measure.__post_init__(self)
        _check_p(self.NAME, self.p)


class NumRelRet(_WithRel):
    """Relevant documents retrieved (within k for ``NumRelRet@k``; trec_eval ``num_rel_ret``)."""

    __slots__ = ()
    NAME: ClassVar[str] = "NumRelRet"
    CUTOFF: ClassVar[CutoffRule] = "optional"
    IS_COUNT: ClassVar[bool] = True


class NumRel(_WithRel):
    """|R|, the topic's relevant documents in the qrels (trec_eval ``num_rel``)."""

    __slots__ = ()
    NAME: ClassVar[str] = "NumRel"
    CUTOFF: ClassVar[CutoffRule] = "none"
    IS_COUNT: ClassVar[bool] = True


class NumRet(Measure):
    """Documents retrieved (min(k, retrieved) for ``NumRet@k``; trec_eval ``num_ret``)."""

    __slots__ = ()
    NAME: ClassVar[str] = "NumRet"
    CUTOFF: ClassVar[CutoffRule] = "optional"
    USES_REL: ClassVar[bool] = False
    IS_COUNT: ClassVar[bool] = True


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


for _cls in (R, P, nDCG, RR, Success, Judged, AP, Rprec, Bpref, RBP, RBPResidual, NumRelRet, NumRel, NumRet,
             Rhat, RhatMicro, Phat):
    register(_cls)

# Patterns as text, compiled on first use (``re``'s cache): the default report parses no name.
_SYNTAX = r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*(?:@\s*(\d+))?\s*$"
_PARAM = r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+?)\s*$"
_FLOAT = r"[+-]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][+-]?\d+)?"
"""A decimal number (``0.8``, ``.95``, ``1e-3``)."""


def _param_value(text: str) -> object:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    if re.fullmatch(_FLOAT, text):
        value = float(text)
        if math.isfinite(value):
            return value
    if text in ("True", "False"):
        return text == "True"
    raise ValueError(text)


def parse_measure(text: str) -> Measure:
    """Parse a measure name such as ``R@100``, ``R(rel=2)@100``, ``AP`` or ``RBP(p=0.9)``.

    Args:
        text: ``NAME@k``, ``NAME(param=value,...)@k``, or without ``@k`` for
            a measure whose cutoff is optional or absent (``AP``, ``Rprec``);
            values are integers, decimal numbers or quoted strings. Names are
            case-sensitive (``nDCG``, not ``ndcg``).

    Returns:
        The measure; ``parse_measure(str(m)) == m``.

    Raises:
        UnknownNameError: the name is not in ``REGISTRY`` (the message lists the known names).
        ValidationError: the syntax, a parameter name or a value is not accepted,
            a cutoff is missing where the measure needs one (``R``) or given where
            it has none (``Rprec@10``).

    Example:
        >>> parse_measure("R@100"), parse_measure("AP")
        (Measure('R@100'), Measure('AP'))
        >>> str(parse_measure("nDCG(dcg=\\"exp-log2\\")@10")), str(parse_measure("RBP"))
        ("nDCG(dcg='exp-log2')@10", 'RBP(p=0.8)')
    """
    m = re.match(_SYNTAX, text)
    if not m:
        raise ValidationError(
            f"expected a measure such as R@100, nDCG(dcg='exp-log2')@10 or AP, found {text!r}. "
            f"Write NAME@k or NAME with NAME one of {', '.join(sorted(REGISTRY))}."
        )
    name, inner, cutoff_text = m.group(1), m.group(2), m.group(3)
    cls = REGISTRY.get(name)
    if cls is None:
        raise UnknownNameError("measure", name, REGISTRY)
    allowed = {f.name for f in fields(cls)} - {"cutoff"}
    kwargs: dict[str, object] = {}
    if inner and inner.strip():
        for part in inner.split(","):
            pm = re.match(_PARAM, part)
            if not pm:
                raise ValidationError(f"{text}: expected param=value inside the parentheses, found {part.strip()!r}.")
            key, raw = pm.group(1), pm.group(2)
            if key not in allowed:
                known = ", ".join(sorted(allowed)) or "(none)"
                raise ValidationError(f"{text}: {name} has no parameter {key!r}; its parameters: {known}.")
            if key in kwargs:  # the later value silently won before: say which one is meant
                raise ValidationError(f"{text}: parameter {key!r} given twice; give it once.")
            try:
                kwargs[key] = _param_value(raw)
            except ValueError:
                raise ValidationError(
                    f"{text}: expected an integer or a quoted string (or a decimal number, p=0.8) for {key}, found {raw!r}."
                ) from None
    if "p" in kwargs and isinstance(kwargs["p"], int) and not isinstance(kwargs["p"], bool):
        kwargs["p"] = float(kwargs["p"])  # p=1 reads as 1.0 (and is then refused as out of range)
    return cls(int(cutoff_text) if cutoff_text is not None else None, **kwargs)


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


def measure_forms() -> str:
    """The registered measures as they are written, for help texts (computed from ``REGISTRY``).

    ``@k`` marks a required cutoff, ``[@k]`` an optional one; parameters
    written even at their default are shown with it.

    Example:
        >>> measure_forms().split(", ")[:7]
        ['R@k', 'P@k', 'nDCG@k', 'RR@k', 'Success@k', 'Judged@k', 'AP[@k]']
    """
    forms = []
    for name, cls in REGISTRY.items():
        shown = ",".join(f"{f.name}={f.default!r}" for f in fields(cls) if f.name in cls.SHOWN)
        cut = {"required": "@k", "optional": "[@k]", "none": ""}[cls.CUTOFF]
        forms.append(f"{name}({shown}){cut}" if shown else f"{name}{cut}")
    return ", ".join(forms)


def needs_cutoffs(text: str) -> bool:
    """True when ``text`` names a measure that needs a cutoff and has none (``R``, ``nDCG(dcg='exp-log2')``).

    Such a name is taken at every cutoff of a report (``expand_measures``); a
    name with ``@k``, or of a measure whose cutoff is optional or absent
    (``AP``, ``Rprec``), is taken as written. A text that is not a measure
    name gives False (``parse_measure`` then says what is wrong).

    Example:
        >>> needs_cutoffs("R"), needs_cutoffs("R@10"), needs_cutoffs("AP"), needs_cutoffs("Rprec")
        (True, False, False, False)
    """
    m = re.match(_SYNTAX, text)
    if not m or m.group(3) is not None:
        return False
    cls = REGISTRY.get(m.group(1))
    return cls is not None and cls.CUTOFF == "required"


def expand_measures(texts: Iterable[str], cutoffs: Sequence[int]) -> tuple[Measure, ...]:
    """Parse measure names, taking a name that needs a cutoff and has none at every one of ``cutoffs``.

    Args:
        texts: names (``R``, ``nDCG@10``, ``AP``, ``RBP(p=0.9)``).
        cutoffs: the k of the expanded names, in order.

    Returns:
        The measures, in order, without repeats.

    Raises:
        UnknownNameError, ValidationError: as ``parse_measure``.

    Example:
        >>> [str(m) for m in expand_measures(["R", "AP", "nDCG@10"], [10, 100])]
        ['R@10', 'R@100', 'AP', 'nDCG@10']
    """
    names: list[str] = []
    for text in texts:
        names.extend([f"{text}@{k}" for k in cutoffs] if needs_cutoffs(text) else [text])
    return parse_measures(names)


def with_residuals(measures: Iterable[Measure]) -> tuple[Measure, ...]:
    """``measures`` with each ``RBP``'s residual right after it (unless already asked for).

    A report of RBP shows the residual beside the value: RBP over judged
    documents is a lower bound, RBP + residual the upper one.

    Example:
        >>> [str(m) for m in with_residuals(parse_measures(["RBP(p=0.9)", "AP"]))]
        ['RBP(p=0.9)', 'RBP_residual(p=0.9)', 'AP']
    """
    given = list(measures)
    out: list[Measure] = []
    for m in given:
        if m not in out:
            out.append(m)
        if isinstance(m, RBP):
            residual = RBPResidual(m.cutoff, p=m.p)
            if residual not in given and residual not in out:
                out.append(residual)
    return tuple(out)


def default_measures(cutoffs: Iterable[int] = DEFAULT_CUTOFFS) -> tuple[Measure, ...]:
    """The default report: R@k for each cutoff, then nDCG@10, RR@10, P@10, Success@10, Judged@10.

    Example:
        >>> [str(m) for m in default_measures([10, 100])]
        ['R@10', 'R@100', 'nDCG@10', 'RR@10', 'P@10', 'Success@10', 'Judged@10']
    """
    ks = sorted(set(cutoffs))
    return tuple([R(k) for k in ks] + [nDCG(10), RR(10), P(10), Success(10), Judged(10)])
