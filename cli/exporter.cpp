#include "cli/exporter.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include <pqxx/pqxx>

#include "cli/args.h"
#include "cli/reconcilerunner.h"
#include "core/connection.h"
#include "core/counters.h"
#include "core/utf8.h"

namespace idem::cli {

namespace {
    using prometheus::MetricType;
    using Clock = std::chrono::steady_clock;

    const char* const allOutcomes[] = { outcome::Acquired, outcome::ReacquiredLease, outcome::ReacquiredRetry,
        outcome::Replayed, outcome::InProgress, outcome::Conflict, outcome::RetryLater, outcome::RejectedFailed,
        outcome::StaleToken, outcome::Succeeded, outcome::FailedRetryable, outcome::FailedPermanent,
        outcome::FailedUnknown, outcome::Exhausted, outcome::RetryFailed, outcome::Paused };

    // The pauses' window of turned-away claims, which the exporter does not use (the outcome
    // counter 'paused' has them): the shortest, so idem_pause_list sums the least.
    constexpr int pauseListMinutes = 1;

    // Minutes one reading folds at most: a short transaction, well inside the statement timeout,
    // that still catches up ten times faster than minutes close.
    constexpr int latencyRollupMinutes = 10;
    // readLatencyHistograms reads 31 days at most (the roll-up keeps 8).
    constexpr std::int64_t latencyMaxSpanUs = 31LL * 24 * 60 * 60'000'000;

