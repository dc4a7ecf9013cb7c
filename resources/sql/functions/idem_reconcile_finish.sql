-- idem_reconcile_finish (schema v30; the history is in git log).
-- Records what a run of a reconcile probe found: p_results is a JSON array with one element per
-- key probed, {"key", "count"} (the query's count, 0 or more) or {"key", "error"} (why the query
-- failed for that key: a timeout, a refusal, a result that is not one integer); p_problem, when
-- set, says why the run stopped before probing every sampled key. Counts sampled, ok (a count of
-- exactly one), missing (0), duplicated (more than one) and errors, keeps the first 50 keys that
-- were not ok (an error cut to 300 characters) and then the newest 100 runs of the operation.
-- Only the login that began the run may finish it, once. Granted to idem_reconcile. ID003 for
-- bad arguments, ID002 for an unknown run, ID004 for a run finished already or begun by another
-- login; nothing written then.
CREATE OR REPLACE FUNCTION idem_reconcile_finish(p_run bigint, p_results jsonb, p_problem text DEFAULT NULL)
RETURNS SETOF idem_reconcile_runs
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $finish$
DECLARE
    v_run idem_reconcile_runs;
    v_bad integer;
BEGIN
    IF p_run IS NULL THEN
        RAISE EXCEPTION 'name the run to finish, not NULL' USING ERRCODE = 'ID003';
    END IF;
    IF p_results IS NULL OR jsonb_typeof(p_results) <> 'array' THEN
        RAISE EXCEPTION 'a run''s results are a JSON array, not %', COALESCE(jsonb_typeof(p_results), 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    IF p_problem IS NOT NULL AND char_length(p_problem) > 1000 THEN
        RAISE EXCEPTION 'a run''s problem is at most 1000 characters, not %', char_length(p_problem)
            USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO v_run FROM idem_reconcile_runs r WHERE r.id = p_run FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no reconcile run %', p_run USING ERRCODE = 'ID002';
    END IF;
    IF v_run.finished_at IS NOT NULL THEN
        RAISE EXCEPTION 'reconcile run % is finished already', p_run USING ERRCODE = 'ID004';
    END IF;
    IF left(v_run.runner, char_length(session_user) + 2) <> session_user || ' (' THEN
        RAISE EXCEPTION 'reconcile run % was begun by another login (%)', p_run, v_run.runner USING ERRCODE = 'ID004';
    END IF;
    IF jsonb_array_length(p_results) > v_run.sample_size THEN
        RAISE EXCEPTION 'run % sampled at most % keys, not %', p_run, v_run.sample_size, jsonb_array_length(p_results)
            USING ERRCODE = 'ID003';
    END IF;
    SELECT count(*) INTO v_bad FROM jsonb_array_elements(p_results) e(v)
     WHERE jsonb_typeof(e.v) <> 'object' OR jsonb_typeof(e.v -> 'key') IS DISTINCT FROM 'string'
        OR char_length(e.v ->> 'key') > 1000
        OR NOT ((jsonb_typeof(e.v -> 'count') = 'number' AND NOT e.v ? 'error'
                 AND (e.v ->> 'count') ~ '^[0-9]{1,18}$')
                OR (jsonb_typeof(e.v -> 'error') = 'string' AND NOT e.v ? 'count'));
    IF v_bad > 0 THEN
        RAISE EXCEPTION '% of the results are not {"key": text, "count": a whole number of 0 or more} or {"key": text, "error": text}',
            v_bad USING ERRCODE = 'ID003';
    END IF;
    UPDATE idem_reconcile_runs r
       SET finished_at = now(), problem = p_problem,
           sampled = jsonb_array_length(p_results),
           ok = (SELECT count(*) FROM jsonb_array_elements(p_results) e(v) WHERE (e.v ->> 'count')::bigint = 1),
           missing = (SELECT count(*) FROM jsonb_array_elements(p_results) e(v) WHERE (e.v ->> 'count')::bigint = 0),
           duplicated = (SELECT count(*) FROM jsonb_array_elements(p_results) e(v) WHERE (e.v ->> 'count')::bigint > 1),
           errors = (SELECT count(*) FROM jsonb_array_elements(p_results) e(v) WHERE e.v ? 'error'),
           offenders = COALESCE((SELECT jsonb_agg(CASE WHEN o.v ? 'error'
                                                       THEN jsonb_build_object('key', o.v ->> 'key', 'error', left(o.v ->> 'error', 300))
                                                       ELSE jsonb_build_object('key', o.v ->> 'key', 'count', (o.v ->> 'count')::bigint) END
                                                  ORDER BY o.n)
                                   FROM (SELECT e.v, e.n FROM jsonb_array_elements(p_results) WITH ORDINALITY e(v, n)
                                          WHERE e.v ? 'error' OR (e.v ->> 'count')::bigint <> 1
                                          ORDER BY e.n LIMIT 50) o), '[]'::jsonb)
     WHERE r.id = p_run
    RETURNING r.* INTO v_run;
    DELETE FROM idem_reconcile_runs r
     WHERE r.operation = v_run.operation
       AND r.id < (SELECT k.id FROM idem_reconcile_runs k WHERE k.operation = v_run.operation
                    ORDER BY k.id DESC OFFSET 99 LIMIT 1);
    RETURN NEXT v_run;
END
$finish$;

REVOKE ALL ON FUNCTION idem_reconcile_finish(bigint, jsonb, text) FROM PUBLIC;
