"""The root ``workbench --help``, as typer renders it at ``WIDTH`` columns (generated; do not edit).

``workbench.cli.main`` prints ``ROOT_HELP`` for ``workbench --help`` when
click would format at ``WIDTH`` (see ``workbench.cli.help_width``), so that the
commonest help costs no typer import. Regenerate after changing
``workbench.cli.root.COMMANDS``, the root options or the app's help:

    python -m workbench.cli.root_help

``tests/cli/test_fast_paths.py`` fails while this copy differs from typer's.
"""

from __future__ import annotations

WIDTH = 78
"""The width (80-column terminal, or output that is not a terminal) ``ROOT_HELP`` was rendered at."""

ROOT_HELP = (
    'Usage: workbench [OPTIONS] COMMAND [ARGS]...\n'
    '\n'
    '  Relevance-judgment and pooling workbench: ingest a collection, produce runs,\n'
    '  pool them, judge the pool, publish versioned qrels and score runs against\n'
    '  them.\n'
    '\n'
    'Options:\n'
    "  --db <path>             The workbench's DuckDB file. Default: $WORKBENCH_DB,\n"
    '                          else labels/workbench.duckdb.\n'
    '  --lock-timeout <float>  Seconds to wait while another process (e.g. the UI)\n'
    '                          uses the store. Default 300.\n'
    '  --debug / --no-debug    Show tracebacks.  [default: no-debug]\n'
    '  -q, --quiet             No progress or messages on stderr.\n'
    '  --version               Print the version.\n'
    '  --help                  Show this message and exit.\n'
    '\n'
    'Commands:\n'
    '  ingest            Ingest a collection: documents, topics and reference...\n'
    '  collections       List collections with their latest version, counts...\n'
    "  assign            Assign a pool version's documents to assessors (lead...\n"
    "  agreement         Cohen's weighted kappa per assessor pair and...\n"
    '  publish           Publish the final grades of a pool version as an...\n'
    "  ui                Start the judging app (Streamlit) over this project's...\n"
    '  score             Score runs against qrels: R@k with ceilings, macro...\n'
    '  compare           Per-topic differences (relevant documents lost and...\n'
    '  misses            Every (topic, relevant document) the run did not...\n'
    "  miss-cause        A lead sets or overrides the cause of a run's misses,...\n"
    '  gate              Release gate: pass (0), fail (1) or invalid (2) for...\n'
    "  simulate          Replay judging with an oracle's grades instead of...\n"
    '  simulate-sample   Draw a stratified sample again and again against...\n'
    "  strategy          Show or set a pool version's judging strategy and...\n"
    "  judge-with-model  Grade a pool's documents with a model, through the...\n"
    "  prefill           Show or set a pool version's pre-fill mode (setting...\n"
    '  stages            Recall per pipeline stage: R@D [candidates], R@k...\n'
    '  depth-sweep       Rerank the top D of a run for each D: R@D of the...\n'
    '  ann-recall        ANN-recall@k of a dense run: |approximate top-k ∩...\n'
    '  ann-sweep         Sweep an approximate index: per setting ANN-recall@k,...\n'
    "  adjudicate        The lead's adjudication, as on the Adjudicate page:...\n"
    '  demo              Run the whole workflow non-interactively: ingest,...\n'
    '  qrels             Qrels versions: import a file, list, show, export,...\n'
    "  convert           Convert raw collections into the workbench's layout.\n"
    '  groups            Duplicate groups: import a groups file, list a...\n'
    '  run               Runs: produce them (bm25, dense, fuse, rerank),...\n'
    '  pool              Pools: build a depth-k pool of runs (`workbench pool...\n'
    '  users             Users: assessors and leads, each with an access token.\n'
    '  topics            Topic sets: named, versioned lists of topics (a smoke...\n'
    '  evaluations       Recorded evaluations (scoring actions) with their...\n'
    "  filters           Topic eligibility filters: show each filtered topic's...\n"
    '  metadata          Document and topic metadata: list keys and values,...\n'
    '  rubric            Rubrics (grade scales): `workbench rubric COLLECTION...\n'
    "  judgments         Judgments in and out: import a file as one assessor's...\n"
)


if __name__ == "__main__":  # regenerate this file from the typer app
    from pathlib import Path

    from workbench.cli.root import render_root_help

    path = Path(__file__)
    text = path.read_text(encoding="utf-8")
    head, _, _ = text.partition("ROOT_HELP = ")
    _, _, tail = text.partition('\n\n\nif __name__ == "__main__":')
    lines = "".join(f"    {line!r}\n" for line in render_root_help(WIDTH + 2).splitlines(keepends=True))
    path.write_text(f"{head}ROOT_HELP = (\n{lines})\n\n\nif __name__ == \"__main__\":{tail}", encoding="utf-8")
    print(f"wrote {path}")
