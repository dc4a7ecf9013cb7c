-- idem_requeue_reexecute (schema v25; the history is in git log).
-- A requeue that re-executes: idem_requeue's arguments, rights (requeue), approval gate, guard and
-- audit entry (its after image says "redrive": true), and in the same transaction a re-drive item
-- for the key (idem_redrive_enqueue), whose id is redrive_item_id; a registered re-driver of the
-- operation takes it and runs the stored request with the same key. outcome: applied | stale |
-- wrong_state | not_found as idem_requeue, or not_redrivable (nothing changed) when the key has no
-- stored request (its operation was not re-drivable when it was claimed): a plain requeue then
-- leaves the key to its client.
CREATE OR REPLACE FUNCTION idem_requeue_reexecute(p_key text, p_expected_status text, p_expected_updated_at_us bigint,
                                                  p_extra_attempts integer, p_reason text, p_actor text DEFAULT NULL)
RETURNS TABLE (outcome text, status text, updated_at_us bigint, row_image jsonb, audit_id bigint, message text,
               redrive_item_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $reexecute$
DECLARE
    a record;
    r task_idempotency%ROWTYPE;
    v_item bigint;
BEGIN
    PERFORM idem_require_right('requeue', 'requeue a task');
    IF p_key IS NULL OR p_key = '' THEN
        RAISE EXCEPTION 'a key is required' USING ERRCODE = 'ID003';
    END IF;
    IF octet_length(p_key) > 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    IF NOT EXISTS (SELECT FROM idem_stored_requests q WHERE q.idempotency_key = p_key) THEN
        -- The arguments are checked as the requeue would check them, so a bad call is ID003 here too.
        IF p_expected_status IS NULL OR p_expected_updated_at_us IS NULL THEN
            RAISE EXCEPTION 'the status and updated_at the operator saw are required' USING ERRCODE = 'ID003';
        END IF;
        PERFORM audit_check_reason(p_reason, p_actor);
        IF p_extra_attempts IS NULL OR p_extra_attempts NOT BETWEEN 1 AND 1000 THEN
            RAISE EXCEPTION 'extra attempts must be 1 to 1000, not %', p_extra_attempts USING ERRCODE = 'ID003';
        END IF;
        SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'not_found'::text, NULL::text, NULL::bigint, NULL::jsonb, NULL::bigint,
                                'no task with that key'::text, NULL::bigint;
            RETURN;
        END IF;
        RETURN QUERY SELECT 'not_redrivable'::text, r.status, (extract(epoch FROM r.updated_at) * 1000000)::bigint,
                            audit_task_image(r), NULL::bigint,
                            format('no stored request for this key (%s was not re-drivable when it was claimed):'
                                   ' nothing changed; a plain requeue leaves it to its client',
                                   split_part(p_key, ':', 1) || ':' || split_part(p_key, ':', 2)),
                            NULL::bigint;
        RETURN;
    END IF;
    SELECT * INTO a FROM recovery_action_apply('requeue', p_key, p_expected_status, p_expected_updated_at_us,
                                               p_extra_attempts, p_reason, p_actor, NULL, true) x;
    IF a.o_outcome = 'applied' THEN
        v_item := idem_redrive_enqueue(p_key, NULL, a.o_audit_id, idem_caller(), p_actor);
    END IF;
    RETURN QUERY SELECT a.o_outcome, a.o_status, a.o_updated_at_us, a.o_row_image, a.o_audit_id,
                        CASE WHEN v_item IS NULL THEN a.o_message
                             ELSE a.o_message || format('; re-execution queued (item %s)', v_item) END,
                        v_item;
END
$reexecute$;

REVOKE ALL ON FUNCTION idem_requeue_reexecute(text, text, bigint, integer, text, text) FROM PUBLIC;
