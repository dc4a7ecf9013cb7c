-- idem_job_match (schema v19; the history is in git log).
-- The task rows recovery-job filter p_filter (idem_job_filter_check) matches in the caller's
-- snapshot, as of p_moment (what the task list compares with now(): lease ends, the minute windows,
-- first seen), at most p_limit of them, in no order. The same predicates as the task list's
-- (operations/tasklist.cpp, whereClause), so a job matches what the Tasks page counts for the same
-- filter; each filter value is a parameter of the one statement, never part of its text.
CREATE OR REPLACE FUNCTION idem_job_match(p_filter jsonb, p_moment timestamptz, p_limit bigint)
RETURNS TABLE (idempotency_key text, status text, updated_at timestamptz)
LANGUAGE plpgsql
STABLE
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
AS $match$
DECLARE
    f jsonb := idem_job_filter_check(p_filter);
    v_where text := 'true';
    v_statuses text[];
    v_tenant_like text;
    v_prefix_like text;
    v_error_like text;
BEGIN
    IF p_moment IS NULL OR p_limit IS NULL OR p_limit < 0 THEN
        RAISE EXCEPTION 'a moment and a limit of 0 or more are required' USING ERRCODE = 'ID003';
    END IF;
    IF f ? 'statuses' THEN
        SELECT array_agg(s) INTO v_statuses FROM jsonb_array_elements_text(f -> 'statuses') s;
        v_where := v_where || ' AND t.status = ANY ($1)';
    END IF;
    IF f ? 'tenant' THEN
        -- The key's first field, and (for the primary key's order) the literal prefix it implies.
        v_tenant_like := replace(replace(replace((f ->> 'tenant') || ':' || COALESCE((f ->> 'operation') || ':', ''),
                                                 '\', '\\'), '%', '\%'), '_', '\_') || '%';
        v_where := v_where || ' AND split_part(t.idempotency_key, '':'', 1) = $2 AND t.idempotency_key LIKE $3';
    END IF;
    IF f ? 'key_prefix' THEN
        v_prefix_like := replace(replace(replace(f ->> 'key_prefix', '\', '\\'), '%', '\%'), '_', '\_') || '%';
        v_where := v_where || ' AND t.idempotency_key LIKE $4';
    END IF;
    IF f ? 'operation' THEN
        v_where := v_where || ' AND split_part(t.idempotency_key, '':'', 2) = $5';
    END IF;
    IF f ? 'min_attempts' THEN
        v_where := v_where || ' AND t.attempts >= $6'
                           || CASE WHEN (f ->> 'min_attempts')::bigint >= 2 THEN ' AND t.attempts > 1' ELSE '' END;
    END IF;
    IF f ? 'expired_lease' THEN
        v_where := v_where || ' AND t.status = ''processing'' AND (t.lease_until IS NULL OR t.lease_until <= $7)';
    END IF;
    IF f ? 'live_lease' THEN
        v_where := v_where || ' AND t.status = ''processing'' AND t.lease_until > $7';
    END IF;
    IF f ? 'uncertain' THEN
        v_where := v_where || ' AND t.status = ''retryable_failed'' AND t.error_class = ''unknown''';
    END IF;
    IF f ? 'error_class' THEN
        v_where := v_where || ' AND t.error_class = $8';
    END IF;
    IF f ? 'exhausted' THEN
        v_where := v_where || ' AND t.status = ''failed'' AND t.error_class IS DISTINCT FROM ''permanent''';
    END IF;
    IF f ? 'failed_since_us' THEN
        v_where := v_where || ' AND t.status = ''failed'''
                           || ' AND t.updated_at >= to_timestamp(0) + $9 * interval ''1 microsecond''';
    END IF;
    IF f ? 'unfinished_for_minutes' THEN
        v_where := v_where || ' AND t.status <> ''succeeded'' AND t.created_at < $7 - $10 * interval ''1 minute''';
    END IF;
    IF f ? 'updated_within_minutes' THEN
        v_where := v_where || ' AND t.updated_at >= date_trunc(''minute'', $7) - ($11 - 1) * interval ''1 minute''';
    END IF;
    IF f ? 'conflict_within_minutes' THEN
        v_where := v_where || ' AND t.idempotency_key IN (SELECT c.idempotency_key FROM task_idempotency_conflicts c'
                           || ' WHERE c.last_at >= date_trunc(''minute'', $7) - ($12 - 1) * interval ''1 minute'')';
    END IF;
    IF f ? 'failed_retry_in_window' THEN
        -- As the task list: an entry is cast only once its shape is known.
        v_where := v_where || ' AND t.attempts > 1 AND EXISTS (SELECT 1 FROM jsonb_array_elements(t.errors) e WHERE CASE'
                           || ' WHEN jsonb_typeof(e -> ''attempt'') = ''number'' AND jsonb_typeof(e -> ''at'') = ''string'''
                           || ' AND (e ->> ''at'') ~ ''^\d{4}-\d\d-\d\d[T ]\d\d:\d\d'''
                           || ' THEN (e ->> ''attempt'')::numeric >= 2 AND (e ->> ''at'')::timestamptz'
                           || ' >= date_trunc(''minute'', $7) - ($11 - 1) * interval ''1 minute'' ELSE false END)';
    END IF;
    IF f ? 'error_contains' THEN
        -- Unfinished rows only, as the task list has it (an old message on a succeeded row is history).
        v_error_like := '%' || replace(replace(replace(f ->> 'error_contains', '\', '\\'), '%', '\%'), '_', '\_') || '%';
        v_where := v_where || ' AND t.status <> ''succeeded'' AND t.error_message ILIKE $14';
    END IF;
    IF f ? 'digest_conflicts' THEN
        v_where := v_where || ' AND t.idempotency_key IN (SELECT c.idempotency_key FROM task_idempotency_conflicts c)';
    END IF;
    RETURN QUERY EXECUTE
        'SELECT t.idempotency_key, t.status, t.updated_at FROM task_idempotency t WHERE ' || v_where || ' LIMIT $13'
        USING v_statuses, f ->> 'tenant', v_tenant_like, v_prefix_like, f ->> 'operation',
              (f ->> 'min_attempts')::integer, p_moment, f ->> 'error_class', (f ->> 'failed_since_us')::bigint,
              (f ->> 'unfinished_for_minutes')::integer, (f ->> 'updated_within_minutes')::integer,
              (f ->> 'conflict_within_minutes')::integer, p_limit, v_error_like;
END
$match$;

REVOKE ALL ON FUNCTION idem_job_match(jsonb, timestamptz, bigint) FROM PUBLIC;
