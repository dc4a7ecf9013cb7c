-- Idem schema v27: storing a request costs a re-drivable claim less (issue 42 item 6).
-- idem_stored_requests loses its foreign key to task_idempotency. The key's check cost every
-- stored claim a locking read of the task row it had just inserted, and the key's triggers on
-- task_idempotency were evaluated on every update of every key (complete, fail, requeue), of
-- re-drivable operations or not. A stored request still goes with its key: the one statement that
-- deletes task rows (idem_purge_batch, behind idem_purge, idem_purge_run, idemctl purge and an
-- approved purge) deletes their stored requests in the same statement. An owner who truncates
-- task_idempotency by hand truncates idem_stored_requests with it.
DO $drop$
DECLARE
    v_name name;
BEGIN
    FOR v_name IN SELECT c.conname FROM pg_catalog.pg_constraint c
                   WHERE c.conrelid = 'idem_stored_requests'::regclass AND c.contype = 'f' LOOP
        EXECUTE format('ALTER TABLE idem_stored_requests DROP CONSTRAINT %I', v_name);
    END LOOP;
END
$drop$;

-- idem_claim_stored(...): changed in functions/idem_claim_stored.sql (the digest checked and the
-- registration read only when the claim acquires the key).
-- idem_purge_batch(bigint, integer): changed in functions/idem_purge_batch.sql (deletes the
-- stored requests of the rows it deletes).

-- idem_redrive_finish(bigint, text, text, text): replaced by (bigint, text, text, text, integer)
-- in functions/idem_redrive_finish.sql (later waits at most a few seconds, p_later_max_ms).
-- idem_redrive_status(text, text) returns a column more (redrivers: every re-driver, online or
-- not, with when it was last seen); a changed result type is a new function.
DROP FUNCTION IF EXISTS idem_redrive_status(text, text);
-- idem_redrivers_seen(idem_redrivers[]), idem_redrive_outcomes_of(bigint[]): new, in functions/.
-- idem_redrive_take(...): changed in functions/idem_redrive_take.sql (an item whose key another
-- holds under a live lease is not given up after 20 tries).
