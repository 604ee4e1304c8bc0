"""Release-gate policies: a TOML file, parsed and validated, every error with file:line.

A policy says what a candidate run must do, against a baseline, to ship. Its
tables and keys (``examples/gate.toml`` is a commented example)::

    [gate]                      # required
    k = 20                      # serving cutoff K (required): R@K is the gate's recall
    measures = ["R@20", "nDCG@10"]   # gated measures (default ["R@K"]); against a sample's qrels
                                # version also estimated ones, "Rhat@20", "Rhat_micro@20", "Phat@10":
                                # [macro] then bounds the lower end of the interval of their change
                                # (scoring.gate: the design variance of the difference; they need [macro])
    rel = 1                     # inclusive minimum grade of a relevant document
    correction = "holm"         # holm | bonferroni | none (multiple comparisons)
    decide = "corrected"        # corrected | raw: which p-values and intervals decide
    min_topics = 5              # fewer paired topics: invalid, no statistics
    min_topic_share = 0.9       # fewer evaluated / eligible topics: invalid

    [macro]                     # allowed macro change, for every gated measure
    min_ci_low = -0.01          # required: lower end of the CI of candidate - baseline must be >= it
    confidence = 0.95
    resamples = 10000
    seed = 0
    [macro.bounds]              # optional per-measure bounds
    "nDCG@10" = -0.02

    [permutation]               # optional: fail when the candidate is significantly worse
    alpha = 0.05                # fail if mean change < 0 and p < alpha
    resamples = 10000
    seed = 0

    [critical]                  # losing any relevant document within K fails the gate
    topics = ["1", "8"]         # topic ids (strings), and/or
    where = { priority = "critical" }   # a topic-metadata selector (value or list of values)

    [[floor]]                   # slice floors (repeatable)
    by = "n_relevant"           # slice key: derived (query_length, n_relevant, pool_coverage) or metadata
    min = 0.3                   # every slice's candidate macro value must reach it
    measure = "R@20"            # default R@K
    values = ["6-20", ">20"]    # optional: only these slices

    [slices]
    by = ["query_length"]       # slices reported (floor keys are added)
    min_topics = 5              # smaller slices: listed, no statistics, no floor verdict

    [validity]                  # below a threshold the gate is invalid (exit 2), not failed
    completion = 1.0            # share of evaluated topics each run answered (status ok)
    id_coverage = 1.0           # share of judged-relevant ids in the run's collection version
    run_id_coverage = 1.0       # share of the run's ids in it
    id_audit = "required"       # required | when-available (files with no collection)
    leakage = "invalid"         # invalid | exclude | off: topics whose query is a near-copy of a document
    leakage_threshold = 0.8     # containment of the query's word 3-grams in one document
    leaks = "fail"              # fail | off: ineligible documents a run returned (metadata filters)

Unknown tables and keys are errors (a typo must not weaken a gate silently);
values are type- and range-checked. Syntax errors keep tomllib's line;
semantic errors name the line of the offending key (or its table).

Source:
    Paired release gates: the recall-testing design note
    (../shared/seeds/004_f124302079e96b46.txt, "Set paired release gates").
    TOML 1.0 (toml.io), read with the standard library's ``tomllib``.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from workbench.errors import InputFormatError, UnknownNameError, ValidationError, cut, shown
from workbench.scoring.measures import EstimatedMeasure, Measure, R, needs_cutoffs, parse_measure
from workbench.scoring.multiple import CORRECTIONS
from workbench.scoring.results import MIN_TOPICS
from workbench.scoring.validity import SUBSET_SHARE
from workbench.text import NESTING_MAX, nesting_error

Decide = Literal["corrected", "raw"]
LeakageAction = Literal["invalid", "exclude", "off"]
AuditMode = Literal["required", "when-available"]


@dataclass(frozen=True)
class MacroRule:
    """Allowed macro change: the lower end of the paired bootstrap CI of candidate - baseline.

    Attributes:
        min_ci_low: default bound for every gated measure.
        bounds: measure -> its own bound.
        confidence: the interval's level before correction.
        resamples: bootstrap resamples.
        seed: random seed.
        line: the policy line of ``[macro]``.
    """

    min_ci_low: float
    bounds: Mapping[Measure, float]
    confidence: float = 0.95
    resamples: int = 10_000
    seed: int = 0
    line: int = 0

    def bound(self, m: Measure) -> float:
        """The bound of measure ``m``."""
        return self.bounds.get(m, self.min_ci_low)


@dataclass(frozen=True)
class PermutationRule:
    """Fail when the candidate is worse (mean change < 0) with p < alpha.

    Attributes:
        alpha: significance level, in (0, 1).
        resamples: random sign assignments (exact when 2^n <= resamples).
        seed: random seed.
        line: the policy line of ``[permutation]``.
    """

    alpha: float
    resamples: int = 10_000
    seed: int = 0
    line: int = 0


@dataclass(frozen=True)
class CriticalRule:
    """Topics on which losing any relevant document within K fails the gate.

    Attributes:
        topics: topic ids named in the policy.
        where: topic-metadata key -> accepted values (a topic matching every key is critical).
        line: the policy line of ``[critical]``.
    """

    topics: tuple[str, ...] = ()
    where: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    line: int = 0

    def selects(self, topic_id: str, metadata: Mapping[str, object]) -> bool:
        """Whether the topic is critical (named, or matches the selector).

        Example:
            >>> r = CriticalRule(("7",), {"priority": ("critical",)})
            >>> r.selects("7", {}), r.selects("8", {"priority": "critical"}), r.selects("9", {"priority": "low"})
            (True, True, False)
        """
        if topic_id in self.topics:
            return True
        if not self.where:
            return False
        return all(k in metadata and _text(metadata[k]) in vs for k, vs in self.where.items())


def _text(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class SliceFloor:
    """A minimum macro value of the candidate on every slice of a key.

    Attributes:
        by: the slice key.
        minimum: the floor (inclusive).
        measure: the measure.
        values: only these slices (empty = all of the key's slices).
        min_topics: slices with fewer topics get no verdict.
        line: the policy line of this ``[[floor]]``.
    """

    by: str
    minimum: float
    measure: Measure
    values: tuple[str, ...] = ()
    min_topics: int = MIN_TOPICS
    line: int = 0


@dataclass(frozen=True)
class Validity:
    """Thresholds below which the gate is invalid.

    Attributes:
        completion: minimum completion rate of each run.
        id_coverage: minimum share of judged-relevant ids in the collection version.
        run_id_coverage: minimum share of each run's ids in it.
        id_audit: ``required`` (no collection to audit against: invalid) or
            ``when-available`` (then the audit is skipped and said so).
        leakage: ``invalid`` | ``exclude`` (flagged topics are left out) | ``off``.
        leakage_threshold: containment threshold of the leakage check.
        leakage_ngram: n-gram size of the leakage check.
        leaks: ``fail`` (any ineligible document returned fails the gate) | ``off``.
    """

    completion: float = 1.0
    id_coverage: float = 1.0
    run_id_coverage: float = 1.0
    id_audit: AuditMode = "required"
    leakage: LeakageAction = "invalid"
    leakage_threshold: float = 0.8
    leakage_ngram: int = 3
    leaks: Literal["fail", "off"] = "fail"


@dataclass(frozen=True)
class GatePolicy:
    """A parsed, validated release-gate policy (see the module docstring for the file).

    Attributes:
        path: the policy file.
        name: the policy's name (default the file's name).
        k: the serving cutoff K.
        measures: the gated measures (R@K first when given).
        rel: inclusive minimum grade of a relevant document.
        correction: multiple-comparison correction.
        decide: ``corrected`` or ``raw``.
        min_topics: fewest paired topics for statistics (fewer: invalid).
        min_topic_share: fewest evaluated / eligible topics (fewer: invalid).
        macro: the macro-change rule, or None.
        permutation: the permutation rule, or None.
        critical: the critical-topics rule.
        floors: slice floors.
        slices: slice keys reported (floor keys included).
        slice_min_topics: slices with fewer topics are too small for statistics.
        validity: validity thresholds.
        content: the file's text (its hash is recorded with the gate's result).
    """

    path: str
    k: int
    measures: tuple[Measure, ...]
    name: str = ""
    rel: int = 1
    correction: str = "holm"
    decide: Decide = "corrected"
    min_topics: int = MIN_TOPICS
    min_topic_share: float = SUBSET_SHARE
    macro: MacroRule | None = None
    permutation: PermutationRule | None = None
    critical: CriticalRule = field(default_factory=CriticalRule)
    floors: tuple[SliceFloor, ...] = ()
    slices: tuple[str, ...] = ()
    slice_min_topics: int = MIN_TOPICS
    validity: Validity = field(default_factory=Validity)
    content: str = ""

    @property
    def recall(self) -> Measure:
        """R@K, the gate's recall (critical topics and the diff list use it)."""
        return R(cutoff=self.k)

    @property
    def scored_measures(self) -> tuple[Measure, ...]:
        """Every measure the gate needs: R@K, the gated ones and the floors' (each once)."""
        out = [self.recall, *self.measures, *(f.measure for f in self.floors)]
        return tuple(dict.fromkeys(out))


