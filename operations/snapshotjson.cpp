#include "operations/snapshotjson.h"

#include <nlohmann/json.hpp>

#include "core/canonicaljson.h"
#include "operations/actions.h"
#include "operations/tasklist.h"

namespace idem {

namespace {
    using OJson = nlohmann::ordered_json;
    using Json = nlohmann::json;

    template <typename T> OJson opt(const std::optional<T>& v) { return v ? OJson(*v) : OJson(nullptr); }

    OJson taskRowJson(const SnapshotTaskRow& r)
    {
        return OJson { { "idempotency_key", r.key }, { "status", r.status }, { "request_hash", r.requestHash },
            { "result_json", opt(r.resultJson) }, { "error_message", opt(r.errorMessage) },
            { "error_class", opt(r.errorClass) }, { "owner_token", opt(r.ownerToken) },
            { "lease_until", opt(r.leaseUntil) }, { "next_attempt_at", opt(r.nextAttemptAt) },
            { "attempts", r.attempts }, { "max_attempts", r.maxAttempts }, { "created_at", r.createdAt },
            { "updated_at", r.updatedAt }, { "errors", r.errorsJson } };
    }

    OJson counterSetJson(const SnapshotCounterSet& s)
    {
        OJson rows = OJson::array();
        for (const auto& c : s.rows)
            rows.push_back(OJson { { "bucket", c.bucket }, { "tenant", c.tenant }, { "operation", c.operation },
                { "outcome", c.outcome }, { "n", c.n } });
        return OJson { { "description", s.description }, { "limit", s.limit }, { "total", s.total },
            { "truncated", s.truncated }, { "csv", s.name + ".csv" }, { "rows", rows } };
    }

    OJson latencySetJson(const SnapshotLatencySet& s)
    {
        OJson rows = OJson::array();
        for (const auto& l : s.rows) {
            OJson slots = OJson::array(), counts = OJson::array();
            for (const auto& [slot, n] : l.slotCounts) {
                slots.push_back(slot);
                counts.push_back(n);
            }
            rows.push_back(OJson { { "bucket", l.bucket }, { "tenant", l.tenant }, { "operation", l.operation },
                { "kind", l.kind }, { "n", l.n }, { "total", l.total }, { "slots", slots }, { "counts", counts } });
        }
        return OJson { { "description", s.description }, { "limit", s.limit }, { "total", s.total },
            { "truncated", s.truncated }, { "folded_to", s.foldedTo }, { "rows", rows } };
    }

    OJson eventSetJson(const SnapshotEventSet& s)
    {
        OJson rows = OJson::array();
        for (const auto& e : s.rows)
            rows.push_back(OJson { { "audit_id", e.auditId ? OJson(e.auditId) : OJson(nullptr) }, { "at", e.at },
                { "action", e.action }, { "tenant", e.tenant }, { "operation", e.operation }, { "actor", e.actor },
                { "text", e.text } });
        return OJson { { "description", s.description }, { "limit", s.limit }, { "truncated", s.truncated },
            { "rows", rows } };
    }

    OJson processingJson(const SnapshotProcessingHistory& h)
    {
        OJson points = OJson::array();
        for (const auto& p : h.points)
            points.push_back(OJson { { "at", p.at }, { "processing", p.processing }, { "expired", p.expired } });
        return OJson { { "description", h.description }, { "csv", "processing_history.csv" }, { "points", points } };
    }

    OJson pauseSetJson(const SnapshotPauseSet& s)
    {
        OJson rows = OJson::array();
        for (const auto& p : s.rows)
            rows.push_back(OJson { { "tenant", p.tenant }, { "operation", p.operation }, { "reason", p.reason },
                { "paused_by", p.pausedBy }, { "paused_at", p.pausedAt }, { "until", opt(p.until) },
                { "active", p.active }, { "ended_at", opt(p.endedAt) }, { "ended_by", opt(p.endedBy) },
                { "end_reason", opt(p.endReason) }, { "audit_id", p.auditId }, { "ramp", opt(p.ramp) } });
        return OJson { { "description", s.description }, { "limit", s.limit }, { "total", s.total },
            { "truncated", s.truncated }, { "csv", "pauses.csv" }, { "rows", rows } };
    }

    OJson horizonJson(const HorizonReading& h)
    {
        const auto str = [](const std::string& v) { return v.empty() ? OJson(nullptr) : OJson(v); };
        OJson holders = OJson::array();
        for (const auto& x : h.holders)
            holders.push_back(OJson { { "kind", x.kind }, { "pid", opt(x.pid) }, { "role", x.role },
                { "application", x.application }, { "client", str(x.client) }, { "state", x.state },
                { "backend_type", x.backendType }, { "xact_start", str(x.xactStart) },
                { "query_start", str(x.queryStart) }, { "xid_age", x.xidAge }, { "age_seconds", opt(x.ageSeconds) },
                { "name", x.name }, { "query", str(x.query) }, { "query_hidden", x.queryHidden } });
        OJson tables = OJson::array();
        for (const auto& t : h.tables)
            tables.push_back(OJson { { "name", t.name }, { "dead_tuples", t.deadTuples }, { "live_tuples", t.liveTuples },
                { "vacuums", t.vacuums }, { "last_vacuum", str(t.lastVacuum) },
                { "vacuumed_during_hold", t.vacuumedDuringHold } });
        return OJson { { "description",
                           "who held back the transaction horizon at the instant (idem_horizon_holders, oldest first, "
                           "at most 5) and the Idem tables' dead rows (pg_stat_user_tables.n_dead_tup, an estimate); "
                           "kept_at_least: the dead rows of the tables vacuumed since the oldest holder began" },
            { "as_of", h.asOf }, { "owner_sees_all", h.ownerSeesAll }, { "login_sees_all", h.loginSeesAll },
            { "holders", holders }, { "tables", tables }, { "dead_total", h.deadTotal },
            { "kept_at_least", h.keptAtLeast } };
    }

