"""CLI command: ``workbench judge-with-model`` (a model as an extra, labelled assessor)."""

from __future__ import annotations

from typing import Annotated

import typer

from workbench import jsonout
from workbench.cli import app, common, options


@app.command("judge-with-model")
def judge_with_model(
    pool: Annotated[str, typer.Argument(help="The pool version whose documents the model grades.")],
    model: Annotated[str, typer.Option(
        help="'minilm' (the bundled bi-encoder's cosine) or a local model folder (bi-encoder or CrossEncoder).")],
    name: Annotated[str, typer.Option("--as", callback=options.name("user"),
                                              help="The model assessor's user name (created on first use).")],
    lead: Annotated[str, typer.Option("--lead", help="The lead doing this (user name).")],
    token: Annotated[str, typer.Option("--token", envvar="WORKBENCH_TOKEN",
                                       help="The lead's access token (or $WORKBENCH_TOKEN).")],
    grades: Annotated[str | None, typer.Option(
        help="Score thresholds to grades, e.g. \"0:<0.3,1:<0.5,2:<0.7,3\" (the default).")] = None,
    fit_on: Annotated[str | None, typer.Option(
        help="Fit the thresholds on people's grades of the pool's documents in this qrels version (or file); "
             "prints the fit's agreement.")] = None,
    rel: Annotated[int, typer.Option(callback=options.number(0, what="a grade"),
                                     help="Relevance threshold of the fit's relevant/non-relevant agreement.")] = 1,
) -> None:
    """Grade a pool's documents with a model, through the same append-only save path as a person, as an
    assessor of kind 'model' (identity: model, weights hash, grade mapping). Its judgments reach no assessor's
    screen or queue unless a lead turns pre-fill on (`workbench prefill`); leads see them on Agreement and
    Adjudicate; publish leaves them out unless --include-model. Re-running continues where it stopped."""
    from workbench.services.judging import assessments as svc
    from workbench.services.judging.model_assessor import judge_with_model as run

    store = common.STATE.store(client="workbench judge-with-model")
    session = svc.sign_in(store.users, lead, token)
    res = run(store, session, pool, model, name, grades=grades, fit_on=fit_on, rel=rel, say=common.info)
    a = res.assessor
    common.out(jsonout.dumps({
        "assessor": a.name, "kind": "model", "model": a.model, "model_kind": a.model_kind,
        "weights_sha256": a.weights_hash, "grades": a.grade_mapping, "fitted_on": a.fitted_on or None,
        "pool": res.pool_version, "documents": res.n_documents, "saved": res.n_saved, "already_stored": res.n_kept,
        "grade_counts": {str(g): n for g, n in res.grades.items()},
        "fit": res.fit.as_dict() if res.fit else None,
    }))
    if res.fit is not None:
        f = res.fit
        kappa = "undefined" if f.kappa is None else f"{f.kappa:.3f}"
        alpha = "undefined" if f.alpha is None else f"{f.alpha:.3f}"
        common.info(f"fit on {a.fitted_on}: {f.n_documents:,} documents, thresholds {a.grade_mapping}; agreement "
                    f"with people: kappa (linear) {kappa}, alpha (ordinal) {alpha}, same grade {f.exact:.1%}, "
                    f"same relevant/non-relevant (grade >= {f.rel}) {f.binary:.1%}")


@app.command("prefill")
def prefill(
    pool: Annotated[str, typer.Argument(help="The pool version.")],
    model: Annotated[str | None, typer.Option(
        help="Turn pre-fill on: this model assessor's grades are shown pre-selected on the Judge page.")] = None,
    off: Annotated[bool, typer.Option("--off", help="Turn pre-fill off (assessors see no model grade).")] = False,
    share: Annotated[float, typer.Option(
        callback=options.number(0.0, 1.0, lo_open=True, what="a share"),
        help="Share of each assessor's documents pre-filled (a fixed draw per assessor and document), so "
             "agreement on pre-filled and not pre-filled documents can be compared. Default 1: every one.")] = 1.0,
    lead: Annotated[str | None, typer.Option("--lead", help="The lead doing this (user name), with --model or --off.")]
    = None,
    token: Annotated[str | None, typer.Option("--token", envvar="WORKBENCH_TOKEN",
                                              help="The lead's access token (or $WORKBENCH_TOKEN).")] = None,
) -> None:
    """Show or set a pool version's pre-fill mode (setting is lead only): with --model NAME, assessors see that
    model assessor's grade pre-selected and marked as the model's, and confirm or change it. Each save records
    which (confirmed or changed); `workbench agreement` then splits the model-vs-person rows into pre-filled and
    not pre-filled documents. --off turns it off; with neither, the setting is printed."""
    from workbench.errors import UsageError
    from workbench.services.judging import assessments as svc
    from workbench.services.judging.model_assessor import set_prefill

    if model is not None and off:
        raise UsageError("give --model NAME (on) or --off, not both")
    store = common.STATE.store(client="workbench prefill")
    if model is None and not off:
        s = store.judging.prefill_setting(pool)
    else:
        if lead is None:
            raise UsageError("--model and --off change the setting: give --lead NAME (and its token)")
        session = svc.sign_in(store.users, lead, token or "")
        s = set_prefill(store.judging, session, pool, None if off else model, share=share)
    if s.on:
        common.out(f"pool {pool}: pre-fill on from model assessor {s.model} ({s.share:.0%} of each assessor's "
                   f"documents; set by {s.set_by})")
    else:
        common.out(f"pool {pool}: pre-fill off (assessors see no model grade)")
