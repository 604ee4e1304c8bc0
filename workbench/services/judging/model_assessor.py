"""A model as an extra, clearly labelled assessor (``workbench judge-with-model``).

A model grades every document of a pool version through the same
append-only save path as a person (``record_judgment_outcome``: one
committed row per document, an idempotent save token, the rubric checked), as
a user of kind ``model`` whose identity records the model, its weights' hash
and the grade mapping (``store.model_assessors``). The mapping is given
(``--grades "0:<0.3,1:<0.5,2:<0.7,3"``) or fitted on documents people already
judged (``--fit-on QRELS``: quantile matching, ``judging.model_grades``), and
the fit's agreement is reported.

Blindness: model judgments never reach an assessor's screen or queue order.
The store leaves them out of what people see and of what decides for people
(queues, progress, agreement between people, final grades, publishing);
they appear, labelled, on the lead's Agreement page (kappa and alpha of the
model against each person) and Adjudicate page (a suggestion), in
``publish --include-model`` (only where no person judged, recorded in the qrels
version), and in the order of a pool whose lead chose ``cal-model``. The one
opt-in exception: a lead may turn *pre-fill* on for a pool version
(``set_prefill``), and assessors then see that model's grade pre-selected and
marked as the model's (``judging.prefill``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.errors import PermissionDeniedError, ValidationError
from workbench.judging.model_grades import (
    FitAgreement,
    GradeMapping,
    check_fit_sample,
    fit_agreement,
    fit_grade_mapping,
    parse_grade_mapping,
)
from workbench.judging.prefill import PrefillItem, PrefillSplit, prefill_splits
from workbench.types import Judgment

if TYPE_CHECKING:
    from workbench.judging.agreement import Weights
    from workbench.judging.log import JudgmentLog
    from workbench.judging.prefill import PrefillSetting
    from workbench.services.judging.sessions import Session
    from workbench.store import Store
    from workbench.store.judging import Judging
    from workbench.store.model_assessors import ModelAssessorInfo
    from workbench.store.pools import Pools
    from workbench.store.rubrics import Rubrics

Say = Callable[[str], None]

DEFAULT_GRADES = "0:<0.3,1:<0.5,2:<0.7,3"


@dataclass(frozen=True)
class ModelJudging:
    """What ``judge_with_model`` did.

    Attributes:
        assessor: the model assessor's identity.
        pool_version: the pool version judged.
        n_documents: pooled documents of the version.
        n_saved: judgments saved now.
        n_kept: judgments already stored from an earlier run (not repeated).
        grades: grade -> documents given it (this run and earlier).
        fit: the fit's agreement (with ``--fit-on``), else None.
    """

    assessor: ModelAssessorInfo
    pool_version: str
    n_documents: int
    n_saved: int
    n_kept: int
    grades: dict[int, int] = field(default_factory=dict)
    fit: FitAgreement | None = None


def judge_with_model(
    store: Store,
    session: Session,
    pool_version: str,
    model: str,
    name: str,
    *,
    grades: str | None = None,
    fit_on: str | None = None,
    rel: int = 1,
    say: Say | None = None,
) -> ModelJudging:
    """Grade a pool version's documents with a model, as model assessor ``name`` (lead only).

    Args:
        store: the store.
        session: the signed-in lead.
        pool_version: the pool version (this version's documents).
        model: ``minilm`` (the bundled bi-encoder's cosine) or a local model
            folder (a sentence-transformers bi-encoder or a ``CrossEncoder``).
        name: the model assessor's user name (created on first use; its
            identity never changes).
        grades: the grade mapping (default ``0:<0.3,1:<0.5,2:<0.7,3``); not
            with ``fit_on``.
        fit_on: a qrels version (or TREC qrels file) whose grades of the pool's
            documents the thresholds are fitted on.
        rel: relevance threshold of the fit's binary agreement.
        say: progress lines.

    Returns:
        ``ModelJudging``.

    Raises:
        PermissionDeniedError: not a lead.
        ValidationError: both ``grades`` and ``fit_on``; a mapping grade off the
            rubric; nothing to fit on; fit grades all on one side of ``rel``
            (positives-only qrels; ``judging.model_grades.check_fit_sample``),
            refused before the model scores anything.
        DuplicateNameError: ``name`` is a person, or a model assessor with another identity.
        UnknownNameError: unknown pool version or qrels version.
    """
    from pooling.retrievers.judge_models import load_judge_model
    from workbench.services.judging.simulation import load_oracle

    if not session.is_lead:
        raise PermissionDeniedError(f"judge-with-model: only a lead may do this; {session.user!r} is an "
                                    f"{session.role}")
    if grades is not None and fit_on is not None:
        raise ValidationError("give --grades or --fit-on, not both")
    info = store.pools.get_pool(pool_version)
    collection = info.collection
    rubric = store.rubrics.collection_rubric(collection)
    entries = store.pools.pool_entries(pool_version)
    pairs = [(e.topic_id, e.doc_id) for e in entries]
    given_mapping = None
    if fit_on is None:  # checked before any scoring: a bad mapping fails the command at once
        given_mapping = parse_grade_mapping(grades or DEFAULT_GRADES)
        _check_scale(given_mapping, rubric.values, rubric.name)
    topics = store.collections.get_topics(collection)
    documents = store.collections.get_documents(collection, info.collection_version)
    queries = {t: topic.query for t, topic in topics.items()}
    texts = {d: documents[d].content for _t, d in pairs if d in documents}
    known = [(t, d) for t, d in pairs if d in texts and t in queries]
    people: Mapping[str, Mapping[str, int]] = {}
    if fit_on is not None:
        _name, people = load_oracle(store.qrels, fit_on)
        if not any(d in people.get(t, {}) for t, d in known):
            raise ValidationError(f"--fit-on {fit_on}: it grades none of the documents of {pool_version}; "
                                  "fit on a qrels version judged from this pool")
        try:  # before the model scores anything: a positives-only fit is refused at once
            check_fit_sample([int(people[t][d]) for t, d in known if d in people.get(t, {})], rel=rel)
        except ValidationError as e:
            raise ValidationError(f"--fit-on {fit_on} on the documents of {pool_version}: {e}") from None
    judge = load_judge_model(model)
    store.users.check_model_assessor_name(name, model=judge.name, weights_hash=judge.weights_hash)
    if say:
        say(f"[starting] {judge.kind} {judge.name} scores {len(known):,} documents of {pool_version}")
    scores = judge.score(queries, texts, known, cache=store.vectors,
                         text_hashes=store.collections.document_text_hashes(collection, info.collection_version))
    score_of = {k: float(s) for k, s in zip(known, scores, strict=True)}

    fit: FitAgreement | None = None
    if given_mapping is None:
        fitted = [(score_of[k], int(people[k[0]][k[1]])) for k in known if k[1] in people.get(k[0], {})]
        mapping = fit_grade_mapping([s for s, _g in fitted], [g for _s, g in fitted], rubric.values)
        fit = fit_agreement([mapping.grade(s) for s, _g in fitted], [g for _s, g in fitted], rubric.values, rel=rel)
        _check_scale(mapping, rubric.values, rubric.name)
    else:
        mapping = given_mapping
    assessor = store.users.add_model_assessor(
        name, model=judge.name, model_kind=judge.kind, weights_hash=judge.weights_hash,
        grade_mapping=str(mapping), lead=session.user, fitted_on=fit_on or "",
        fit=fit.as_dict() if fit else None,
    )
    mine = {(j.topic_id, j.doc_id) for j in store.judgments.model_judgments(collection, pool_version) if j.assessor == name}
    saved = kept = 0
    given: Counter[int] = Counter()
    with store.connection("model assessor judging"):  # one open file for all the saves
        for key in known:
            grade = mapping.grade(score_of[key])
            given[grade] += 1
            if key in mine:
                kept += 1
                continue
            store.judgments.record_judgment_outcome(
                Judgment(key[0], key[1], name, grade, note=f"{judge.kind} score {score_of[key]:.4f}"),
                collection=collection, pool_version=pool_version,
                save_token=f"model:{name}:{pool_version}:{key[0]}:{key[1]}",
            )
            saved += 1
    _reorder_if_seeded(store, pool_version)
    if say:
        say(f"[finished] {name}: {saved:,} judgments saved, {kept:,} already stored")
    return ModelJudging(assessor, pool_version, len(pairs), saved, kept, dict(sorted(given.items())), fit)


def _check_scale(mapping: GradeMapping, scale: tuple[int, ...], rubric: str) -> None:
    off = [g for g in mapping.grades if g not in scale]
    if off:
        raise ValidationError(f"grade mapping {mapping}: grades {off} are not on the {rubric!r} rubric "
                              f"{list(scale)}; map scores to its grades")


def _reorder_if_seeded(store: Store, pool_version: str) -> None:
    """A pool whose strategy takes model grades as a prior (``cal-model``) re-orders now."""
    from workbench.judging.strategies import parse_strategy
    from workbench.services.judging.order import refresh_topics

    setting = store.judging.judging_setting(pool_version)
    if setting is not None and parse_strategy(setting.strategy).uses_prior:
        refresh_topics(store, pool_version)


def model_agreement(
    judgments: JudgmentLog, pools: Pools, rubrics: Rubrics, pool_version: str, *,
    weights: Weights = "linear",
) -> list[PrefillSplit]:
    """Agreement of every model assessor with every person on a pool version's lineage: the rows the
    lead's Agreement page and ``workbench agreement`` show.

    Per (model, person), on the documents both graded (the person's current integer grade; unsure
    is no item): the share given the same grade, weighted Cohen's kappa and Krippendorff's alpha
    (ordinal). When any of those judgments was saved with a model's grade pre-filled
    (``judging.prefill``), two more rows split them: ``pre-filled`` (this model's grade was shown,
    with how many the person confirmed) and ``not pre-filled`` (no grade was shown): the anchoring
    effect of pre-filling, measured.

    Returns:
        ``PrefillSplit`` rows (``judging.prefill.prefill_splits``); empty when no model graded a
        document a person graded.

    Raises:
        UnknownNameError: unknown pool version.
    """
    collection = pools.get_pool(pool_version).collection
    scale = rubrics.collection_rubric(collection).values
    models: dict[tuple[str, str], dict[str, int]] = {}
    for m in judgments.model_judgments(collection, pool_version):
        if m.grade is not None:
            models.setdefault((m.topic_id, m.doc_id), {})[m.assessor] = int(m.grade)
    items: list[PrefillItem] = []
    split = False
    for p in judgments.current_judgments(collection, pool_version):
        if p.grade is None:
            continue
        shown = p.prefill.assessor if p.prefill is not None else ""
        split = split or bool(shown)
        for model, grade in models.get((p.topic_id, p.doc_id), {}).items():
            items.append(PrefillItem(model, p.assessor, grade, int(p.grade), shown, p.prefill_outcome))
    return prefill_splits(items, scale=scale, weights=weights, split=split)


def set_prefill(judging: Judging, session: Session, pool_version: str, model: str | None, *,
                share: float = 1.0) -> PrefillSetting:
    """A lead turns pre-fill on (``model``: a model assessor's name) or off (None) for a pool version.

    With it on, an assessor judging a document of the pool version that the model graded sees the
    model's grade pre-selected and marked as the model's, and confirms or changes it; each save
    records which (``judging.prefill``). ``share`` < 1 pre-fills a seeded share of each assessor's
    documents, so agreement on pre-filled and not pre-filled documents can be compared.

    Raises:
        PermissionDeniedError: not a lead.
        UnknownNameError: unknown pool version, or ``model`` is not a model assessor.
        ValidationError: ``share`` outside (0, 1].
    """
    from workbench.services.judging.sessions import require_lead

    require_lead(session, "set pre-fill")
    return judging.set_prefill(pool_version, model, lead=session.user, share=share)