    OJson reconcileJson(const ReconcileReading& r)
    {
        OJson probes = OJson::array();
        for (const auto& s : r.probes) {
            const auto& p = s.probe;
            OJson last(nullptr);
            if (s.last) {
                const auto& x = *s.last;
                OJson offenders = OJson::array();
                for (const auto& o : x.offenders)
                    offenders.push_back(o.count ? OJson { { "key", o.key }, { "count", *o.count } }
                                                : OJson { { "key", o.key }, { "error", o.error } });
                last = OJson { { "id", x.id }, { "started_at", formatMicros(x.startedAtUs) },
                    { "finished_at", x.finishedAtUs ? OJson(formatMicros(*x.finishedAtUs)) : OJson(nullptr) },
                    { "runner", x.runner }, { "sample_size", x.sampleSize }, { "sampled", x.sampled }, { "ok", x.ok },
                    { "missing", x.missing }, { "duplicated", x.duplicated }, { "errors", x.errors },
                    { "offenders", offenders }, { "problem", x.problem.empty() ? OJson(nullptr) : OJson(x.problem) } };
            }
            probes.push_back(OJson { { "operation", p.operation }, { "query", p.query },
                { "sample_size", p.sampleSize }, { "window_seconds", p.windowSeconds },
                { "every_seconds", p.everySeconds }, { "timeout_ms", p.timeoutMs },
                { "created_at", formatMicros(p.createdAtUs) }, { "created_by", p.createdBy },
                { "next_run_at", formatMicros(p.nextRunAtUs) }, { "last_run", last } });
        }
        return OJson { { "description",
                           "the reconcile probes (idemctl reconcile) and each one's last finished run: of the sampled "
                           "succeeded keys, how many had exactly one business effect (ok), none (missing), two or more "
                           "(duplicated), or a failed query (errors); offenders: the first 50 keys that were not ok. In a "
                           "snapshot of one operation, that operation's probe only; of one tenant, that tenant's "
                           "offenders only, while the counts stay the whole operation's" },
            { "as_of", formatMicros(r.serverNowUs) }, { "probes", probes } };
    }

    OJson jobSetJson(const SnapshotJobSet& s)
    {
        OJson rows = OJson::array();
        for (const auto& j : s.rows)
            rows.push_back(OJson { { "id", j.id }, { "state", j.state }, { "action", j.action }, { "filter", j.filter },
                { "started_at", j.startedAt }, { "started_by", j.startedBy }, { "reason", j.reason }, { "cap", j.cap },
                { "matched", j.matched }, { "changed", j.changed }, { "refused_moved_on", j.refusedMovedOn },
                { "refused_busy", j.refusedBusy }, { "refused_gone", j.refusedGone }, { "skipped", j.skipped },
                { "needs_approval", j.needsApproval }, { "approved_by", opt(j.approvedBy) },
                { "approved_at", opt(j.approvedAt) }, { "last_batch_at", opt(j.lastBatchAt) },
                { "finished_at", opt(j.finishedAt) }, { "cancelled_by", opt(j.cancelledBy) },
                { "cancel_reason", opt(j.cancelReason) } });
        return OJson { { "description", s.description }, { "limit", s.limit }, { "total", s.total },
            { "truncated", s.truncated }, { "csv", "jobs.csv" }, { "rows", rows } };
    }

    OJson redriveSetJson(const SnapshotRedriveSet& s)
    {
        OJson rows = OJson::array();
        for (const auto& i : s.rows)
            rows.push_back(OJson { { "id", i.id }, { "key", i.key }, { "tenant", i.tenant }, { "operation", i.operation },
                { "job_id", i.jobId ? OJson(*i.jobId) : OJson(nullptr) }, { "state", i.state },
                { "worker", opt(i.worker) }, { "tries", i.tries }, { "requested_at", i.requestedAt },
                { "requested_by", i.requestedBy }, { "taken_at", opt(i.takenAt) }, { "finished_at", opt(i.finishedAt) },
                { "detail", opt(i.detail) }, { "request_stored", i.requestStored },
                { "request_bytes", i.requestBytes ? OJson(*i.requestBytes) : OJson(nullptr) },
                { "request", opt(i.request) } });
        OJson redrivers = OJson::array();
        for (const auto& d : s.redrivers)
            redrivers.push_back(OJson { { "tenant", d.tenant }, { "operation", d.operation }, { "worker", d.worker },
                { "version", d.version }, { "last_seen", d.lastSeen }, { "online", d.online } });
        return OJson { { "description", s.description }, { "limit", s.limit }, { "total", s.total },
            { "truncated", s.truncated }, { "requests_readable", s.requestsReadable }, { "rows", rows },
            { "redrivers", redrivers } };
    }

