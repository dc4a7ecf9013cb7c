-- idem_task_filter_where (schema v24; the history is in git log).
-- The one definition of which task rows a filter (idem_job_filter_check's JSON, operations/
-- taskfilter.h's TaskFilter) selects: a WHERE predicate over task_idempotency AS t, as SQL text
-- that refers to two parameters and to no value: $1 the filter (jsonb) and $2 the moment
-- (timestamptz; NULL for now(): lease ends, the minute windows, first seen). The Tasks page and
-- idemctl tasks (operations/tasklist.cpp) run it with their keyset and order; a recovery job
-- (idem_job_match) with its moment and limit. Every predicate is written and always present,
-- guarded by its field being unset: with the parameters' values known when the statement is
-- planned, each guard folds away and the rest, its values folded to constants, is what the
-- indexes are chosen for (a key's LIKE prefix, the retried-rows and unfinished-rows partial
-- indexes). The text depends only on which fields are set, never on their values.
CREATE OR REPLACE FUNCTION idem_task_filter_where(p_filter jsonb)
RETURNS text
LANGUAGE plpgsql
IMMUTABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $where$
DECLARE
    f jsonb := idem_job_filter_check(p_filter);
    v_conflicts constant text := quote_ident(current_schema()) || '.task_idempotency_conflicts';
    v_now constant text := 'coalesce($2::timestamptz, now())';
    v_window constant text := 'date_trunc(''minute'', coalesce($2::timestamptz, now()))'
                              || ' - (($1::jsonb ->> ''updated_within_minutes'')::int - 1) * interval ''1 minute''';
    v_unfinished boolean;
    w text;
BEGIN
    -- A literal: its LIKE pattern escapes \, % and _.
    w := '
        ($1::jsonb -> ''statuses'' IS NULL OR t.status = ANY (translate($1::jsonb ->> ''statuses'', ''[]" '', ''{}'')::text[]))
    AND ($1::jsonb ->> ''tenant'' IS NULL OR split_part(t.idempotency_key, '':'', 1) = $1::jsonb ->> ''tenant'')
    AND ($1::jsonb ->> ''tenant'' IS NULL OR t.idempotency_key LIKE (replace(replace(replace($1::jsonb ->> ''tenant''
             || '':'' || coalesce(($1::jsonb ->> ''operation'') || '':'', ''''), ''\'', ''\\''), ''%'', ''\%''), ''_'', ''\_'') || ''%''))
    AND ($1::jsonb ->> ''key_prefix'' IS NULL OR t.idempotency_key LIKE (replace(replace(replace($1::jsonb ->> ''key_prefix'',
             ''\'', ''\\''), ''%'', ''\%''), ''_'', ''\_'') || ''%''))
    AND ($1::jsonb ->> ''operation'' IS NULL OR split_part(t.idempotency_key, '':'', 2) = $1::jsonb ->> ''operation'')
    AND ($1::jsonb ->> ''min_attempts'' IS NULL OR t.attempts >= ($1::jsonb ->> ''min_attempts'')::int)
    AND (NOT coalesce(($1::jsonb ->> ''expired_lease'')::boolean, false)
         OR (t.status = ''processing'' AND (t.lease_until IS NULL OR t.lease_until <= ' || v_now || ')))
    AND (NOT coalesce(($1::jsonb ->> ''live_lease'')::boolean, false) OR (t.status = ''processing'' AND t.lease_until > ' || v_now || '))
    AND (NOT coalesce(($1::jsonb ->> ''uncertain'')::boolean, false) OR (t.status = ''retryable_failed'' AND t.error_class = ''unknown''))
    AND ($1::jsonb ->> ''error_class'' IS NULL OR t.error_class = $1::jsonb ->> ''error_class'')
    AND (NOT coalesce(($1::jsonb ->> ''exhausted'')::boolean, false) OR (t.status = ''failed'' AND t.error_class IS DISTINCT FROM ''permanent''))
    AND ($1::jsonb ->> ''failed_since_us'' IS NULL OR (t.status = ''failed''
         AND t.updated_at >= to_timestamp(0) + ($1::jsonb ->> ''failed_since_us'')::bigint * interval ''1 microsecond''))
    AND ($1::jsonb ->> ''unfinished_for_minutes'' IS NULL OR (t.status <> ''succeeded''
         AND t.created_at < ' || v_now || ' - ($1::jsonb ->> ''unfinished_for_minutes'')::int * interval ''1 minute''))
    AND ($1::jsonb ->> ''updated_within_minutes'' IS NULL OR t.updated_at >= ' || v_window || ')
    AND ($1::jsonb ->> ''conflict_within_minutes'' IS NULL OR t.idempotency_key IN (SELECT c.idempotency_key
         FROM ' || v_conflicts || ' c WHERE c.last_at >= date_trunc(''minute'', ' || v_now || ')
         - (($1::jsonb ->> ''conflict_within_minutes'')::int - 1) * interval ''1 minute''))
    AND ($1::jsonb ->> ''error_contains'' IS NULL OR (t.status <> ''succeeded''
         AND t.error_message ILIKE (''%'' || replace(replace(replace($1::jsonb ->> ''error_contains'',
             ''\'', ''\\''), ''%'', ''\%''), ''_'', ''\_'') || ''%'')))';
    -- Lets the planner use the retried-rows partial index (attempts > 1) for a retry filter.
    IF (f ->> 'min_attempts')::int >= 2 OR f ? 'failed_retry_in_window' THEN
        w := w || '
    AND t.attempts > 1';
    END IF;
    -- A failure of a retry in the window: its row was updated then, so the index on (updated_at)
    -- WHERE attempts > 1 bounds the rows whose history is read. CASE, not AND: an entry is cast
    -- only once its shape is known (the history is a column anyone with UPDATE could have written).
    IF f ? 'failed_retry_in_window' THEN
        w := w || '
    AND EXISTS (SELECT 1 FROM jsonb_array_elements(t.errors) e WHERE CASE
         WHEN jsonb_typeof(e -> ''attempt'') = ''number'' AND jsonb_typeof(e -> ''at'') = ''string''
          AND (e ->> ''at'') ~ ''^\d{4}-\d\d-\d\d[T ]\d\d:\d\d''
         THEN (e ->> ''attempt'')::numeric >= 2 AND (e ->> ''at'')::timestamptz >= ' || v_window || ' ELSE false END)';
    END IF;
    IF f ? 'digest_conflicts' THEN
        w := w || '
    AND t.idempotency_key IN (SELECT c.idempotency_key FROM ' || v_conflicts || ' c)';
    END IF;
    -- The unfinished-rows partial index serves a read only when the planner can prove its
    -- predicate: say it literally when the filter implies it.
    v_unfinished := CASE WHEN f ? 'statuses' THEN NOT (f -> 'statuses') ? 'succeeded'
                         ELSE f ?| ARRAY['expired_lease', 'live_lease', 'uncertain', 'exhausted', 'failed_since_us',
                                         'unfinished_for_minutes', 'error_contains'] END;
    IF v_unfinished THEN
        w := w || '
    AND t.status <> ''succeeded''';
    END IF;
    RETURN w;
END
$where$;

REVOKE ALL ON FUNCTION idem_task_filter_where(jsonb) FROM PUBLIC;
