"""From a model's relevance score to a grade: threshold mappings, fitted or given (PURE).

A mapping is written ``0:<0.3,1:<0.5,2:<0.7,3``: a score below 0.3 is grade 0,
below 0.5 grade 1, below 0.7 grade 2, anything else grade 3. Grades ascend
with the thresholds; ``str`` gives the canonical form and parses back.

``fit_grade_mapping`` fits the thresholds on documents people already judged
by matching distributions: each threshold is placed so that the share of the
model's scores below it equals the share of the people's grades at or below
the grade it closes (quantile matching); ``fit_agreement`` then says how far
the mapped grades agree with the people's (weighted kappa, Krippendorff's
alpha, exact and relevant/non-relevant agreement).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.errors import ValidationError

_BAND = re.compile(r"^\s*(-?\d+)\s*:\s*<\s*(-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*$")


@dataclass(frozen=True)
class GradeMapping:
    """Score thresholds to grades.

    Attributes:
        bands: (grade, upper bound) pairs, bounds non-decreasing and grades
            increasing: a score below the bound (and not below an earlier one)
            gets that grade.
        top: the grade of scores at or above the last bound (greater than every band's grade).

    Example:
        >>> m = parse_grade_mapping("0:<0.3,1:<0.5,2:<0.7,3")
        >>> [m.grade(s) for s in (0.1, 0.3, 0.69, 0.7)], str(m)
        ([0, 1, 2, 3], '0:<0.3,1:<0.5,2:<0.7,3')
    """

    bands: tuple[tuple[int, float], ...]
    top: int

    def __post_init__(self) -> None:
        grades = [g for g, _b in self.bands] + [self.top]
        bounds = [b for _g, b in self.bands]
        if any(b >= a for a, b in zip(grades[1:], grades[:-1], strict=False)) or \
                any(y < x for x, y in zip(bounds, bounds[1:], strict=False)) or \
                any(not math.isfinite(b) for b in bounds):
            raise ValidationError(
                f"grade mapping {self}: expected increasing grades and non-decreasing finite thresholds"
            )

    @property
    def grades(self) -> tuple[int, ...]:
        """Every grade the mapping can give, ascending."""
        return tuple(g for g, _b in self.bands) + (self.top,)

    def grade(self, score: float) -> int:
        """The grade of one score."""
        for g, bound in self.bands:
            if score < bound:
                return g
        return self.top

    def __str__(self) -> str:
        return ",".join([f"{g}:<{_num(b)}" for g, b in self.bands] + [str(self.top)])


def _num(x: float) -> str:
    text = f"{x:.6g}"
    return text if "e" in text or "." in text else text + ".0" if x != int(x) else text


def parse_grade_mapping(text: str) -> GradeMapping:
    """Parse ``0:<0.3,1:<0.5,2:<0.7,3`` (grade:<threshold, ..., top grade).

    Raises:
        ValidationError: bad syntax, grades not increasing, thresholds decreasing.

    Example:
        >>> parse_grade_mapping("0:<0.5,1").grade(0.5)
        1
    """
    parts = [p.strip() for p in (text or "").split(",")]
    if len(parts) < 2 or not re.fullmatch(r"-?\d+", parts[-1]):
        raise ValidationError(
            f"expected a grade mapping such as 0:<0.3,1:<0.5,2:<0.7,3 (grade:<threshold ..., then the top "
            f"grade), found {text!r}"
        )
    bands = []
    for p in parts[:-1]:
        m = _BAND.match(p)
        if not m:
            raise ValidationError(f"grade mapping {text!r}: expected grade:<threshold, found {p!r}")
        bands.append((int(m.group(1)), float(m.group(2))))
    return GradeMapping(tuple(bands), int(parts[-1]))


def fit_grade_mapping(scores: Sequence[float], grades: Sequence[int], scale: Sequence[int]) -> GradeMapping:
    """Thresholds that give the model's scores the people's grade distribution.

    For the grades g_0 < ... < g_m of ``scale``, the threshold closing g_j is
    placed at the p_j quantile of the scores, p_j = share of ``grades`` <= g_j
    (midway between the two scores around it, so ties fall on one side).

    Args:
        scores: the model's score per document.
        grades: the people's grade of the same documents (values of ``scale``).
        scale: the rubric's grades.

    Returns:
        The fitted mapping over ``scale``.

    Raises:
        ValidationError: no documents, lengths differ, or a grade off the scale.

    Source:
        Quantile (histogram) matching of score distributions; the same idea as
        equipercentile equating (Kolen & Brennan, Test Equating, Scaling, and
        Linking, Springer 2014, ch. 2).

    Example:
        >>> str(fit_grade_mapping([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1], [0, 1]))
        '0:<0.5,1'
    """
    if not scores or len(scores) != len(grades):
        raise ValidationError(
            f"fitting grade thresholds needs one score per judged document, found {len(scores)} scores "
            f"and {len(grades)} grades"
        )
    levels = sorted(set(scale))
    off = sorted(set(grades) - set(levels))
    if off:
        raise ValidationError(f"fitting grade thresholds: grades {off} are not on the rubric {levels}")
    s = sorted(float(x) for x in scores)
    n = len(s)
    bands = []
    for g in levels[:-1]:
        k = sum(1 for x in grades if x <= g)
        if k <= 0:
            bound = s[0]
        elif k >= n:
            bound = s[-1] + max(1e-9, abs(s[-1]) * 1e-9)
        else:
            bound = (s[k - 1] + s[k]) / 2.0
        bands.append((g, bound))
    return GradeMapping(tuple(bands), levels[-1])


def check_fit_sample(grades: Sequence[int], *, rel: int = 1) -> None:
    """Refuse a fitting sample whose grades cannot place a relevance threshold.

    Quantile matching gives the model's scores the sample's grade
    distribution. A sample with no grade below ``rel`` (positives-only qrels:
    a list of relevant documents, no non-relevant judgment) places the
    threshold at the lowest score, so nearly every document is called
    relevant, and the fit's agreement, measured on the same sample, is 100%
    by construction. A sample with no grade at or above ``rel`` is the mirror
    case. Either is refused rather than warned about: the mapping it gives
    would be stored as the model assessor's identity and grade every
    document of the pool.

    Args:
        grades: the people's grades of the documents the fit would use.
        rel: the relevance threshold (inclusive).

    Raises:
        ValidationError: no grades, or every grade on one side of ``rel``
            (the message gives the counts and the remedy).

    Example:
        >>> check_fit_sample([0, 1, 2])
        >>> check_fit_sample([1, 1, 2])
        Traceback (most recent call last):
        ...
        workbench.errors.ValidationError: fitting grade thresholds needs judged documents on both sides of grade 1, found 3 relevant (grade >= 1) and none non-relevant: the qrels hold positives only, so a fitted threshold would call nearly every document relevant and agree 100% by construction. Fit on qrels with non-relevant judgments (judged from a pool), or give the thresholds with --grades.
    """
    if not grades:
        raise ValidationError("fitting grade thresholds needs judged documents, found none")
    n_rel = sum(1 for g in grades if g >= rel)
    n_non = len(grades) - n_rel
    if n_non and n_rel:
        return
    if not n_non:
        found = (f"{n_rel:,} relevant (grade >= {rel}) and none non-relevant: the qrels hold positives only, so a "
                 "fitted threshold would call nearly every document relevant")
    else:
        found = (f"{n_non:,} non-relevant (grade < {rel}) and none relevant, so a fitted threshold would call "
                 "nearly every document non-relevant")
    raise ValidationError(
        f"fitting grade thresholds needs judged documents on both sides of grade {rel}, found {found} and agree "
        "100% by construction. Fit on qrels with non-relevant judgments (judged from a pool), or give the "
        "thresholds with --grades.")


@dataclass(frozen=True)
class FitAgreement:
    """How a model's mapped grades agree with people's on the same documents.

    Attributes:
        n_documents: documents compared.
        exact: share with the same grade.
        binary: share on the same side of the relevance threshold.
        kappa: Cohen's kappa with linear weights (None when undefined).
        alpha: Krippendorff's alpha, ordinal (None when undefined).
        rel: the relevance threshold of ``binary``.
    """

    n_documents: int
    exact: float
    binary: float
    kappa: float | None
    alpha: float | None
    rel: int = 1

    def as_dict(self) -> dict[str, float | int | None]:
        """The figures as a JSON-ready mapping."""
        return {"documents": self.n_documents, "exact": self.exact, "binary": self.binary,
                "kappa_linear": self.kappa, "alpha_ordinal": self.alpha, "rel": self.rel}


def fit_agreement(model: Sequence[int], people: Sequence[int], scale: Sequence[int], *, rel: int = 1) -> FitAgreement:
    """Agreement of a model's grades with people's grades of the same documents.

    Raises:
        ValidationError: lengths differ, or a grade is off ``scale``.

    Source:
        Cohen (1968), doi:10.1037/h0026256; Krippendorff (2004), ordinal metric
        (``workbench.judging.agreement``).
    """
    from workbench.judging.agreement import cohen_kappa, krippendorff_alpha

    if len(model) != len(people):
        raise ValidationError(f"expected as many model grades as people's, found {len(model)} and {len(people)}")
    n = len(model)
    pairs = list(zip(model, people, strict=True))
    exact = sum(1 for a, b in pairs if a == b) / n if n else 0.0
    binary = sum(1 for a, b in pairs if (a >= rel) == (b >= rel)) / n if n else 0.0
    kappa = cohen_kappa(pairs, weights="linear").value
    alpha = krippendorff_alpha([{"model": a, "people": b} for a, b in pairs], scale=scale).value
    return FitAgreement(n, exact, binary, kappa, alpha, rel)
