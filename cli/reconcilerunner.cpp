#include "cli/reconcilerunner.h"

#include <iostream>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/utf8.h"
#include "operations/reconcile.h"

namespace idem::cli {

std::vector<prometheus::MetricFamily> reconcileFamilies(const ReconcileReading& r, const MetricLabels& labels)
{
    using prometheus::MetricType;
    std::vector<prometheus::MetricFamily> f;
    f.push_back(singleFamily("idem_reconcile_probes", "Reconcile probes registered (idemctl reconcile add).",
        MetricType::Gauge, labels, static_cast<double>(r.probes.size())));
    struct Part {
        const char* name;
        const char* help;
        double (*value)(const ReconcileRun&);
    };
    static const Part parts[] {
        { "idem_reconcile_sampled", "Succeeded keys the operation's last reconcile run probed.",
            [](const ReconcileRun& x) { return static_cast<double>(x.sampled); } },
        { "idem_reconcile_ok", "Keys of the last reconcile run whose business effect was counted exactly once.",
            [](const ReconcileRun& x) { return static_cast<double>(x.ok); } },
        { "idem_reconcile_missing",
            "Succeeded keys of the last reconcile run with no business effect (the probe counted 0).",
            [](const ReconcileRun& x) { return static_cast<double>(x.missing); } },
        { "idem_reconcile_duplicated",
            "Succeeded keys of the last reconcile run with two or more business effects (the probe counted more "
            "than 1).",
            [](const ReconcileRun& x) { return static_cast<double>(x.duplicated); } },
        { "idem_reconcile_errors",
            "Keys of the last reconcile run whose probe query failed (a timeout, a refusal, a result that is not one "
            "integer).",
            [](const ReconcileRun& x) { return static_cast<double>(x.errors); } },
        { "idem_reconcile_last_run_timestamp_seconds", "Unix time the operation's last reconcile run finished.",
            [](const ReconcileRun& x) { return static_cast<double>(x.finishedAtUs.value_or(0)) / 1e6; } },
    };
    for (const auto& part : parts) {
        prometheus::MetricFamily family { part.name, part.help, MetricType::Gauge, {} };
        for (const auto& s : r.probes) {
            if (!s.last)
                continue;
            prometheus::ClientMetric m;
            m.label = labels;
            m.label.push_back({ "operation", s.probe.operation });
            m.gauge.value = part.value(*s.last);
            family.metric.push_back(std::move(m));
        }
        if (!family.metric.empty())
            f.push_back(std::move(family));
    }
    return f;
}

ReconcileRunner::ReconcileRunner(
    std::string conninfo, SchemaName schema, std::chrono::milliseconds every, std::string runner)
    : m_conninfo(std::move(conninfo))
    , m_schema(std::move(schema))
    , m_every(every)
    , m_runner(std::move(runner))
{
}

ReconcileRunner::~ReconcileRunner() { stop(); }

void ReconcileRunner::start()
{
    m_thread = std::thread([this] { loop(); });
}

void ReconcileRunner::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

std::vector<prometheus::MetricFamily> ReconcileRunner::families(const MetricLabels& labels) const
{
    std::lock_guard lock(m_mutex);
    return { singleFamily("idem_exporter_reconcile_runs_total", "Reconcile probe runs this exporter ran.",
                 prometheus::MetricType::Counter, labels, static_cast<double>(m_runs)),
        singleFamily("idem_exporter_reconcile_errors_total",
            "Checks for due reconcile probes that failed (no idem_reconcile membership, a schema before v30, a lost "
            "connection); a probe query's own failure is counted in its run instead.",
            prometheus::MetricType::Counter, labels, static_cast<double>(m_errors)) };
}

void ReconcileRunner::loop()
{
    for (;;) {
        runDue();
        std::unique_lock lock(m_mutex);
        if (m_wake.wait_for(lock, m_every, [this] { return m_stop; }))
            return;
    }
}

void ReconcileRunner::problem(const std::string& why)
{
    {
        std::lock_guard lock(m_mutex);
        ++m_errors;
    }
    if (why != m_lastProblem)
        std::cerr << "idemctl exporter: cannot run the reconcile probes: " << displaySafe(why, messageDisplay) << '\n';
    m_lastProblem = why;
}

void ReconcileRunner::runDue()
{
    try {
        if (!m_conn)
            m_conn = connect(m_conninfo, ConnectOptions { "idemctl exporter reconcile", 10 });
        // Nothing to run on a read-only server (a standby: its primary's exporter runs them) or
        // for a login that may not: said once, not counted as failures.
        {
            pqxx::nontransaction n(*m_conn);
            const auto r = n.exec("SELECT pg_catalog.current_setting('transaction_read_only') = 'on',"
                                  " CASE WHEN EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'idem_reconcile')"
                                  " THEN pg_catalog.pg_has_role('idem_reconcile', 'MEMBER') ELSE false END")[0];
            const char* idle = r[0].as<bool>() ? "the server is read-only (not the primary): no reconcile probe runs here"
                : !r[1].as<bool>() ? "the login is no member of idem_reconcile: no reconcile probe runs (GRANT "
                                     "idem_reconcile TO it, or --no-reconcile)"
                                   : nullptr;
            if (idle) {
                if (m_lastProblem != idle)
                    std::cerr << "idemctl exporter: " << idle << '\n';
                m_lastProblem = idle;
                return;
            }
        }
        for (int i = 0; i < maxReconcileProbes; ++i) {
            {
                std::lock_guard lock(m_mutex);
                if (m_stop)
                    return;
            }
            auto run = runReconcileProbe(*m_conn, m_schema, std::nullopt, false, m_runner);
            if (!run)
                break;
            {
                std::lock_guard lock(m_mutex);
                ++m_runs;
            }
            if (run->missing + run->duplicated + run->errors > 0 || !run->problem.empty())
                std::cerr << "idemctl exporter: reconcile " << displaySafe(reconcileRunSentence(*run), 1200) << '\n';
        }
        if (!m_lastProblem.empty())
            std::cerr << "idemctl exporter: running the reconcile probes again\n";
        m_lastProblem.clear();
    } catch (const pqxx::sql_error& e) {
        // 42883/42P01: a schema before v30; 42501: the login is no member of idem_reconcile.
        problem(dynamic_cast<const pqxx::insufficient_privilege*>(&e)
                ? std::string("the login needs idem_reconcile (GRANT idem_reconcile TO it)")
                : "SQLSTATE " + e.sqlstate() + ": " + e.what());
    } catch (const pqxx::broken_connection& e) {
        m_conn.reset();
        problem(std::string("lost the connection: ") + e.what());
    } catch (const std::exception& e) {
        m_conn.reset();
        problem(e.what());
    }
}

} // namespace idem::cli