# -- line numbers of keys -----------------------------------------------------------------

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*((?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+)(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+))*)\s*=""")
_PART = re.compile(r""""([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+)""")


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(a or b or c for a, b, c in _PART.findall(dotted))


class KeyLines:
    """Where each table and key of a TOML text is written (1-based lines).

    Paths are tuples: ``("gate", "k")``, ``("floor", 0, "min")`` for the first
    ``[[floor]]``. Unknown paths fall back to their nearest known parent, then 0.

    Example:
        >>> kl = KeyLines('[gate]\\nk = 5\\n[[floor]]\\nmin = 0.3\\n[[floor]]\\nmin = 0.4\\n')
        >>> kl.line(("gate", "k")), kl.line(("floor", 1, "min")), kl.line(("floor", 1, "by"))
        (2, 6, 5)
    """

    def __init__(self, text: str) -> None:
        self.lines: dict[tuple[Any, ...], int] = {}
        table: tuple[Any, ...] = ()
        counts: dict[tuple[Any, ...], int] = {}
        depth = 0  # open brackets of a multi-line array or inline table
        for lineno, raw in enumerate(text.splitlines(), 1):
            if depth == 0:
                h = _HEADER.match(raw)
                if h:
                    path = _parts(h.group(2))
                    if h.group(1) == "[[":
                        i = counts.get(path, 0)
                        counts[path] = i + 1
                        table = (*path, i)
                    else:
                        table = path
                    self.lines.setdefault(table, lineno)
                    continue
                k = _KEY.match(raw)
                if k:
                    self.lines.setdefault((*table, *_parts(k.group(1))), lineno)
            depth = max(0, depth + _bracket_balance(raw))

    def line(self, path: Sequence[Any]) -> int:
        """The line of ``path``, else of its nearest parent, else 0."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return 0


def _bracket_balance(line: str) -> int:
    """Opening minus closing brackets outside strings and comments (for multi-line arrays)."""
    n = 0
    quote = ""
    for ch in line:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            break
        elif ch in "[{":
            n += 1
        elif ch in "]}":
            n -= 1
    return n


# -- parsing ------------------------------------------------------------------------------

_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)")

_TABLES: dict[str, tuple[str, ...]] = {
    "gate": ("name", "k", "measures", "rel", "correction", "decide", "min_topics", "min_topic_share"),
    "macro": ("min_ci_low", "confidence", "resamples", "seed", "bounds"),
    "permutation": ("alpha", "resamples", "seed"),
    "critical": ("topics", "where"),
    "floor": ("by", "min", "measure", "values", "min_topics"),
    "slices": ("by", "min_topics"),
    "validity": ("completion", "id_coverage", "run_id_coverage", "id_audit", "leakage", "leakage_threshold",
                 "leakage_ngram", "leaks"),
}


class _Reader:
    """Typed access to the parsed document, raising InputFormatError at the key's line."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.where = KeyLines(text)

    def error(self, at: Sequence[Any], problem: str) -> InputFormatError:
        return InputFormatError(self.path, self.where.line(at), problem)

    def known(self, table: Mapping[str, Any], at: tuple[Any, ...], allowed: Sequence[str]) -> None:
        for key in table:
            if key not in allowed:
                name = ".".join(str(x) for x in at if not isinstance(x, int))
                raise self.error((*at, key), f"unknown key {shown(key)} in [{name}]; expected one of "
                                             f"{', '.join(allowed)}.")

    def table(self, doc: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
        value = doc.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise self.error((key,), f"expected [{key}] to be a table, found {_kind(value)}.")
        return value

    def integer(self, t: Mapping[str, Any], at: tuple[Any, ...], key: str, default: int | None, low: int,
                high: int | None = None) -> int:
        if key not in t:
            if default is None:
                raise self.error(at, f"missing required key {key!r}; add e.g. `{key} = {low}`.")
            return default
        v = t[key]
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.error((*at, key), f"{key}: expected an integer, found {_kind(v)} {shown(v)}.")
        if v < low or (high is not None and v > high):
            rng = f">= {low}" if high is None else f"in {low}..{high}"
            raise self.error((*at, key), f"{key}: expected an integer {rng}, found {v}.")
        return v

    def number(self, t: Mapping[str, Any], at: tuple[Any, ...], key: str, default: float | None,
               low: float, high: float, *, open_low: bool = False, open_high: bool = False) -> float:
        if key not in t:
            if default is None:
                raise self.error(at, f"missing required key {key!r}.")
            return default
        v = t[key]
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.error((*at, key), f"{key}: expected a number, found {_kind(v)} {shown(v)}.")
        x = float(v)
        bad = (not math.isfinite(x) or x < low or x > high or (open_low and x == low) or (open_high and x == high))
        if bad:
            lo = "(" if open_low else "["
            hi = ")" if open_high else "]"
            raise self.error((*at, key), f"{key}: expected a number in {lo}{low:g}, {high:g}{hi}, found {shown(v)}.")
        return x

    def string(self, t: Mapping[str, Any], at: tuple[Any, ...], key: str, default: str | None,
               choices: Sequence[str] | None = None) -> str:
        if key not in t:
            if default is None:
                raise self.error(at, f"missing required key {key!r}.")
            return default
        v = t[key]
        if not isinstance(v, str):
            raise self.error((*at, key), f"{key}: expected a string, found {_kind(v)} {shown(v)}.")
        if choices is not None and v not in choices:
            raise self.error((*at, key), f"{key}: expected one of {', '.join(choices)}, found {shown(v)}.")
        return v

    def strings(self, t: Mapping[str, Any], at: tuple[Any, ...], key: str, what: str) -> tuple[str, ...]:
        if key not in t:
            return ()
        v = t[key]
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list):
            raise self.error((*at, key), f"{key}: expected a list of {what}, found {_kind(v)}.")
        for x in v:
            if not isinstance(x, str):
                hint = f' Write ids as strings: ["{x}"].' if isinstance(x, int) and not isinstance(x, bool) else ""
                raise self.error((*at, key), f"{key}: expected {what} as strings, found {_kind(x)} {shown(x)}.{hint}")
        return tuple(v)

    def measure(self, value: Any, at: tuple[Any, ...]) -> Measure:
        if not isinstance(value, str):
            raise self.error(at, f"expected a measure name such as \"R@50\", found {_kind(value)} {shown(value)}.")
        if needs_cutoffs(value):
            raise self.error(at, f"expected a measure with a cutoff such as \"{cut(value)}@10\", found {shown(value)}.")
        try:
            return parse_measure(value)
        except (UnknownNameError, ValidationError) as e:
            raise self.error(at, f"measure {shown(value)}: {e}") from None