    OJson figuresJson(const StatsReading& s)
    {
        // What each figure is (exact, lower_bound, estimate), by its name (added within format 1).
        OJson quality = OJson::object();
        for (int i = 0; i < figureCount; ++i)
            quality[figureKey(static_cast<Figure>(i))] = qualityName(s.label(static_cast<Figure>(i)).quality);
        // The names of `idemctl stats --json`.
        return OJson { { "quality", quality }, { "processing", s.processing }, { "expired_leases", s.expiredLeases },
            { "oldest_processing_age_seconds", opt(s.oldestProcessingAgeSeconds) },
            { "retryable_failed", s.retryableFailed }, { "uncertain", s.uncertain },
            { "failed_permanent", s.failedPermanent }, { "failed_exhausted", s.failedExhausted },
            { "long_unfinished", s.longUnfinished }, { "duplicate_ratio", opt(s.duplicateRatio) },
            { "claims", s.claims }, { "retries", s.retries }, { "failed_retries", s.failedRetries },
            { "digest_conflicts", s.digestConflicts }, { "stale_token_rejections", s.staleTokenRejections },
            { "total_rows_estimate", opt(s.totalRowsEstimate) }, { "as_of", s.asOf }, { "in_recovery", s.inRecovery },
            { "replication_lag_seconds", opt(s.replicationLagSeconds) }, { "audit_head_id", s.auditHeadId },
            { "audit_head_hash", s.auditHeadHash.empty() ? OJson(nullptr) : OJson(s.auditHeadHash) } };
    }

    // Reading: every access names its JSON pointer in the error.
    class Reader {
    public:
        Reader(const Json& j, std::string path)
            : m_j(j)
            , m_path(std::move(path))
        {
        }

        [[noreturn]] void fail(const std::string& key, const std::string& what) const
        {
            throw SnapshotFormatError("snapshot.json: " + m_path + "/" + key + ": " + what);
        }

        const Json& at(const std::string& key) const
        {
            const auto it = m_j.find(key);
            if (it == m_j.end())
                fail(key, "missing");
            return *it;
        }

        Reader object(const std::string& key) const
        {
            const auto& v = at(key);
            if (!v.is_object())
                fail(key, "expected an object");
            return Reader(v, m_path + "/" + key);
        }

        std::string str(const std::string& key) const
        {
            const auto& v = at(key);
            if (!v.is_string())
                fail(key, "expected a string");
            return v.get<std::string>();
        }

        std::optional<std::string> optStr(const std::string& key) const
        {
            return at(key).is_null() ? std::nullopt : std::optional<std::string>(str(key));
        }

        std::int64_t integer(const std::string& key) const
        {
            const auto& v = at(key);
            if (!v.is_number_integer())
                fail(key, "expected an integer");
            // get<int64_t> would wrap 2^64-1 to -1.
            if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
                fail(key, "out of range");
            return v.get<std::int64_t>();
        }

        int int32(const std::string& key) const
        {
            const auto v = integer(key);
            if (v < INT32_MIN || v > INT32_MAX)
                fail(key, "out of range");
            return static_cast<int>(v);
        }

        std::optional<std::int64_t> optInteger(const std::string& key) const
        {
            return at(key).is_null() ? std::nullopt : std::optional<std::int64_t>(integer(key));
        }

        std::optional<double> optNumber(const std::string& key) const
        {
            const auto& v = at(key);
            if (v.is_null())
                return std::nullopt;
            if (!v.is_number())
                fail(key, "expected a number");
            return v.get<double>();
        }

        bool boolean(const std::string& key) const
        {
            const auto& v = at(key);
            if (!v.is_boolean())
                fail(key, "expected true or false");
            return v.get<bool>();
        }

        template <typename F> void each(const std::string& key, F&& f) const
        {
            const auto& v = at(key);
            if (!v.is_array())
                fail(key, "expected an array");
            for (std::size_t i = 0; i < v.size(); ++i) {
                const std::string path = m_path + "/" + key + "/" + std::to_string(i);
                if (!v[i].is_object())
                    throw SnapshotFormatError("snapshot.json: " + path + ": expected an object");
                f(Reader(v[i], path));
            }
        }

        bool has(const std::string& key) const { return m_j.contains(key); }
        const Json& json() const { return m_j; }
        const std::string& path() const { return m_path; }

    private:
        const Json& m_j;
        std::string m_path;
    };

    SnapshotCounterSet counterSetFrom(const Reader& r, const std::string& name)
    {
        SnapshotCounterSet s;
        s.name = name;
        s.description = r.str("description");
        s.limit = r.int32("limit");
        s.total = r.integer("total");
        s.truncated = r.boolean("truncated");
        r.each("rows", [&](const Reader& c) {
            s.rows.push_back(
                { c.str("bucket"), c.str("tenant"), c.str("operation"), c.str("outcome"), c.integer("n") });
        });
        return s;
    }

