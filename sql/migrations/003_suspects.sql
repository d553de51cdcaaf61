-- 003_suspects: cross-job attribution, "which GPU, node or port keeps
-- killing jobs".
--
-- root_causes.device_uuid: the GPU's UUID when the engine knew it (job.json
-- lists it), NULL otherwise and for every pass stored before this
-- migration.  A PCI bus id names a slot; the UUID names the board in it, so
-- a replaced GPU can be told apart from the one that failed.
ALTER TABLE root_causes ADD COLUMN device_uuid TEXT;

-- One row per component per failed current diagnosis: what
-- agent/suspects/suspect_finder.cpp reads (DiagnosisStore::sightings()).
--   role 'root_cause': every root cause naming a node (an ambiguous verdict
--     names each candidate); domain is the cause's own, else the
--     diagnosis'.  Job-wide causes (time limit, cancel) name no node and
--     are left out: they blame no component.
--   role 'symptom': every active symptom naming a node (a demoted symptom
--     was explained by the root cause and blames nothing); domain and
--     sub_domain are the diagnosis'.
-- seen_at is when it happened: the root cause's time (the symptom's
-- first_time), else when the pass was stored.  created_at is the pass's, for
-- "in the last N days" filters.
CREATE VIEW suspect_sightings AS
SELECT d.job_id, d.attempt, d.id AS diagnosis_id, d.created_at,
       coalesce(CAST(strftime('%s', rc.time) AS INTEGER), d.created_at) AS seen_at,
       d.verdict, 'root_cause' AS role,
       coalesce(rc.domain, d.domain) AS domain,
       coalesce(rc.sub_domain, d.sub_domain) AS sub_domain,
       rc.node, rc.device, rc.device_uuid, rc.event
FROM failed_diagnoses AS d
JOIN root_causes AS rc ON rc.diagnosis_id = d.id
WHERE rc.node IS NOT NULL AND rc.node <> ''
UNION ALL
SELECT d.job_id, d.attempt, d.id AS diagnosis_id, d.created_at,
       coalesce(CAST(strftime('%s', s.first_time) AS INTEGER), d.created_at) AS seen_at,
       d.verdict, 'symptom' AS role,
       d.domain, d.sub_domain,
       s.node, NULL AS device, NULL AS device_uuid, s.kind AS event
FROM failed_diagnoses AS d
JOIN symptoms AS s ON s.diagnosis_id = d.id
WHERE s.status = 'active' AND s.node IS NOT NULL AND s.node <> '';

-- Per component over the last 14 days: each node (device NULL) and each
-- node + device named by a root cause.  jobs counts failed job attempts
-- (one current diagnosis each); root_cause_jobs those in which it was a
-- root cause, symptom_jobs those in which it only had active symptoms.
-- A plain count: `firstfault suspects` (and GET /api/v1/suspects) also set
-- apart systemic events (one fabric outage blaming many nodes at once),
-- weigh attributed over ambiguous, and leave out application faults; this
-- view does none of that.
CREATE VIEW suspects AS
WITH recent AS (
  SELECT * FROM suspect_sightings
  WHERE created_at >= CAST(strftime('%s', 'now') AS INTEGER) - 14 * 86400
  ORDER BY seen_at, job_id, attempt
),
components AS (
  SELECT node, NULL AS device, diagnosis_id, job_id, attempt, role, seen_at FROM recent
  UNION ALL
  SELECT node, device, diagnosis_id, job_id, attempt, role, seen_at FROM recent
  WHERE role = 'root_cause' AND device IS NOT NULL AND device <> ''
)
SELECT node, device,
       count(DISTINCT diagnosis_id) AS jobs,
       count(DISTINCT CASE WHEN role = 'root_cause' THEN diagnosis_id END) AS root_cause_jobs,
       count(DISTINCT diagnosis_id)
         - count(DISTINCT CASE WHEN role = 'root_cause' THEN diagnosis_id END) AS symptom_jobs,
       strftime('%Y-%m-%dT%H:%M:%SZ', min(seen_at), 'unixepoch') AS first_seen,
       strftime('%Y-%m-%dT%H:%M:%SZ', max(seen_at), 'unixepoch') AS last_seen,
       group_concat(DISTINCT CASE WHEN attempt = 0 THEN job_id
                                  ELSE job_id || '.' || attempt END) AS job_list
FROM components
GROUP BY node, device;
