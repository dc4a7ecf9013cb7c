-- idem_set_approval (schema v21; the history is in git log).
-- Sets the approval policy: a recovery job that would act on more than p_job_rows rows (0 to
-- 1000000; 0: every job) starts awaiting approval, approvable for p_ttl_seconds (60 to 604800)
-- and, once approved, runnable for as long. Jobs started before keep the policy they started
-- under. One audit entry, action 'approval_policy'. Granted to nobody: the owner of the Idem
-- schema (who runs idemctl migrate) sets it. ID003 for bad arguments, nothing written.
CREATE OR REPLACE FUNCTION idem_set_approval(p_job_rows bigint, p_ttl_seconds integer, p_reason text,
                                             p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, job_rows bigint, ttl_seconds integer)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $set$
DECLARE
    v_old idem_approval_policy;
    v_new idem_approval_policy;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    IF p_job_rows IS NULL OR p_job_rows NOT BETWEEN 0 AND 1000000 THEN
        RAISE EXCEPTION 'the approval threshold must be 0 to 1000000 rows, not % (idem_clear_approval turns approval off)',
                        COALESCE(p_job_rows::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_ttl_seconds IS NULL OR p_ttl_seconds NOT BETWEEN 60 AND 604800 THEN
        RAISE EXCEPTION 'an approval''s time to live must be 60 to 604800 seconds (a week), not %',
                        COALESCE(p_ttl_seconds::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    SELECT * INTO v_old FROM idem_approval_policy FOR UPDATE;
    UPDATE idem_approval_policy p
       SET job_rows = p_job_rows, ttl_seconds = p_ttl_seconds, updated_at = clock_timestamp(),
           updated_by = format('%s (%s)', session_user, v_actor)
    RETURNING p.* INTO v_new;
    audit_id := audit_append('', 'approval_policy', p_reason, v_actor,
                             jsonb_build_object('job_rows', v_old.job_rows, 'ttl_seconds', v_old.ttl_seconds),
                             jsonb_build_object('job_rows', v_new.job_rows, 'ttl_seconds', v_new.ttl_seconds));
    UPDATE idem_approval_policy p SET audit_id = idem_set_approval.audit_id;
    job_rows := v_new.job_rows;
    ttl_seconds := v_new.ttl_seconds;
    RETURN NEXT;
END
$set$;

REVOKE ALL ON FUNCTION idem_set_approval(bigint, integer, text, text) FROM PUBLIC;
