-- idem_set_approval_policy (schema v28; the history is in git log).
-- The approval policy's one setter: for gated kind p_kind (a row of idem_approval_kinds: 'job',
-- 'retention', 'purge', or any kind added since), whether its requests wait for another login's
-- approval (p_gated), for a row-counting kind (a job) only above p_over_rows rows (0 to 1000000;
-- NULL: every one), and how long a request stays approvable and its approval usable
-- (p_ttl_seconds, 60 to 604800). Requests made before keep their times. One audit entry, action
-- 'approval_policy', the kind's row before and after. Granted to nobody: the owner of the Idem
-- schema (who runs idemctl migrate) sets it. ID002 for a kind that is not registered, ID003 for
-- bad arguments; nothing written.
CREATE OR REPLACE FUNCTION idem_set_approval_policy(p_kind text, p_gated boolean, p_over_rows bigint,
                                                    p_ttl_seconds integer, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (audit_id bigint, kind text, gated boolean, over_rows bigint, ttl_seconds integer)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $set$
DECLARE
    v_old idem_approval_kinds;
    v_new idem_approval_kinds;
    v_actor text := btrim(COALESCE(p_actor, ''));
BEGIN
    IF p_kind IS NULL THEN
        RAISE EXCEPTION 'name the gated kind whose policy to set' USING ERRCODE = 'ID003';
    END IF;
    IF p_gated IS NULL THEN
        RAISE EXCEPTION 'say whether % needs approval: true or false, not NULL', p_kind USING ERRCODE = 'ID003';
    END IF;
    IF p_over_rows IS NOT NULL AND p_over_rows NOT BETWEEN 0 AND 1000000 THEN
        RAISE EXCEPTION 'the approval threshold must be 0 to 1000000 rows (NULL: every request), not %', p_over_rows
            USING ERRCODE = 'ID003';
    END IF;
    IF p_ttl_seconds IS NULL OR p_ttl_seconds NOT BETWEEN 60 AND 604800 THEN
        RAISE EXCEPTION 'an approval''s time to live must be 60 to 604800 seconds (a week), not %',
                        COALESCE(p_ttl_seconds::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM audit_check_reason(p_reason, p_actor);
    SELECT * INTO v_old FROM idem_approval_kinds k WHERE k.kind = p_kind FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no gated kind %', quote_literal(left(p_kind, 64))
            USING ERRCODE = 'ID002',
                  HINT = format('The gated kinds: %s (idemctl approvals policy).',
                                (SELECT string_agg(k.kind, ', ' ORDER BY k.kind) FROM idem_approval_kinds k));
    END IF;
    IF p_over_rows IS NOT NULL AND p_kind <> 'job' THEN
        RAISE EXCEPTION 'a % request counts no rows: its threshold is NULL, not %', p_kind, p_over_rows
            USING ERRCODE = 'ID003';
    END IF;
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    UPDATE idem_approval_kinds k
       SET gated = p_gated, over_rows = p_over_rows, ttl_seconds = p_ttl_seconds, updated_at = clock_timestamp(),
           updated_by = format('%s (%s)', session_user, v_actor)
     WHERE k.kind = p_kind
    RETURNING k.* INTO v_new;
    audit_id := audit_append('', 'approval_policy', p_reason, v_actor,
                             jsonb_build_object('kind', v_old.kind, 'gated', v_old.gated, 'over_rows', v_old.over_rows,
                                                'ttl_seconds', v_old.ttl_seconds),
                             jsonb_build_object('kind', v_new.kind, 'gated', v_new.gated, 'over_rows', v_new.over_rows,
                                                'ttl_seconds', v_new.ttl_seconds));
    UPDATE idem_approval_kinds k SET audit_id = idem_set_approval_policy.audit_id WHERE k.kind = p_kind;
    kind := v_new.kind;
    gated := v_new.gated;
    over_rows := v_new.over_rows;
    ttl_seconds := v_new.ttl_seconds;
    RETURN NEXT;
END
$set$;

REVOKE ALL ON FUNCTION idem_set_approval_policy(text, boolean, bigint, integer, text, text) FROM PUBLIC;
