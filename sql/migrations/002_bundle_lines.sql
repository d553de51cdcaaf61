-- 002_bundle_lines: how many lines each stored bundle holds, so the agent
-- can refuse a bundle that would take a job attempt past max_lines_per_job
-- (agent.yaml) without reading the bundles already stored.  Bundles stored
-- before this migration count as 0 lines.
ALTER TABLE bundles ADD COLUMN lines INTEGER NOT NULL DEFAULT 0;
