-- 005_evidence_provenance: where each root cause's evidence came from, and
-- whether the job's user could have written it.
--
-- root_causes.origin: the source kind of the event that carries the root
-- cause, as the engine names it (kernel, syslog, fabricmanager, slurmd, app,
-- slurmctld, cluster, metrics, job_state).
-- root_causes.trusted: 1 when that source is one the job's user cannot write
-- (the kernel's own ring buffer, daemon logs written by root, slurmctld,
-- metrics), 0 when a user can (plain syslog files: `logger -t kernel
-- 'NVRM: Xid ...'`; the job's own output). NULL for every pass stored before
-- this migration and for a diagnosis without the field (an older engine):
-- read as untrusted. The drain policy counts only trusted root causes as
-- blames; `firstfault suspects` weighs an untrusted attributed root cause as
-- a candidate.
ALTER TABLE root_causes ADD COLUMN origin TEXT;
ALTER TABLE root_causes ADD COLUMN trusted INTEGER;

-- suspect_sightings as in 003, plus origin and trusted (0 when unknown;
-- symptoms carry no provenance: NULL and 0). The `suspects` view reads
-- named columns of it and stays as it is.
DROP VIEW suspect_sightings;
CREATE VIEW suspect_sightings AS
SELECT d.job_id, d.attempt, d.id AS diagnosis_id, d.created_at,
       coalesce(CAST(strftime('%s', rc.time) AS INTEGER), d.created_at) AS seen_at,
       d.verdict, 'root_cause' AS role,
       coalesce(rc.domain, d.domain) AS domain,
       coalesce(rc.sub_domain, d.sub_domain) AS sub_domain,
       rc.node, rc.device, rc.device_uuid, rc.event,
       rc.origin, coalesce(rc.trusted, 0) AS trusted
FROM failed_diagnoses AS d
JOIN root_causes AS rc ON rc.diagnosis_id = d.id
WHERE rc.node IS NOT NULL AND rc.node <> ''
UNION ALL
SELECT d.job_id, d.attempt, d.id AS diagnosis_id, d.created_at,
       coalesce(CAST(strftime('%s', s.first_time) AS INTEGER), d.created_at) AS seen_at,
       d.verdict, 'symptom' AS role,
       d.domain, d.sub_domain,
       s.node, NULL AS device, NULL AS device_uuid, s.kind AS event,
       NULL AS origin, 0 AS trusted
FROM failed_diagnoses AS d
JOIN symptoms AS s ON s.diagnosis_id = d.id
WHERE s.status = 'active' AND s.node IS NOT NULL AND s.node <> '';
