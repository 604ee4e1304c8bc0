"""CLI commands of the judging loop: ``users``, ``assign``, ``agreement``,
``publish``, ``ui``, and ``qrels diff`` (``rubric`` lives in ``workbench.cli.rubric``).

Lead actions take ``--lead NAME --token TOKEN`` (or ``$WORKBENCH_TOKEN``); the
token is checked against its stored hash before anything is written. All
commands work while the UI is running: the store hands the database file over
between processes and says on stderr what it is waiting for.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Annotated

import typer

from workbench import jsonout
from workbench.cli import app, common, options
from workbench.errors import UsageError, WorkbenchError, shown

users_app = typer.Typer(help="Users: assessors and leads, each with an access token.", no_args_is_help=True)
app.add_typer(users_app, name="users")

LeadOpt = Annotated[str, typer.Option("--lead", help="The lead doing this (user name).")]
PUBLISH_FORMATS = ("table", "tsv", "jsonl", "json")
TokenOpt = Annotated[
    str, typer.Option("--token", envvar="WORKBENCH_TOKEN", help="The lead's access token (or $WORKBENCH_TOKEN).")
]


def _lead_session(client: str, lead: str, token: str):  # -> services.judging.assessments.Session
    from workbench.services.judging import assessments as svc

    store = common.STATE.store(client=client)
    return store, svc.sign_in(store.users, lead, token)


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(callback=options.name("user"),
                                        help="New user's name (letters, digits, _.@-).")],
    role: Annotated[str, typer.Option(callback=options.choice("assessor", "lead"),
                                      help="assessor or lead.")] = "assessor",
    token: Annotated[
        str | None, typer.Option(help="The new user's token (>= 8 characters). Default: a random one, printed once.")
    ] = None,
    lead: Annotated[str | None, typer.Option(help="The lead adding the user (needed once a lead exists).")] = None,
    lead_token: Annotated[
        str | None, typer.Option(envvar="WORKBENCH_TOKEN", help="The lead's token (or $WORKBENCH_TOKEN).")
    ] = None,
) -> None:
    """Add a user; prints the access token on stdout (only its hash is stored)."""
    store = common.STATE.store(client="workbench users add")
    if lead is not None:
        store.users.authenticate(lead, lead_token or "")
    plain = store.users.add_user(name, role, token=token, lead=lead)  # type: ignore[arg-type]
    common.info(f"added {role} {name!r}; give them this token (it is not shown again):")
    common.out(plain)


@users_app.command("reset-token")
def users_reset_token(
    name: Annotated[str, typer.Argument(help="The user whose token is replaced.")],
    lead: LeadOpt,
    lead_token: Annotated[
        str, typer.Option(envvar="WORKBENCH_TOKEN", help="The lead's token (or $WORKBENCH_TOKEN).")
    ],
    token: Annotated[str | None, typer.Option(help="The new token. Default: a random one, printed once.")] = None,
) -> None:
    """Replace a user's token (lead only); prints the new token on stdout."""
    store, session = _lead_session("workbench users reset-token", lead, lead_token)
    plain = store.users.reset_token(name, lead=session.user, token=token)
    common.info(f"new token for {name!r} (the old one no longer works):")
    common.out(plain)


@users_app.command("list")
def users_list() -> None:
    """List users and roles (never tokens)."""
    store = common.STATE.store(client="workbench users list")
    for u in store.users.list_users():
        common.out(f"{u.name}\t{u.role}\t{u.created_by}\t{u.created_at:%Y-%m-%d %H:%M}")


