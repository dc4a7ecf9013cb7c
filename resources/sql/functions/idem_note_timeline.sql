-- idem_note_timeline (schema v20; the history is in git log).
-- What a client reading the primary calls (the console on each read of the server, the exporter on
-- each scrape): it takes no argument, so nothing a caller says is trusted; the server's own
-- system identifier (pg_control_system()), its WAL timeline (the current WAL file's, which is the
-- insert timeline on a primary) and the address:port the caller reached it on are what it records.
-- Returns one row: outcome, the system identifier, the timeline, the previous timeline and since
-- (the first time the timeline was seen, by anyone):
--   known        the timeline is recorded already: one read by primary key, nothing written
--   first        the system's first timeline recorded (a new install): written, not a failover
--   failover     a timeline after another one: written, and idem_events() lists it as a failover
--   standby      the server is in recovery: nothing read or written (a standby's timeline changes
--                only with its primary's, which the primary's clients record)
--   read_only    the transaction is read-only (default_transaction_read_only, a primary being
--                demoted): a new timeline is not recorded, the next call on the primary does it
--   not_allowed  this function's owner may not call pg_control_system() (EXECUTE revoked): the
--                system cannot be told apart, nothing is recorded
-- See 0020_failovers.sql.
CREATE OR REPLACE FUNCTION idem_note_timeline()
RETURNS TABLE (outcome text, system_identifier bigint, timeline integer, previous_timeline integer,
               since timestamptz)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $note$
DECLARE
    v_system bigint;
    v_timeline integer;
    v_previous integer;
    v_since timestamptz;
    v_node text;
BEGIN
    IF pg_is_in_recovery() THEN
        RETURN QUERY SELECT 'standby'::text, NULL::bigint, NULL::integer, NULL::integer, NULL::timestamptz;
        RETURN;
    END IF;
    -- The first 8 hex digits of a WAL file name are its timeline.
    v_timeline := ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer;
    IF NOT has_function_privilege('pg_catalog.pg_control_system()', 'EXECUTE') THEN
        RETURN QUERY SELECT 'not_allowed'::text, NULL::bigint, v_timeline, NULL::integer, NULL::timestamptz;
        RETURN;
    END IF;
    SELECT c.system_identifier INTO v_system FROM pg_control_system() c;

    -- Every call but the first on a timeline: a read by primary key.
    SELECT t.previous_timeline, t.first_seen INTO v_previous, v_since
      FROM idem_timelines t WHERE t.system_identifier = v_system AND t.timeline = v_timeline;
    IF FOUND THEN
        RETURN QUERY SELECT 'known'::text, v_system, v_timeline, v_previous, v_since;
        RETURN;
    END IF;
    IF current_setting('transaction_read_only') = 'on' THEN
        RETURN QUERY SELECT 'read_only'::text, v_system, v_timeline, NULL::integer, NULL::timestamptz;
        RETURN;
    END IF;

    SELECT t.timeline INTO v_previous FROM idem_timelines t WHERE t.system_identifier = v_system
     ORDER BY t.first_seen DESC, t.timeline DESC LIMIT 1;
    v_node := COALESCE(host(inet_server_addr()) || ':' || inet_server_port(),
                       'local socket, port ' || current_setting('port'));
    -- Clients noticing the same timeline at once: one row; the others wait for it, write nothing
    -- and read it back.
    INSERT INTO idem_timelines AS t (system_identifier, timeline, first_seen, previous_timeline, node, db_role)
    VALUES (v_system, v_timeline, now(), v_previous, v_node, session_user)
    ON CONFLICT ON CONSTRAINT idem_timelines_pkey DO NOTHING;
    IF NOT FOUND THEN
        SELECT t.previous_timeline, t.first_seen INTO v_previous, v_since
          FROM idem_timelines t WHERE t.system_identifier = v_system AND t.timeline = v_timeline;
        RETURN QUERY SELECT 'known'::text, v_system, v_timeline, v_previous, v_since;
        RETURN;
    END IF;
    RETURN QUERY SELECT CASE WHEN v_previous IS NULL THEN 'first' ELSE 'failover' END, v_system, v_timeline,
                        v_previous, now();
END
$note$;

REVOKE ALL ON FUNCTION idem_note_timeline() FROM PUBLIC;
