-- 004_drain_actions: what the drain policy (agent.yaml `drain:`, off by
-- default) decided after a final or deadline pass of a failed job: one row
-- per root-cause node of the pass, whether it drained the node or not.
-- Declines are kept as well as drains, so "why was n7 not drained?" has an
-- answer, and the hourly limit (drain.max_per_hour) is counted from here.
--   decision 'drained'      scontrol drained the node (detail: its answer)
--            'would_drain'  drain.dry_run: everything said drain, scontrol
--                           was not called
--            'declined'     reason says why ("verdict ambiguous", "blamed 2
--                           of 3 times in 14 days", "limit: ...", ...)
--            'failed'       scontrol or the policy failed (detail: why)
--   reason   for drained/would_drain the Reason given to Slurm
--            ("firstfault: gpu.fallen_off_bus 00000000:3B:00.0 in jobs 12,13")
--   blames   the node's hardware blames in the window when it was decided
-- No foreign key to diagnoses: a drain stays on record even when the pass
-- that caused it is deleted.
CREATE TABLE drain_actions (
  id           INTEGER PRIMARY KEY,
  created_at   INTEGER NOT NULL,
  job_id       TEXT    NOT NULL,
  attempt      INTEGER NOT NULL DEFAULT 0,
  diagnosis_id INTEGER,
  node         TEXT    NOT NULL,
  device       TEXT    NOT NULL DEFAULT '',
  decision     TEXT    NOT NULL CHECK (decision IN ('drained', 'would_drain', 'declined', 'failed')),
  reason       TEXT    NOT NULL DEFAULT '',
  blames       INTEGER NOT NULL DEFAULT 0,
  detail       TEXT    NOT NULL DEFAULT ''
);
-- The hourly limit and `firstfault drains --since`.
CREATE INDEX drain_actions_by_created ON drain_actions (created_at);
CREATE INDEX drain_actions_by_node ON drain_actions (node, created_at);
