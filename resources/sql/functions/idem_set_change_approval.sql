-- idem_set_change_approval (schema v22; the history is in git log).
-- Sets the approval policy's two switches for changes (0022_change_approvals.sql): with
-- p_retention_changes a retention change (idem_set_retention, idem_clear_retention), with
-- p_manual_purges a manual purge (idem_purge_begin, idem_purge: idemctl purge, the console), is
-- refused unless it is the use of a request a second login approved (idem_request_retention,
-- idem_request_purge, idem_change_approve, idem_change_use). A request is approvable for
-- p_ttl_seconds (60 to 604800) and, once approved, usable for as long. Scheduled purges (CALL
-- idem_purge_run from pg_cron) keep running. Requests made before keep their times. One audit
-- entry, action 'approval_policy'. Granted to nobody: the owner of the Idem schema sets it, as
-- idem_set_approval. ID003 for bad arguments, nothing written.
CREATE OR REPLACE FUNCTION idem_set_change_approval(p_retention_changes boolean, p_manual_purges boolean,
                                                    p_ttl_seconds integer, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, retention_changes_need_approval boolean, manual_purges_need_approval boolean,
               change_ttl_seconds integer)
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
    IF p_retention_changes IS NULL OR p_manual_purges IS NULL THEN
        RAISE EXCEPTION 'say whether retention changes and manual purges need approval: true or false, not NULL'
            USING ERRCODE = 'ID003';
    END IF;
    IF p_ttl_seconds IS NULL OR p_ttl_seconds NOT BETWEEN 60 AND 604800 THEN
        RAISE EXCEPTION 'a change request''s time to live must be 60 to 604800 seconds (a week), not %',
                        COALESCE(p_ttl_seconds::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    SELECT * INTO v_old FROM idem_approval_policy FOR UPDATE;
    UPDATE idem_approval_policy p
       SET retention_changes_need_approval = p_retention_changes, manual_purges_need_approval = p_manual_purges,
           change_ttl_seconds = p_ttl_seconds, updated_at = clock_timestamp(),
           updated_by = format('%s (%s)', session_user, v_actor)
    RETURNING p.* INTO v_new;
    audit_id := audit_append('', 'approval_policy', p_reason, v_actor,
                             jsonb_build_object('job_rows', v_old.job_rows, 'ttl_seconds', v_old.ttl_seconds,
                                                'retention_changes_need_approval', v_old.retention_changes_need_approval,
                                                'manual_purges_need_approval', v_old.manual_purges_need_approval,
                                                'change_ttl_seconds', v_old.change_ttl_seconds),
                             jsonb_build_object('job_rows', v_new.job_rows, 'ttl_seconds', v_new.ttl_seconds,
                                                'retention_changes_need_approval', v_new.retention_changes_need_approval,
                                                'manual_purges_need_approval', v_new.manual_purges_need_approval,
                                                'change_ttl_seconds', v_new.change_ttl_seconds));
    UPDATE idem_approval_policy p SET audit_id = idem_set_change_approval.audit_id;
    retention_changes_need_approval := v_new.retention_changes_need_approval;
    manual_purges_need_approval := v_new.manual_purges_need_approval;
    change_ttl_seconds := v_new.change_ttl_seconds;
    RETURN NEXT;
END
$set$;

REVOKE ALL ON FUNCTION idem_set_change_approval(boolean, boolean, integer, text, text) FROM PUBLIC;