def _kind(v: object) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(v), type(v).__name__)


def _toml(text: str, path: str) -> dict[str, Any]:
    """The TOML document of a policy file.

    Raises:
        InputFormatError: a syntax error (tomllib's line and column), or nesting deeper than ``NESTING_MAX``
            (tomllib is recursive: refused before it runs out of stack).
    """
    too_deep = nesting_error(text, path, "toml")
    if too_deep is not None:
        raise too_deep
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise InputFormatError(path, 0, f"expected arrays and inline tables nested at most {NESTING_MAX} levels "
                                        "deep, found deeper nesting. Flatten the value.") from None
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = _TOML_AT.search(msg)
        line = int(m.group(1)) if m else (len(text.splitlines()) if "end of document" in msg else 0)
        msg = msg.replace(" (at end of document)", " at the end of the file")
        problem = _TOML_AT.sub("", msg).strip().rstrip(".")
        col = f" at column {m.group(2)}" if m else ""
        raise InputFormatError(path, line, f"TOML syntax error{col}: {problem}. See toml.io for the syntax.") from None


def parse_policy(text: str, path: str = "gate.toml") -> GatePolicy:
    """Parse and validate a policy file's text.

    Args:
        text: the TOML text.
        path: the file, for messages and for ``GatePolicy.path``.

    Returns:
        The ``GatePolicy``.

    Raises:
        InputFormatError: a TOML syntax error (tomllib's line), an unknown table or
            key, a missing required key, or a value of the wrong type or range
            (the key's line).

    Example:
        >>> p = parse_policy('[gate]\\nk = 50\\nmeasures = ["R@50", "nDCG@10"]\\n[macro]\\nmin_ci_low = -0.01\\n')
        >>> p.k, [str(m) for m in p.measures], p.macro.min_ci_low, p.correction
        (50, ['R@50', 'nDCG@10'], -0.01, 'holm')
        >>> parse_policy('[gate]\\nk = 0\\n', "g.toml")
        Traceback (most recent call last):
        ...
        workbench.errors.InputFormatError: g.toml:2: k: expected an integer >= 1, found 0.
    """
    doc = _toml(text, path)
    r = _Reader(path, text)
    _check_tables(r, doc)
    gate = _gate_table(r, doc, path)
    macro = _macro_rule(r, doc, gate.measures)
    estimated = [m for m in gate.measures if isinstance(m, EstimatedMeasure)]
    if estimated and macro is None:
        raise r.error(("gate", "measures"), f"measures: {estimated[0]} is estimated from a judged sample and is gated "
                                            "on the interval of its change, which [macro] bounds; add [macro] with "
                                            "`min_ci_low = -0.01` (or another bound).")
    permutation = _permutation_rule(r, doc)
    critical = _critical_rule(r, doc)
    slices, slice_min = _slices(r, doc)
    floors = _floors(r, doc, gate.k, slice_min)
    validity = _validity(r, doc)
    keys = tuple(dict.fromkeys([*slices, *(f.by for f in floors)]))
    return GatePolicy(
        path=path, name=gate.name or path.rsplit("/", 1)[-1], k=gate.k, measures=gate.measures, rel=gate.rel,
        correction=gate.correction, decide=gate.decide,  # type: ignore[arg-type]
        min_topics=gate.min_topics, min_topic_share=gate.min_topic_share, macro=macro, permutation=permutation,
        critical=critical, floors=floors, slices=keys, slice_min_topics=slice_min, validity=validity, content=text)


