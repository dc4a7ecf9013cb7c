-- idem_local_answer (issue 45 item 1, record at commit): claim()'s answer from a stored row r for a
-- request of digest p_request_hash, where that answer is not to take the key: conflict [status]
-- (the stored digest not revealed), replay [succeeded] (the stored result), failed [failed],
-- in_progress [lease_live] (a two-step executor's live lease), retry_later [class] (a backoff not
-- yet elapsed). No row when r may be taken over (an expired lease, a due retry). idem_record_local
-- and idem_peek_local answer with it; they decide exhaustion and pauses themselves. It writes
-- nothing (the conflict's record is idem_peek_local's). SQL without SET search_path, so that the
-- planner inlines it into its callers, whose search_path is pinned.
CREATE OR REPLACE FUNCTION idem_local_answer(r task_idempotency, p_request_hash text)
RETURNS TABLE (decision text, detail text, owner_token uuid, attempts integer, max_attempts integer,
               lease_until timestamptz, retry_after_ms bigint, result_json jsonb, request_hash text,
               error_class text, error_message text)
LANGUAGE sql
STABLE
AS $answer$
    SELECT a.decision,
           CASE a.decision WHEN 'conflict' THEN r.status WHEN 'replay' THEN 'succeeded' WHEN 'failed' THEN 'failed'
                           WHEN 'in_progress' THEN 'lease_live' ELSE r.error_class END,
           NULL::uuid, r.attempts, r.max_attempts,
           CASE a.decision WHEN 'in_progress' THEN r.lease_until WHEN 'retry_later' THEN r.next_attempt_at END,
           CASE a.decision
               WHEN 'in_progress' THEN GREATEST(1, ceil(extract(epoch FROM r.lease_until - now()) * 1000))::bigint
               WHEN 'retry_later' THEN GREATEST(1, ceil(extract(epoch FROM r.next_attempt_at - now()) * 1000))::bigint
               ELSE 0::bigint END,
           CASE a.decision WHEN 'replay' THEN r.result_json END,
           CASE WHEN a.decision <> 'conflict' THEN r.request_hash END,
           CASE WHEN a.decision IN ('failed', 'retry_later') THEN r.error_class END,
           CASE WHEN a.decision IN ('failed', 'retry_later') THEN r.error_message END
      FROM (SELECT CASE WHEN r.request_hash <> p_request_hash THEN 'conflict'
                        WHEN r.status = 'succeeded' THEN 'replay'
                        WHEN r.status = 'failed' THEN 'failed'
                        WHEN r.status = 'processing' AND r.lease_until > now() THEN 'in_progress'
                        WHEN r.status = 'retryable_failed' AND r.next_attempt_at > now() THEN 'retry_later'
                   END AS decision) a
     WHERE a.decision IS NOT NULL
$answer$;

REVOKE ALL ON FUNCTION idem_local_answer(task_idempotency, text) FROM PUBLIC;
