-- 001_initial: the agent's first schema.
--
-- The agent stores what it received (jobs, bundles) and what the engine
-- concluded (one `diagnoses` row per pass, with the diagnosis split into
-- child rows so operators can query it with plain SQL).  The full diagnosis
-- JSON stays in diagnoses.diagnosis_json, exactly as the engine wrote it:
-- the child rows are an index into it, never a replacement.
--
-- Conventions:
--   * job_id is TEXT: Slurm prints array and het jobs as "12_3", "12+1".
--   * *_at columns are unix seconds (INTEGER) of the agent's clock;
--     *_time columns are RFC 3339 UTC text copied from the engine or Slurm.
--   * No CHECK on engine vocabularies (verdict, domain, kind): a newer engine
--     that adds a value must never make a pass fail to store.
--   * No STRICT tables, so an older sqlite3 shell on an operator's laptop can
--     still open a copied database.
-- Applied by the agent in one transaction together with
-- `PRAGMA user_version = 1`; see sql/README.md for the migration rule.

-- One job attempt as the agent knows it, from bundles and scontrol.  Rows
-- are upserted; a bundle or a diagnosis may arrive before the job row, so
-- the other tables do not reference this one.
CREATE TABLE jobs (
  job_id     TEXT    NOT NULL,
  attempt    INTEGER NOT NULL CHECK (attempt >= 0),  -- Slurm restart count
  cluster    TEXT    NOT NULL DEFAULT '',
  user       TEXT    NOT NULL DEFAULT '',
  state      TEXT    NOT NULL DEFAULT '',            -- terminal state, '' while running
  exit_code  TEXT    NOT NULL DEFAULT '',            -- Slurm's "exit:signal"
  start_time TEXT    NOT NULL DEFAULT '',
  end_time   TEXT    NOT NULL DEFAULT '',
  nodes      TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(nodes)),  -- JSON array of node names
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (job_id, attempt)
);

-- Every bundle accepted by POST /api/v1/bundles.  bundle_id is made once by
-- the collector, so the primary key is what turns a retried upload into
-- "200 already stored" instead of a second row.
CREATE TABLE bundles (
  bundle_id   TEXT    PRIMARY KEY NOT NULL,
  job_id      TEXT    NOT NULL,
  attempt     INTEGER NOT NULL,
  node        TEXT    NOT NULL,
  pass        TEXT    NOT NULL,   -- 'step' or 'epilog'
  path        TEXT    NOT NULL,   -- directory under state_dir
  bytes       INTEGER NOT NULL DEFAULT 0,
  received_at INTEGER NOT NULL
);
CREATE INDEX bundles_by_job ON bundles (job_id, attempt, node);

-- One row per engine pass over a job attempt.  pass_no counts 1, 2, ... per
-- job attempt; the newest pass is the current diagnosis, the older ones stay
-- for inspection (what did the fast pass say before the Epilog bundles came?).
-- root_node/root_device/root_event copy the first root cause so the common
-- questions need no join; every root cause is in root_causes.
CREATE TABLE diagnoses (
  id                 INTEGER PRIMARY KEY,
  job_id             TEXT    NOT NULL,
  attempt            INTEGER NOT NULL,
  pass_no            INTEGER NOT NULL CHECK (pass_no >= 1),
  trigger            TEXT    NOT NULL,   -- fastpass | final | deadline | replay
  created_at         INTEGER NOT NULL,
  terminal_state     TEXT,
  verdict            TEXT    NOT NULL,   -- attributed | ambiguous | unattributed | no_failure
  domain             TEXT,
  sub_domain         TEXT,
  recommended_action TEXT,
  summary            TEXT    NOT NULL DEFAULT '',
  root_node          TEXT,
  root_device        TEXT,
  root_event         TEXT,
  comment_status     TEXT    NOT NULL DEFAULT '',  -- written | refused: ... | not_needed | ''
  engine_version     TEXT,
  diagnosis_json     TEXT    NOT NULL CHECK (json_valid(diagnosis_json)),
  UNIQUE (job_id, attempt, pass_no)
);
-- list / history: newest first, optionally since a time.
CREATE INDEX diagnoses_by_created ON diagnoses (created_at);

-- The child tables are keyed by (diagnosis_id, ordinal) so that the
-- ON DELETE CASCADE from diagnoses finds its rows through the primary key
-- instead of scanning the table.  ordinal is the position in the JSON array.