def _check_tables(r: _Reader, doc: Mapping[str, Any]) -> None:
    """Every top-level key is a known table ([[floor]] an array of tables), in the file's order."""
    for key, value in doc.items():
        if key not in _TABLES:
            raise r.error((key,), f"unknown table [{cut(key)}]; expected {', '.join('[' + t + ']' for t in _TABLES)}.")
        if key == "floor":
            if not isinstance(value, list):
                raise r.error((key,), "expected [[floor]] tables (an array of tables), found a single table; "
                                      "write [[floor]] with double brackets.")
        elif not isinstance(value, dict):
            raise r.error((key,), f"expected [{key}] to be a table, found {_kind(value)}.")


class _GateTable(NamedTuple):
    """The values of ``[gate]`` (see ``GatePolicy`` for each)."""

    k: int
    measures: tuple[Measure, ...]
    rel: int
    correction: str
    decide: str
    min_topics: int
    min_topic_share: float
    name: str


def _gate_table(r: _Reader, doc: Mapping[str, Any], path: str) -> _GateTable:
    """``[gate]``: required, with ``k``; the gated measures default to R@k."""
    gate = r.table(doc, "gate")
    if gate is None:
        raise InputFormatError(path, 1, "missing the [gate] table; add `[gate]` with at least `k = <cutoff>`.")
    at: tuple[Any, ...] = ("gate",)
    r.known(gate, at, _TABLES["gate"])
    k = r.integer(gate, at, "k", None, 1)
    if "measures" in gate:
        raw = gate["measures"]
        if not isinstance(raw, list) or not raw:
            raise r.error((*at, "measures"), "measures: expected a non-empty list of measure names such as [\"R@50\"].")
        measures = tuple(dict.fromkeys(r.measure(x, (*at, "measures")) for x in raw))
    else:
        measures = (R(cutoff=k),)
    return _GateTable(
        k=k, measures=measures,
        rel=r.integer(gate, at, "rel", 1, 0),
        correction=r.string(gate, at, "correction", "holm", sorted(CORRECTIONS)),
        decide=r.string(gate, at, "decide", "corrected", ("corrected", "raw")),
        min_topics=r.integer(gate, at, "min_topics", MIN_TOPICS, 2),
        min_topic_share=r.number(gate, at, "min_topic_share", SUBSET_SHARE, 0.0, 1.0),
        name=r.string(gate, at, "name", ""),
    )


