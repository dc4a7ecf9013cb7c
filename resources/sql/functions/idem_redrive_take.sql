-- idem_redrive_take (schema v25, changed in v27; the history is in git log).
-- Up to p_limit (1 to 100) re-drive items of operation p_operation (of tenant p_tenant, '*': of
-- every tenant) for re-driver p_worker, oldest first: queued ones that are due (not_before), and
-- running ones whose item lease has expired (their re-driver died). Each is locked with SKIP
-- LOCKED (two re-drivers never take the same item) and marked running: worker, the login,
-- tries + 1, lease_until now + p_lease_ms (1000 to 3600000). Returned with the stored request and
-- its digest, which the re-driver runs through the ordinary claim (idem_claim_stored or claim),
-- fence and complete with the same key. Items whose key is gone (purged) or has no stored
-- request end 'gone' here, and items tried 20 times end 'failed' (v27: unless another holds the
-- key under a live lease); neither is returned. Nothing
-- is taken while a pause covers the operation (for '*', items of covered tenants stay queued).
-- Only for a registered, online re-driver of that scope (idem_redriver_seen within 30 s) under its
-- own login: refused (ID004 not online, 42501 another login's registration) otherwise, nothing taken.
CREATE OR REPLACE FUNCTION idem_redrive_take(p_tenant text, p_operation text, p_worker text, p_limit integer,
                                             p_lease_ms bigint)
RETURNS TABLE (item_id bigint, idempotency_key text, request text, request_hash text, job_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $take$
#variable_conflict use_column
DECLARE
    c_max_tries constant integer := 20;
    it record;
    s idem_stored_requests%ROWTYPE;
    v_seen idem_redrivers%ROWTYPE;
    v_reg idem_redrive_operations%ROWTYPE;
BEGIN
    PERFORM idem_redrive_check_scope(p_tenant, p_operation);
    PERFORM idem_check_worker_text('worker', p_worker);
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 100 THEN
        RAISE EXCEPTION 'a re-driver takes 1 to 100 items at a time, not %', COALESCE(p_limit::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_lease_ms IS NULL OR p_lease_ms NOT BETWEEN 1000 AND 3600000 THEN
        RAISE EXCEPTION 'an item''s lease must be 1000 to 3600000 ms (1 h), not %', COALESCE(p_lease_ms::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a re-driver takes items in a READ COMMITTED transaction, not %',
            current_setting('transaction_isolation') USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO v_seen FROM idem_redrivers d
     WHERE d.operation = p_operation AND d.tenant = p_tenant AND d.worker = p_worker;
    IF NOT FOUND OR v_seen.db_role <> session_user OR v_seen.last_seen <= now() - interval '30 seconds' THEN
        RAISE EXCEPTION 'worker % is not an online re-driver of %:% under login %: report it first'
                        ' (idem_redriver_seen, every 10 s)', p_worker, p_tenant, p_operation, session_user
            USING ERRCODE = 'ID004';
    END IF;
    -- The registration may have changed hands since (or the login lost its membership).
    FOR v_reg IN SELECT * FROM idem_redrive_operations o
                  WHERE o.operation = p_operation AND (p_tenant = '*' OR o.tenant IN (p_tenant, '*')) LOOP
        IF NOT idem_redrive_may_serve(v_reg.registered_by) THEN
            RAISE EXCEPTION 'login % may not re-drive %:%: login % registered it', session_user, v_reg.tenant,
                p_operation, v_reg.registered_by USING ERRCODE = 'insufficient_privilege';
        END IF;
    END LOOP;
    IF p_tenant <> '*' AND EXISTS (SELECT FROM idem_pause_covering(p_tenant, p_operation)) THEN
        RETURN;  -- a pause holds re-drives
    END IF;

    FOR it IN SELECT i.id, i.idempotency_key, i.tenant, i.tries, i.job_id
                FROM idem_redrive_items i
               WHERE i.operation = p_operation AND (p_tenant = '*' OR i.tenant = p_tenant)
                 AND i.state IN ('queued', 'running')
                 AND CASE i.state WHEN 'queued' THEN i.not_before IS NULL OR i.not_before <= now()
                                  ELSE i.lease_until < now() END
                 AND (p_tenant <> '*' OR NOT EXISTS (SELECT FROM idem_pause_covering(i.tenant, i.operation)))
               ORDER BY i.id
               LIMIT p_limit
                 FOR UPDATE SKIP LOCKED LOOP
        SELECT * INTO s FROM idem_stored_requests q WHERE q.idempotency_key = it.idempotency_key;
        IF NOT FOUND THEN
            UPDATE idem_redrive_items i
               SET state = 'gone', finished_at = now(), lease_until = NULL, not_before = NULL,
                   detail = CASE WHEN EXISTS (SELECT FROM task_idempotency t WHERE t.idempotency_key = it.idempotency_key)
                                 THEN 'no stored request: the key waits for its client'
                                 ELSE 'the key is gone (purged)' END
             WHERE i.id = it.id;
            CONTINUE;
        END IF;
        -- v27: not while another holds the key under a live lease (idem_redrive_finish puts such
        -- an item back every few seconds, so its tries grow with the holder's lease).
        IF it.tries >= c_max_tries
           AND NOT EXISTS (SELECT FROM task_idempotency t WHERE t.idempotency_key = it.idempotency_key
                              AND t.status = 'processing' AND t.lease_until > now()) THEN
            UPDATE idem_redrive_items i
               SET state = 'failed', finished_at = now(), lease_until = NULL, not_before = NULL,
                   detail = left(format('gave up after %s tries', it.tries) || COALESCE('; last: ' || i.detail, ''), 4096)
             WHERE i.id = it.id;
            CONTINUE;
        END IF;
        UPDATE idem_redrive_items i
           SET state = 'running', worker = p_worker, worker_role = session_user, tries = i.tries + 1,
               lease_until = now() + p_lease_ms * interval '1 millisecond', not_before = NULL,
               taken_at = now()
         WHERE i.id = it.id;
        item_id := it.id;
        idempotency_key := it.idempotency_key;
        request := s.request;
        request_hash := s.request_hash;
        job_id := it.job_id;
        RETURN NEXT;
    END LOOP;
END
$take$;

REVOKE ALL ON FUNCTION idem_redrive_take(text, text, text, integer, bigint) FROM PUBLIC;
