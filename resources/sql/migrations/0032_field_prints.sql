-- Idem schema v32: which field differed (issue 46 item 3). docs/workers-guide.md ("Which field
-- differed") and docs/operators-guide.md ("Reading a digest conflict") describe the whole.
--
-- A worker may fingerprint the top-level fields of its operations' requests (opt-in per operation
-- in its configuration, with the workers' field key): its claims go through idem_claim_fields,
-- which keeps a short keyed hash per field beside the key when it acquires it, and the
-- conflicting request's fingerprints with the key's conflict record when it conflicts. The
-- console, idemctl tasks show and the incident snapshot compare the two by field name: "amount_cents
-- differs; currency, order_id same". Never a value: each fingerprint is 8 bytes of HMAC-SHA256 under
-- a key the database never sees. Claims of other operations call claim() as before and write
-- nothing here.

-- The fingerprints of the request a key was acquired with: field name -> 16 hex digits, at most 64
-- names (field_count says how many fields the request had). Deleted with the key
-- (idem_purge_batch), like idem_stored_requests; no foreign key (schema v27 says why).
CREATE TABLE idem_request_fields (
    idempotency_key TEXT PRIMARY KEY,
    fields          JSONB NOT NULL CHECK (jsonb_typeof(fields) = 'object'),
    field_count     INTEGER NOT NULL CHECK (field_count BETWEEN 0 AND 1000000),
    stored_at       TIMESTAMPTZ NOT NULL
);
REVOKE ALL ON idem_request_fields FROM PUBLIC;

-- The last conflicting request's fingerprints, when its worker fingerprints its operation's
-- requests (NULL otherwise).
ALTER TABLE task_idempotency_conflicts
    ADD COLUMN last_fields JSONB CHECK (last_fields IS NULL OR jsonb_typeof(last_fields) = 'object'),
    ADD COLUMN last_field_count INTEGER CHECK (last_field_count BETWEEN 0 AND 1000000);

-- idem_claim_fields(...): new, in functions/. idem_purge_batch(bigint, integer): changed in
-- functions/idem_purge_batch.sql (deletes the fingerprints of the rows it deletes).
