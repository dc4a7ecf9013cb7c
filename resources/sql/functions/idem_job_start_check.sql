-- idem_job_start_check (schema v23; the history is in git log).
-- idem_job_start's refusals of what a filter matched (p_matched rows, up to the cap + 1, of which
-- p_skipped the action p_action does not apply to), its one wording, raised before the job's rows
-- are written and checked again after: more than p_cap rows (ID004), none (ID002), none the action
-- applies to (ID002); rows another open job, p_other, has still to do (p_overlap of them; ID004).
-- Changes nothing. Granted to nobody.
CREATE OR REPLACE FUNCTION idem_job_start_check(p_action text, p_cap bigint, p_matched bigint, p_skipped bigint,
                                                p_other bigint, p_overlap bigint)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
SET search_path FROM CURRENT
AS $check$
BEGIN
    IF p_matched > p_cap THEN
        RAISE EXCEPTION 'the filter matches more than the cap of % rows: nothing was started', p_cap
            USING ERRCODE = 'ID004',
                  HINT = 'Narrow the filter, or raise the cap (at most 1000000) once you have counted the rows.';
    END IF;
    IF p_matched = 0 THEN
        RAISE EXCEPTION 'the filter matches no task: nothing was started' USING ERRCODE = 'ID002';
    END IF;
    IF p_skipped = p_matched THEN
        RAISE EXCEPTION '% applies to none of the % task(s) the filter matches (%): nothing was started', p_action,
                        p_matched,
                        CASE p_action WHEN 'requeue' THEN 'it applies to failed and retryable_failed'
                                      WHEN 'release' THEN 'it applies to processing'
                                      ELSE 'it applies to processing and retryable_failed' END
            USING ERRCODE = 'ID002';
    END IF;
    IF p_other IS NOT NULL THEN
        RAISE EXCEPTION 'job % has still to do % of the tasks this job would act on: nothing was started', p_other,
                        p_overlap
            USING ERRCODE = 'ID004',
                  HINT = format('Wait for job %s to end (idemctl job status %s), or cancel it, then start this one.',
                                p_other, p_other);
    END IF;
END
$check$;

REVOKE ALL ON FUNCTION idem_job_start_check(text, bigint, bigint, bigint, bigint, bigint) FROM PUBLIC;
