-- idem_job_spec (schema v19; the history is in git log).
-- What a recovery job is, exactly: action, extra attempts, filter, moment (microseconds since the
-- epoch), cap and the number of rows matched, as one JSON object. Its SHA-256 (of the jsonb's text,
-- which PostgreSQL prints canonically) is the job's spec_sha256: an approval (a later version)
-- names it, so nothing else can run under that approval. v25: "redrive": true for a requeue job
-- that re-executes what it requeues (absent otherwise, so older jobs keep their digest).
CREATE OR REPLACE FUNCTION idem_job_spec(j idem_jobs)
RETURNS jsonb
LANGUAGE sql
STABLE
SET search_path FROM CURRENT
AS $$
    SELECT jsonb_build_object('action', j.action, 'extra_attempts', j.extra_attempts, 'filter', j.filter,
                              'moment_us', (extract(epoch FROM j.moment) * 1000000)::bigint, 'cap', j.cap,
                              'matched', j.matched)
           || CASE WHEN j.redrive THEN jsonb_build_object('redrive', true) ELSE '{}'::jsonb END
$$;

REVOKE ALL ON FUNCTION idem_job_spec(idem_jobs) FROM PUBLIC;
