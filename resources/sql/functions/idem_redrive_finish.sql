-- idem_redrive_finish (schema v25, changed in v27; the history is in git log).
-- Records what became of re-drive item p_item_id, by the re-driver p_worker holding it (taken by
-- idem_redrive_take under this login, still running). p_outcome: succeeded | failed | conflict |
-- gone end it (finished_at, p_detail kept, at most 4096 characters); later puts it back queued,
-- not before the key's own lease or backoff ends and at least 2 s from now (the claim answered
-- in_progress, retry_later or paused, or the run will be retried by the key's backoff). An item
-- tried 20 times ends failed instead, saying so. outcome: finished | queued | stale (the item is
-- no longer this worker's: it was taken again after its lease, or has ended; nothing written),
-- state: the item's state afterwards.
-- v27: later waits at most p_later_max_ms (2000 to 3600000, default 5000) however long the key's
-- lease or backoff, so a re-drive comes back within seconds of the key's holder finishing early
-- (before v27 it waited the holder's whole lease, up to 1 h); and an item whose key is held under
-- a live lease is not given up after 20 tries while that lease lives (it is tried every few
-- seconds instead of once per lease).
CREATE OR REPLACE FUNCTION idem_redrive_finish(p_item_id bigint, p_worker text, p_outcome text, p_detail text DEFAULT NULL,
                                               p_later_max_ms integer DEFAULT 5000)
RETURNS TABLE (outcome text, state text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $finish$
#variable_conflict use_column
DECLARE
    c_max_tries constant integer := 20;
    i idem_redrive_items%ROWTYPE;
    t task_idempotency%ROWTYPE;
    v_not_before timestamptz;
BEGIN
    IF p_item_id IS NULL OR p_item_id < 1 THEN
        RAISE EXCEPTION 'an item id is a positive number, not %', COALESCE(p_item_id::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    PERFORM idem_check_worker_text('worker', p_worker);
    IF p_outcome IS NULL OR p_outcome NOT IN ('succeeded', 'failed', 'conflict', 'gone', 'later') THEN
        RAISE EXCEPTION 'a re-drive ends succeeded, failed, conflict, gone or later, not %',
            COALESCE(quote_literal(left(p_outcome, 64)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_detail IS NOT NULL AND char_length(p_detail) > 4096 THEN
        RAISE EXCEPTION 'a re-drive''s detail is at most 4096 characters, not %', char_length(p_detail)
            USING ERRCODE = 'ID003';
    END IF;
    IF p_later_max_ms IS NULL OR p_later_max_ms NOT BETWEEN 2000 AND 3600000 THEN
        RAISE EXCEPTION 'a re-drive put back waits 2000 to 3600000 ms at most, not %', COALESCE(p_later_max_ms::text, 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO i FROM idem_redrive_items x WHERE x.id = p_item_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no re-drive item %', p_item_id USING ERRCODE = 'ID002';
    END IF;
    IF i.state <> 'running' OR i.worker <> p_worker OR i.worker_role <> session_user THEN
        RETURN QUERY SELECT 'stale'::text, i.state;
        RETURN;
    END IF;
    IF p_outcome = 'later' THEN
        SELECT * INTO t FROM task_idempotency x WHERE x.idempotency_key = i.idempotency_key;
    END IF;
    IF p_outcome = 'later' AND (i.tries < c_max_tries OR (t.status = 'processing' AND t.lease_until > now())) THEN
        v_not_before := GREATEST(now() + interval '2 seconds',
                                 CASE WHEN t.status = 'processing' THEN t.lease_until END,
                                 CASE WHEN t.status = 'retryable_failed' THEN t.next_attempt_at END);
        v_not_before := LEAST(v_not_before, now() + p_later_max_ms * interval '1 millisecond');
        UPDATE idem_redrive_items x
           SET state = 'queued', lease_until = NULL, not_before = v_not_before, detail = p_detail
         WHERE x.id = p_item_id;
        RETURN QUERY SELECT 'queued'::text, 'queued'::text;
        RETURN;
    END IF;
    UPDATE idem_redrive_items x
       SET state = CASE WHEN p_outcome = 'later' THEN 'failed' ELSE p_outcome END,
           lease_until = NULL, not_before = NULL, finished_at = now(),
           detail = CASE WHEN p_outcome = 'later'
                         THEN left(format('gave up after %s tries', i.tries) || COALESCE('; last: ' || p_detail, ''), 4096)
                         ELSE p_detail END
     WHERE x.id = p_item_id
    RETURNING x.* INTO i;
    RETURN QUERY SELECT 'finished'::text, i.state;
END
$finish$;

REVOKE ALL ON FUNCTION idem_redrive_finish(bigint, text, text, text, integer) FROM PUBLIC;