def _macro_rule(r: _Reader, doc: Mapping[str, Any], measures: tuple[Measure, ...]) -> MacroRule | None:
    """``[macro]`` (optional): the default bound, per-measure bounds (gated measures only) and the bootstrap."""
    mt = r.table(doc, "macro")
    if mt is None:
        return None
    at = ("macro",)
    r.known(mt, at, _TABLES["macro"])
    bound = r.number(mt, at, "min_ci_low", None, -1.0, 1.0)
    bounds: dict[Measure, float] = {}
    raw_bounds = mt.get("bounds", {})
    if not isinstance(raw_bounds, dict):
        raise r.error((*at, "bounds"), f"bounds: expected a table of measure = bound, found {_kind(raw_bounds)}.")
    for mname in raw_bounds:
        bm = r.measure(mname, (*at, "bounds", mname))
        if bm not in measures:
            raise r.error((*at, "bounds", mname),
                          f"bound for {bm}, which is not a gated measure; gated: {', '.join(map(str, measures))}.")
        bounds[bm] = r.number(raw_bounds, (*at, "bounds"), mname, None, -1.0, 1.0)
    return MacroRule(
        min_ci_low=bound, bounds=bounds,
        confidence=r.number(mt, at, "confidence", 0.95, 0.0, 1.0, open_low=True, open_high=True),
        resamples=r.integer(mt, at, "resamples", 10_000, 100, 10_000_000),
        seed=r.integer(mt, at, "seed", 0, 0), line=r.where.line(at))


