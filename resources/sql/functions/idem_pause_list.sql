-- idem_pause_list (schema v15, changed in v33; the history is in git log).
-- Every pause, in force or expired, with what it did over the last p_minutes (1 to 1440) minutes,
-- from the outcome counters (workers built on the library flush them every second): turned_away
-- is the claims counted as 'paused' in its scope (a claim under two pauses counts in both); seen
-- says whether any outcome of its scope was counted at all: a pause that precedes traffic, or
-- names a typo, matches nothing yet. One scan of the window's counters, whatever the number of
-- pauses; remaining_ms by the server's clock. A ramping pause (v33, idem_resume_ramp) carries its
-- ramp: ramp_steps, ramp_step_ms, ramp_started_at, ramp_abort_above, ramp_min_claims, the step it
-- is at (ramp_step, 0-based, by the server's clock), that step's percentage of keys admitted
-- (ramp_percent), and what the admitted keys did in it (ramp_claimed, ramp_failed: the tally, 16
-- rows at most); all NULL for a plain pause. ramp_aborted_at: when a ramp's automatic re-pause set
-- this pause (idem_ramp_failed), until it is set again, ramped again or lifted.
CREATE OR REPLACE FUNCTION idem_pause_list(p_minutes integer DEFAULT 15)
RETURNS TABLE (tenant text, operation text, reason text, paused_by text, paused_at timestamptz,
               changed_at timestamptz, until timestamptz, active boolean, remaining_ms bigint,
               turned_away bigint, seen boolean, audit_id bigint, server_now timestamptz,
               ramp_steps integer[], ramp_step_ms bigint, ramp_started_at timestamptz, ramp_abort_above double precision,
               ramp_min_claims integer, ramp_step integer, ramp_percent integer, ramp_claimed bigint, ramp_failed bigint,
               ramp_aborted_at timestamptz)
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
AS $list$
BEGIN
    IF p_minutes IS NULL OR p_minutes NOT BETWEEN 1 AND 1440 THEN
        RAISE EXCEPTION 'minutes must be 1 to 1440, not %', COALESCE(p_minutes::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    RETURN QUERY
    WITH w AS MATERIALIZED (
        SELECT c.tenant, c.operation,
               least(COALESCE(sum(c.n) FILTER (WHERE c.outcome = 'paused'), 0), 9223372036854775807)::bigint AS paused
          FROM idem_counters c
         WHERE c.bucket >= date_trunc('minute', now()) - (p_minutes - 1) * interval '1 minute'
         GROUP BY c.tenant, c.operation
    )
    SELECT p.tenant, p.operation, p.reason, p.paused_by, p.paused_at, p.changed_at, p.until,
           p.until IS NULL OR p.until > now(),
           CASE WHEN p.until IS NULL THEN NULL::bigint
                ELSE GREATEST(0, ceil(extract(epoch FROM p.until - now()) * 1000))::bigint END,
           COALESCE(m.turned_away, 0), COALESCE(m.seen, false), p.audit_id, now(),
           p.ramp_steps::integer[], p.ramp_step_ms, p.ramp_started_at, p.ramp_abort_above, p.ramp_min_claims,
           r.step, p.ramp_steps[r.step + 1]::integer, rt.claimed, rt.failed, p.ramp_aborted_at
      FROM idem_pauses p
      CROSS JOIN LATERAL (SELECT idem_ramp_step(p) AS step) r
      LEFT JOIN LATERAL (
          SELECT COALESCE(sum(t.claimed), 0)::bigint AS claimed, COALESCE(sum(t.failed), 0)::bigint AS failed
            FROM idem_ramp_tally t
           WHERE r.step IS NOT NULL AND t.tenant = p.tenant AND t.operation = p.operation AND t.step = r.step) rt
        ON r.step IS NOT NULL
      LEFT JOIN LATERAL (
          SELECT least(COALESCE(sum(w.paused), 0), 9223372036854775807)::bigint AS turned_away, true AS seen
            FROM w
           WHERE (p.tenant = '*' OR w.tenant = p.tenant) AND (p.operation = '*' OR w.operation = p.operation)
          HAVING count(*) > 0) m ON true
     ORDER BY (p.until IS NULL OR p.until > now()) DESC, p.tenant, p.operation;
END
$list$;

REVOKE ALL ON FUNCTION idem_pause_list(integer) FROM PUBLIC;
