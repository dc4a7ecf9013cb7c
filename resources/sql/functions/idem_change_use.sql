-- idem_change_use (schema v22, changed in v28; the history is in git log).
-- Uses approved change request p_request, naming its spec (p_spec_sha256), exactly once: marks
-- it used in this transaction (one audit entry, action 'change_use'), then makes the change under
-- the approval policy's gate (idem_change_guard), with the request's reason (a kind added since
-- v28: the caller makes it, in this transaction, through its own function): a retention change
-- applied (idem_set_retention or idem_clear_retention: its own audit entry, action 'retention',
-- applied_audit_id) or a purge run begun (idem_purge_begin: purge_run_id; the caller then runs
-- its batches with the spec's batch size, pacing and time, and finishes it, as idemctl purge
-- does; since v23 the run records the spec and idem_purge_batch holds it to it: the database
-- refuses a larger batch, a batch past max_seconds or sooner than the duty allows). Refused with
-- nothing written: ID003 bad arguments; ID002 no such request (a job's request is used by running
-- the job); ID004 one not approved, already used, declined, or whose approval expired, or a spec
-- that is not the request's. Granted to idem_may_purge.
CREATE OR REPLACE FUNCTION idem_change_use(p_request bigint, p_spec_sha256 text, p_actor text DEFAULT NULL)
RETURNS TABLE (request_id bigint, kind text, spec jsonb, audit_id bigint, applied_audit_id bigint, purge_run_id bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
SET TimeZone = 'UTC'
SET lock_timeout = '30s'
AS $use$
DECLARE
    r idem_approval_requests;
    v_before jsonb;
    v_actor text := btrim(COALESCE(p_actor, ''));
    v_now timestamptz := clock_timestamp();
    v_audit bigint;
    v_applied bigint;
    v_run bigint;
BEGIN
    IF p_request IS NULL THEN
        RAISE EXCEPTION 'name the change request to use' USING ERRCODE = 'ID003';
    END IF;
    IF p_spec_sha256 IS NULL OR p_spec_sha256 !~ '^[0-9a-f]{64}$' THEN
        RAISE EXCEPTION 'the use of a request names its spec: its spec_sha256, 64 lower-case hex digits, not %',
                        COALESCE(quote_literal(left(p_spec_sha256, 80)), 'NULL') USING ERRCODE = 'ID003';
    END IF;
    IF char_length(v_actor) > 256 THEN
        RAISE EXCEPTION 'the actor name is longer than 256 characters' USING ERRCODE = 'ID003';
    END IF;
    IF current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'a change request is used in a READ COMMITTED transaction, not %',
            current_setting('transaction_isolation') USING ERRCODE = 'ID004';
    END IF;
    SELECT * INTO r FROM idem_approval_requests x WHERE x.id = p_request AND x.job_id IS NULL FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no change request %', p_request USING ERRCODE = 'ID002',
              HINT = 'idemctl approvals list shows the requests.';
    END IF;
    IF r.state = 'used' THEN
        RAISE EXCEPTION '%', format('change request %s was used already, by login %s at %s: an approval is used once',
                        r.id, r.used_login, to_char(r.used_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
            USING ERRCODE = 'ID004', HINT = 'Request the change again.';
    END IF;
    IF r.state = 'declined' THEN
        RAISE EXCEPTION '%', format('change request %s was declined, by login %s at %s: it can no longer be used', r.id,
                        r.declined_login, to_char(r.declined_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"'))
            USING ERRCODE = 'ID004', HINT = 'Request the change again.';
    END IF;
    IF r.state <> 'approved' THEN
        RAISE EXCEPTION 'change request % is not approved yet: it waits for another login''s approval', r.id
            USING ERRCODE = 'ID004';
    END IF;
    IF p_spec_sha256 <> r.spec_sha256 OR r.spec_sha256 <> encode(sha256(convert_to(r.spec::text, 'UTF8')), 'hex') THEN
        RAISE EXCEPTION 'that spec is not change request %''s: request % is % (spec %)', r.id, r.id, r.spec::text,
                        r.spec_sha256
            USING ERRCODE = 'ID004', HINT = 'An approval is used for its request''s exact spec, nothing else.';
    END IF;
    IF r.approval_expires_at <= v_now THEN
        RAISE EXCEPTION 'change request %''s approval expired at %: it can no longer be used', r.id,
                        to_char(r.approval_expires_at, 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            USING ERRCODE = 'ID004', HINT = 'Request the change again.';
    END IF;
    v_actor := CASE WHEN v_actor = '' THEN 'unknown' ELSE v_actor END;
    v_before := idem_approval_image(r);
    UPDATE idem_approval_requests x
       SET state = 'used', used_login = session_user, used_at = v_now, used_xid = pg_current_xact_id()
     WHERE x.id = r.id
    RETURNING x.* INTO r;
    v_audit := audit_append('', 'change_use', r.requested_reason, v_actor, v_before,
                            idem_approval_image(r) || jsonb_build_object('event', 'use'));
    UPDATE idem_approval_requests x SET use_audit_id = v_audit WHERE x.id = r.id;
    IF r.kind = 'retention' THEN
        IF r.spec ->> 'change' = 'set' THEN
            SELECT s.audit_id INTO v_applied
              FROM idem_set_retention(r.spec ->> 'operation', (r.spec ->> 'horizon_seconds')::bigint, r.requested_reason,
                                      v_actor) s;
        ELSE
            SELECT c.audit_id INTO v_applied
              FROM idem_clear_retention(r.spec ->> 'operation', r.requested_reason, v_actor) c;
        END IF;
        -- 0 when clearing an operation that had no row of its own (nothing to audit): the
        -- request's change is still made, once.
        UPDATE idem_approval_requests x SET applied_audit_id = COALESCE(v_applied, 0) WHERE x.id = r.id;
    ELSIF r.kind = 'purge' THEN
        v_run := idem_purge_begin(r.requested_reason, v_actor);
        UPDATE idem_approval_requests x SET purge_run_id = v_run WHERE x.id = r.id;
        -- The run is held to what was approved (idem_purge_batch): its batch, time and duty.
        UPDATE idem_purge_runs x
           SET change_request_id = r.id, spec_batch = (r.spec ->> 'batch')::integer,
               spec_max_seconds = (r.spec ->> 'max_seconds')::integer, spec_duty = (r.spec ->> 'duty')::double precision
         WHERE x.id = v_run;
    END IF;
    -- Any other kind: the caller makes its change next, in this transaction, through that action's
    -- own function, which idem_change_guard lets through once with the request's exact spec.
    RETURN QUERY SELECT r.id, r.kind, r.spec, v_audit, v_applied, v_run;
END
$use$;

REVOKE ALL ON FUNCTION idem_change_use(bigint, text, text) FROM PUBLIC;
