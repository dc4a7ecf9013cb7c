-- idem_approval_lock (schema v30; the history is in git log).
-- The opening idem_approval_approve and idem_approval_decline share, written once: in a READ
-- COMMITTED transaction (p_verb, "approved" or "declined", names the refusal), locks request
-- p_request's job first, then the request, as every function that changes a job locks the job
-- first. Returns the request (r), its job (j: NULL for a request of any other kind) and what the
-- request names in sentences (what: "job 7", "change request 3"). Internal: granted to no one.
-- Refuses with nothing locked:
--   ID002  no such request
--   ID004  a transaction not READ COMMITTED
CREATE OR REPLACE FUNCTION idem_approval_lock(p_request bigint, p_verb text, OUT r idem_approval_requests,
                                              OUT j idem_jobs, OUT what text)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $lock$
DECLARE
    v_job bigint;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a request is % in a READ COMMITTED transaction, not %', p_verb,
            current_setting('transaction_isolation') USING ERRCODE = 'ID004';
    END IF;
    SELECT x.job_id INTO v_job FROM idem_approval_requests x WHERE x.id = p_request;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no request %', p_request USING ERRCODE = 'ID002',
              HINT = 'idemctl approvals list shows the requests.';
    END IF;
    IF v_job IS NOT NULL THEN
        SELECT * INTO j FROM idem_jobs x WHERE x.id = v_job FOR UPDATE;
    END IF;
    SELECT * INTO r FROM idem_approval_requests x WHERE x.id = p_request FOR UPDATE;
    what := CASE WHEN r.job_id IS NOT NULL THEN format('job %s', r.job_id) ELSE format('change request %s', r.id) END;
END
$lock$;

REVOKE ALL ON FUNCTION idem_approval_lock(bigint, text) FROM PUBLIC;
