-- idem_events_check (schema v24; the history is in git log).
-- The bounds of idem_events' and idem_events_omitted's window and limit, in one place: a window
-- with a start and an end at most 31 days after it, a limit of 1 to 10000; else ID003.
CREATE OR REPLACE FUNCTION idem_events_check(p_from timestamptz, p_to timestamptz, p_limit integer)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path FROM CURRENT
AS $check$
BEGIN
    IF p_from IS NULL OR p_to IS NULL OR p_to < p_from OR p_to - p_from > interval '31 days' THEN
        RAISE EXCEPTION 'a window needs a start and an end at most 31 days after it, not % to %', p_from, p_to
            USING ERRCODE = 'ID003';
    END IF;
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'limit must be 1 to 10000, not %', p_limit USING ERRCODE = 'ID003';
    END IF;
END
$check$;

REVOKE ALL ON FUNCTION idem_events_check(timestamptz, timestamptz, integer) FROM PUBLIC;
