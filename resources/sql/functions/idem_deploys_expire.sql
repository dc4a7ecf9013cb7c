-- idem_deploys_expire (schema v24; the history is in git log).
-- The deploy tables' retention, run with the counter upkeep of the shared exact refresh
-- (idem_exact_refresh_finish): at most p_batch deploys older than 90 days go, and at most p_batch
-- worker rows whose version was taken up more than 90 days ago (a worker that reports again after
-- that is a new worker). Rows another session is writing are skipped, never waited for. Returns
-- how many of each went; run it until both are 0 to catch up. Nobody but the owner calls it.
CREATE OR REPLACE FUNCTION idem_deploys_expire(p_batch integer)
RETURNS TABLE (deploys bigint, workers bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $expire$
BEGIN
    IF p_batch IS NULL OR p_batch NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'batch must be 1 to 100000 rows, not %', COALESCE(p_batch::text, 'NULL') USING ERRCODE = 'ID003';
    END IF;
    DELETE FROM idem_deploys d
     WHERE d.id IN (SELECT o.id FROM idem_deploys o WHERE o.at < now() - interval '90 days'
                     ORDER BY o.at LIMIT p_batch FOR UPDATE SKIP LOCKED);
    GET DIAGNOSTICS deploys = ROW_COUNT;
    DELETE FROM idem_worker_versions w
     WHERE w.worker IN (SELECT o.worker FROM idem_worker_versions o WHERE o.since < now() - interval '90 days'
                         ORDER BY o.since LIMIT p_batch FOR UPDATE SKIP LOCKED);
    GET DIAGNOSTICS workers = ROW_COUNT;
    RETURN NEXT;
END
$expire$;

REVOKE ALL ON FUNCTION idem_deploys_expire(integer) FROM PUBLIC;