@app.command("assign")
def assign(
    pool: Annotated[str, typer.Argument(help="The pool version to judge.")],
    assessors: Annotated[str, typer.Option(help="Comma-separated user names, e.g. ann,bob.")],
    lead: LeadOpt,
    token: TokenOpt,
    overlap: Annotated[int | None, typer.Option(callback=options.count,
                                                help="Assessors per document (default 1).")] = None,
    double_share: Annotated[
        float | None, typer.Option(callback=options.share,
                                   help="Instead of --overlap: share of each topic's documents judged twice (0-1).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the split and of each assessor's order.")] = 0,
    band_size: Annotated[int, typer.Option(callback=options.count,
                                           help="Documents per priority band; order is shuffled within a band.")] = 20,
    strategy: Annotated[str | None, typer.Option(
        callback=options.strategy,
        help="Judging strategy the queues follow live: rank (default: priority bands), mtf, bandit, bandit-mm, "
             "bandit-ts, cal, cal-model, optionally with parameters, e.g. cal(batch=5). See `workbench strategy`.",
    )] = None,
    refresh_every: Annotated[int, typer.Option(callback=options.count,
                                               help="With --strategy: re-order a topic after this many saves.")] = 1,
    stop: Annotated[str, typer.Option(
        callback=options.stopping,
        help="With --strategy: per-topic stopping rule, e.g. knee(min_judged=30) or stop_after_nonrelevant(n=20).",
    )] = "",
    budget: Annotated[int | None, typer.Option(
        callback=options.count,
        help="With --strategy: stop judging a topic after this many judgments (per-topic budgets: "
             "`workbench strategy --topic-budget`).")] = None,
) -> None:
    """Assign a pool version's documents to assessors (lead only)."""
    from workbench.services.judging import assessments as svc

    names = [a.strip() for a in assessors.split(",") if a.strip()]
    store, session = _lead_session("workbench assign", lead, token)
    if strategy is None and (stop or budget is not None or refresh_every != 1):
        raise UsageError("--stop, --budget and --refresh-every need --strategy (or use `workbench strategy`)")
    rep = svc.assign_pool(store, session, pool, names, overlap=overlap, double_share=double_share,
                          seed=seed, band_size=band_size, strategy=strategy, refresh_every=refresh_every,
                          stopping=stop, budget=budget)
    for a in names:
        common.out(f"{a}\t{rep.added.get(a, 0)} assigned\t{rep.skipped.get(a, 0)} already in queue")
    common.info(f"[finished] assign {pool}: {sum(rep.added.values())} queue entries added (batch {rep.batch})")


@app.command("agreement")
def agreement(
    pool: Annotated[str, typer.Argument(help="The pool version (its ancestors included).")],
    weights: Annotated[str, typer.Option(callback=options.choice("linear", "quadratic"),
                                         help="Kappa weights: linear or quadratic.")] = "linear",
) -> None:
    """Cohen's weighted kappa per assessor pair and Krippendorff's alpha per topic and overall (TSV). Then,
    as on the UI's Agreement page, each model assessor against each person: the share given the model's grade,
    kappa and alpha (scope MODEL|PERSON; once any judgment was saved with a model's grade pre-filled, also
    MODEL|PERSON|pre-filled, with how many were confirmed, and MODEL|PERSON|not pre-filled)."""
    from workbench.services.judging import assessments as svc
    from workbench.services.judging.model_assessor import model_agreement

    store = common.STATE.store(client="workbench agreement")
    rep = svc.agreement(store.judging, store.rubrics, store.pools, pool, weights=weights)  # type: ignore[arg-type]
    models = model_agreement(store.judgments, store.pools, store.rubrics, pool, weights=weights)  # type: ignore[arg-type]
    common.out("figure\tscope\tvalue\tn_items\tnote")

    def line(figure: str, scope: str, value: float | None, n: int, reason: str) -> None:
        common.out(f"{figure}\t{scope}\t{'' if value is None else repr(value)}\t{n}\t{reason}")

    for p in rep.pairs:
        line(f"kappa_{weights}", f"{p.assessor_a}|{p.assessor_b}", p.kappa.value, p.kappa.n_items, p.kappa.reason)
    for t, f in rep.alpha_by_topic.items():
        line("alpha_ordinal", f"topic {t}", f.value, f.n_items, f.reason)
    a = rep.alpha_overall
    line("alpha_ordinal", "all", a.value, a.n_items, a.reason)
    for m in models:
        scope = f"{m.model}|{m.person}" + ("" if m.subset == "all" else f"|{m.subset}")
        confirmed = f"{m.n_confirmed} confirmed" if m.subset == "pre-filled" else ""
        line("model_same_grade", scope, m.same_grade, m.n_items, confirmed or ("no items" if not m.n_items else ""))
        line(f"model_kappa_{weights}", scope, m.kappa.value, m.kappa.n_items, m.kappa.reason)
        line("model_alpha_ordinal", scope, m.alpha.value, m.alpha.n_items, m.alpha.reason)


