-- idem_redrive_enqueue (schema v25; the history is in git log).
-- Queues a re-execution of key p_key, just requeued (audit entry p_audit_id) by a single requeue
-- (p_job_id NULL) or a requeue job's batch, for role p_role and actor p_actor; returns the item's
-- id. A key with an open item already (queued or running) keeps it, now carrying this request (its
-- job, audit entry, requester; due now). A key without a stored request gets an item that is
-- 'gone' at once (only a job gets there: a single requeue is refused as not_redrivable first).
-- NOTIFY idem_redrive 'tenant:operation' wakes the operation's re-drivers.
CREATE OR REPLACE FUNCTION idem_redrive_enqueue(p_key text, p_job_id bigint, p_audit_id bigint, p_role text,
                                                p_actor text)
RETURNS bigint
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $enqueue$
DECLARE
    v_tenant text := split_part(p_key, ':', 1);
    v_operation text := split_part(p_key, ':', 2);
    v_actor text := COALESCE(NULLIF(btrim(COALESCE(p_actor, '')), ''), 'unknown');
    v_id bigint;
BEGIN
    IF NOT EXISTS (SELECT FROM idem_stored_requests q WHERE q.idempotency_key = p_key) THEN
        INSERT INTO idem_redrive_items (idempotency_key, tenant, operation, job_id, state, requested_at, requested_role,
                                        requested_actor, finished_at, detail, audit_id)
        VALUES (p_key, v_tenant, v_operation, p_job_id, 'gone', now(), p_role, v_actor, now(),
                'no stored request: the key waits for its client', p_audit_id)
        RETURNING id INTO v_id;
        RETURN v_id;
    END IF;
    INSERT INTO idem_redrive_items AS i (idempotency_key, tenant, operation, job_id, state, requested_at,
                                         requested_role, requested_actor, audit_id)
    VALUES (p_key, v_tenant, v_operation, p_job_id, 'queued', now(), p_role, v_actor, p_audit_id)
    ON CONFLICT (idempotency_key) WHERE state IN ('queued', 'running')
    DO UPDATE SET job_id = COALESCE(EXCLUDED.job_id, i.job_id), audit_id = EXCLUDED.audit_id,
                  requested_at = EXCLUDED.requested_at, requested_role = EXCLUDED.requested_role,
                  requested_actor = EXCLUDED.requested_actor, not_before = NULL
    RETURNING i.id INTO v_id;
    PERFORM pg_notify('idem_redrive', v_tenant || ':' || v_operation);
    RETURN v_id;
END
$enqueue$;

REVOKE ALL ON FUNCTION idem_redrive_enqueue(text, bigint, bigint, text, text) FROM PUBLIC;
