-- idem_exact_refresh_begin (schema v8; the history is in git log).
-- The shared exact figures' refresh, first of its two calls (each its own transaction): marks an
-- attempt and returns its token, to one caller only, when the figures are due (taken_at +
-- period_s passed) and no attempt is under way (attempt_at more than max(period_s, 60 s) ago);
-- NULL otherwise. idem_exact_refresh_finish(token, ...) then counts and stores them.
CREATE OR REPLACE FUNCTION idem_exact_refresh_begin()
RETURNS uuid
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $begin$
DECLARE
    v idem_stats_exact;
    v_token uuid;
BEGIN
    SELECT * INTO v FROM idem_stats_exact x FOR UPDATE SKIP LOCKED;
    IF NOT FOUND OR v.taken_at + v.period_s * interval '1 second' > clock_timestamp()
       OR (v.attempt_at IS NOT NULL
           AND v.attempt_at > clock_timestamp() - greatest(v.period_s, 60) * interval '1 second') THEN
        RETURN NULL;
    END IF;
    v_token := gen_random_uuid();
    UPDATE idem_stats_exact SET attempt_at = clock_timestamp(), attempt_token = v_token;
    RETURN v_token;
END
$begin$;

REVOKE ALL ON FUNCTION idem_exact_refresh_begin() FROM PUBLIC;
