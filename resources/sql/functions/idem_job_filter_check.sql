-- idem_job_filter_check (schema v19; the history is in git log).
-- A recovery job's filter, checked and in its canonical form: a JSON object with the task list's
-- filters (operations/taskfilter.h, TaskFilter; the console's Tasks page and idemctl tasks), each
-- narrowing the set (AND); a key left out, null or false does not narrow. Returns the object with
-- only the keys that narrow, statuses sorted and each once, so that two requests for the same
-- rows are the same filter. Anything else raises ID003 naming the key, before anything is read:
--   statuses                 array of processing | succeeded | retryable_failed | failed
--   tenant, operation        first / second field of the key: 1 to 1024 bytes, no ':'
--   key_prefix               the key starts with this text, literally: 1 to 1024 bytes
--   min_attempts             attempts >= N, 0 to 1000000
--   expired_lease            processing whose lease had ended at the moment (or had none)
--   live_lease               processing whose lease was running at the moment
--   uncertain                retryable_failed with class unknown
--   error_class              retryable | permanent | unknown
--   exhausted                failed with a class other than permanent
--   failed_since_us          failed, updated_at at or after this (microseconds since the epoch)
--   unfinished_for_minutes   not succeeded, first seen at least N minutes before the moment
--   digest_conflicts         keys with a recorded digest conflict
--   updated_within_minutes   updated_at within the last N minute buckets, the moment's included
--   conflict_within_minutes  a digest conflict recorded within the last N minute buckets
--   failed_retry_in_window   a failure of attempt 2 or later recorded within updated_within_minutes
--   error_contains           not succeeded, error_message contains this text literally, any case:
--                            1 to 1024 bytes
CREATE OR REPLACE FUNCTION idem_job_filter_check(p_filter jsonb)
RETURNS jsonb
LANGUAGE plpgsql
IMMUTABLE
SET search_path FROM CURRENT
AS $check$
DECLARE
    v_key text;
    v_value jsonb;
    v_out jsonb := '{}'::jsonb;
    v_statuses text[];
    v_n numeric;
    v_min numeric;
    v_max numeric;
    v_text text;
BEGIN
    IF p_filter IS NULL OR jsonb_typeof(p_filter) <> 'object' THEN
        RAISE EXCEPTION 'a job''s filter is a JSON object, not %', COALESCE(jsonb_typeof(p_filter), 'NULL')
            USING ERRCODE = 'ID003';
    END IF;
    FOR v_key, v_value IN SELECT e.key, e.value FROM jsonb_each(p_filter) e ORDER BY e.key LOOP
        CONTINUE WHEN jsonb_typeof(v_value) = 'null';
        IF v_key = 'statuses' THEN
            IF jsonb_typeof(v_value) <> 'array' THEN
                RAISE EXCEPTION 'filter statuses: an array of statuses' USING ERRCODE = 'ID003';
            END IF;
            IF EXISTS (SELECT FROM jsonb_array_elements(v_value) s
                        WHERE jsonb_typeof(s) <> 'string'
                           OR s #>> '{}' NOT IN ('processing', 'succeeded', 'retryable_failed', 'failed')) THEN
                RAISE EXCEPTION 'filter statuses: each one of processing, succeeded, retryable_failed, failed'
                    USING ERRCODE = 'ID003';
            END IF;
            SELECT array_agg(DISTINCT s ORDER BY s) INTO v_statuses FROM jsonb_array_elements_text(v_value) s;
            IF v_statuses IS NOT NULL THEN
                v_out := v_out || jsonb_build_object('statuses', to_jsonb(v_statuses));
            END IF;
        ELSIF v_key IN ('tenant', 'operation', 'key_prefix', 'error_contains') THEN
            IF jsonb_typeof(v_value) <> 'string' THEN
                RAISE EXCEPTION 'filter %: a string', v_key USING ERRCODE = 'ID003';
            END IF;
            v_text := v_value #>> '{}';
            IF octet_length(v_text) NOT BETWEEN 1 AND 1024 THEN
                RAISE EXCEPTION 'filter %: 1 to 1024 bytes, not %', v_key, octet_length(v_text) USING ERRCODE = 'ID003';
            END IF;
            IF v_key IN ('tenant', 'operation') AND strpos(v_text, ':') > 0 THEN
                RAISE EXCEPTION 'filter %: a key''s field, without '':''', v_key USING ERRCODE = 'ID003';
            END IF;
            v_out := v_out || jsonb_build_object(v_key, v_text);
        ELSIF v_key = 'error_class' THEN
            IF jsonb_typeof(v_value) <> 'string' OR v_value #>> '{}' NOT IN ('retryable', 'permanent', 'unknown') THEN
                RAISE EXCEPTION 'filter error_class: retryable, permanent or unknown' USING ERRCODE = 'ID003';
            END IF;
            v_out := v_out || jsonb_build_object(v_key, v_value);
        ELSIF v_key IN ('expired_lease', 'live_lease', 'uncertain', 'exhausted', 'digest_conflicts',
                        'failed_retry_in_window') THEN
            IF jsonb_typeof(v_value) <> 'boolean' THEN
                RAISE EXCEPTION 'filter %: true or false', v_key USING ERRCODE = 'ID003';
            END IF;
            IF v_value = 'true'::jsonb THEN
                v_out := v_out || jsonb_build_object(v_key, true);
            END IF;
        ELSIF v_key IN ('min_attempts', 'failed_since_us', 'unfinished_for_minutes', 'updated_within_minutes',
                        'conflict_within_minutes') THEN
            IF jsonb_typeof(v_value) <> 'number' THEN
                RAISE EXCEPTION 'filter %: a whole number', v_key USING ERRCODE = 'ID003';
            END IF;
            v_n := (v_value #>> '{}')::numeric;
            v_min := CASE WHEN v_key IN ('updated_within_minutes', 'conflict_within_minutes') THEN 1 ELSE 0 END;
            v_max := CASE v_key WHEN 'min_attempts' THEN 1000000
                                WHEN 'failed_since_us' THEN 253402300799999999 -- 9999-12-31
                                ELSE 5256000 END;                              -- ten years of minutes
            IF v_n <> trunc(v_n) OR v_n < v_min OR v_n > v_max THEN
                RAISE EXCEPTION 'filter %: % is not a whole number from % to %', v_key, left(v_n::text, 40), v_min, v_max
                    USING ERRCODE = 'ID003';
            END IF;
            v_out := v_out || jsonb_build_object(v_key, v_n::bigint);
        ELSE
            RAISE EXCEPTION 'filter: unknown key "%"', left(v_key, 64) USING ERRCODE = 'ID003';
        END IF;
    END LOOP;
    IF v_out ? 'failed_retry_in_window' AND NOT v_out ? 'updated_within_minutes' THEN
        RAISE EXCEPTION 'filter failed_retry_in_window needs updated_within_minutes (its window)' USING ERRCODE = 'ID003';
    END IF;
    RETURN v_out;
END
$check$;

REVOKE ALL ON FUNCTION idem_job_filter_check(jsonb) FROM PUBLIC;
