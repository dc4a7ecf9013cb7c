-- idem_claim_local (issue 45 item 1): claim() for one transaction for local effects, where the
-- claim, the business writes and complete() are one transaction and one commit. Called inside
-- that READ COMMITTED transaction (claim() refuses any other level); answers as claim() does,
-- but waits up to p_wait_ms for another transaction that holds the key, instead of answering
-- in progress at once:
-- - a new key inserted by a transaction not yet committed: claim()'s INSERT ... ON CONFLICT
--   waits for it, then replays what it committed (or acquires the key if it rolled back);
-- - a row locked by its executor (claim()'s SKIP LOCKED answer in_progress [locked], or
--   [contended]): this locks the row, waiting, and claims again, which then sees what the other
--   committed (a replay) or takes over the row it left.
-- The wait is bounded by lock_timeout = p_wait_ms, restored when the function returns; when it
-- runs out the statement fails with SQLSTATE 55P03 (lock_not_available), which aborts the
-- caller's transaction: the caller answers in progress (nothing of it was written). A live lease
-- of a two-step executor is answered in_progress [lease_live] at once, as claim() does.
-- An acquisition is only seen by others once the caller commits: until then the key is absent
-- (new) or as it was (a takeover), and a rollback or a crash leaves it so.
CREATE OR REPLACE FUNCTION idem_claim_local(p_key text, p_request_hash text, p_token uuid, p_lease_ms bigint,
                      p_max_attempts integer, p_max_age_ms bigint, p_wait_ms integer)
RETURNS TABLE (decision text, detail text, owner_token uuid, attempts integer, max_attempts integer,
               lease_until timestamptz, retry_after_ms bigint, result_json jsonb, request_hash text,
               error_class text, error_message text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET lock_timeout = '1s'
AS $claim_local$
BEGIN
    IF p_wait_ms IS NULL OR p_wait_ms NOT BETWEEN 1 AND 60000 THEN
        RAISE EXCEPTION 'wait must be 1 to 60000 ms, not %', p_wait_ms USING ERRCODE = 'ID003';
    END IF;
    -- The function's own SET clause puts the caller's lock_timeout back when it returns, so the
    -- business writes after it wait as the caller configured.
    PERFORM pg_catalog.set_config('lock_timeout', p_wait_ms::text, true);
    SELECT * INTO decision, detail, owner_token, attempts, max_attempts, lease_until, retry_after_ms, result_json,
                  request_hash, error_class, error_message
      FROM claim(p_key, p_request_hash, p_token, p_lease_ms, p_max_attempts, p_max_age_ms) c;
    IF decision = 'in_progress' AND detail IN ('locked', 'contended') THEN
        -- Another transaction holds the row (its executor completing, or a one-transaction run
        -- that took it over): wait for it to end, then decide again from what it left. The lock
        -- is kept, so claim()'s SKIP LOCKED takes the row for this caller.
        PERFORM 1 FROM task_idempotency t WHERE t.idempotency_key = p_key FOR UPDATE;
        SELECT * INTO decision, detail, owner_token, attempts, max_attempts, lease_until, retry_after_ms,
                      result_json, request_hash, error_class, error_message
          FROM claim(p_key, p_request_hash, p_token, p_lease_ms, p_max_attempts, p_max_age_ms) c;
    END IF;
    RETURN NEXT;
END
$claim_local$;

REVOKE ALL ON FUNCTION idem_claim_local(text, text, uuid, bigint, integer, bigint, integer) FROM PUBLIC;