    // A latency set as written above; a row whose histogram does not add up is refused, not shown.
    SnapshotLatencySet latencySetFrom(const Reader& r)
    {
        SnapshotLatencySet s;
        s.description = r.str("description");
        s.limit = r.int32("limit");
        s.total = r.integer("total");
        s.truncated = r.boolean("truncated");
        s.foldedTo = r.str("folded_to");
        r.each("rows", [&](const Reader& row) {
            SnapshotLatencyRow l;
            l.bucket = row.str("bucket");
            l.tenant = row.str("tenant");
            l.operation = row.str("operation");
            l.kind = row.str("kind");
            if (l.kind != "run" && l.kind != "tts" && l.kind != "attempts")
                row.fail("kind", "expected run, tts or attempts");
            l.n = row.integer("n");
            const auto& total = row.at("total");
            if (!total.is_number() || total.get<double>() < 0)
                row.fail("total", "expected a number of at least 0");
            l.total = total.get<double>();
            const auto& slots = row.at("slots");
            const auto& counts = row.at("counts");
            if (!slots.is_array() || !counts.is_array() || slots.size() != counts.size() || slots.empty())
                row.fail("slots", "expected two arrays of the same, non-zero length (slots and counts)");
            std::int64_t sum = 0;
            for (std::size_t i = 0; i < slots.size(); ++i) {
                if (!slots[i].is_number_integer() || slots[i].get<std::int64_t>() < 0
                    || slots[i].get<std::int64_t>() > 32767
                    || (i > 0 && slots[i].get<std::int64_t>() <= slots[i - 1].get<std::int64_t>()))
                    row.fail("slots", "expected ascending integers from 0 to 32767");
                if (!counts[i].is_number_integer() || counts[i].get<std::int64_t>() < 1
                    || counts[i].get<std::int64_t>() > INT64_MAX - sum)
                    row.fail("counts", "expected positive integers");
                sum += counts[i].get<std::int64_t>();
                l.slotCounts.emplace_back(static_cast<int>(slots[i].get<std::int64_t>()), counts[i].get<std::int64_t>());
            }
            if (sum != l.n)
                row.fail("n", "is not the sum of the counts");
            s.rows.push_back(std::move(l));
        });
        return s;
    }

    // An event's kind: what idem_events names it (requeue, pause, annotate, deploy, …). Kinds this
    // reader does not know are kept (and drawn as a generic mark); anything else is refused.
    bool eventKindName(const std::string& kind)
    {
        if (kind.empty() || kind.size() > 64)
            return false;
        for (const char c : kind)
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
                return false;
        return true;
    }

    // An event set as written above; an event with a time that does not parse, out of order, or of
    // no recognisable kind is refused, not drawn somewhere else.
    SnapshotEventSet eventSetFrom(const Reader& r)
    {
        SnapshotEventSet s;
        s.description = r.str("description");
        s.limit = r.int32("limit");
        if (s.limit < 1)
            r.fail("limit", "expected a positive integer");
        s.truncated = r.boolean("truncated");
        std::int64_t previousUs = INT64_MIN;
        r.each("rows", [&](const Reader& row) {
            SnapshotEvent e;
            e.auditId = row.optInteger("audit_id").value_or(0);
            if (e.auditId < 0)
                row.fail("audit_id", "expected an integer of at least 0, or null");
            e.at = row.str("at");
            const auto atUs = parseIsoMicros(e.at);
            if (!atUs)
                row.fail("at", "expected a time as YYYY-MM-DDTHH:MM:SS.ffffffZ");
            if (*atUs < previousUs)
                row.fail("at", "earlier than the event before it (events are oldest first)");
            previousUs = *atUs;
            e.action = row.str("action");
            if (!eventKindName(e.action))
                row.fail("action", "expected a kind: 1 to 64 lowercase letters, digits, '_' or '-'");
            e.tenant = row.str("tenant");
            e.operation = row.str("operation");
            e.actor = row.str("actor");
            e.text = row.str("text");
            s.rows.push_back(std::move(e));
        });
        if (s.rows.size() > std::size_t(s.limit))
            r.fail("rows", "holds more events than its limit");
        return s;
    }

    // Points whose time does not parse, that go back in time, or that count below zero are refused.
    SnapshotProcessingHistory processingFrom(const Reader& r)
    {
        SnapshotProcessingHistory h;
        h.description = r.str("description");
        std::int64_t previousUs = INT64_MIN;
        r.each("points", [&](const Reader& p) {
            SnapshotProcessingPoint x;
            x.at = p.str("at");
            const auto us = parseIsoMicros(x.at);
            if (!us)
                p.fail("at", "expected a time as YYYY-MM-DDTHH:MM:SS.ffffffZ");
            if (*us < previousUs)
                p.fail("at", "earlier than the point before it (points are oldest first)");
            previousUs = *us;
            x.processing = p.integer("processing");
            x.expired = p.integer("expired");
            if (x.processing < 0 || x.expired < 0)
                p.fail("processing", "expected counts of at least 0");
            h.points.push_back(std::move(x));
        });
        if (h.points.size() > 7 * 24 * 60 + 1)
            r.fail("points", "holds more points than a week of minutes");
        return h;
    }

    // What every bounded set of the format starts with; its rows are refused past its limit.
    template <typename Set> Set boundedSetFrom(const Reader& r)
    {
        Set s;
        s.description = r.str("description");
        s.limit = r.int32("limit");
        s.total = r.integer("total");
        s.truncated = r.boolean("truncated");
        return s;
    }

    template <typename Set> void checkBound(const Reader& r, const Set& s, const char* noun)
    {
        if (s.rows.size() > std::size_t(std::max(0, s.limit)))
            r.fail("rows", std::string("holds more ") + noun + " than its limit");
    }

