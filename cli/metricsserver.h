#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/metric_family.h>

#include "cli/metrics.h"

namespace idem::cli {

struct MetricsServerOptions {
    std::string listen = "127.0.0.1:9187"; // HOST:PORT, [IPv6]:PORT; port 0 picks one
    // A client has this long from its connect to the end of its request header: a slowloris
    // that sends a byte every few seconds is closed after it, however steadily it sends.
    std::chrono::milliseconds headerTimeout { 5000 };
    // And this long to take the answer, so a client that never reads cannot hold a connection.
    std::chrono::milliseconds writeTimeout { 10000 };
    // Open connections at most. When full, a new connection closes the oldest one still sending
    // its header (a scraper sends it at once); when every one is being answered, it is refused.
    std::size_t maxConnections = 128;
    std::size_t maxRequestBytes = 8192; // request line and headers; past it: 431 and close
};

// The exporter's HTTP side: one thread, one poll() loop over non-blocking sockets, so no number of
// slow or idle clients can take the thread a scrape needs (prometheus-cpp's civetweb Exposer gave
// every connection a thread of two: 8 slow connections answered no scrape). It serves GET and HEAD
// of /metrics with body(), 404 for any other path, and closes every connection after one answer.
class MetricsServer {
public:
    MetricsServer(MetricsServerOptions options, std::function<std::string()> body);
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    // Binds and listens (throws std::runtime_error saying why not), then serves on its thread.
    void start();
    void stop();
    int port() const { return m_port; }

    // Its own figures: scrapes answered, connections open and closed by reason.
    std::vector<prometheus::MetricFamily> families(const MetricLabels& labels) const;

private:
    struct Connection;
    void loop();
    void acceptAll(std::vector<Connection>& conns);
    void readFrom(Connection& c);
    void respond(Connection& c, int status, const char* reason, const std::string& body, bool head);

    MetricsServerOptions m_options;
    std::function<std::string()> m_body;
    int m_listen = -1;
    int m_wake[2] = { -1, -1 };
    int m_port = 0;
    std::thread m_thread;

    std::atomic<std::int64_t> m_scrapes { 0 };
    std::atomic<std::int64_t> m_open { 0 };
    std::atomic<std::int64_t> m_headerTimeouts { 0 };
    std::atomic<std::int64_t> m_writeTimeouts { 0 };
    std::atomic<std::int64_t> m_evicted { 0 };
    std::atomic<std::int64_t> m_refused { 0 };
    std::atomic<std::int64_t> m_tooLarge { 0 };
    std::atomic<std::int64_t> m_badRequests { 0 };
};

} // namespace idem::cli
