-- idem_approval_gate (schema v23; the history is in git log).
-- The gate every path that changes task rows without an approval passes, in the change's own
-- transaction, before it changes anything: the single actions (recovery_action_apply, p_kind
-- requeue, release or fail, one row) and the start of a recovery job (idem_job_start, p_kind 'job',
-- its rows to act on, p_job its id). It applies idem_approval_needed for this login
-- (session_user), serialised per login (a transaction advisory lock, so two sessions of one login
-- cannot both take the last of its budget). Returns NULL when the rows may change without an
-- approval, having taken them from the login's budget (a row of idem_approval_uses; nothing when
-- no budget is set); for a job, else, why it needs one ('rows', 'budget': the job then waits for
-- approval and takes nothing). A single action over the budget is refused with SQLSTATE ID004,
-- saying how to get it approved. Granted to nobody.
CREATE OR REPLACE FUNCTION idem_approval_gate(p_kind text, p_rows bigint, p_job bigint DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $gate$
DECLARE
    n record;
BEGIN
    SELECT * INTO n FROM idem_approval_needed(p_kind, p_rows);
    IF n.budget_rows IS NULL AND n.why IS NULL THEN
        RETURN NULL;
    END IF;
    IF n.budget_rows IS NOT NULL THEN
        -- One login's changes one after the other: read again under the lock.
        PERFORM pg_catalog.pg_advisory_xact_lock(7283100230000000000 + (pg_catalog.hashtext(session_user) & 2147483647));
        SELECT * INTO n FROM idem_approval_needed(p_kind, p_rows);
    END IF;
    IF n.why IS NOT NULL THEN
        IF p_kind = 'job' THEN
            RETURN n.why;
        END IF;
        RAISE EXCEPTION '%', format('login %s changed %s task row(s) without an approval in the last %s s; the approval'
                                    ' policy allows %s in any %s s without a second person: this %s is refused',
                                    session_user, n.used, n.window_seconds, n.budget_rows, n.window_seconds, p_kind)
            USING ERRCODE = 'ID004',
                  HINT = format('Nothing changed. Have it approved: start a recovery job over the rows (idemctl job start'
                                ' --action %s --key-prefix ... --reason ..., or the Tasks page''s "Apply to all'
                                ' matching"); it waits for another login with the approve right (idemctl approvals list,'
                                ' idemctl approvals approve), then runs. Without one, the budget frees up from %s.',
                                p_kind, COALESCE(to_char(n.frees_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'the window''s end'));
    END IF;
    -- A week is the longest window: older rows count for nothing.
    DELETE FROM idem_approval_uses u WHERE u.login = session_user AND u.at < clock_timestamp() - interval '7 days';
    IF p_rows > 0 THEN
        INSERT INTO idem_approval_uses (login, at, row_count, kind, job_id)
        VALUES (session_user, clock_timestamp(), p_rows, p_kind, p_job);
    END IF;
    RETURN NULL;
END
$gate$;

REVOKE ALL ON FUNCTION idem_approval_gate(text, bigint, bigint) FROM PUBLIC;
