-- Idem schema v4: the console's snapshot answered from the unfinished index alone.
--
-- task_idempotency_unfinished_idx (v1) holds only updated_at, so statsSql() (core/stats.cpp)
-- fetched one heap page per unfinished row: with failures spread over a 10M-row table that is
-- most of the heap, and the snapshot was barely faster than counting every row. The same index
-- (same name, key and predicate: the task browser pages by updated_at on it) now carries the
-- columns every figure, the attempts histogram and the tenant/operation filters read, so an
-- index-only scan answers them (bench/README.md, "the dashboard snapshot at scale").
-- idempotency_key is included for the filters (tenant and operation are its first two fields);
-- it is the last column, so an unfiltered scan never looks at it.
--
-- Big live tables: this runs inside the migration's transaction, where CREATE INDEX
-- CONCURRENTLY is impossible, so the build holds a SHARE lock on task_idempotency (claims wait)
-- for one scan of the table. To avoid that, build the index beforehand, outside any transaction:
--
--   CREATE INDEX CONCURRENTLY task_idempotency_unfinished_covering_idx
--       ON <schema>.task_idempotency (updated_at)
--       INCLUDE (status, error_class, lease_until, created_at, attempts, idempotency_key)
--       WHERE status <> 'succeeded';
--
-- then migrate: a valid index of exactly that definition is taken as it is, and the migration
-- only drops the old index and renames the new one (an ACCESS EXCLUSIVE lock held for
-- milliseconds, though it queues behind running transactions on the table). A pre-built index
-- that is invalid (a CONCURRENTLY build that failed) or defined differently is refused with an
-- error, and nothing changes: drop it (DROP INDEX CONCURRENTLY) and build it again.
-- An adopted article table gets the index like any other: every included column exists since v1.

DO $v4$
DECLARE
    v_target constant text := 'USING btree (updated_at) INCLUDE (status, error_class, lease_until, created_at, '
                              'attempts, idempotency_key) WHERE (status <> ''succeeded''::text)';
    v_table constant regclass := to_regclass(quote_ident(current_schema()) || '.task_idempotency');
    v_new regclass := to_regclass(quote_ident(current_schema()) || '.task_idempotency_unfinished_covering_idx');
    v_old regclass := to_regclass(quote_ident(current_schema()) || '.task_idempotency_unfinished_idx');
BEGIN
    IF v_new IS NOT NULL THEN
        IF NOT EXISTS (SELECT FROM pg_index x
                        WHERE x.indexrelid = v_new AND x.indrelid = v_table AND x.indisvalid AND x.indisready) THEN
            RAISE EXCEPTION 'index task_idempotency_unfinished_covering_idx exists but is not a valid index on task_idempotency (a failed CREATE INDEX CONCURRENTLY?)'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'DROP INDEX CONCURRENTLY it, build it again or let this migration build it, and re-run the migration';
        END IF;
        IF substring(pg_get_indexdef(v_new) FROM ' (USING .*)$') IS DISTINCT FROM v_target THEN
            RAISE EXCEPTION 'index task_idempotency_unfinished_covering_idx is defined as "%", expected "... %"',
                    pg_get_indexdef(v_new), v_target
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'DROP INDEX CONCURRENTLY it, build it again or let this migration build it, and re-run the migration';
        END IF;
    ELSIF v_old IS NOT NULL AND substring(pg_get_indexdef(v_old) FROM ' (USING .*)$') = v_target THEN
        RETURN; -- replaced by hand already
    ELSE
        CREATE INDEX task_idempotency_unfinished_covering_idx ON task_idempotency (updated_at)
            INCLUDE (status, error_class, lease_until, created_at, attempts, idempotency_key)
            WHERE status <> 'succeeded';
    END IF;
    DROP INDEX IF EXISTS task_idempotency_unfinished_idx;
    ALTER INDEX task_idempotency_unfinished_covering_idx RENAME TO task_idempotency_unfinished_idx;
END
$v4$;