    SnapshotPauseSet pauseSetFrom(const Reader& r)
    {
        auto s = boundedSetFrom<SnapshotPauseSet>(r);
        r.each("rows", [&](const Reader& row) {
            SnapshotPause p;
            p.tenant = row.str("tenant");
            p.operation = row.str("operation");
            p.reason = row.str("reason");
            p.pausedBy = row.str("paused_by");
            p.pausedAt = row.str("paused_at");
            p.until = row.optStr("until");
            p.active = row.boolean("active");
            p.endedAt = row.optStr("ended_at");
            p.endedBy = row.optStr("ended_by");
            p.endReason = row.optStr("end_reason");
            p.auditId = row.integer("audit_id");
            if (row.has("ramp")) // schema v33 on
                p.ramp = row.optStr("ramp");
            s.rows.push_back(std::move(p));
        });
        checkBound(r, s, "pauses");
        return s;
    }

    HorizonReading horizonFrom(const Reader& r)
    {
        HorizonReading h;
        h.available = true;
        h.asOf = r.str("as_of");
        h.ownerSeesAll = r.boolean("owner_sees_all");
        h.loginSeesAll = r.boolean("login_sees_all");
        r.each("holders", [&](const Reader& x) {
            HorizonHolder o;
            o.kind = x.str("kind");
            if (const auto pid = x.optInteger("pid"))
                o.pid = static_cast<int>(*pid);
            o.role = x.str("role");
            o.application = x.str("application");
            o.client = x.optStr("client").value_or(std::string());
            o.state = x.str("state");
            o.backendType = x.str("backend_type");
            o.xactStart = x.optStr("xact_start").value_or(std::string());
            o.queryStart = x.optStr("query_start").value_or(std::string());
            o.xidAge = x.integer("xid_age");
            o.ageSeconds = x.optNumber("age_seconds");
            o.name = x.str("name");
            o.query = x.optStr("query").value_or(std::string());
            o.queryHidden = x.boolean("query_hidden");
            h.holders.push_back(std::move(o));
        });
        r.each("tables", [&](const Reader& x) {
            HorizonTable t;
            t.name = x.str("name");
            t.deadTuples = x.integer("dead_tuples");
            t.liveTuples = x.integer("live_tuples");
            t.vacuums = x.integer("vacuums");
            t.lastVacuum = x.optStr("last_vacuum").value_or(std::string());
            t.vacuumedDuringHold = x.boolean("vacuumed_during_hold");
            h.tables.push_back(std::move(t));
        });
        h.deadTotal = r.integer("dead_total");
        h.keptAtLeast = r.integer("kept_at_least");
        return h;
    }

    SnapshotRedriveSet redriveSetFrom(const Reader& r)
    {
        auto s = boundedSetFrom<SnapshotRedriveSet>(r);
        s.requestsReadable = r.boolean("requests_readable");
        r.each("rows", [&](const Reader& row) {
            SnapshotRedriveItem i;
            i.id = row.integer("id");
            i.key = row.str("key");
            i.tenant = row.str("tenant");
            i.operation = row.str("operation");
            i.jobId = row.optInteger("job_id");
            i.state = row.str("state");
            i.worker = row.optStr("worker");
            i.tries = int(row.integer("tries"));
            i.requestedAt = row.str("requested_at");
            i.requestedBy = row.str("requested_by");
            i.takenAt = row.optStr("taken_at");
            i.finishedAt = row.optStr("finished_at");
            i.detail = row.optStr("detail");
            i.requestStored = row.boolean("request_stored");
            i.requestBytes = row.optInteger("request_bytes");
            i.request = row.optStr("request");
            s.rows.push_back(std::move(i));
        });
        r.each("redrivers", [&](const Reader& row) {
            s.redrivers.push_back({ row.str("tenant"), row.str("operation"), row.str("worker"), row.str("version"),
                row.str("last_seen"), row.boolean("online") });
        });
        checkBound(r, s, "re-drive items");
        return s;
    }

    ReconcileReading reconcileFrom(const Reader& r)
    {
        ReconcileReading out;
        const auto parseMicros = [](const Reader& at, const char* key) {
            const auto us = parseIsoMicros(at.str(key));
            if (!us)
                at.fail(key, "expected an ISO 8601 time");
            return *us;
        };
        out.serverNowUs = parseMicros(r, "as_of");
        r.each("probes", [&](const Reader& x) {
            ReconcileStatus s;
            s.probe.operation = x.str("operation");
            s.probe.query = x.str("query");
            s.probe.sampleSize = x.int32("sample_size");
            s.probe.windowSeconds = x.int32("window_seconds");
            s.probe.everySeconds = x.int32("every_seconds");
            s.probe.timeoutMs = x.int32("timeout_ms");
            s.probe.createdAtUs = parseMicros(x, "created_at");
            s.probe.createdBy = x.str("created_by");
            s.probe.nextRunAtUs = parseMicros(x, "next_run_at");
            if (!x.at("last_run").is_null()) {
                const auto l = x.object("last_run");
                ReconcileRun run;
                run.id = l.integer("id");
                run.operation = s.probe.operation;
                run.startedAtUs = parseMicros(l, "started_at");
                if (l.optStr("finished_at"))
                    run.finishedAtUs = parseMicros(l, "finished_at");
                run.runner = l.str("runner");
                run.sampleSize = l.int32("sample_size");
                run.sampled = l.integer("sampled");
                run.ok = l.integer("ok");
                run.missing = l.integer("missing");
                run.duplicated = l.integer("duplicated");
                run.errors = l.integer("errors");
                l.each("offenders", [&](const Reader& o) {
                    ReconcileOffender off;
                    off.key = o.str("key");
                    if (o.has("count"))
                        off.count = o.integer("count");
                    else
                        off.error = o.str("error");
                    run.offenders.push_back(std::move(off));
                });
                run.problem = l.optStr("problem").value_or(std::string());
                s.last = std::move(run);
            }
            out.probes.push_back(std::move(s));
        });
        return out;
    }

