"""DDL of the workbench store, its version, and forward migrations.

Lineage, from raw data to numbers::

    collection ─┬─ collection_versions ─┬─ version_documents ── document_texts
                │                       └─ document_metadata (key -> typed value; in the version hash)
                └─ topics ── topic_metadata (key -> typed value; replaced values in topic_metadata_history)
    runs (kind, params, collection_version, depth) ── run_entries, run_topics (ok|empty|error)
    pools (pool_version, parent, runs, depth, strategy, kind) ── pool_entries ── pool_provenance (run, rank)
          kind 'sample': ── sample_entries (stratum, inclusion) ── sample_strata (N_h, n_h) ── sample_frame
    users ── assignments (pool_version, topic, doc, assessor)
          ── judgments (append-only; current = latest per topic/doc/assessor; rubric_version)
    rubric_versions (rubric, version, content_hash, definition)   # rubrics defined from files
    miss_lists (run x qrels version x k x rel x evidence fingerprint) ── miss_entries (rule cause, evidence)
    miss_causes (append-only lead causes with a note; current = latest per run/qrels/topic/doc)
          ── adjudications (append-only; current = latest per topic/doc)
          ── judging_settings (strategy, stopping; per pool version) ── topic_orders (re-orderings, stops)
          ── model_assessors (users of kind model: model, weights hash, grade mapping)
          ── prefill_settings (per pool version: the model assessor whose grades are pre-filled, share)
    qrels_versions (immutable: parent, pool_version, rule, counts, content_hash, sample_design) ── qrels_entries
                                                                                ── qrels_model_inputs
                                                                                ── qrels_exports
    evaluations (run x qrels version x measure, numerator/denominator, evaluator version;
                 params: git commit, run content hash, topic set)
    topic_sets (name, version, protected) ── topic_set_members; topic_set_uses (command, runs, outcome)
    embeddings (model_key, text_hash) -> vector   # dense-retrieval cache
    run_lineage (rerank run -> candidate run, candidate depth, reranker, model) ── rerank_costs,
        rerank_topic_costs (measured wall ms per topic)
    ann_index_stats (dense run -> index kind, params, build ms, bytes, latency p50/p95, QPS)
    ann_recalls (approximate run x exact reference run x k) ── ann_recall_topics (numerator, denominator, ties)

Rules:
* Facts are append-only: judgments and adjudications are never updated or
  deleted; the current grade is the ``current_judgments`` view.
* Versions are immutable: a collection version, run, pool version or qrels
  version is written once, in one transaction, and never changed.
* All identifiers are VARCHAR.
"""

from __future__ import annotations

SCHEMA_VERSION = 14

