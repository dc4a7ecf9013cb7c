-- audit_task_image (schema v3; the history is in git log).
-- A row as the audit keeps it: every column, except that result_json (up to a megabyte or more)
-- is replaced by the SHA-256 of its text, result_json_sha256. Callers set TimeZone to UTC.
CREATE OR REPLACE FUNCTION audit_task_image(r task_idempotency)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path FROM CURRENT
AS $$
    SELECT (to_jsonb(r) - 'result_json')
           || jsonb_build_object('result_json_sha256',
                                 CASE WHEN r.result_json IS NULL THEN NULL
                                      ELSE encode(sha256(convert_to(r.result_json::text, 'UTF8')), 'hex') END)
$$;

REVOKE ALL ON FUNCTION audit_task_image(task_idempotency) FROM PUBLIC;
