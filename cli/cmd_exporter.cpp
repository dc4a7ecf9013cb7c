#include <csignal>
#include <iostream>
#include <sstream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/exporter.h"
#include "cli/metricsserver.h"
#include "cli/reconcilerunner.h"
#include "core/connection.h"

namespace idem::cli {

namespace {
    constexpr const char* exporterHelp
        = R"(Usage: idemctl exporter [--listen HOST:PORT] [--dsn DSN] [--schema S] [--interval DURATION]
                        [--labels tenant,operation] [--window MIN] [--long-after MIN] [--timeout-ms MS]
                        [--header-timeout D] [--max-connections N] [--reconcile-every D]
                        [--no-reconcile]

Serves the figures of `idemctl stats`, the outcome counters, the pauses of intake, the latency
histograms (per operation) and its own cost over HTTP at /metrics, in the Prometheus text format,
until SIGTERM or SIGINT. It reads the database on its own thread at most once per interval, on
one connection, and every scrape gets the last reading: scraping more often adds no database work.
When the database cannot be read it keeps serving, with idem_up 0, and says why on stderr.

  --listen HOST:PORT  where to serve (default: 127.0.0.1:9187, loopback only; [::1]:9187 for IPv6;
                      0.0.0.0:9187 for every interface; port 0 picks one). It speaks plain HTTP with
                      no authentication: to serve beyond this host, put TLS and authentication in
                      front (a reverse proxy, or a Prometheus on the same host): docs/deployment.md, "Prometheus
                      exporter"
  --dsn DSN           libpq conninfo, URI or service=NAME (default: $IDEM_DSN, then PG* variables,
                      PGSERVICEFILE, PGPASSFILE); keep passwords in a passfile, not here
  --schema S          schema holding the Idem tables (default: idem)
  --interval D        how often to read the database: 5s, 500ms, 1m (default: 15s)
  --labels L          label the outcome counters by tenant and/or operation (default: none;
                      each label multiplies the series by the number of its values); the latency
                      histograms are by operation whatever it says
  --window MIN        minutes of counters for the window gauges, as `idemctl stats` (default: 15)
  --long-after MIN    as `idemctl stats` (default: 60)
  --timeout-ms MS     statement timeout of a reading (default: 5000)
  --reconcile-every D how often to look for reconcile probes that are due and run them, on a
                      connection of their own (default: 30s; the login needs idem_reconcile:
                      `idemctl reconcile --help`)
  --no-reconcile      run no reconcile probes (their last runs are still served)
  --header-timeout D  a client's time from connect to the end of its request header (default: 5s);
                      a slower one is closed, however steadily it sends
  --max-connections N open connections at most (default: 128); a new one past it closes the
                      oldest still sending its header, or is refused when all are being answered

Metrics and the alert rules that go with them: docs/deployment.md, "Prometheus exporter".
)";
} // namespace

int runExporter(const std::vector<std::string>& argv)
{
    Args args(argv,
        { "listen", "dsn", "schema", "interval", "labels", "window", "long-after", "timeout-ms", "header-timeout",
            "max-connections", "reconcile-every" },
        { "help", "no-reconcile" });
    if (args.flag("help")) {
        std::cout << exporterHelp;
        return ExitOk;
    }
    if (!args.positional().empty())
        throw UsageError("unexpected argument " + args.positional().front());
    ExporterOptions options;
    options.conninfo = dsnFrom(args);
    options.schema = SchemaName(args.valueOr("schema", SchemaName::defaultName));
    options.interval = parseInterval(args.valueOr("interval", "15s"), "interval");
    options.stats.windowMinutes = static_cast<int>(args.intValue("window", 15, 1, 7 * 24 * 60));
    options.stats.longUnfinishedAfterMinutes = static_cast<int>(args.intValue("long-after", 60, 1, 365 * 24 * 60));
    options.stats.statementTimeoutMs = static_cast<int>(args.intValue("timeout-ms", 5000, 1, 3'600'000));
    if (auto labels = args.value("labels")) {
        std::stringstream in(*labels);
        for (std::string l; std::getline(in, l, ',');) {
            if (l == "tenant")
                options.tenantLabel = true;
            else if (l == "operation")
                options.operationLabel = true;
            else if (!l.empty())
                throw UsageError("--labels takes tenant, operation or both, not '" + l + "'");
        }
    }
    if (!options.conninfo.empty()) {
        try {
            parseConninfo(options.conninfo);
        } catch (const ConnectError& e) { // a conninfo that cannot parse is a usage error, not an outage
            throw UsageError(std::string("--dsn: ") + e.what());
        }
    }
    const std::string listen = args.valueOr("listen", "127.0.0.1:9187");
    if (listen.find(':') == std::string::npos)
        throw UsageError("--listen takes HOST:PORT, not '" + listen + "'");

    // Blocked before any thread starts, so every thread inherits the mask and sigwait() below is
    // the only one to receive them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    // A scraper that hangs up mid-answer must not end the process.
    std::signal(SIGPIPE, SIG_IGN);

    MetricsServerOptions http;
    http.listen = listen;
    http.headerTimeout = parseInterval(args.valueOr("header-timeout", "5s"), "header-timeout");
    http.maxConnections = static_cast<std::size_t>(args.intValue("max-connections", 128, 1, 100000));
    auto exporter = std::make_shared<Exporter>(options);
    const MetricLabels labels { { "schema", options.schema.name() } };
    MetricsServer* self = nullptr;
    // The reconcile probes that are due, on a thread and connection of their own (schema v30).
    std::unique_ptr<ReconcileRunner> reconciler;
    if (!args.flag("no-reconcile"))
        reconciler = std::make_unique<ReconcileRunner>(options.conninfo, options.schema,
            parseInterval(args.valueOr("reconcile-every", "30s"), "reconcile-every"), "idemctl exporter");
    const ReconcileRunner* runner = reconciler.get();
    MetricsServer server(http, [&exporter, &self, &labels, runner] {
        auto families = exporter->Collect();
        if (runner)
            for (auto& f : runner->families(labels))
                families.push_back(std::move(f));
        for (auto& f : self->families(labels))
            families.push_back(std::move(f));
        return exposition(families);
    });
    self = &server;
    try {
        server.start();
    } catch (const std::exception& e) {
        std::cerr << "idemctl exporter: cannot listen on " << listen << ": " << e.what() << '\n';
        return ExitFailure;
    }
    const std::string host = listen.substr(0, listen.rfind(':'));
    std::cerr << "idemctl exporter: serving http://" << host << ':' << server.port() << "/metrics; reading "
              << (options.conninfo.empty() ? std::string("(PG* environment)") : redactConninfo(options.conninfo))
              << ", schema " << options.schema.name() << ", every "
              << std::chrono::duration<double>(options.interval).count() << " s" << std::endl;
    // After that line: the reading thread's own lines (a failed first reading) would otherwise
    // land inside it, and a supervisor or test reading the port from it would miss it.
    exporter->start();
    if (reconciler)
        reconciler->start();

    int received = 0;
    sigwait(&signals, &received);
    std::cerr << "idemctl exporter: stopping (" << (received == SIGTERM ? "SIGTERM" : "SIGINT") << ")\n";
    server.stop(); // no scrape in flight past this point
    exporter->stop();
    if (reconciler)
        reconciler->stop();
    return ExitOk;
}

} // namespace idem::cli