-- Every root cause (an ambiguous verdict lists every candidate).
CREATE TABLE root_causes (
  diagnosis_id INTEGER NOT NULL REFERENCES diagnoses (id) ON DELETE CASCADE,
  ordinal      INTEGER NOT NULL,
  node         TEXT,               -- NULL for a job-wide cause (time limit, cancel)
  device       TEXT,               -- PCI bus id, IB device/port, ...
  event        TEXT    NOT NULL,   -- event kind: xid, ib.port_down, ...
  code         TEXT,               -- Xid number, signal, ...
  time         TEXT,
  summary      TEXT    NOT NULL DEFAULT '',
  domain       TEXT,               -- the cause's own domain (an ambiguous
  sub_domain   TEXT,               --  diagnosis has none of its own)
  PRIMARY KEY (diagnosis_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX root_causes_by_node ON root_causes (node, device);

-- The diagnosis' affected_nodes, one row each, so "every failure that
-- touched node X" is an index lookup.
CREATE TABLE affected_nodes (
  diagnosis_id INTEGER NOT NULL REFERENCES diagnoses (id) ON DELETE CASCADE,
  node         TEXT    NOT NULL,
  PRIMARY KEY (diagnosis_id, node)
) WITHOUT ROWID;
CREATE INDEX affected_nodes_by_node ON affected_nodes (node);

-- Every symptom the engine recognised, per node and kind; 'demoted' ones
-- were explained by the root cause and are kept, never dropped.
CREATE TABLE symptoms (
  diagnosis_id INTEGER NOT NULL REFERENCES diagnoses (id) ON DELETE CASCADE,
  ordinal      INTEGER NOT NULL,
  node         TEXT,
  kind         TEXT    NOT NULL,
  status       TEXT    NOT NULL,   -- active | demoted
  count        INTEGER NOT NULL DEFAULT 0,
  first_time   TEXT,
  explained_by TEXT,
  PRIMARY KEY (diagnosis_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX symptoms_by_kind ON symptoms (kind, node);

-- The log lines the diagnosis rests on.  evidence_id is the engine's id,
-- the one root_causes[].evidence and symptoms[].evidence refer to.
CREATE TABLE evidence (
  diagnosis_id INTEGER NOT NULL REFERENCES diagnoses (id) ON DELETE CASCADE,
  evidence_id  INTEGER NOT NULL,
  time         TEXT,
  node         TEXT,
  source       TEXT    NOT NULL,   -- file inside the incident
  line         INTEGER NOT NULL DEFAULT 0,
  event        TEXT    NOT NULL,
  text         TEXT    NOT NULL DEFAULT '',
  PRIMARY KEY (diagnosis_id, evidence_id)
) WITHOUT ROWID;

-- What was read of each source on each node.  A missing source is never
-- read as health: 'missing' rows here explain an ambiguous verdict.
CREATE TABLE coverage (
  diagnosis_id INTEGER NOT NULL REFERENCES diagnoses (id) ON DELETE CASCADE,
  ordinal      INTEGER NOT NULL,
  node         TEXT,               -- NULL for cluster-wide sources (slurmctld)
  source       TEXT    NOT NULL,   -- kernel, syslog, fabricmanager, slurmd, app, ...
  status       TEXT    NOT NULL,   -- ok | empty | missing | error | partial | not_analysed
  lines        INTEGER NOT NULL DEFAULT 0,
  detail       TEXT    NOT NULL DEFAULT '',
  PRIMARY KEY (diagnosis_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX coverage_by_status ON coverage (status, source);

-- ---------------------------------------------------------------------------
-- Views: the questions operators ask.  Only the newest pass of each job
-- attempt counts: a fast pass superseded by the final pass is not a second
-- failure.  Views take no parameters, so the row views (failed_diagnoses,
-- failure_root_causes) keep created_at for "in the last 7 days" queries and
-- the failures_per_* views aggregate over everything stored.

-- The current diagnosis of every job attempt: its newest pass.  The
-- subquery is a lookup in the UNIQUE (job_id, attempt, pass_no) index.
CREATE VIEW last_diagnoses AS
SELECT d.*,
       strftime('%Y-%m-%dT%H:%M:%SZ', d.created_at, 'unixepoch') AS created
FROM diagnoses AS d
WHERE d.pass_no = (SELECT max(x.pass_no) FROM diagnoses AS x
                   WHERE x.job_id = d.job_id AND x.attempt = d.attempt);

-- Current diagnoses that are failures (anything but no_failure).
CREATE VIEW failed_diagnoses AS
SELECT * FROM last_diagnoses WHERE verdict <> 'no_failure';

-- One row per root cause of a current failed diagnosis.  domain is the
-- cause's own, falling back to the diagnosis' and then to 'unknown'.
CREATE VIEW failure_root_causes AS
SELECT d.id AS diagnosis_id, d.job_id, d.attempt, d.pass_no, d.created_at, d.created,
       d.verdict, rc.ordinal, rc.node, rc.device, rc.event, rc.code, rc.time,
       coalesce(rc.domain, d.domain, 'unknown') AS domain,
       coalesce(rc.sub_domain, d.sub_domain) AS sub_domain,
       rc.summary
FROM failed_diagnoses AS d
JOIN root_causes AS rc ON rc.diagnosis_id = d.id;

-- Root-cause counts per node.  failures counts job attempts (an ambiguous
-- diagnosis naming the node twice counts once); attributed/ambiguous say
-- how certain they were; domains is the breakdown, largest first,
-- e.g. "gpu=3 network=1".
CREATE VIEW failures_per_node AS
WITH per_domain AS (
  SELECT node, domain,
         count(DISTINCT diagnosis_id) AS failures,
         count(DISTINCT CASE WHEN verdict = 'attributed' THEN diagnosis_id END) AS attributed,
         count(DISTINCT CASE WHEN verdict = 'ambiguous' THEN diagnosis_id END) AS ambiguous,
         max(created_at) AS last_seen_at
  FROM failure_root_causes
  WHERE node IS NOT NULL
  GROUP BY node, domain
  ORDER BY node, failures DESC, domain
)
SELECT node,
       (SELECT count(DISTINCT f.diagnosis_id) FROM failure_root_causes AS f
        WHERE f.node = p.node) AS failures,
       sum(attributed) AS attributed,
       sum(ambiguous) AS ambiguous,
       group_concat(domain || '=' || failures, ' ') AS domains,
       max(last_seen_at) AS last_seen_at,
       strftime('%Y-%m-%dT%H:%M:%SZ', max(last_seen_at), 'unixepoch') AS last_seen
FROM per_domain AS p
GROUP BY node;

-- Root-cause counts per GPU (or other device: IB port, NIC) on a node.
-- sub_domains says what failed, e.g. "gpu.fallen_off_bus=2".
CREATE VIEW failures_per_gpu AS
WITH per_kind AS (
  SELECT node, device, coalesce(sub_domain, domain) AS sub_domain,
         count(DISTINCT diagnosis_id) AS failures,
         count(DISTINCT CASE WHEN verdict = 'attributed' THEN diagnosis_id END) AS attributed,
         count(DISTINCT CASE WHEN verdict = 'ambiguous' THEN diagnosis_id END) AS ambiguous,
         max(created_at) AS last_seen_at
  FROM failure_root_causes
  WHERE node IS NOT NULL AND device IS NOT NULL
  GROUP BY node, device, coalesce(sub_domain, domain)
  ORDER BY node, device, failures DESC, sub_domain
)
SELECT node, device,
       (SELECT count(DISTINCT f.diagnosis_id) FROM failure_root_causes AS f
        WHERE f.node = p.node AND f.device = p.device) AS failures,
       sum(attributed) AS attributed,
       sum(ambiguous) AS ambiguous,
       group_concat(sub_domain || '=' || failures, ' ') AS sub_domains,
       max(last_seen_at) AS last_seen_at,
       strftime('%Y-%m-%dT%H:%M:%SZ', max(last_seen_at), 'unixepoch') AS last_seen
FROM per_kind AS p
GROUP BY node, device;

-- Failed job attempts per diagnosis domain (unattributed ones have none:
-- 'unknown').  nodes counts the distinct root-cause nodes.
CREATE VIEW failures_per_domain AS
SELECT coalesce(d.domain, 'unknown') AS domain,
       count(DISTINCT d.id) AS failures,
       count(DISTINCT CASE WHEN d.verdict = 'attributed' THEN d.id END) AS attributed,
       count(DISTINCT CASE WHEN d.verdict = 'ambiguous' THEN d.id END) AS ambiguous,
       count(DISTINCT CASE WHEN d.verdict = 'unattributed' THEN d.id END) AS unattributed,
       count(DISTINCT rc.node) AS nodes,
       max(d.created_at) AS last_seen_at,
       strftime('%Y-%m-%dT%H:%M:%SZ', max(d.created_at), 'unixepoch') AS last_seen
FROM failed_diagnoses AS d
LEFT JOIN root_causes AS rc ON rc.diagnosis_id = d.id
GROUP BY coalesce(d.domain, 'unknown');