    SnapshotJobSet jobSetFrom(const Reader& r)
    {
        auto s = boundedSetFrom<SnapshotJobSet>(r);
        r.each("rows", [&](const Reader& row) {
            SnapshotJob j;
            j.id = row.integer("id");
            j.state = row.str("state");
            j.action = row.str("action");
            j.filter = row.str("filter");
            j.startedAt = row.str("started_at");
            j.startedBy = row.str("started_by");
            j.reason = row.str("reason");
            j.cap = row.integer("cap");
            j.matched = row.integer("matched");
            j.changed = row.integer("changed");
            j.refusedMovedOn = row.integer("refused_moved_on");
            j.refusedBusy = row.integer("refused_busy");
            j.refusedGone = row.integer("refused_gone");
            j.skipped = row.integer("skipped");
            j.needsApproval = row.boolean("needs_approval");
            j.approvedBy = row.optStr("approved_by");
            j.approvedAt = row.optStr("approved_at");
            j.lastBatchAt = row.optStr("last_batch_at");
            j.finishedAt = row.optStr("finished_at");
            j.cancelledBy = row.optStr("cancelled_by");
            j.cancelReason = row.optStr("cancel_reason");
            s.rows.push_back(std::move(j));
        });
        checkBound(r, s, "jobs");
        return s;
    }

    SnapshotTaskRow taskRowFrom(const Reader& r)
    {
        SnapshotTaskRow t;
        t.key = r.str("idempotency_key");
        t.status = r.str("status");
        t.requestHash = r.str("request_hash");
        t.resultJson = r.optStr("result_json");
        t.errorMessage = r.optStr("error_message");
        t.errorClass = r.optStr("error_class");
        t.ownerToken = r.optStr("owner_token");
        t.leaseUntil = r.optStr("lease_until");
        t.nextAttemptAt = r.optStr("next_attempt_at");
        t.attempts = r.int32("attempts");
        t.maxAttempts = r.int32("max_attempts");
        t.createdAt = r.str("created_at");
        t.updatedAt = r.str("updated_at");
        t.errorsJson = r.str("errors");
        return t;
    }