    // One line per problem: libpq's messages end in, and sometimes hold, newlines and tabs.
    std::string oneLine(const std::string& why)
    {
        std::string line;
        for (char c : why) {
            const bool space = c == '\n' || c == '\t' || c == ' ';
            if (!space)
                line += c;
            else if (!line.empty() && line.back() != ' ')
                line += ' ';
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        return displaySafe(line, messageDisplay); // libpq quotes what the server said
    }

    std::string sqlProblem(const pqxx::sql_error& e)
    {
        // libpqxx 6.4 leaves the SQLSTATE out of some of its exception types (42501 among them).
        const std::string state = e.sqlstate().empty() ? std::string() : " (SQLSTATE " + e.sqlstate() + ")";
        return oneLine("database error" + state + ": " + e.what());
    }

    // A part of a reading in a savepoint: its failure (a schema too old for it, a timeout) leaves
    // the transaction, and the parts after it, as they were. libpqxx 6.4 sends a subtransaction's
    // SAVEPOINT with its first exec(), not with exec_params(): a part whose first statement is
    // sent with exec_params (listPauses) would run outside the savepoint, and its failure would
    // abort the whole transaction. So the savepoint is set first. The problem, or empty when the
    // part succeeded; anything but an SQL error (a lost connection) fails the whole reading.
    template <class Part> std::string inSavepoint(pqxx::dbtransaction& tx, const char* name, Part&& part)
    {
        try {
            pqxx::subtransaction sub(tx, name);
            sub.exec("SELECT 1");
            part(sub);
            sub.commit();
        } catch (const pqxx::sql_error& e) {
            // The session ended under it (a terminated backend reports its FATAL as an SQL
            // error): that is the reading's loss, said as one, not this part's problem.
            if (!tx.conn().is_open())
                throw pqxx::broken_connection(e.what());
            return sqlProblem(e);
        }
        return {};
    }

    double unixNow()
    {
        using namespace std::chrono;
        return static_cast<double>(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count())
            / 1000.0;
    }

    // Grouped by what is labelled only, so the rows sent follow the labels chosen; the columns
    // come from this fixed text, never from input.
    std::string countersSql(const SchemaName& schema, bool tenant, bool operation)
    {
        std::string cols = "extract(epoch FROM c.bucket)::bigint, c.outcome";
        std::string group = "1, 2";
        cols += tenant ? ", c.tenant" : ", ''::text";
        cols += operation ? ", c.operation" : ", ''::text";
        if (tenant)
            group += ", c.tenant";
        if (operation)
            group += ", c.operation";
        // The bucket-leading primary key bounds the read to the lookback, whatever the table holds.
        // Never a minute after now; a sum saturates rather than fail with 22003 (schema v13).
        return "SELECT " + cols + ", least(sum(c.n), 9223372036854775807)::bigint FROM " + schema.qualify("idem_counters")
            + " c WHERE c.bucket >= date_trunc('minute', now()) - make_interval(mins => $1::int)"
              " AND c.bucket <= now() GROUP BY " + group;
    }
} // namespace

void OutcomeTotals::apply(const std::vector<Row>& rows)
{
    std::map<std::pair<std::int64_t, Series>, std::int64_t> seen;
    for (const auto& r : rows) {
        Series series { r.outcome, r.tenant, r.operation };
        auto key = std::make_pair(r.bucket, series);
        auto& total = m_totals.try_emplace(series, 0.0).first->second;
        if (auto it = m_seen.find(key); it != m_seen.end()) {
            if (r.n > it->second) // a bucket only grows; a smaller sum is an expiry, not negative events
                total += static_cast<double>(r.n - it->second);
        } else if (m_primed) {
            total += static_cast<double>(r.n); // a new minute, or a key new in a known minute
        }
        seen.emplace(std::move(key), r.n);
    }
    m_seen = std::move(seen);
    m_primed = true;
}

Exporter::Exporter(ExporterOptions options)
    : m_options(std::move(options))
    , m_labels { { "schema", m_options.schema.name() } }
    , m_countersSql(countersSql(m_options.schema, m_options.tenantLabel, m_options.operationLabel))
{
    if (!m_options.tenantLabel && !m_options.operationLabel)
        for (const char* o : allOutcomes)
            m_totals.declare({ o, {}, {} });
    publish(nullptr, nullptr, 0); // until the first reading: up 0, nothing else
}

Exporter::~Exporter() { stop(); }

void Exporter::start()
{
    m_thread = std::thread([this] { loop(); });
}

void Exporter::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

std::vector<prometheus::MetricFamily> Exporter::Collect() const
{
    std::lock_guard lock(m_mutex);
    return m_families;
}

void Exporter::loop()
{
    auto next = Clock::now();
    for (;;) {
        readOnce();
        // Fixed rate from the start of each reading; an overrun starts the next at once.
        next = std::max(next + m_options.interval, Clock::now());
        std::unique_lock lock(m_mutex);
        if (m_wake.wait_until(lock, next, [this] { return m_stop; }))
            return;
    }
}

std::vector<OutcomeTotals::Row> Exporter::readCounters(pqxx::transaction_base& tx) const
{
    std::vector<OutcomeTotals::Row> rows;
    for (const auto& r : tx.exec_params(m_countersSql, OutcomeTotals::lookbackMinutes))
        rows.push_back({ r[0].as<std::int64_t>(), r[1].as<std::string>(), r[2].as<std::string>(),
            r[3].as<std::string>(), r[4].as<std::int64_t>() });
    return rows;
}

void Exporter::readOnce()
{
    const auto t0 = Clock::now();
    const auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    ++m_reads;
    // A read-only server met on an open connection (a primary demoted by a switchover) is left at
    // once for a new connection, read in the same reading: behind a proxy or with a multi-host
    // conninfo that finds the primary; otherwise the read-only server, read without writing.
    for (int attempt = 0;; ++attempt) {
        try {
            readAttempt(seconds);
            return;
        } catch (const ConnectError& e) {
            m_conn.reset();
            failed(std::string("cannot connect (") + connectErrorKindName(e.kind()) + "): " + e.what());
        } catch (const pqxx::broken_connection& e) {
            m_conn.reset();
            failed(
                "lost the connection to the database server: " + describeLostConnection(e.what()) + "; reconnecting");
        } catch (const pqxx::sql_error& e) {
            if (isReadOnlyRefusal(e)) {
                m_conn.reset();
                failed(describeReadOnly(e.what()) + "; reconnecting");
                if (attempt == 0)
                    continue;
            } else {
                // The server answered, so the connection stays; the reason is the operator's to
                // fix (no schema yet, a role without SELECT, a statement timeout).
                failed("database error (SQLSTATE " + e.sqlstate() + "): " + e.what());
                // A migration changed what the prepared reading returns ("cached plan must not
                // change result type"): a new connection prepares it again.
                if (e.sqlstate() == "0A000")
                    m_conn.reset();
            }
        } catch (const std::exception& e) {
            m_conn.reset();
            failed(e.what());
        }
        break;
    }
    ++m_errors;
    publish(nullptr, nullptr, seconds());
}

void Exporter::readAttempt(const std::function<double()>& seconds)
{
    if (!m_conn) {
        // A connect never waits longer than a few intervals: scrapes keep being served meanwhile.
        const auto timeout = std::clamp<long long>(
            std::chrono::duration_cast<std::chrono::seconds>(m_options.interval).count() * 2, 2, 10);
        m_conn = connect(m_options.conninfo, ConnectOptions { "idemctl exporter", static_cast<int>(timeout) });
        // Direct: the reading is prepared once and planned once (ReadStatsOptions::prepared).
        m_direct = !behindPooler(*m_conn);
        m_readOnly = sessionReadOnly(*m_conn);
        if (m_readOnly)
            std::cerr << "idemctl exporter: the server is read-only (a standby, or not the primary): reading it "
                         "without folding latency minutes or refreshing the shared exact figures\n";
    } else if (m_readOnly) {
        // Still read-only? A server turned writable again (a switchover back) is written to again.
        m_readOnly = sessionReadOnly(*m_conn);
    }
    // Before the reading's transaction, in its own: the minutes it folds are read below.
    std::string latencyProblem;
    if (!m_standby && !m_readOnly)
        rollUpLatency(latencyProblem);
    // One more reader of the shared figures: READ COMMITTED and read-write, so it counts
    // the bounded ones only when nobody has within their period (and then stores them for
    // the others), and it runs the exact refresh only when that is due and it wins it.
    pqxx::work tx(*m_conn);
    setTimeout(tx);
    const auto read = [this](pqxx::transaction_base& t) {
        return m_direct ? readStatsPrepared(t, m_options.schema, m_options.stats)
                        : readStats(t, m_options.schema, m_options.stats);
    };
    StatsReading s = read(tx);
    const auto counters = readCounters(tx);
    const auto pauses = readPauses(tx);
    auto latency = readLatencyPart(tx, latencyProblem);
    NodeIdentity node = readNodeIdentity(tx);
    std::optional<AtRiskReading> atRisk;
    if (!node.inRecovery)
        inSavepoint(tx, "idem_at_risk",
            [&](pqxx::transaction_base& sub) { atRisk = readAtRisk(sub, m_options.schema, 100000, &m_atRiskMemory); });
    std::optional<HorizonReading> horizon;
    // The reconcile probes' last runs (one statement) share the horizon's savepoint: a round trip
    // fewer each reading; the horizon read first is kept when they fail.
    std::optional<ReconcileReading> reconcile;
    // And the fencing figures (schema v31: a probe, then the document), over the window.
    std::optional<FencingReading> fencing;
    inSavepoint(tx, "idem_horizon", [&](pqxx::transaction_base& sub) {
        horizon = readHorizon(sub, m_options.schema, 5, 1);
        reconcile = readReconcile(sub, m_options.schema);
        fencing = readFencing(sub, m_options.schema, m_options.stats.windowMinutes, 200);
    });
    tx.commit();
    // Recorded when this exporter first sees the primary's system and timeline (at its start, and
    // after a failover), not at every reading: another client may have recorded it already.
    const std::string timelineKey = node.systemIdentifier + '/' + std::to_string(node.timeline);
    if (!node.inRecovery && !m_readOnly && timelineKey != m_notedTimeline && noteTimeline())
        m_notedTimeline = timelineKey;
    if (s.exactDue && !m_readOnly
        && refreshSharedExact(*m_conn, m_options.schema, m_options.stats.longUnfinishedAfterMinutes, 600000)) {
        pqxx::work again(*m_conn);
        s = read(again);
        again.commit();
    }
    m_totals.apply(counters);
    if (latency) {
        m_latency.add(latency->histograms);
        m_latencyFrom = latency->toUs;
    }
    latencyDone(latencyProblem);
    m_standby = s.inRecovery;
    const std::string key = node.serverAddress + '|' + node.systemIdentifier + '|' + std::to_string(node.timeline)
        + (node.inRecovery ? "|standby" : "|primary");
    if (!m_nodeKey.empty() && key != m_nodeKey)
        ++m_nodeChanges;
    m_nodeKey = key;
    m_node = std::move(node);
    m_atRisk = std::move(atRisk);
    m_horizon = std::move(horizon);
    m_reconcile = std::move(reconcile);
    m_fencing = std::move(fencing);
    m_lastSuccess = unixNow();
    if (!m_lastProblem.empty()) {
        std::cerr << "idemctl exporter: reading the database again\n";
        m_lastProblem.clear();
    }
    publish(&s, pauses ? &*pauses : nullptr, seconds());
}

std::optional<PauseList> Exporter::readPauses(pqxx::dbtransaction& tx)
{
    // A failure here (no idem_pause_list before schema v15, a statement timeout) leaves the
    // transaction, and the rest of the reading, as they were.
    std::optional<PauseList> list;
    const std::string problem = inSavepoint(tx, "idem_pauses",
        [&](pqxx::transaction_base& sub) { list = listPauses(sub, m_options.schema, pauseListMinutes); });
    if (problem.empty()) {
        if (!m_lastPauseProblem.empty()) {
            std::cerr << "idemctl exporter: reading the pauses again\n";
            m_lastPauseProblem.clear();
        }
        return list;
    }
    ++m_pauseErrors;
    if (problem != m_lastPauseProblem)
        std::cerr << "idemctl exporter: cannot read the pauses (the other figures are served): " << problem << '\n';
    m_lastPauseProblem = problem;
    return std::nullopt;
}

void Exporter::setTimeout(pqxx::transaction_base& tx) const
{
    tx.exec_params("SELECT set_config('statement_timeout', $1, true),"
                   " set_config('max_parallel_workers_per_gather', '0', true)",
        std::to_string(m_options.stats.statementTimeoutMs));
}

// The first client to see a new timeline on the primary records it (schema v20), so that every
// console marks the failover on its charts. Before v20 there is nothing to call: said once.
bool Exporter::noteTimeline()
{
    std::string problem;
    bool done = true;
    try {
        idem::noteTimeline(*m_conn, m_options.schema);
    } catch (const pqxx::sql_error& e) {
        // A read-only server (a primary demoted meanwhile) fails the whole reading: it reconnects.
        if (isReadOnlyRefusal(e))
            throw;
        problem = e.sqlstate() == "42883" ? std::string("the schema is older than v20 (idemctl migrate): failovers are "
                                                        "not recorded for the consoles' charts")
                                          : sqlProblem(e);
        // An older schema stays so until a migration, which a new connection or node brings; any
        // other failure is tried again at the next reading.
        done = e.sqlstate() == "42883";
    }
    if (problem.empty()) {
        if (!m_lastTimelineProblem.empty())
            std::cerr << "idemctl exporter: recording the timeline again\n";
    } else if (problem != m_lastTimelineProblem) {
        std::cerr << "idemctl exporter: cannot record the primary's timeline (the figures are served): " << problem
                  << '\n';
    }
    m_lastTimelineProblem = problem;
    return done;
}

// Folds the minutes that are due, so that the reading after it finds them. Where folding stood
// before the exporter's first roll-up is where its counting starts.
void Exporter::rollUpLatency(std::string& problem)
{
    std::optional<std::int64_t> before;
    try {
        pqxx::work w(*m_conn);
        setTimeout(w);
        if (!m_latencyFrom)
            before = latencyFoldedToUs(w, m_options.schema);
        rollupLatency(w, m_options.schema, latencyRollupMinutes);
        w.commit();
    } catch (const pqxx::sql_error& e) {
        // A read-only server (a primary demoted meanwhile) fails the whole reading: it reconnects.
        if (isReadOnlyRefusal(e))
            throw;
        problem = sqlProblem(e); // a failed roll-up changed nothing: `before` still holds
    }
    if (before && !m_latencyFrom)
        m_latencyFrom = before;
    // Anything else (a lost connection) fails the whole reading.
}

// The minutes folded since the last reading, in a savepoint: a failure leaves the rest of the
// reading as it was. Never backwards: a folded_to moved back (by hand) reads nothing until it
// passes where the last reading stopped.
std::optional<Exporter::LatencyRead> Exporter::readLatencyPart(pqxx::dbtransaction& tx, std::string& problem)
{
    LatencyRead out;
    const std::string failed = inSavepoint(tx, "idem_latency", [&](pqxx::transaction_base& sub) {
        const std::int64_t to = latencyFoldedToUs(sub, m_options.schema);
        const std::int64_t from = m_latencyFrom.value_or(to);
        out.toUs = std::max(from, to);
        if (to > from)
            out.histograms = readLatencyHistograms(sub, m_options.schema, std::max(from, to - latencyMaxSpanUs), to);
    });
    if (failed.empty())
        return out;
    if (problem.empty())
        problem = failed;
    return std::nullopt;
}

void Exporter::latencyDone(const std::string& problem)
{
    if (problem.empty()) {
        if (!m_lastLatencyProblem.empty()) {
            std::cerr << "idemctl exporter: reading the latency again\n";
            m_lastLatencyProblem.clear();
        }
        return;
    }
    ++m_latencyErrors;
    if (problem != m_lastLatencyProblem)
        std::cerr << "idemctl exporter: cannot read the latency (the other figures are served): " << problem << '\n';
    m_lastLatencyProblem = problem;
}

void Exporter::failed(const std::string& why)
{
    const std::string line = oneLine(why);
    // libpq's messages name the host, port, role and database, never the password.
    if (line != m_lastProblem)
        std::cerr << "idemctl exporter: cannot read the database: " << line << '\n';
    m_lastProblem = line;
}

void Exporter::publish(const StatsReading* stats, const PauseList* pauses, double seconds)
{
    std::vector<prometheus::MetricFamily> f;
    if (stats)
        f = statsFamilies(*stats, m_labels);
    if (pauses)
        for (auto& family : pauseFamilies(*pauses, m_labels))
            f.push_back(std::move(family));

    prometheus::MetricFamily totals { "idem_outcomes_total",
        "Protocol outcomes (idem_counters) counted since this exporter started, by outcome.", MetricType::Counter, {} };
    for (const auto& [series, value] : m_totals.totals()) {
        auto labels = m_labels;
        labels.push_back({ "outcome", std::get<0>(series) });
        if (m_options.tenantLabel)
            labels.push_back({ "tenant", std::get<1>(series) });
        if (m_options.operationLabel)
            labels.push_back({ "operation", std::get<2>(series) });
        prometheus::ClientMetric m;
        m.label = std::move(labels);
        m.counter.value = value;
        totals.metric.push_back(std::move(m));
    }
    if (!totals.metric.empty())
        f.push_back(std::move(totals));
    for (auto& family : m_latency.families(m_labels))
        f.push_back(std::move(family));

    if (stats && m_node) {
        // Which node answered: behind HAProxy or a multi-host conninfo the scrape target names
        // none, and a failover changes it (its timeline goes up).
        auto labels = m_labels;
        labels.push_back({ "server_address", m_node->serverAddress.empty() ? "local" : m_node->serverAddress });
        labels.push_back({ "system_identifier", m_node->systemIdentifier });
        labels.push_back({ "role", m_node->inRecovery ? "standby" : "primary" });
        f.push_back(singleFamily("idem_node_info",
            "The server the exporter's last reading reached (address:port as the server saw it, its system identifier, "
            "primary or standby); always 1.",
            MetricType::Gauge, labels, 1));
        if (m_node->timeline > 0)
            f.push_back(singleFamily("idem_node_timeline",
                "The server's WAL timeline (a primary's current one, a standby's last restartpoint's): a promotion "
                "raises it.",
                MetricType::Gauge, m_labels, m_node->timeline));
    }
    if (stats && m_atRisk && !m_atRisk->standbys.empty()) {
        // Per standby, as the Connection page says it: what a failover to it would lose now.
        prometheus::MetricFamily successes { "idem_standby_at_risk_successes",
            "Acknowledged successes an asynchronous standby lacks (since its flushed point, counted up to 100000 and "
            "reading 100001 above): a failover to it loses them. 0 for a standby at the primary's WAL position or a "
            "synchronous one.",
            MetricType::Gauge, {} };
        prometheus::MetricFamily behind { "idem_standby_behind_bytes",
            "WAL the primary wrote that the standby has not flushed (from its slot or its last report when it is not "
            "connected).",
            MetricType::Gauge, {} };
        prometheus::MetricFamily silent { "idem_standby_not_receiving",
            "1 when the standby is behind and has not replied for 5 s or is not connected (its walsender ended): "
            "what it lacks grows with every success.",
            MetricType::Gauge, {} };
        for (const auto& s : m_atRisk->standbys) {
            auto labels = m_labels;
            labels.push_back({ "standby", s.name });
            const auto add = [&](prometheus::MetricFamily& family, double value) {
                prometheus::ClientMetric m;
                m.label = labels;
                m.gauge.value = value;
                family.metric.push_back(std::move(m));
            };
            add(successes, s.successes > 0 ? static_cast<double>(s.successes) : 0.0);
            if (s.behindBytes >= 0)
                add(behind, static_cast<double>(s.behindBytes));
            add(silent, s.alert() ? 1 : 0);
        }
        f.push_back(std::move(successes));
        if (!behind.metric.empty())
            f.push_back(std::move(behind));
        f.push_back(std::move(silent));
    }
    if (stats && m_horizon)
        for (auto& family : horizonFamilies(*m_horizon, m_labels))
            f.push_back(std::move(family));
    if (stats && m_reconcile)
        for (auto& family : reconcileFamilies(*m_reconcile, m_labels))
            f.push_back(std::move(family));
    if (stats && m_fencing && m_fencing->available)
        for (auto& family : fencingFamilies(*m_fencing, m_labels))
            f.push_back(std::move(family));
    f.push_back(singleFamily("idem_exporter_node_changes_total",
        "Readings that reached another node than the reading before (address, system, timeline, or primary/standby) "
        "since the exporter started.",
        MetricType::Counter, m_labels, static_cast<double>(m_nodeChanges)));
    f.push_back(singleFamily("idem_up", "1 when the exporter's last reading of the database succeeded, else 0.",
        MetricType::Gauge, m_labels, stats ? 1 : 0));
    f.push_back(singleFamily("idem_exporter_read_duration_seconds",
        "Wall time of the exporter's last database reading (connect included), successful or not.", MetricType::Gauge,
        m_labels, seconds));
    f.push_back(singleFamily("idem_exporter_reads_total",
        "Database readings the exporter attempted (at most one per interval, whatever the scrapes).",
        MetricType::Counter, m_labels, static_cast<double>(m_reads)));
    f.push_back(singleFamily("idem_exporter_read_errors_total", "Database readings that failed.", MetricType::Counter,
        m_labels, static_cast<double>(m_errors)));
    f.push_back(singleFamily("idem_exporter_pause_read_errors_total",
        "Readings whose pause part failed (served without the pause series; the other figures were read).",
        MetricType::Counter, m_labels, static_cast<double>(m_pauseErrors)));
    f.push_back(singleFamily("idem_exporter_latency_read_errors_total",
        "Readings whose latency part (roll-up or read) failed (served without new latency; those minutes are counted "
        "by a later reading).",
        MetricType::Counter, m_labels, static_cast<double>(m_latencyErrors)));
    f.push_back(singleFamily("idem_exporter_interval_seconds", "How often the exporter reads the database.",
        MetricType::Gauge, m_labels, std::chrono::duration<double>(m_options.interval).count()));
    if (m_lastSuccess > 0)
        f.push_back(singleFamily("idem_exporter_last_success_timestamp_seconds",
            "Unix time of the exporter's last successful reading.", MetricType::Gauge, m_labels, m_lastSuccess));

    std::lock_guard lock(m_mutex);
    m_families = std::move(f);
}

} // namespace idem::cli