def _permutation_rule(r: _Reader, doc: Mapping[str, Any]) -> PermutationRule | None:
    """``[permutation]`` (optional): ``alpha`` required."""
    pt = r.table(doc, "permutation")
    if pt is None:
        return None
    at = ("permutation",)
    r.known(pt, at, _TABLES["permutation"])
    return PermutationRule(
        alpha=r.number(pt, at, "alpha", None, 0.0, 1.0, open_low=True, open_high=True),
        resamples=r.integer(pt, at, "resamples", 10_000, 100, 10_000_000),
        seed=r.integer(pt, at, "seed", 0, 0), line=r.where.line(at))


def _critical_rule(r: _Reader, doc: Mapping[str, Any]) -> CriticalRule:
    """``[critical]`` (optional, else no critical topic): named topics and/or a metadata selector."""
    ct = r.table(doc, "critical")
    if ct is None:
        return CriticalRule()
    at = ("critical",)
    r.known(ct, at, _TABLES["critical"])
    ids = r.strings(ct, at, "topics", "topic ids")
    where: dict[str, tuple[str, ...]] = {}
    raw_where = ct.get("where", {})
    if not isinstance(raw_where, dict):
        raise r.error((*at, "where"), 'where: expected a table such as { priority = "critical" }, '
                                      f"found {_kind(raw_where)}.")
    for key, value in raw_where.items():
        vals = value if isinstance(value, list) else [value]
        if not vals or not all(isinstance(x, str | int | float) and not isinstance(x, bool) for x in vals):
            raise r.error((*at, "where"), f"where.{cut(key)}: expected a value or a list of values "
                                          f"(strings or numbers), found {shown(value)}.")
        where[key] = tuple(_text(x) for x in vals)
    if not ids and not where:
        raise r.error(at, "[critical] names no topic; add `topics = [\"...\"]` or `where = { key = \"value\" }`.")
    return CriticalRule(ids, where, r.where.line(at))


