-- Idem schema v20: failovers (issue #29). (v19 is the recovery jobs' migration.)
--
-- A failover or switchover promotes a standby: the new primary writes on a new timeline, and the
-- clients (through a multi-host conninfo or HAProxy) reconnect to it by themselves. Nothing in the
-- Idem tables says that it happened, and each client notices it only for itself. Every client
-- that reads the primary (the console, the exporter, idemctl stats) calls idem_note_timeline():
-- the first call that finds the primary on a timeline this table does not hold records it, one row
-- per (system, timeline); every later call is one read by primary key and writes nothing. A row
-- whose previous timeline is known (the timeline last recorded for the same system) is a failover:
-- idem_events() lists it, action 'failover', so the charts of every console watching mark it, not
-- only the one that noticed. Its time is when it was first noticed, not the promotion itself (the
-- server keeps no time for that); a client polling every few seconds notices it within a poll.
CREATE TABLE idem_timelines (
    system_identifier BIGINT NOT NULL,     -- pg_control_system(): the same on a primary and its standbys
    timeline          INTEGER NOT NULL,    -- the primary's WAL timeline
    first_seen        TIMESTAMPTZ NOT NULL,
    previous_timeline INTEGER,             -- the system's timeline recorded last before it; NULL: the first
    node              TEXT NOT NULL,       -- the primary's address:port as the noticing client reached it
    db_role           TEXT NOT NULL,       -- the login role that noticed it (session_user)
    PRIMARY KEY (system_identifier, timeline)
);
REVOKE ALL ON idem_timelines FROM PUBLIC;
-- idem_events() reads failovers by time; the previous timeline is the system's latest row.
CREATE INDEX idem_timelines_first_seen_idx ON idem_timelines (first_seen);