@app.command("publish")
def publish(
    pool: Annotated[str, typer.Argument(help="The pool version whose final grades are frozen.")],
    name: Annotated[str, typer.Option(callback=options.name("qrels"),
                                      help="Name of the new qrels version (immutable).")],
    lead: LeadOpt,
    token: TokenOpt,
    parent: Annotated[str | None, typer.Option(help="The qrels version this one revises (its entries are kept).")] = None,
    rule: Annotated[
        str, typer.Option(callback=options.final_grade_rule,
                          help="Final-grade fallback after adjudicated > unanimous: median, majority, max or min.")
    ] = "median",
    note: Annotated[str, typer.Option(help="Free text recorded with the version.")] = "",
    export: Annotated[bool, typer.Option(help="Also write <NAME>.qrels in the database's folder (labels/ by default) and update its "
                                                  "manifest.")] = True,
    fmt: Annotated[str, typer.Option("--format", callback=options.choice(*PUBLISH_FORMATS),
                                     help="table (field, value lines), tsv, jsonl or json.")] = "table",
    include_model: Annotated[bool, typer.Option(
        help="Where no person judged a document, take model assessors' grades (recorded in the version). "
             "Default: model judgments are left out.")] = False,
) -> None:
    """Publish the final grades of a pool version as an immutable qrels version (lead only).

    Prints the version (counts, hash, diff against the parent, the file written) and how
    its final grades were decided: unanimous, adjudicated by a lead, by the rule's fallback
    where assessors disagreed (--rule), or unresolved (unsure only).
    """
    from workbench.services.judging import assessments as svc


    store, session = _lead_session("workbench publish", lead, token)
    res = svc.publish(store.qrels, session, pool, name, rule=rule, parent_version=parent,
                      labels_dir=common.STATE.config.labels_dir if export else None, note=note,
                      include_model=include_model,
                      rubric=store.rubrics.collection_rubric(store.pools.get_pool(pool).collection))
    i, d, decided = res.info, res.diff, res.decided
    n_pooled, n_graded = svc.publish_coverage(store.qrels, pool, i.name)
    row = {
        "name": i.name, "parent": i.parent_version, "pool": i.pool_version, "rule": i.rule,
        "topics": i.n_topics, "entries": i.n_entries, "relevant": i.n_relevant, "hash": i.content_hash,
        "added": d.added, "changed": d.changed, "removed": d.removed,
        "pooled": n_pooled, "pooled_with_grade": n_graded,
        "unanimous": decided.unanimous, "adjudicated": decided.adjudicated, "by_fallback": decided.fallback,
        "fallback": decided.fallback_name, "unresolved": decided.unresolved,
        "file": str(res.path) if res.path else None,
    }
    if include_model:  # which model assessors supplied how many entries (recorded with the version)
        row["from_model"] = decided.model
        row["model_entries"] = store.qrels.qrels_model_inputs(i.name)
    if fmt in ("json", "jsonl"):
        common.out(jsonout.dumps(row))
    elif fmt == "tsv":
        common.out("\t".join(row))
        common.out("\t".join("" if v is None else str(v) for v in row.values()))
    else:
        width = max(len(k) for k in row)
        for key, value in row.items():
            common.out(f"{key:<{width}}  {'-' if value is None else value}")
    common.info(f"[finished] published {i.name}: {i.n_entries} entries ({i.rule}); diff vs "
                f"{i.parent_version or 'nothing'}: +{d.added} ~{d.changed} -{d.removed}")
    common.info(f"  {decided.describe()}")
    if decided.fallback:
        common.info(f"  the {decided.fallback:,} grades decided by the fallback are listed by `workbench adjudicate "
                    f"{pool} --list`; a lead's adjudication overrides them in the next version")
    if n_graded < n_pooled:
        share = n_graded / n_pooled if n_pooled else 0.0
        common.info(f"[warning] only {n_graded:,} of {n_pooled:,} pooled documents ({share:.1%}) have a final "
                    f"grade; the other {n_pooled - n_graded:,} are not in {i.name}, so every run that "
                    "retrieves them sees them as unjudged (pool-novel). Judge them and publish a new version.")
    if i.parent_version and d.empty:
        common.info(f"[warning] {i.name} has the same entries as its parent {i.parent_version}: "
                    "nothing was judged since (did you forget to judge the new pool?)")