def _slices(r: _Reader, doc: Mapping[str, Any]) -> tuple[tuple[str, ...], int]:
    """``[slices]`` (optional): (slice keys reported, fewest topics of a slice with statistics)."""
    st = r.table(doc, "slices")
    if st is None:
        return (), MIN_TOPICS
    at = ("slices",)
    r.known(st, at, _TABLES["slices"])
    return r.strings(st, at, "by", "slice keys"), r.integer(st, at, "min_topics", MIN_TOPICS, 1)


def _floors(r: _Reader, doc: Mapping[str, Any], k: int, slice_min: int) -> tuple[SliceFloor, ...]:
    """Every ``[[floor]]``, in the file's order; the measure defaults to R@k, ``min_topics`` to ``[slices]``'s."""
    floors = []
    for i, ft in enumerate(doc.get("floor", [])):
        at = ("floor", i)
        if not isinstance(ft, dict):
            raise r.error(at, f"expected [[floor]] tables, found {_kind(ft)}.")
        r.known(ft, at, _TABLES["floor"])
        by = r.string(ft, at, "by", None)
        measure = r.measure(ft["measure"], (*at, "measure")) if "measure" in ft else R(cutoff=k)
        if isinstance(measure, EstimatedMeasure):
            raise r.error((*at, "measure"), f"measure: {measure} is estimated from a judged sample and has no "
                                            f"per-slice estimates here; a floor takes a pooled measure such as "
                                            f"{measure.pooled}.")
        floors.append(SliceFloor(
            by=by, minimum=r.number(ft, at, "min", None, 0.0, 1.0), measure=measure,
            values=r.strings(ft, at, "values", "slice values"),
            min_topics=r.integer(ft, at, "min_topics", slice_min, 1), line=r.where.line(at)))
    return tuple(floors)


def _validity(r: _Reader, doc: Mapping[str, Any]) -> Validity:
    """``[validity]`` (optional, else the defaults of ``Validity``)."""
    vt = r.table(doc, "validity")
    if vt is None:
        return Validity()
    at = ("validity",)
    r.known(vt, at, _TABLES["validity"])
    return Validity(
        completion=r.number(vt, at, "completion", 1.0, 0.0, 1.0),
        id_coverage=r.number(vt, at, "id_coverage", 1.0, 0.0, 1.0),
        run_id_coverage=r.number(vt, at, "run_id_coverage", 1.0, 0.0, 1.0),
        id_audit=r.string(vt, at, "id_audit", "required", ("required", "when-available")),  # type: ignore[arg-type]
        leakage=r.string(vt, at, "leakage", "invalid", ("invalid", "exclude", "off")),  # type: ignore[arg-type]
        leakage_threshold=r.number(vt, at, "leakage_threshold", 0.8, 0.0, 1.0, open_low=True),
        leakage_ngram=r.integer(vt, at, "leakage_ngram", 3, 1, 10),
        leaks=r.string(vt, at, "leaks", "fail", ("fail", "off")),  # type: ignore[arg-type]
    )