    StatsReading figuresFrom(const Reader& r)
    {
        StatsReading s;
        s.processing = r.integer("processing");
        s.expiredLeases = r.integer("expired_leases");
        s.oldestProcessingAgeSeconds = r.optNumber("oldest_processing_age_seconds");
        s.retryableFailed = r.integer("retryable_failed");
        s.uncertain = r.integer("uncertain");
        s.failedPermanent = r.integer("failed_permanent");
        s.failedExhausted = r.integer("failed_exhausted");
        s.longUnfinished = r.integer("long_unfinished");
        s.duplicateRatio = r.optNumber("duplicate_ratio");
        s.claims = r.integer("claims");
        s.retries = r.integer("retries");
        s.failedRetries = r.integer("failed_retries");
        s.digestConflicts = r.integer("digest_conflicts");
        s.staleTokenRejections = r.integer("stale_token_rejections");
        s.totalRowsEstimate = r.optInteger("total_rows_estimate");
        s.asOf = r.str("as_of");
        s.inRecovery = r.boolean("in_recovery");
        s.replicationLagSeconds = r.optNumber("replication_lag_seconds");
        // Added within format 1: what each figure is; a bundle written before holds exact counts
        // (and the planner's estimate of the total), as the defaults say.
        if (r.has("quality")) {
            const auto q = r.object("quality");
            for (int i = 0; i < figureCount; ++i) {
                const auto f = static_cast<Figure>(i);
                if (!q.has(figureKey(f)))
                    continue;
                const auto name = q.str(figureKey(f));
                auto& l = s.label(f);
                if (name == "exact")
                    l.quality = FigureQuality::Exact;
                else if (name == "lower_bound")
                    l.quality = FigureQuality::LowerBound;
                else if (name == "exact_cached")
                    l.quality = FigureQuality::ExactCached;
                else if (name == "estimate")
                    l.quality = FigureQuality::Estimate;
                else
                    q.fail(figureKey(f), "unknown quality \"" + name + "\"");
            }
        } else {
            s.label(Figure::TotalRows).quality = FigureQuality::Estimate;
        }
        // Added within format 1: a bundle written before has neither (and its audit.head_* says the same).
        if (r.has("audit_head_id"))
            s.auditHeadId = r.integer("audit_head_id");
        if (r.has("audit_head_hash"))
            s.auditHeadHash = r.optStr("audit_head_hash").value_or(std::string());
        return s;
    }
} // namespace

std::string snapshotToJson(const SnapshotData& d)
{
    OJson thresholds = OJson::array();
    for (const auto& t : d.thresholds)
        thresholds.push_back(
            OJson { { "metric", t.metric }, { "warning", opt(t.warning) }, { "critical", opt(t.critical) } });
    OJson poll = nullptr;
    if (d.poll)
        poll = OJson { { "interval_ms", d.poll->intervalMs }, { "statement_timeout_ms", d.poll->statementTimeoutMs },
            { "wide_refresh_ms", d.poll->wideRefreshMs } };

    OJson rowSets = OJson::array();
    for (const auto& s : d.rowSets) {
        OJson rows = OJson::array();
        for (const auto& r : s.rows)
            rows.push_back(taskRowJson(r));
        rowSets.push_back(OJson { { "name", s.name }, { "description", s.description }, { "order", s.order },
            { "limit", s.limit }, { "total", s.total }, { "truncated", s.truncated },
            { "csv", "rows/" + s.name + ".csv" }, { "rows", rows } });
    }

    OJson tail = OJson::array();
    for (const auto& e : d.audit.tail)
        tail.push_back(OJson { { "id", e.id }, { "at", e.at }, { "idempotency_key", e.key }, { "action", e.action },
            { "reason", e.reason }, { "db_role", e.dbRole }, { "os_user", e.osUser }, { "client_host", e.clientHost },
            { "application", opt(e.application) }, { "before_image", e.beforeImage }, { "after_image", e.afterImage },
            { "prev_hash", e.prevHash }, { "entry_hash", e.entryHash } });

    OJson admin = nullptr;
    if (d.adminConninfo || d.adminRole)
        admin = OJson { { "conninfo", opt(d.adminConninfo) }, { "role", opt(d.adminRole) } };
    OJson signing = nullptr;
    if (d.signingKeyFingerprint)
        signing = OJson { { "algorithm", "Ed25519" }, { "public_key_sha256", *d.signingKeyFingerprint },
            { "public_key_file", "signing-key.pub.pem" }, { "signature_file", "MANIFEST.sig" } };

    const OJson j {
        { "format", snapshotFormatName },
        { "format_version", snapshotFormatVersion },
        { "producer", d.producer },
        { "taken_at", d.takenAt },
        { "scope",
            { { "schema", d.schema }, { "tenant", opt(d.tenant) }, { "operation", opt(d.operation) },
                { "window_minutes", d.windowMinutes },
                { "long_unfinished_after_minutes", d.longUnfinishedAfterMinutes },
                { "history_minutes", d.historyMinutes } } },
        { "redaction",
            { { "enabled", d.redacted },
                { "form", "redacted:sha256:<hex of the original text>:<its length in bytes>" } } },
        { "server",
            { { "conninfo", d.conninfo }, { "version", d.serverVersion }, { "version_num", d.serverVersionNum },
                { "database", d.database }, { "in_recovery", d.inRecovery }, { "schema_version", d.schemaVersion },
                { "schema_latest_known", d.schemaLatestKnown } } },
        { "roles",
            { { "monitor",
                  { { "current_user", d.currentRole }, { "session_user", d.sessionRole }, { "superuser", d.superuser },
                      { "idem_reader", d.memberReader }, { "idem_operator", d.memberOperator } } },
                { "admin", admin } } },
        { "settings", { { "thresholds", thresholds }, { "poll", poll } } },
        { "figures", figuresJson(d.figures) },
        { "counters_history", counterSetJson(d.history) },
        { "recent_conflicts", counterSetJson(d.conflicts) },
        { "field_conflicts", d.fieldConflicts ? OJson(snapshotFieldConflictsJson(*d.fieldConflicts)) : OJson(nullptr) },
        { "latency_history", d.latency ? latencySetJson(*d.latency) : OJson(nullptr) },
        { "events", d.events ? eventSetJson(*d.events) : OJson(nullptr) },
        { "row_sets", rowSets },
        { "processing_history", d.processingHistory ? processingJson(*d.processingHistory) : OJson(nullptr) },
        { "pauses", d.pauses ? pauseSetJson(*d.pauses) : OJson(nullptr) },
        { "jobs", d.jobs ? jobSetJson(*d.jobs) : OJson(nullptr) },
        { "horizon", d.horizon ? horizonJson(*d.horizon) : OJson(nullptr) },
        { "reconcile", d.reconcile ? reconcileJson(*d.reconcile) : OJson(nullptr) },
        { "fencing", d.fencing ? OJson::parse(fencingJson(*d.fencing)) : OJson(nullptr) },
        { "redrive", d.redrive ? redriveSetJson(*d.redrive) : OJson(nullptr) },
        { "audit",
            { { "limit", d.audit.limit }, { "total", d.audit.total }, { "truncated", d.audit.truncated },
                { "head_id", opt(d.audit.headId) }, { "head_hash", opt(d.audit.headHash) }, { "tail", tail } } },
        { "signing", signing },
    };
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

SnapshotData snapshotFromJson(std::string_view text)
{
    // The strict reader: nlohmann's own stops at a NUL byte and ignores what follows, and a
    // key given twice would leave it to the parser which value an operator is shown.
    Json j;
    try {
        j = parseJsonStrict(text, JsonNumbers::Any); // its figures are int64, checked below
    } catch (const JsonError& e) {
        throw SnapshotFormatError(std::string("snapshot.json is not valid JSON: ") + e.what());
    }
    if (!j.is_object())
        throw SnapshotFormatError("snapshot.json: the top level is not a JSON object");
    const Reader root(j, "");
    if (!root.has("format") || !j["format"].is_string() || j["format"] != snapshotFormatName)
        throw SnapshotFormatError("snapshot.json is not an Idem snapshot (no \"format\": \"idem-snapshot\")");
    const auto version = root.integer("format_version");
    if (version > snapshotFormatVersion)
        throw SnapshotFormatError("snapshot.json has format version " + std::to_string(version)
            + ", newer than this Idem reads (up to " + std::to_string(snapshotFormatVersion)
            + "); open it with a newer Idem");
    if (version < 1)
        throw SnapshotFormatError("snapshot.json has format version " + std::to_string(version)
            + ", which no Idem release wrote (this Idem reads version 1 to " + std::to_string(snapshotFormatVersion)
            + ")");

    SnapshotData d;
    d.formatVersion = static_cast<int>(version);
    d.producer = root.str("producer");
    d.takenAt = root.str("taken_at");
    const auto scope = root.object("scope");
    d.schema = scope.str("schema");
    d.tenant = scope.optStr("tenant");
    d.operation = scope.optStr("operation");
    d.windowMinutes = scope.int32("window_minutes");
    d.longUnfinishedAfterMinutes = scope.int32("long_unfinished_after_minutes");
    d.historyMinutes = scope.int32("history_minutes");
    d.redacted = root.object("redaction").boolean("enabled");

    const auto server = root.object("server");
    d.conninfo = server.str("conninfo");
    d.serverVersion = server.str("version");
    d.serverVersionNum = server.int32("version_num");
    d.database = server.str("database");
    d.inRecovery = server.boolean("in_recovery");
    d.schemaVersion = server.int32("schema_version");
    d.schemaLatestKnown = server.int32("schema_latest_known");

    const auto roles = root.object("roles");
    const auto monitor = roles.object("monitor");
    d.currentRole = monitor.str("current_user");
    d.sessionRole = monitor.str("session_user");
    d.superuser = monitor.boolean("superuser");
    d.memberReader = monitor.boolean("idem_reader");
    d.memberOperator = monitor.boolean("idem_operator");
    if (!roles.at("admin").is_null()) {
        const auto admin = roles.object("admin");
        d.adminConninfo = admin.optStr("conninfo");
        d.adminRole = admin.optStr("role");
    }

    const auto settings = root.object("settings");
    settings.each("thresholds", [&](const Reader& t) {
        d.thresholds.push_back({ t.str("metric"), t.optNumber("warning"), t.optNumber("critical") });
    });
    if (!settings.at("poll").is_null()) {
        const auto poll = settings.object("poll");
        d.poll = SnapshotPollSettings { poll.int32("interval_ms"), poll.int32("statement_timeout_ms"),
            poll.int32("wide_refresh_ms") };
    }

    d.figures = figuresFrom(root.object("figures"));
    d.history = counterSetFrom(root.object("counters_history"), "counters_history");
    d.conflicts = counterSetFrom(root.object("recent_conflicts"), "recent_conflicts");
    // Added within format 1 (schema v32): absent or null in older snapshots and before v32.
    if (root.has("field_conflicts") && !root.at("field_conflicts").is_null())
        d.fieldConflicts = snapshotFieldConflictsFrom(root.at("field_conflicts"));
    // Added within format 1 (schema v17): absent or null in older snapshots and before v17.
    if (root.has("latency_history") && !root.at("latency_history").is_null())
        d.latency = latencySetFrom(root.object("latency_history"));
    // Added within format 1 (schema v17), as latency_history.
    if (root.has("events") && !root.at("events").is_null())
        d.events = eventSetFrom(root.object("events"));

    root.each("row_sets", [&](const Reader& s) {
        SnapshotRowSet set;
        set.name = s.str("name");
        set.description = s.str("description");
        set.order = s.str("order");
        set.limit = s.int32("limit");
        set.total = s.integer("total");
        set.truncated = s.boolean("truncated");
        s.each("rows", [&](const Reader& r) { set.rows.push_back(taskRowFrom(r)); });
        d.rowSets.push_back(std::move(set));
    });

    // Added within format 1: absent or null in older snapshots (pauses: schema v15, jobs: v19).
    if (root.has("processing_history") && !root.at("processing_history").is_null())
        d.processingHistory = processingFrom(root.object("processing_history"));
    if (root.has("pauses") && !root.at("pauses").is_null())
        d.pauses = pauseSetFrom(root.object("pauses"));
    if (root.has("jobs") && !root.at("jobs").is_null())
        d.jobs = jobSetFrom(root.object("jobs"));
    if (root.has("horizon") && !root.at("horizon").is_null())
        d.horizon = horizonFrom(root.object("horizon"));
    if (root.has("reconcile") && !root.at("reconcile").is_null())
        d.reconcile = reconcileFrom(root.object("reconcile"));
    if (root.has("fencing") && !root.at("fencing").is_null())
        d.fencing = fencingFromReportJson(root.at("fencing").dump());
    if (root.has("redrive") && !root.at("redrive").is_null())
        d.redrive = redriveSetFrom(root.object("redrive"));

    const auto audit = root.object("audit");
    d.audit.limit = audit.int32("limit");
    d.audit.total = audit.integer("total");
    d.audit.truncated = audit.boolean("truncated");
    d.audit.headId = audit.optInteger("head_id");
    d.audit.headHash = audit.optStr("head_hash");
    audit.each("tail", [&](const Reader& e) {
        d.audit.tail.push_back({ e.integer("id"), e.str("at"), e.str("idempotency_key"), e.str("action"),
            e.str("reason"), e.str("db_role"), e.str("os_user"), e.str("client_host"), e.str("before_image"),
            e.str("after_image"), e.str("prev_hash"), e.str("entry_hash"), e.optStr("application") });
    });

    if (!root.at("signing").is_null())
        d.signingKeyFingerprint = root.object("signing").str("public_key_sha256");
    return d;
}

} // namespace idem
