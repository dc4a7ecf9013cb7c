-- idem_pause_forecast (schema v33; the history is in git log).
-- What a resume of the pause of exactly this scope (tenant and operation as paused, '*' included)
-- sends at the recovering downstream, by the server's clock, in one row:
-- - due_by_minute: the retryable keys of the scope that fall due, per minute from now for
--   p_minutes (1 to 1440) minutes, as [{"minute": <start>, "due": n}] for the minutes with any;
--   the first minute includes the keys already due (due_now), which the pause has held back.
--   Read from the retry index (status retryable_failed, by next_attempt_at) in next_attempt_at
--   order, at most p_cap (1 to 1000000) entries of every scope: when the cap is reached,
--   due_bounded is true and the figures are lower bounds ("at least").
-- - turned_away: the claims of the scope counted 'paused' since the pause began (the outcome
--   counters, a claim asked again counts again), over at most the last 1440 minutes
--   (turned_away_since says from when).
-- - total: due_total + turned_away, labelled like due_total.
-- ID002 when the scope has no pause. Read-only; needs idem_reader (SECURITY DEFINER for the scope
-- check it shares with idem_pause; it reads nothing a reader cannot read).
CREATE OR REPLACE FUNCTION idem_pause_forecast(p_tenant text, p_operation text, p_minutes integer DEFAULT 30,
                                               p_cap integer DEFAULT 100000)
RETURNS TABLE (tenant text, operation text, paused_at timestamptz, server_now timestamptz, minutes integer,
               due_by_minute jsonb, due_now bigint, due_total bigint, due_bounded boolean, scanned bigint,
               turned_away bigint, turned_away_since timestamptz, total bigint)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $forecast$
DECLARE
    v_pause idem_pauses;
BEGIN
    PERFORM idem_pause_check_scope(p_tenant, p_operation);
    IF p_minutes IS NULL OR p_minutes NOT BETWEEN 1 AND 1440 THEN
        RAISE EXCEPTION 'minutes must be 1 to 1440, not %', COALESCE(p_minutes::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF p_cap IS NULL OR p_cap NOT BETWEEN 1 AND 1000000 THEN
        RAISE EXCEPTION 'the cap must be 1 to 1000000 rows, not %', COALESCE(p_cap::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO v_pause FROM idem_pauses p WHERE p.tenant = p_tenant AND p.operation = p_operation;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no pause of tenant % and operation %', quote_literal(p_tenant),
            quote_literal(p_operation) USING ERRCODE = 'ID002',
            HINT = 'A forecast reads the pause with the tenant and operation it was set with (''*'' included): idemctl pauses lists them.';
    END IF;
    tenant := p_tenant;
    operation := p_operation;
    paused_at := v_pause.paused_at;
    server_now := now();
    minutes := p_minutes;
    WITH scan AS MATERIALIZED (
        SELECT t.next_attempt_at, t.idempotency_key
          FROM task_idempotency t
         WHERE t.status = 'retryable_failed'
           AND t.next_attempt_at < date_trunc('minute', now()) + p_minutes * interval '1 minute'
         ORDER BY t.next_attempt_at
         LIMIT p_cap
    ), mine AS (
        SELECT greatest(date_trunc('minute', s.next_attempt_at), date_trunc('minute', now())) AS minute,
               s.next_attempt_at <= now() AS due_now
          FROM scan s
         WHERE (p_tenant = '*' OR split_part(s.idempotency_key, ':', 1) = p_tenant)
           AND (p_operation = '*' OR split_part(s.idempotency_key, ':', 2) = p_operation)
    ), by_minute AS (
        SELECT m.minute, count(*) AS due, count(*) FILTER (WHERE m.due_now) AS due_now FROM mine m GROUP BY m.minute
    )
    SELECT COALESCE(jsonb_agg(jsonb_build_object('minute', b.minute, 'due', b.due) ORDER BY b.minute), '[]'::jsonb),
           COALESCE(sum(b.due_now), 0)::bigint, COALESCE(sum(b.due), 0)::bigint,
           (SELECT count(*) FROM scan)
      INTO due_by_minute, due_now, due_total, scanned
      FROM by_minute b;
    due_bounded := scanned >= p_cap;
    turned_away_since := greatest(date_trunc('minute', v_pause.paused_at), date_trunc('minute', now()) - interval '1439 minutes');
    SELECT least(COALESCE(sum(c.n), 0), 9223372036854775807)::bigint INTO turned_away
      FROM idem_counters c
     WHERE c.bucket >= turned_away_since AND c.outcome = 'paused'
       AND (p_tenant = '*' OR c.tenant = p_tenant) AND (p_operation = '*' OR c.operation = p_operation);
    total := due_total + turned_away;
    RETURN NEXT;
END
$forecast$;

REVOKE ALL ON FUNCTION idem_pause_forecast(text, text, integer, integer) FROM PUBLIC;