def _check_port_free(host: str, port: int) -> None:
    """Fail early, with the remedy, when the port is taken (Streamlit only says "not available")."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            raise WorkbenchError(
                f"port {port} on {host} is in use ({e.strerror}); another `workbench ui` may be running. "
                "Choose another port with --port (make demo PORT=...)."
            ) from e


def is_loopback(host: str) -> bool:
    """True for an address only this machine can reach: ``localhost`` or a
    loopback IP (127.0.0.0/8, ::1). Anything else (``0.0.0.0``, ``::``, a LAN
    address, a host name) may be reachable from other machines."""
    import ipaddress

    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


@app.command("ui")
def ui(
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8501,
    host: Annotated[str, typer.Option(help="Address to bind; 127.0.0.1 (this machine only) unless --allow-remote.")]
    = "127.0.0.1",
    allow_remote: Annotated[bool, typer.Option(
        "--allow-remote", help="Allow a --host other machines can reach. The UI speaks plain HTTP: access tokens "
        "and session ids travel in clear text, so put it behind a TLS proxy.")] = False,
) -> None:
    """Start the judging app (Streamlit) over this project's store."""
    import importlib.util

    from workbench.app import APP_PATH

    if not is_loopback(host):
        if not allow_remote:
            raise typer.BadParameter(
                f"expected a loopback address (127.0.0.1, ::1, localhost), found {shown(host)}, which other "
                "machines may reach over plain HTTP, where access tokens travel in clear text; keep the default, "
                "or pass --allow-remote (behind a TLS proxy)", param_hint="'--host'")
        typer.echo(f"[warning] the UI listens on {host}:{port} over plain HTTP: access tokens and session ids "
                    "travel in clear text; serve it behind a TLS proxy (HTTPS) or on a trusted network only", err=True)
    if importlib.util.find_spec("streamlit") is None:
        raise WorkbenchError("the UI needs Streamlit: install the [ui] extra (pip install -e '.[ui]')")
    _check_port_free(host, port)
    db = common.STATE.config.db_path.resolve()
    env = dict(os.environ, WORKBENCH_DB=str(db), WORKBENCH_LOCK_TIMEOUT=str(common.STATE.config.lock_timeout_s))
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(APP_PATH),
        "--server.address", host, "--server.port", str(port),
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none", "--server.runOnSave", "false", "--client.toolbarMode", "minimal",
        # One script thread per browser session: a rerun waits for the previous run's
        # callback (a save) to finish, so what a run renders is what the store holds.
        "--runner.fastReruns", "false",
    ]
    common.info(f"[starting] judging UI on http://{host}:{port} over {db} (Ctrl+C stops it)")
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        # Become the Streamlit server: signals (Ctrl+C, SIGTERM) reach it directly
        # and no orphan keeps the database file after this command is stopped.
        os.execve(sys.executable, cmd, env)
    rc = subprocess.call(cmd, env=env)  # pragma: no cover - non-POSIX
    if rc:  # pragma: no cover
        raise typer.Exit(rc)


def _add_qrels_diff() -> None:
    try:
        from workbench.cli.qrels import qrels_app
    except ImportError:  # pragma: no cover - the qrels group is optional during development
        return

    @qrels_app.command("diff")
    def diff(
        old: Annotated[str, typer.Argument(help="The older qrels version (e.g. the parent).")],
        new: Annotated[str, typer.Argument(help="The newer qrels version.")],
    ) -> None:
        """Entries added (+), changed (~) and removed (-) from OLD to NEW, one per line."""
        store = common.STATE.store(client="workbench qrels diff")
        d = store.qrels.qrels_diff(old, new)
        for q in d.added:
            common.out(f"+\t{q.topic_id}\t{q.doc_id}\t{q.grade}")
        for t, doc, o, n in d.changed:
            common.out(f"~\t{t}\t{doc}\t{o}\t{n}")
        for q in d.removed:
            common.out(f"-\t{q.topic_id}\t{q.doc_id}\t{q.grade}")
        common.info(f"{old} -> {new}: +{len(d.added)} ~{len(d.changed)} -{len(d.removed)}")


_add_qrels_diff()
