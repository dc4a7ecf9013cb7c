-- idem_right_list (schema v29; the history is in git log).
-- The rights, the one list of them (docs/development.md, "Adding a right"): one row per right in
-- display order, with the NOLOGIN role that grants it, whether idem_operator is a member of that
-- role, and what it allows. roles.sql creates the roles and idem_operator's memberships from it,
-- idem_right_role and idem_rights() read it, and through idem_rights() so do the console and
-- idemctl rights; tst_docs checks README's table of rights against these rows.
-- read_requests (v25): stored requests hold personal data, so idem_operator does not hold it.
CREATE OR REPLACE FUNCTION idem_right_list()
RETURNS TABLE (ordinal integer, right_name text, grant_role name, operator_holds boolean, description text)
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
SET search_path FROM CURRENT
AS $$
    VALUES
        (1, 'read', 'idem_reader'::name, true, 'the console; idemctl stats, tasks, audit, job status, pauses, storage'),
        (2, 'requeue', 'idem_may_requeue', true, 'requeue a task; start, run and cancel requeue jobs'),
        (3, 'release', 'idem_may_release', true, 'release a task''s lease; release jobs'),
        (4, 'fail', 'idem_may_fail', true, 'mark a task failed; fail jobs'),
        (5, 'pause', 'idem_may_pause', true, 'pause and resume claims'),
        (6, 'purge', 'idem_may_purge', true, 'run the purge, change the retention policy'),
        (7, 'approve', 'idem_may_approve', true, 'approve or decline another login''s request waiting for approval (a recovery job, a retention change, a manual purge); it cancels no job'),
        (8, 'read_requests', 'idem_may_read_requests', false, 'read the content of stored requests (personal data)')
$$;

REVOKE ALL ON FUNCTION idem_right_list() FROM PUBLIC;
