-- idem_exact_refresh_begin (schema v8, changed in v24; the history is in git log).
-- The shared exact figures' refresh, first of its two calls (each its own transaction): marks an
-- attempt and returns its token, to one caller only, when the figures are due (taken_at +
-- period_s passed) and no attempt holds the lease; NULL otherwise. idem_exact_refresh_finish(token,
-- ...) then counts and stores them. The lease (v24) ends at attempt_until: 10 s or 4x the last
-- count's cost, whichever is longer, doubled for each attempt in a row whose lease ran out
-- (attempt_takeovers; a count that grew slower than its lease gets a longer one next time), at
-- most 15 min. An attempt whose holder stalls (its backend stopped, its connection slow) is taken
-- over once its lease ends, so the figures' age stays near the period whatever one reader does.
-- The row is locked only by a begin that takes the lease and by the finish's store, never while
-- counting.
CREATE OR REPLACE FUNCTION idem_exact_refresh_begin()
RETURNS uuid
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $begin$
DECLARE
    v idem_stats_exact;
    v_token uuid;
    v_takeovers integer;
BEGIN
    -- Read first without a lock: a caller that is refused (most are) locks nothing, even in a
    -- transaction it keeps open. Then lock, skipping a row another begin or store holds, and
    -- decide again on what the lock shows.
    SELECT * INTO v FROM idem_stats_exact x;
    IF NOT FOUND OR v.taken_at + v.period_s * interval '1 second' > clock_timestamp()
       OR (v.attempt_token IS NOT NULL AND v.attempt_until > clock_timestamp()) THEN
        RETURN NULL;
    END IF;
    SELECT * INTO v FROM idem_stats_exact x FOR UPDATE SKIP LOCKED;
    IF NOT FOUND OR v.taken_at + v.period_s * interval '1 second' > clock_timestamp()
       OR (v.attempt_token IS NOT NULL AND v.attempt_until > clock_timestamp()) THEN
        RETURN NULL;
    END IF;
    -- An attempt still named here ran out of its lease without storing: this one is a takeover.
    v_takeovers := CASE WHEN v.attempt_token IS NOT NULL THEN least(v.attempt_takeovers + 1, 8) ELSE 0 END;
    v_token := gen_random_uuid();
    UPDATE idem_stats_exact
       SET attempt_at = clock_timestamp(), attempt_token = v_token, attempt_takeovers = v_takeovers,
           attempt_until = clock_timestamp()
                           + least(greatest(10, 4 * v.cost_ms / 1000) * 2 ^ v_takeovers, 900) * interval '1 second';
    RETURN v_token;
END
$begin$;

REVOKE ALL ON FUNCTION idem_exact_refresh_begin() FROM PUBLIC;
