-- idem_purge_spec_check (schema v23; the history is in git log).
-- Holds purge run r, begun by the use of an approved request (idem_change_use recorded its spec
-- on the run), to what was approved before its next batch of p_batch rows: no batch larger than
-- the spec's; none once spec_max_seconds have passed since the run began (0: no limit); none
-- sooner after the last one than the duty allows (a batch of t ms is followed by at least
-- t * (1 - duty) / duty ms, at most 10 s, as idemctl purge and idem_purge_run pace themselves).
-- Raises ID004 in words, changes nothing. Granted to nobody.
CREATE OR REPLACE FUNCTION idem_purge_spec_check(r idem_purge_runs, p_batch integer)
RETURNS void
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $check$
DECLARE
    v_next timestamptz;
BEGIN
    IF p_batch > r.spec_batch THEN
        RAISE EXCEPTION 'purge run % runs under change request %, approved for batches of % rows: not %', r.id,
                        r.change_request_id, r.spec_batch, p_batch
            USING ERRCODE = 'ID004', HINT = 'An approved purge runs as it was approved; request another for more.';
    END IF;
    IF r.spec_max_seconds > 0 AND clock_timestamp() >= r.started_at + r.spec_max_seconds * interval '1 second' THEN
        RAISE EXCEPTION 'purge run % runs under change request %, approved for % s: that time is over', r.id,
                        r.change_request_id, r.spec_max_seconds
            USING ERRCODE = 'ID004', HINT = 'Finish the run (idem_purge_finish); request another purge for more.';
    END IF;
    IF r.last_batch_at IS NOT NULL AND r.last_batch_ms IS NOT NULL THEN
        v_next := r.last_batch_at
                  + least(r.last_batch_ms * (1 - r.spec_duty) / r.spec_duty, 10000) * interval '1 millisecond';
        IF clock_timestamp() < v_next THEN
            RAISE EXCEPTION 'purge run % runs under change request %, approved at duty %: its next batch is due at %,'
                            ' not before', r.id, r.change_request_id, r.spec_duty,
                            to_char(v_next, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                USING ERRCODE = 'ID004', HINT = 'An approved purge runs at the pace it was approved for.';
        END IF;
    END IF;
END
$check$;

REVOKE ALL ON FUNCTION idem_purge_spec_check(idem_purge_runs, integer) FROM PUBLIC;
