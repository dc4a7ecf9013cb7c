-- Idem schema v24: operator actions never crowded out of the events, deploy reports bounded per
-- login, and a shared exact refresh that a stalled reader cannot hold up (issue 40, items 2 and 6).
--
-- Events (idem_events, idem_events_omitted): each source (the audit trail: operators' actions,
-- pauses, annotations; deploys: workers' reports; failovers) is bounded on its own, its newest
-- first, so a worker that reports thousands of versions cannot push an operator's pause out of a
-- window; what a bound leaves out is counted by idem_events_omitted and said by idemctl events
-- and the console's charts.
--
-- Deploys (idem_report_version): a login (session_user) may name at most 200 new workers and
-- mark at most 20 deploys per hour. A new worker past the bound is not recorded (outcome
-- not_recorded, nothing written, a WARNING); a deploy past it is coalesced into the login's
-- newest deploy (its `coalesced` count and `last_coalesced_version`), which idem_events says.
-- Rows older than 90 days go in the counter upkeep that the shared exact refresh runs
-- (idem_deploys_expire): deploys by their time, worker rows by the time they took up their
-- version (a worker that reports again after that is a new worker, its deploy judged as such).
ALTER TABLE idem_deploys
    ADD COLUMN coalesced BIGINT NOT NULL DEFAULT 0,     -- further new versions folded into this mark
    ADD COLUMN last_coalesced_version TEXT;             -- the newest of them
-- The bound counts a login's rows of the last hour: by role and time.
CREATE INDEX idem_deploys_role_at_idx ON idem_deploys (db_role, at);
CREATE INDEX idem_worker_versions_role_first_seen_idx ON idem_worker_versions (db_role, first_seen);

-- The shared exact refresh (idem_exact_refresh_begin / _finish) as a lease: an attempt holds it
-- until attempt_until (10 s or 4x the last count's cost, doubled for each attempt in a row that
-- ran out: attempt_takeovers), no longer; then the next reader takes it over with a new token and
-- the stalled one's finish stores nothing. The count holds no lock on the row, which is locked
-- only to mark an attempt and to store the figures, each a short statement.
ALTER TABLE idem_stats_exact
    ADD COLUMN attempt_until TIMESTAMPTZ,
    ADD COLUMN attempt_takeovers INTEGER NOT NULL DEFAULT 0;