DDL_V1: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS meta (
        key VARCHAR PRIMARY KEY,
        value VARCHAR NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS collections (
        collection VARCHAR PRIMARY KEY,
        description VARCHAR NOT NULL DEFAULT '',
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE TABLE IF NOT EXISTS collection_versions (
        collection_version VARCHAR PRIMARY KEY,   -- sha256 over sorted (doc_id, text_hash)
        collection VARCHAR NOT NULL,
        parent_version VARCHAR,                   -- the collection's previous version, if any
        n_documents INTEGER NOT NULL,
        source VARCHAR NOT NULL DEFAULT '',
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE TABLE IF NOT EXISTS document_texts (
        text_hash VARCHAR PRIMARY KEY,            -- sha256 of title + '\\x1f' + text
        title VARCHAR NOT NULL,
        text VARCHAR NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS version_documents (
        collection_version VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        text_hash VARCHAR NOT NULL,
        PRIMARY KEY (collection_version, doc_id)
    )""",
    """CREATE TABLE IF NOT EXISTS topics (
        collection VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        title VARCHAR NOT NULL,
        description VARCHAR NOT NULL DEFAULT '',
        narrative VARCHAR NOT NULL DEFAULT '',
        source VARCHAR NOT NULL DEFAULT '',
        PRIMARY KEY (collection, topic_id)
    )""",
    """CREATE TABLE IF NOT EXISTS runs (
        run_name VARCHAR PRIMARY KEY,
        collection VARCHAR NOT NULL,
        collection_version VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,                    -- bm25 | dense | fusion | imported
        params VARCHAR NOT NULL DEFAULT '{}',     -- JSON
        depth INTEGER NOT NULL,
        description VARCHAR NOT NULL DEFAULT '',
        source VARCHAR NOT NULL DEFAULT '',       -- file path for imported runs
        content_hash VARCHAR NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE TABLE IF NOT EXISTS run_entries (
        run_name VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        rank INTEGER NOT NULL,                    -- canonical rank (workbench.ranking)
        score DOUBLE NOT NULL,
        PRIMARY KEY (run_name, topic_id, doc_id)
    )""",
    """CREATE TABLE IF NOT EXISTS run_topics (
        run_name VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        status VARCHAR NOT NULL CHECK (status IN ('ok', 'empty', 'error')),
        n_results INTEGER NOT NULL,
        message VARCHAR NOT NULL DEFAULT '',
        PRIMARY KEY (run_name, topic_id)
    )""",
    """CREATE TABLE IF NOT EXISTS pools (
        pool_version VARCHAR PRIMARY KEY,
        collection VARCHAR NOT NULL,
        collection_version VARCHAR NOT NULL,
        parent_version VARCHAR,                   -- pool this one extends (delta pools)
        depth INTEGER NOT NULL,
        strategy VARCHAR NOT NULL,                -- e.g. depth-k union
        params VARCHAR NOT NULL DEFAULT '{}',     -- JSON: priority, budget, ...
        runs VARCHAR NOT NULL DEFAULT '[]',       -- JSON list of run names pooled
        n_topics INTEGER NOT NULL,
        n_entries INTEGER NOT NULL,
        content_hash VARCHAR NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE TABLE IF NOT EXISTS pool_entries (
        pool_version VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        best_rank INTEGER NOT NULL,
        n_runs INTEGER NOT NULL,
        priority DOUBLE NOT NULL,                 -- higher = judge first
        priority_rank INTEGER NOT NULL,           -- 1-based position within the topic
        PRIMARY KEY (pool_version, topic_id, doc_id)
    )""",
    """CREATE TABLE IF NOT EXISTS pool_provenance (
        pool_version VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        run_name VARCHAR NOT NULL,
        rank INTEGER NOT NULL,
        PRIMARY KEY (pool_version, topic_id, doc_id, run_name)
    )""",
    """CREATE TABLE IF NOT EXISTS users (
        user_name VARCHAR PRIMARY KEY,
        role VARCHAR NOT NULL CHECK (role IN ('assessor', 'lead')),
        token_hash VARCHAR NOT NULL,              -- pbkdf2-sha256, hex
        salt VARCHAR NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
        created_by VARCHAR NOT NULL DEFAULT ''
    )""",
    "CREATE SEQUENCE IF NOT EXISTS assignment_seq",
    """CREATE TABLE IF NOT EXISTS assignments (
        assignment_id BIGINT PRIMARY KEY DEFAULT nextval('assignment_seq'),
        pool_version VARCHAR NOT NULL,
        collection VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        assessor VARCHAR NOT NULL,
        position INTEGER NOT NULL,                -- order in the assessor's queue
        batch VARCHAR NOT NULL DEFAULT '',        -- the assign action that created it
        assigned_by VARCHAR NOT NULL DEFAULT '',
        assigned_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    "CREATE SEQUENCE IF NOT EXISTS judgment_seq",
    """CREATE TABLE IF NOT EXISTS judgments (
        judgment_id BIGINT PRIMARY KEY DEFAULT nextval('judgment_seq'),
        collection VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        assessor VARCHAR NOT NULL,
        grade INTEGER,                            -- NULL when unsure
        unsure BOOLEAN NOT NULL DEFAULT false,
        note VARCHAR NOT NULL DEFAULT '',
        duration_ms BIGINT NOT NULL DEFAULT 0,
        pool_version VARCHAR NOT NULL DEFAULT '',
        save_token VARCHAR UNIQUE,                -- client idempotency key: a retried save lands once
        saved_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    "CREATE SEQUENCE IF NOT EXISTS adjudication_seq",
    """CREATE TABLE IF NOT EXISTS adjudications (
        adjudication_id BIGINT PRIMARY KEY DEFAULT nextval('adjudication_seq'),
        collection VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        grade INTEGER NOT NULL,
        rationale VARCHAR NOT NULL DEFAULT '',
        lead VARCHAR NOT NULL,
        pool_version VARCHAR NOT NULL DEFAULT '',
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE TABLE IF NOT EXISTS qrels_versions (
        qrels_version VARCHAR PRIMARY KEY,
        collection VARCHAR NOT NULL,
        collection_version VARCHAR NOT NULL DEFAULT '',
        parent_version VARCHAR,
        pool_version VARCHAR,
        origin VARCHAR NOT NULL CHECK (origin IN ('published', 'imported')),
        rule VARCHAR NOT NULL DEFAULT '',         -- final-grade rule, or the grade mapping of an import
        source VARCHAR NOT NULL DEFAULT '',
        n_topics INTEGER NOT NULL,
        n_entries INTEGER NOT NULL,
        n_relevant INTEGER NOT NULL,              -- entries with grade >= 1
        content_hash VARCHAR NOT NULL,            -- sha256 over sorted (topic, doc, grade)
        created_by VARCHAR NOT NULL DEFAULT '',
        note VARCHAR NOT NULL DEFAULT '',
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE TABLE IF NOT EXISTS qrels_entries (
        qrels_version VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        grade INTEGER NOT NULL,
        PRIMARY KEY (qrels_version, topic_id, doc_id)
    )""",
    """CREATE TABLE IF NOT EXISTS evaluations (
        evaluation_id VARCHAR NOT NULL,           -- one scoring action
        run_name VARCHAR NOT NULL,
        qrels_version VARCHAR NOT NULL,
        measure VARCHAR NOT NULL,                 -- canonical name, e.g. R@100
        aggregate VARCHAR NOT NULL,               -- macro | micro | ceiling | <topic_id>
        value DOUBLE NOT NULL,
        numerator DOUBLE NOT NULL,
        denominator DOUBLE NOT NULL,
        n_topics INTEGER NOT NULL,
        evaluator_version VARCHAR NOT NULL,
        params VARCHAR NOT NULL DEFAULT '{}',
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE TABLE IF NOT EXISTS embeddings (
        model_key VARCHAR NOT NULL,               -- model name + model file hash
        text_hash VARCHAR NOT NULL,
        vector FLOAT[] NOT NULL,
        PRIMARY KEY (model_key, text_hash)
    )""",
    # Current judgment per (collection, topic, doc, assessor): the latest save.
    """CREATE OR REPLACE VIEW current_judgments AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (
                PARTITION BY collection, topic_id, doc_id, assessor
                ORDER BY judgment_id DESC) AS rn
            FROM judgments) WHERE rn = 1""",
    """CREATE OR REPLACE VIEW current_adjudications AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (
                PARTITION BY collection, topic_id, doc_id
                ORDER BY adjudication_id DESC) AS rn
            FROM adjudications) WHERE rn = 1""",
)

DDL_V2_GATES: tuple[str, ...] = (
    # Named, versioned topic sets (a smoke set, a protected release set) and every use of one.
    """CREATE TABLE IF NOT EXISTS topic_sets (
        name VARCHAR NOT NULL,
        version INTEGER NOT NULL,                 -- 1, 2, ...: a changed content is a new version
        collection VARCHAR NOT NULL DEFAULT '',   -- the collection its topic ids belong to ('' = any)
        protected BOOLEAN NOT NULL DEFAULT false, -- its uses are recorded and shown by `evaluations list`
        n_topics INTEGER NOT NULL,
        content_hash VARCHAR NOT NULL,            -- sha256 over the sorted topic ids
        source VARCHAR NOT NULL DEFAULT '',
        description VARCHAR NOT NULL DEFAULT '',
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (name, version)
    )""",
    """CREATE TABLE IF NOT EXISTS topic_set_members (
        name VARCHAR NOT NULL,
        version INTEGER NOT NULL,
        topic_id VARCHAR NOT NULL,
        PRIMARY KEY (name, version, topic_id)
    )""",
    "CREATE SEQUENCE IF NOT EXISTS topic_set_use_seq",
    """CREATE TABLE IF NOT EXISTS topic_set_uses (
        use_id BIGINT PRIMARY KEY DEFAULT nextval('topic_set_use_seq'),
        name VARCHAR NOT NULL,
        version INTEGER NOT NULL,
        command VARCHAR NOT NULL,                 -- score | compare | gate
        runs VARCHAR NOT NULL DEFAULT '[]',       -- JSON list of run names
        qrels_version VARCHAR NOT NULL DEFAULT '',
        outcome VARCHAR NOT NULL DEFAULT '',      -- gate verdict, or the evaluation ids recorded
        evaluator_version VARCHAR NOT NULL DEFAULT '',
        git_commit VARCHAR NOT NULL DEFAULT '',
        used_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    # Per-topic latency of a run (from a status side file or the retriever).
    "ALTER TABLE run_topics ADD COLUMN IF NOT EXISTS latency_ms DOUBLE",
)

DDL_V3_METADATA: tuple[str, ...] = (
    # Metadata values are stored as (value_type, canonical text): workbench.metadata.canonical.
    """CREATE TABLE IF NOT EXISTS document_metadata (
        collection_version VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        key VARCHAR NOT NULL,
        value_type VARCHAR NOT NULL CHECK (value_type IN ('string', 'number', 'date', 'boolean')),
        value VARCHAR NOT NULL,
        PRIMARY KEY (collection_version, doc_id, key)
    )""",
    """CREATE TABLE IF NOT EXISTS topic_metadata (
        collection VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        key VARCHAR NOT NULL,
        value_type VARCHAR NOT NULL CHECK (value_type IN ('string', 'number', 'date', 'boolean')),
        value VARCHAR NOT NULL,
        source VARCHAR NOT NULL DEFAULT '',
        set_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (collection, topic_id, key)
    )""",
    """CREATE TABLE IF NOT EXISTS topic_metadata_history (
        collection VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        key VARCHAR NOT NULL,
        value_type VARCHAR NOT NULL,
        value VARCHAR NOT NULL,
        source VARCHAR NOT NULL DEFAULT '',
        set_at TIMESTAMPTZ NOT NULL,
        replaced_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
        replaced_by_source VARCHAR NOT NULL DEFAULT ''
    )""",
)

DDL_V4_RERANK: tuple[str, ...] = (
    # Two-stage pipelines (issue 10): a rerank run names the run and depth it reordered,
    # and the cost of reranking, measured per topic.
    """CREATE TABLE IF NOT EXISTS run_lineage (
        run_name VARCHAR PRIMARY KEY,             -- the rerank run
        candidate_run VARCHAR NOT NULL,           -- the run whose top candidate_depth were reranked
        candidate_depth INTEGER NOT NULL,
        reranker VARCHAR NOT NULL,                -- short name for stage labels, e.g. minilm
        reranker_kind VARCHAR NOT NULL CHECK (reranker_kind IN ('bi-encoder', 'cross-encoder', 'external')),
        model_name VARCHAR NOT NULL DEFAULT '',
        model_hash VARCHAR NOT NULL DEFAULT '',   -- sha256 over the model folder's files
        origin VARCHAR NOT NULL CHECK (origin IN ('produced', 'imported'))
    )""",
    """CREATE TABLE IF NOT EXISTS rerank_costs (
        run_name VARCHAR PRIMARY KEY,
        device VARCHAR NOT NULL,
        batch_size INTEGER NOT NULL,
        threads INTEGER NOT NULL,                 -- torch CPU threads, 0 = torch's default
        prepare_ms DOUBLE NOT NULL                -- model loading and document vectors, before any topic
    )""",
    """CREATE TABLE IF NOT EXISTS rerank_topic_costs (
        run_name VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        n_documents INTEGER NOT NULL,
        wall_ms DOUBLE NOT NULL,                  -- measured wall time of the topic's reranking
        PRIMARY KEY (run_name, topic_id)
    )""",
)

DDL_V5_RUBRICS: tuple[str, ...] = (
    # Rubrics defined from files (workbench rubric define): every version kept.
    """CREATE TABLE IF NOT EXISTS rubric_versions (
        rubric VARCHAR NOT NULL,
        version INTEGER NOT NULL,                 -- 1, 2, ... per rubric name
        content_hash VARCHAR NOT NULL,            -- sha256 of the canonical definition
        definition VARCHAR NOT NULL,              -- JSON: name, source, relevant_from, grades
        source_file VARCHAR NOT NULL DEFAULT '',
        created_by VARCHAR NOT NULL DEFAULT '',
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (rubric, version)
    )""",
    # The rubric version each judgment and adjudication was made under ('' before schema version 5).
    "ALTER TABLE judgments ADD COLUMN rubric_version VARCHAR DEFAULT ''",
    "ALTER TABLE adjudications ADD COLUMN rubric_version VARCHAR DEFAULT ''",
    """CREATE OR REPLACE VIEW current_judgments AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (
                PARTITION BY collection, topic_id, doc_id, assessor
                ORDER BY judgment_id DESC) AS rn
            FROM judgments) WHERE rn = 1""",
    """CREATE OR REPLACE VIEW current_adjudications AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (
                PARTITION BY collection, topic_id, doc_id
                ORDER BY adjudication_id DESC) AS rn
            FROM adjudications) WHERE rn = 1""",
)

DDL_V6_ANN: tuple[str, ...] = (
    # Approximate vector indexes (issue 11): how a dense run's index was built and how fast it answered.
    """CREATE TABLE IF NOT EXISTS ann_index_stats (
        run_name VARCHAR PRIMARY KEY,             -- a dense run (exact, hnsw or ivf)
        index_kind VARCHAR NOT NULL CHECK (index_kind IN ('exact', 'hnsw', 'ivf')),
        index_params VARCHAR NOT NULL,            -- JSON: every parameter used, defaults resolved
        metric VARCHAR NOT NULL,                  -- 'inner product of unit vectors (cosine)'
        n_vectors INTEGER NOT NULL,
        dim INTEGER NOT NULL,
        build_ms DOUBLE NOT NULL,                 -- wall ms to train + add (0 for exact)
        index_bytes BIGINT NOT NULL,              -- serialised faiss index (exact: the float32 matrix)
        threads INTEGER,                          -- faiss OpenMP threads while building (NULL for exact)
        faiss_version VARCHAR NOT NULL DEFAULT '',
        n_queries INTEGER NOT NULL,               -- queries timed (per-query wall ms in run_topics.latency_ms)
        latency_p50_ms DOUBLE,
        latency_p95_ms DOUBLE,
        qps DOUBLE                                -- n_queries / summed latency
    )""",
    # ANN-recall@k of an approximate run against the exact run of the same embeddings and metric.
    """CREATE TABLE IF NOT EXISTS ann_recalls (
        run_name VARCHAR NOT NULL,                -- the approximate run
        reference_run VARCHAR NOT NULL,           -- the exact run (same model key, metric, collection version)
        k INTEGER NOT NULL,
        excluded VARCHAR NOT NULL,                -- JSON list: exact-run topics with no neighbours
        n_extra INTEGER NOT NULL,                 -- approximate-run topics the exact run lacks (ignored)
        computed_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (run_name, reference_run, k)
    )""",
    """CREATE TABLE IF NOT EXISTS ann_recall_topics (
        run_name VARCHAR NOT NULL,                -- the approximate run
        reference_run VARCHAR NOT NULL,           -- the exact run (same model key, metric, collection version)
        k INTEGER NOT NULL,
        topic_id VARCHAR NOT NULL,
        numerator INTEGER NOT NULL,               -- |approx top-k ∩ exact top-k|
        denominator INTEGER NOT NULL,             -- |exact top-k|
        boundary_tie BOOLEAN NOT NULL,            -- exact ranks k and k+1 score the same
        tied_outside INTEGER NOT NULL,            -- approx top-k docs outside exact top-k tied with its k-th
        missing BOOLEAN NOT NULL,                 -- the approximate run returned nothing for the topic
        PRIMARY KEY (run_name, reference_run, k, topic_id)
    )""",
)

DDL_V7_MISSES: tuple[str, ...] = (
    # Miss lists (issue 13): a run's categorised misses at cutoff k against a qrels version,
    # kept once per evidence fingerprint (``workbench.services.evaluation.misses``), and the lead's causes.
    "CREATE SEQUENCE IF NOT EXISTS miss_list_seq",
    """CREATE TABLE IF NOT EXISTS miss_lists (
        list_id BIGINT PRIMARY KEY DEFAULT nextval('miss_list_seq'),
        run_name VARCHAR NOT NULL,
        qrels_version VARCHAR NOT NULL,
        k INTEGER NOT NULL,
        rel INTEGER NOT NULL,
        fingerprint VARCHAR NOT NULL,             -- sha256 over the evidence sources and the rules version
        rules_version VARCHAR NOT NULL,
        params VARCHAR NOT NULL,                  -- JSON: collection version, analyser, depth, ...
        n_misses INTEGER NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
        UNIQUE (run_name, qrels_version, k, rel, fingerprint)
    )""",
    """CREATE TABLE IF NOT EXISTS miss_entries (
        list_id BIGINT NOT NULL,
        position INTEGER NOT NULL,                -- order of the list (topic, then grade)
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        grade INTEGER NOT NULL,
        rank INTEGER,                             -- NULL: not returned within the run's depth
        cause VARCHAR NOT NULL,                   -- the rule's cause (workbench.scoring.misses.CAUSES)
        detail VARCHAR NOT NULL,
        evidence VARCHAR NOT NULL,                -- JSON: workbench.scoring.misses.MissEvidence
        PRIMARY KEY (list_id, topic_id, doc_id)
    )""",
    "CREATE SEQUENCE IF NOT EXISTS miss_cause_seq",
    """CREATE TABLE IF NOT EXISTS miss_causes (
        decision_id BIGINT PRIMARY KEY DEFAULT nextval('miss_cause_seq'),
        collection VARCHAR NOT NULL,
        run_name VARCHAR NOT NULL,
        qrels_version VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        cause VARCHAR NOT NULL,
        note VARCHAR NOT NULL,
        lead VARCHAR NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE OR REPLACE VIEW current_miss_causes AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (
                PARTITION BY run_name, qrels_version, topic_id, doc_id
                ORDER BY decision_id DESC) AS rn
            FROM miss_causes) WHERE rn = 1""",
)

DDL_V8_JUDGING_ORDER: tuple[str, ...] = (
    # A pool version's judging strategy and stopping settings, set by a lead (append-only;
    # the current setting is the latest row of the pool version).
    "CREATE SEQUENCE IF NOT EXISTS judging_setting_seq",
    """CREATE TABLE IF NOT EXISTS judging_settings (
        setting_id BIGINT PRIMARY KEY DEFAULT nextval('judging_setting_seq'),
        pool_version VARCHAR NOT NULL,
        strategy VARCHAR NOT NULL,                -- canonical spec (workbench.judging.strategies)
        refresh_every INTEGER NOT NULL,           -- queues re-ordered after this many saves on a topic
        stopping VARCHAR NOT NULL DEFAULT '',     -- stopping rule spec ('' = none)
        budget INTEGER,                           -- judgments per topic (NULL = no budget)
        topic_budgets VARCHAR NOT NULL DEFAULT '{}',  -- JSON topic_id -> budget
        set_by VARCHAR NOT NULL,
        set_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE OR REPLACE VIEW current_judging_settings AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (PARTITION BY pool_version ORDER BY setting_id DESC) AS rn
            FROM judging_settings) WHERE rn = 1""",
    # Each time a strategy re-ordered a topic's queues: how much was judged, whether judging
    # of the topic stopped (and why), the strategy's estimate of relevant documents left.
    "CREATE SEQUENCE IF NOT EXISTS topic_order_seq",
    """CREATE TABLE IF NOT EXISTS topic_orders (
        order_id BIGINT PRIMARY KEY DEFAULT nextval('topic_order_seq'),
        pool_version VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        strategy VARCHAR NOT NULL,
        n_judged INTEGER NOT NULL,                -- documents of the topic judged by people then
        n_relevant INTEGER NOT NULL,              -- of those, relevant
        stopped VARCHAR NOT NULL DEFAULT '',      -- why judging of the topic stopped ('' = it goes on)
        estimate DOUBLE,                          -- estimated relevant documents still unjudged (NULL = none)
        ordered_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE OR REPLACE VIEW current_topic_orders AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (PARTITION BY pool_version, topic_id ORDER BY order_id DESC) AS rn
            FROM topic_orders) WHERE rn = 1""",
    # Model assessors: a user of kind 'model' and what its grades come from (immutable).
    """CREATE TABLE IF NOT EXISTS model_assessors (
        user_name VARCHAR PRIMARY KEY,
        model VARCHAR NOT NULL,                   -- 'minilm' or the model folder
        model_kind VARCHAR NOT NULL,              -- bi-encoder | cross-encoder
        weights_hash VARCHAR NOT NULL,            -- sha256 over the model's files
        grade_mapping VARCHAR NOT NULL,           -- e.g. 0:<0.3,1:<0.5,2:<0.7,3
        fitted_on VARCHAR NOT NULL DEFAULT '',    -- qrels version the thresholds were fitted on
        fit VARCHAR NOT NULL DEFAULT '{}',        -- JSON: the fit's agreement figures
        created_by VARCHAR NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    # Which model assessors' grades a published qrels version took (publish --include-model).
    """CREATE TABLE IF NOT EXISTS qrels_model_inputs (
        qrels_version VARCHAR NOT NULL,
        assessor VARCHAR NOT NULL,
        n_entries INTEGER NOT NULL,               -- entries whose grade came from this model alone
        PRIMARY KEY (qrels_version, assessor)
    )""",
)

DDL_V9_UNITS: tuple[str, ...] = (
    # Retrieval units (issue 13): the chunk map of a chunk collection version (part of its
    # content hash), how it was made, and duplicate groups of a collection version.
    """CREATE TABLE IF NOT EXISTS chunk_maps (
        collection_version VARCHAR NOT NULL,      -- the chunk collection's version
        chunk_id VARCHAR NOT NULL,                -- a document id of that version
        doc_id VARCHAR NOT NULL,                  -- the document it was cut from
        start_offset INTEGER NOT NULL,            -- 0-based character offset in the document's text
        end_offset INTEGER NOT NULL,              -- exclusive
        PRIMARY KEY (collection_version, chunk_id)
    )""",
    """CREATE TABLE IF NOT EXISTS chunk_sources (
        collection_version VARCHAR PRIMARY KEY,   -- the chunk collection's version
        source_collection VARCHAR NOT NULL DEFAULT '',  -- the document collection ('' when not known)
        source_version VARCHAR NOT NULL DEFAULT '',
        chunk_unit VARCHAR NOT NULL DEFAULT '',   -- tokens | chars ('' for an imported map)
        size INTEGER NOT NULL DEFAULT 0,
        overlap INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE IF NOT EXISTS duplicate_groups (
        collection_version VARCHAR NOT NULL,
        group_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        source VARCHAR NOT NULL,                  -- 'identical text' or the groups file it came from
        added_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
        PRIMARY KEY (collection_version, doc_id, source)
    )""",
)

DDL_V10_UNDO: tuple[str, ...] = (
    # A save that *undoes* an earlier save (the judging UI's Undo) names it; the
    # row restores the grade, unsure flag and note the assessor had before it.
    "ALTER TABLE judgments ADD COLUMN IF NOT EXISTS undoes BIGINT",
    # A row without a grade and not unsure is "no judgment": an undone first
    # save (undoes set) or a note saved on its own. The latest row per
    # (collection, topic, doc, assessor) is the assessor's state; it is a
    # current judgment only when it holds a grade or an unsure mark.
    """CREATE OR REPLACE VIEW current_judgments AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (
                PARTITION BY collection, topic_id, doc_id, assessor
                ORDER BY judgment_id DESC) AS rn
            FROM judgments) WHERE rn = 1 AND (grade IS NOT NULL OR unsure)""",
)

DDL_V11_GROUP_MODES: tuple[str, ...] = (
    # How duplicate groups are judged in a pool version (``workbench groups mode``), append-only:
    # ``offer`` (the default: the lead is offered the other members with the grade pre-filled) or
    # ``skip`` (the other members leave the assessors' queues once one member is judged).
    "CREATE SEQUENCE IF NOT EXISTS group_mode_seq",
    """CREATE TABLE IF NOT EXISTS group_modes (
        setting_id BIGINT PRIMARY KEY DEFAULT nextval('group_mode_seq'),
        pool_version VARCHAR NOT NULL,
        mode VARCHAR NOT NULL,                    -- workbench.judging.groups.GROUP_MODES
        set_by VARCHAR NOT NULL,                  -- the lead
        set_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE OR REPLACE VIEW current_group_modes AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (PARTITION BY pool_version ORDER BY setting_id DESC) AS rn
            FROM group_modes) WHERE rn = 1""",
)

DDL_V12_QRELS_EXPORTS: tuple[str, ...] = (
    # A qrels version that is (to be) exported to the labels folder, written in the
    # transaction that publishes it (``publish`` with its export) or before ``qrels export``
    # writes the file: a version recorded here and lacking its file or manifest entry was
    # interrupted (or its file removed), and ``qrels export NAME`` completes it.
    """CREATE TABLE IF NOT EXISTS qrels_exports (
        qrels_version VARCHAR PRIMARY KEY,
        file VARCHAR NOT NULL,                    -- the file's name in the labels folder: <name>.qrels
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
)

DDL_V13_SAMPLES: tuple[str, ...] = (
    # Sampled judging (issue 25): a pool version of kind 'sample' holds a stratified random sample of the
    # depth-D pool of its runs (and of the collection outside it); its pool_entries are the sampled
    # documents, judged like any pool's. Existing pools are depth-k unions.
    "ALTER TABLE pools ADD COLUMN IF NOT EXISTS kind VARCHAR DEFAULT 'depth-k union'",
    # Per sampled document: its stratum and inclusion probability n_h / N_h, fixed before any judgment.
    """CREATE TABLE IF NOT EXISTS sample_entries (
        pool_version VARCHAR NOT NULL,            -- a pool version of kind 'sample'
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        stratum VARCHAR NOT NULL,                 -- 'lo-hi' (best rank across the runs) or 'outside'
        inclusion DOUBLE NOT NULL,                -- n_h / N_h of its stratum
        best_rank INTEGER NOT NULL,               -- 0 for the outside stratum
        PRIMARY KEY (pool_version, topic_id, doc_id)
    )""",
    # Per topic and stratum (empty strata included): N_h documents, n_h of them drawn.
    """CREATE TABLE IF NOT EXISTS sample_strata (
        pool_version VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        stratum VARCHAR NOT NULL,
        population INTEGER NOT NULL,
        sampled INTEGER NOT NULL,
        PRIMARY KEY (pool_version, topic_id, stratum)
    )""",
    # The frame: every pooled document of the runs' top D with its stratum (sampled or not).
    """CREATE TABLE IF NOT EXISTS sample_frame (
        pool_version VARCHAR NOT NULL,
        topic_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        stratum VARCHAR NOT NULL,
        PRIMARY KEY (pool_version, topic_id, doc_id)
    )""",
    # A qrels version published from a sample pool records the design ('' for any other version).
    "ALTER TABLE qrels_versions ADD COLUMN IF NOT EXISTS sample_design VARCHAR DEFAULT ''",
)

DDL_V14_PREFILL: tuple[str, ...] = (
    # Pre-fill (issue 26): a lead lets a model assessor's grade be shown pre-selected on the
    # Judge page for a pool version (append-only; the latest row per pool version is current;
    # model_assessor NULL = off). ``share`` < 1 pre-fills a seeded share of each assessor's documents.
    "CREATE SEQUENCE IF NOT EXISTS prefill_setting_seq",
    """CREATE TABLE IF NOT EXISTS prefill_settings (
        setting_id BIGINT PRIMARY KEY DEFAULT nextval('prefill_setting_seq'),
        pool_version VARCHAR NOT NULL,
        model_assessor VARCHAR,                   -- a user of kind model; NULL = pre-fill off
        share DOUBLE NOT NULL DEFAULT 1.0,        -- share of each assessor's documents pre-filled (0, 1]
        set_by VARCHAR NOT NULL,
        set_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
    )""",
    """CREATE OR REPLACE VIEW current_prefill_settings AS
        SELECT * EXCLUDE (rn) FROM (
            SELECT *, row_number() OVER (PARTITION BY pool_version ORDER BY setting_id DESC) AS rn
            FROM prefill_settings) WHERE rn = 1""",
    # What a save was shown pre-filled, and what the assessor did with it (NULL = nothing pre-filled).
    "ALTER TABLE judgments ADD COLUMN IF NOT EXISTS prefill_assessor VARCHAR",
    "ALTER TABLE judgments ADD COLUMN IF NOT EXISTS prefill_grade INTEGER",
    "ALTER TABLE judgments ADD COLUMN IF NOT EXISTS prefill_outcome VARCHAR",  # confirmed | changed
)

MIGRATIONS: dict[int, tuple[str, ...]] = {
    # from_version -> statements that bring the store to from_version + 1.
    0: DDL_V1,
    1: DDL_V2_GATES,  # topic sets and their uses; run_topics.latency_ms
    2: DDL_V3_METADATA,  # document and topic metadata (workbench.store.metadata)
    3: DDL_V4_RERANK,  # rerank lineage and measured cost (issue 10)
    4: DDL_V5_RUBRICS,  # rubric_versions; judgments/adjudications.rubric_version
    5: DDL_V6_ANN,  # ann_index_stats, ann_recall_topics (issue 11)
    6: DDL_V7_MISSES,  # miss lists, their entries and the lead's miss causes (issue 13)
    7: DDL_V8_JUDGING_ORDER,  # judging strategies, topic orders and stops, model assessors
    8: DDL_V9_UNITS,  # chunk maps, chunk sources, duplicate groups (issue 13)
    9: DDL_V10_UNDO,  # judgments.undoes; current_judgments holds graded or unsure rows only
    10: DDL_V11_GROUP_MODES,  # group_modes: duplicate groups offered to the lead or skipped in queues (issue 13)
    11: DDL_V12_QRELS_EXPORTS,  # qrels_exports: versions whose file the labels folder must hold (issue 26)
    12: DDL_V13_SAMPLES,  # pools.kind; sample pools: entries' strata and inclusion, strata counts, frame (issue 25)
    13: DDL_V14_PREFILL,  # prefill_settings; judgments.prefill_* (a model's grade pre-selected, confirmed or changed)
}
"""Forward migrations. A store at version v runs MIGRATIONS[v], MIGRATIONS[v+1], ...
up to SCHEMA_VERSION, each step in one transaction. Never edit a shipped step;
add a new one and bump SCHEMA_VERSION."""
