-- Idem schema v16: the pause check costs a new-key claim nothing while nothing is paused
-- (issue #26, bench/README.md "Session 11").
--
-- claim() used to read idem_pause_tenants before every acquisition and takeover: one more
-- statement in the backend (plan check, snapshot, executor), about 7 us of a 50 us claim. It now
-- first asks whether the empty view idem_pauses_none exists: a lookup in the backend's catalog
-- cache, no table read, no lock. The view exists exactly while idem_pauses has no row;
-- idem_pause_summarise() (called by idem_pause and idem_resume in their transaction) drops it
-- with the first pause and creates it again when the last one is lifted. DDL is transactional
-- and every transaction starts from a fresh catalog cache, so a claim in a transaction that begins
-- after a pause committed sees the view gone, as it would see the pause's row. Only the owner can
-- create a relation in this schema, and claim() names it with the schema (pg_temp cannot stand in
-- for it), so no caller can make claim() skip a pause; a missing view only costs the read, which is
-- also what a database upgraded from v15 with pauses in force gets until the last one is lifted.
-- Whoever writes idem_pauses by hand (the owner) calls idem_pause_summarise() after, as before.
DO $none$
BEGIN
    IF NOT EXISTS (SELECT FROM idem_pauses) THEN
        CREATE VIEW idem_pauses_none AS SELECT;
    END IF;
END
$none$;
