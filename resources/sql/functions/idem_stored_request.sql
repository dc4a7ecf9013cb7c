-- idem_stored_request (schema v25; the history is in git log).
-- Whether key p_key has a stored request (idem_claim_stored), its size and when it was stored:
-- for everyone who reads tasks. The request itself (as jsonb, with the top-level fields its
-- operation's registration names in redact shown as "[redacted]") only for a caller holding the
-- read_requests right (idem_may_read_requests; payloads hold personal data); NULL for anyone
-- else. One row always: stored false when there is none. ID003 for a NULL, empty or over-long key.
CREATE OR REPLACE FUNCTION idem_stored_request(p_key text)
RETURNS TABLE (stored boolean, bytes integer, stored_at timestamptz, request jsonb)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path FROM CURRENT
AS $stored$
#variable_conflict use_column
DECLARE
    s idem_stored_requests%ROWTYPE;
    v_request jsonb;
    v_redact text[];
BEGIN
    IF p_key IS NULL OR octet_length(p_key) NOT BETWEEN 1 AND 1024 THEN
        RAISE EXCEPTION 'idempotency key must be 1 to 1024 bytes' USING ERRCODE = 'ID003';
    END IF;
    SELECT * INTO s FROM idem_stored_requests q WHERE q.idempotency_key = p_key;
    IF NOT FOUND THEN
        RETURN QUERY SELECT false, NULL::integer, NULL::timestamptz, NULL::jsonb;
        RETURN;
    END IF;
    IF idem_has_right(idem_caller(), 'read_requests') THEN
        v_request := s.request::jsonb;
        SELECT o.redact INTO v_redact FROM idem_redrive_registration(split_part(p_key, ':', 1), split_part(p_key, ':', 2)) o;
        IF jsonb_typeof(v_request) = 'object' AND cardinality(v_redact) > 0 THEN
            SELECT COALESCE(jsonb_object_agg(e.key, CASE WHEN e.key = ANY (v_redact) THEN '"[redacted]"'::jsonb
                                                         ELSE e.value END), '{}'::jsonb)
              INTO v_request
              FROM jsonb_each(v_request) e;
        END IF;
    END IF;
    RETURN QUERY SELECT true, s.bytes, s.stored_at, v_request;
END
$stored$;

REVOKE ALL ON FUNCTION idem_stored_request(text) FROM PUBLIC;
