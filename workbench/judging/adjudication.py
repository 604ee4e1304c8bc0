"""Final grades from several assessors' judgments: named, recorded rules (pure).

A final-grade rule decides, per (topic, document), the one grade that goes
into a published qrels version. Every rule is the chain

    adjudicated  >  unanimous  >  fallback

1. **adjudicated**: a lead's adjudication, when there is one, is final. It
   wins even over unanimous assessors, so a lead can correct a shared mistake;
   the UI offers adjudication on the disagreement queue.
2. **unanimous**: all assessors who gave a grade gave the same one (a document
   graded by a single assessor is unanimous).
3. **fallback**: a named policy resolves the remaining disagreements:

   * ``median``: the *lower* median of the grades (for an even number of
     grades, the smaller of the two middle ones): it never invents a grade
     nobody gave, and errs towards "less relevant";
   * ``majority``: the most frequent grade, ties broken towards the lower grade;
   * ``max``: the highest grade (lenient: "relevant if anyone says so");
   * ``min``: the lowest grade (strict).

Judgments marked *unsure* (grade ``None``) carry no grade and are ignored; an
item whose judgments are all unsure and that has no adjudication gets no final
grade and is listed in ``FinalGrades.unresolved``.

The rule's canonical name, e.g. ``adjudicated>unanimous>median``, is what a
qrels version records; ``get_rule`` accepts it or the bare fallback name.

Source:
    Conventions of multi-assessor relevance collections: TREC's practice of a
    primary assessor with adjudication of disagreements (Voorhees, "Variations
    in relevance judgments and the measurement of retrieval effectiveness",
    IP&M 36(5), 2000, doi:10.1016/S0306-4573(00)00010-8); the lower median as a
    conservative aggregate is this workbench's documented choice.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from workbench.errors import DuplicateNameError, UnknownNameError
from workbench.ranking import natural_key
from workbench.types import Qrel

ItemKey = tuple[str, str]
"""(topic_id, doc_id)."""

Decision = Literal["adjudicated", "unanimous", "fallback", "model"]


def lower_median(grades: Sequence[int]) -> int:
    """The lower median: sorted(grades)[(n - 1) // 2]. ``grades`` is non-empty."""
    s = sorted(grades)
    return s[(len(s) - 1) // 2]


def majority(grades: Sequence[int]) -> int:
    """The most frequent grade; ties go to the lowest tied grade."""
    counts: dict[int, int] = {}
    for g in grades:
        counts[g] = counts.get(g, 0) + 1
    best = max(counts.values())
    return min(g for g, c in counts.items() if c == best)


@dataclass(frozen=True, slots=True)
class FinalGradeRule:
    """A named rule: adjudicated > unanimous > ``fallback``.

    Attributes:
        fallback: registry name of the fallback (``median``, ``majority``, ``max``, ``min``).
        resolve: the fallback function: non-empty grades -> one grade.
        description: one line for the UI and the CLI help.
        sql: the same fallback as a DuckDB expression over ``gs``, one item's
            integer grades as a sorted list (1-based; two or more grades, not all
            equal); "" when the rule has none (the store then applies ``resolve``
            in Python). The store's publish path uses it; tests check it equals
            ``resolve``.
    """

    fallback: str
    resolve: Callable[[Sequence[int]], int]
    description: str
    sql: str = ""

    @property
    def name(self) -> str:
        """Canonical name recorded with a qrels version."""
        return f"adjudicated>unanimous>{self.fallback}"


_RULES: dict[str, FinalGradeRule] = {}


def register_rule(rule: FinalGradeRule) -> FinalGradeRule:
    """Add a rule to the registry. Raises DuplicateNameError on a taken fallback name."""
    if rule.fallback in _RULES:
        raise DuplicateNameError(f"final-grade rule {rule.fallback!r} is already registered")
    _RULES[rule.fallback] = rule
    return rule


register_rule(FinalGradeRule("median", lower_median, "lower median of the grades",
                             "gs[(len(gs) - 1) // 2 + 1]"))  # sorted(grades)[(n - 1) // 2], 1-based
register_rule(FinalGradeRule("majority", majority, "most frequent grade, ties to the lower",
                             # the lowest grade given as often as the most frequent one
                             "list_min(list_filter(gs, lambda x: len(list_filter(gs, lambda y: y = x)) = "
                             "list_max(list_transform(gs, lambda z: len(list_filter(gs, lambda y: y = z))))))"))
register_rule(FinalGradeRule("max", max, "highest grade (lenient)", "gs[-1]"))
register_rule(FinalGradeRule("min", min, "lowest grade (strict)", "gs[1]"))

DEFAULT_RULE = "median"


def rule_names() -> list[str]:
    """The registered fallback names, sorted."""
    return sorted(_RULES)


def get_rule(name: str) -> FinalGradeRule:
    """Look a rule up by fallback name (``median``) or canonical name.

    Raises:
        UnknownNameError: no such rule; the message lists the known names.
    """
    key = name.rsplit(">", 1)[-1] if name.startswith("adjudicated>unanimous>") else name
    try:
        return _RULES[key]
    except KeyError:
        raise UnknownNameError("final-grade rule", name, _RULES) from None


@dataclass(frozen=True, slots=True)
class FinalGrades:
    """The outcome of applying a rule.

    Attributes:
        rule: canonical rule name.
        qrels: topic_id -> doc_id -> final grade.
        decisions: (topic_id, doc_id) -> which step decided it.
        unresolved: items with only unsure judgments and no adjudication, sorted.
    """

    rule: str
    qrels: dict[str, dict[str, int]]
    decisions: dict[ItemKey, Decision] = field(default_factory=dict)
    unresolved: list[ItemKey] = field(default_factory=list)

    def count(self, decision: Decision) -> int:
        """How many items a step decided."""
        return sum(1 for d in self.decisions.values() if d == decision)


@dataclass(frozen=True, slots=True)
class DecisionCounts:
    """How the final grades of a publish were decided: items per step of the rule.

    Attributes:
        rule: the canonical rule name (``adjudicated>unanimous>median``).
        unanimous: items whose assessors all gave the same grade (one assessor included).
        adjudicated: items a lead decided.
        fallback: items the rule's fallback decided (assessors disagreed, no adjudication).
        unresolved: items with only unsure judgments: no final grade.
        model: items graded by model assessors where no person judged (``include_model``).
    """

    rule: str
    unanimous: int = 0
    adjudicated: int = 0
    fallback: int = 0
    unresolved: int = 0
    model: int = 0

    @classmethod
    def of(cls, final: FinalGrades) -> DecisionCounts:
        """The counts of a ``FinalGrades``."""
        return cls(final.rule, final.count("unanimous"), final.count("adjudicated"), final.count("fallback"),
                   len(final.unresolved), final.count("model"))

    @property
    def fallback_name(self) -> str:
        """The fallback's registry name (``median``)."""
        return get_rule(self.rule).fallback

    def summary(self) -> str:
        """The counts as recorded in a published version's note.

        Example:
            >>> DecisionCounts("adjudicated>unanimous>median", 6973, 0, 774, 0).summary()
            '6973 unanimous, 0 adjudicated, 774 by fallback, 0 unresolved (unsure only)'
        """
        return (f"{self.unanimous} unanimous, {self.adjudicated} adjudicated, {self.fallback} by fallback, "
                f"{self.unresolved} unresolved (unsure only)")

    def describe(self) -> str:
        """One sentence for people: each step's count, the fallback named with its definition.

        Example:
            >>> DecisionCounts("adjudicated>unanimous>median", 6973, 0, 774, 0).describe()
            'decided: 6,973 unanimous, 0 adjudicated, 774 by the fallback median (lower median of the grades: \
the assessors disagreed and no lead adjudicated), 0 unresolved (unsure only)'
        """
        rule = get_rule(self.rule)
        model = f", {self.model:,} from model assessors where no person judged" if self.model else ""
        return (f"decided: {self.unanimous:,} unanimous, {self.adjudicated:,} adjudicated, {self.fallback:,} by "
                f"the fallback {rule.fallback} ({rule.description}: the assessors disagreed and no lead "
                f"adjudicated), {self.unresolved:,} unresolved (unsure only){model}")


def final_grades(
    grades: Mapping[ItemKey, Mapping[str, int | None]],
    adjudications: Mapping[ItemKey, int],
    rule: str | FinalGradeRule = DEFAULT_RULE,
) -> FinalGrades:
    """Apply a final-grade rule to every judged or adjudicated item.

    Args:
        grades: (topic_id, doc_id) -> assessor -> current grade (None = unsure).
        adjudications: (topic_id, doc_id) -> the lead's current final grade.
        rule: a ``FinalGradeRule`` or its name (see ``rule_names``).

    Returns:
        ``FinalGrades`` over the union of the items of both mappings.

    Raises:
        UnknownNameError: unknown rule name.

    Example:
        >>> final_grades({("t1", "d1"): {"a": 1, "b": 3}}, {}).qrels
        {'t1': {'d1': 1}}
    """
    r = rule if isinstance(rule, FinalGradeRule) else get_rule(rule)
    qrels: dict[str, dict[str, int]] = {}
    decisions: dict[ItemKey, Decision] = {}
    unresolved: list[ItemKey] = []
    for key in sorted(set(grades) | set(adjudications)):
        topic_id, doc_id = key
        if key in adjudications:
            grade, how = int(adjudications[key]), "adjudicated"
        else:
            given = [int(g) for g in grades[key].values() if g is not None]
            if not given:
                unresolved.append(key)
                continue
            if len(set(given)) == 1:
                grade, how = given[0], "unanimous"
            else:
                grade, how = int(r.resolve(given)), "fallback"
        qrels.setdefault(topic_id, {})[doc_id] = grade
        decisions[key] = how  # type: ignore[assignment]
    return FinalGrades(r.name, qrels, decisions, unresolved)


def add_model_grades(
    fg: FinalGrades,
    judged: Collection[ItemKey],
    model_grades: Mapping[ItemKey, Mapping[str, int]],
    rule: str | FinalGradeRule = DEFAULT_RULE,
) -> tuple[FinalGrades, dict[str, int]]:
    """Final grades with model assessors' grades where no person judged.

    An item gets a model grade only when no person judged it at all (not even
    "unsure") and no lead adjudicated it; several models' grades are resolved
    by the rule's fallback (unanimous first). Decided items are marked ``model``.

    Args:
        fg: the final grades from people's judgments and adjudications.
        judged: the items any person judged (graded or unsure).
        model_grades: (topic_id, doc_id) -> model assessor -> grade.
        rule: the final-grade rule (its fallback resolves disagreeing models).

    Returns:
        (the new ``FinalGrades``, model assessor -> items whose grade it supplied).

    Example:
        >>> fg = final_grades({("t", "a"): {"ann": 2}}, {})
        >>> new, used = add_model_grades(fg, {("t", "a")}, {("t", "a"): {"m": 0}, ("t", "b"): {"m": 1}})
        >>> new.qrels, used
        ({'t': {'a': 2, 'b': 1}}, {'m': 1})
    """
    r = rule if isinstance(rule, FinalGradeRule) else get_rule(rule)
    qrels = {t: dict(d) for t, d in fg.qrels.items()}
    decisions: dict[ItemKey, Decision] = dict(fg.decisions)
    used: dict[str, int] = {}
    people = set(judged) | set(fg.decisions)
    for key in sorted(model_grades):
        if key in people or not model_grades[key]:
            continue
        given = [int(g) for g in model_grades[key].values()]
        grade = given[0] if len(set(given)) == 1 else int(r.resolve(given))
        qrels.setdefault(key[0], {})[key[1]] = grade
        decisions[key] = "model"
        for name in model_grades[key]:
            used[name] = used.get(name, 0) + 1
    return FinalGrades(fg.rule, qrels, decisions, list(fg.unresolved)), used


@dataclass(frozen=True, slots=True)
class Disagreement:
    """An item on which assessors disagree, for the lead's queue.

    Attributes:
        topic_id: the topic.
        doc_id: the document.
        spread: max grade - min grade among the integer grades (0 when there
            is at most one distinct grade, e.g. an unsure next to a grade).
        grades: assessor -> grade (None = unsure), all current judgments.
        adjudicated: the current adjudicated grade, or None.
    """

    topic_id: str
    doc_id: str
    spread: int
    grades: dict[str, int | None]
    adjudicated: int | None = None


def disagreements(
    grades: Mapping[ItemKey, Mapping[str, int | None]],
    adjudications: Mapping[ItemKey, int] | None = None,
) -> list[Disagreement]:
    """Items that need a lead, widest grade spread first.

    An item needs a lead when its current judgments are not all the same grade
    (two or more assessors disagree), or when any judgment is *unsure*
    (including a single assessor's: "unsure" asks a lead to decide). Spread is
    max - min of the integer grades, 0 when there is at most one distinct grade.

    Args:
        grades: (topic_id, doc_id) -> assessor -> grade (None = unsure).
        adjudications: current adjudicated grades, shown alongside.

    Returns:
        Sorted by spread descending, then topic_id (natural order: 2 before 10), then doc_id.
    """
    adj = adjudications or {}
    out = []
    for (topic_id, doc_id), by in grades.items():
        unsure = any(g is None for g in by.values())
        if not unsure and len(set(by.values())) < 2:
            continue
        ints = [g for g in by.values() if g is not None]
        spread = (max(ints) - min(ints)) if ints else 0
        out.append(Disagreement(topic_id, doc_id, spread, dict(sorted(by.items())), adj.get((topic_id, doc_id))))
    out.sort(key=lambda d: (-d.spread, natural_key(d.topic_id), d.doc_id))
    return out


@dataclass(frozen=True, slots=True)
class QrelsDiff:
    """What changed from one qrels version to another.

    Attributes:
        added: entries only in the new version.
        changed: (topic_id, doc_id, old grade, new grade) where the grade differs.
        removed: entries only in the old version.
    All three are sorted by (topic_id, doc_id).
    """

    added: list[Qrel]
    changed: list[tuple[str, str, int, int]]
    removed: list[Qrel]

    @property
    def empty(self) -> bool:
        """True when both versions hold the same entries."""
        return not (self.added or self.changed or self.removed)

    def counts(self) -> QrelsDiffCounts:
        """How many entries were added, changed and removed."""
        return QrelsDiffCounts(len(self.added), len(self.changed), len(self.removed))


@dataclass(frozen=True, slots=True)
class QrelsDiffCounts:
    """How many entries changed from one qrels version to another (``QrelsDiff`` without the entries).

    Attributes:
        added: entries only in the new version.
        changed: entries in both whose grade differs.
        removed: entries only in the old version.
    """

    added: int
    changed: int
    removed: int

    @property
    def empty(self) -> bool:
        """True when both versions hold the same entries."""
        return not (self.added or self.changed or self.removed)


def diff_qrels(old: Mapping[str, Mapping[str, int]], new: Mapping[str, Mapping[str, int]]) -> QrelsDiff:
    """Entries added, changed and removed going from ``old`` to ``new``.

    Args:
        old: the parent qrels (topic_id -> doc_id -> grade); ``{}`` for none.
        new: the child qrels.

    Returns:
        ``QrelsDiff`` with each list sorted by (topic_id, doc_id).

    Example:
        >>> d = diff_qrels({"t": {"a": 1, "b": 0}}, {"t": {"a": 2, "c": 1}})
        >>> (len(d.added), d.changed, len(d.removed))
        (1, [('t', 'a', 1, 2)], 1)
    """
    o = {(t, d): g for t, docs in old.items() for d, g in docs.items()}
    n = {(t, d): g for t, docs in new.items() for d, g in docs.items()}
    added = [Qrel(t, d, n[(t, d)]) for t, d in sorted(n.keys() - o.keys())]
    removed = [Qrel(t, d, o[(t, d)]) for t, d in sorted(o.keys() - n.keys())]
    changed = [(t, d, o[(t, d)], n[(t, d)]) for t, d in sorted(o.keys() & n.keys()) if o[(t, d)] != n[(t, d)]]
    return QrelsDiff(added, changed, removed)


@dataclass(frozen=True, slots=True)
class Suggestion:
    """The grade a rule would give a document without an adjudication, and why.

    Attributes:
        grade: the suggested final grade, or None when every judgment is unsure.
        reason: one line for the lead, e.g. ``lower median of 1, 3``.
        decision: the step that decides it without a lead (``unanimous`` or
            ``fallback``), or None when nothing does.
    """

    grade: int | None
    reason: str
    decision: Decision | None


def suggest_grade(grades: Mapping[str, int | None], rule: str | FinalGradeRule = DEFAULT_RULE) -> Suggestion:
    """What the final-grade rule decides for one document when the lead does not
    (the Adjudicate page pre-selects it, clearly marked as a suggestion).

    Args:
        grades: assessor -> current grade (None = unsure).
        rule: a ``FinalGradeRule`` or its name.

    Returns:
        ``Suggestion``: the unanimous grade, the rule's fallback over the
        integer grades, or None (all unsure).

    Raises:
        UnknownNameError: unknown rule name.

    Example:
        >>> suggest_grade({"ann": 1, "bob": 3})
        Suggestion(grade=1, reason="rule 'median' (lower median of the grades) of 1, 3", decision='fallback')
        >>> suggest_grade({"ann": 2, "bob": None}).reason
        'every grade given is 2 (1 unsure)'
    """
    r = rule if isinstance(rule, FinalGradeRule) else get_rule(rule)
    given = sorted(int(g) for g in grades.values() if g is not None)
    n_unsure = sum(1 for g in grades.values() if g is None)
    unsure = f" ({n_unsure} unsure)" if n_unsure else ""
    if not given:
        return Suggestion(None, f"every judgment is unsure{unsure}", None)
    if len(set(given)) == 1:
        return Suggestion(given[0], f"every grade given is {given[0]}{unsure}", "unanimous")
    return Suggestion(int(r.resolve(given)), f"rule {r.fallback!r} ({r.description}) of {', '.join(map(str, given))}"
                      f"{unsure}", "fallback")
