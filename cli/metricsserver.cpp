#include "cli/metricsserver.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace idem::cli {

namespace {
    using Clock = std::chrono::steady_clock;

    void closeFd(int& fd)
    {
        if (fd >= 0)
            ::close(fd);
        fd = -1;
    }

    int listenOn(const std::string& listen, int& port)
    {
        const auto colon = listen.rfind(':');
        if (colon == std::string::npos)
            throw std::runtime_error("not HOST:PORT");
        std::string host = listen.substr(0, colon);
        const std::string service = listen.substr(colon + 1);
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
            host = host.substr(1, host.size() - 2);
        addrinfo hints {};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
        addrinfo* found = nullptr;
        if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
            rc != 0)
            throw std::runtime_error(::gai_strerror(rc));
        std::string why = "no address";
        int fd = -1;
        for (auto* a = found; a && fd < 0; a = a->ai_next) {
            fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
            if (fd < 0)
                continue;
            const int one = 1;
            ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
                why = std::strerror(errno);
                closeFd(fd);
            }
        }
        ::freeaddrinfo(found);
        if (fd < 0)
            throw std::runtime_error(why);
        sockaddr_storage bound {};
        socklen_t len = sizeof bound;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
        port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                           : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
        return fd;
    }

    int msUntil(Clock::time_point t)
    {
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
        return static_cast<int>(std::clamp<long long>(ms + 1, 0, 1000));
    }
} // namespace

struct MetricsServer::Connection {
    int fd = -1;
    Clock::time_point opened;
    Clock::time_point deadline;
    bool writing = false;
    std::string in;
    std::string out;
    std::size_t sent = 0;
};

MetricsServer::MetricsServer(MetricsServerOptions options, std::function<std::string()> body)
    : m_options(std::move(options))
    , m_body(std::move(body))
{
}

MetricsServer::~MetricsServer() { stop(); }

void MetricsServer::start()
{
    m_listen = listenOn(m_options.listen, m_port);
    if (::pipe2(m_wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        closeFd(m_listen);
        throw std::runtime_error(std::strerror(errno));
    }
    m_thread = std::thread([this] { loop(); });
}

void MetricsServer::stop()
{
    if (m_thread.joinable()) {
        const char c = 0;
        [[maybe_unused]] const auto n = ::write(m_wake[1], &c, 1);
        m_thread.join();
    }
    closeFd(m_listen);
    closeFd(m_wake[0]);
    closeFd(m_wake[1]);
}

void MetricsServer::loop()
{
    std::vector<Connection> conns;
    std::vector<pollfd> fds;
    for (;;) {
        fds.clear();
        fds.push_back({ m_wake[0], POLLIN, 0 });
        fds.push_back({ m_listen, POLLIN, 0 });
        int timeout = 1000;
        for (const auto& c : conns) {
            fds.push_back({ c.fd, static_cast<short>(c.writing ? POLLOUT : POLLIN), 0 });
            timeout = std::min(timeout, msUntil(c.deadline));
        }
        if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
            break;
        if (fds[0].revents)
            break;
        // Connections first (the answers), then new ones: fds[i + 2] is conns[i].
        for (std::size_t i = 0; i < conns.size(); ++i) {
            auto& c = conns[i];
            const short ev = fds[i + 2].revents;
            if (!ev)
                continue;
            if (!c.writing && (ev & (POLLIN | POLLHUP | POLLERR)))
                readFrom(c);
            else if (c.writing && (ev & (POLLOUT | POLLHUP | POLLERR))) {
                const ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
                if (n > 0)
                    c.sent += static_cast<std::size_t>(n);
                if ((n < 0 && errno != EAGAIN && errno != EINTR) || c.sent == c.out.size())
                    closeFd(c.fd);
            }
        }
        const auto now = Clock::now();
        for (auto& c : conns)
            if (c.fd >= 0 && now >= c.deadline) {
                ++(c.writing ? m_writeTimeouts : m_headerTimeouts);
                closeFd(c.fd);
            }
        conns.erase(
            std::remove_if(conns.begin(), conns.end(), [](const Connection& c) { return c.fd < 0; }), conns.end());
        if (fds[1].revents & POLLIN)
            acceptAll(conns);
        m_open = static_cast<std::int64_t>(conns.size());
    }
    for (auto& c : conns)
        closeFd(c.fd);
}

void MetricsServer::acceptAll(std::vector<Connection>& conns)
{
    // A bounded batch: a flood of connects must not keep the loop from the connections it has.
    for (int batch = 0; batch < 64; ++batch) {
        const int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; // EAGAIN: all taken; anything else (EMFILE...) is tried again at the next poll
        if (conns.size() >= m_options.maxConnections) {
            // The oldest connection still sending its header: the slowest, never a scraper's.
            auto oldest = conns.end();
            for (auto it = conns.begin(); it != conns.end(); ++it)
                if (!it->writing && (oldest == conns.end() || it->opened < oldest->opened))
                    oldest = it;
            if (oldest == conns.end()) {
                ++m_refused;
                ::close(fd);
                continue;
            }
            ++m_evicted;
            ::close(oldest->fd);
            conns.erase(oldest);
        }
        Connection c;
        c.fd = fd;
        c.opened = Clock::now();
        c.deadline = c.opened + m_options.headerTimeout;
        conns.push_back(std::move(c));
    }
}

void MetricsServer::readFrom(Connection& c)
{
    char buf[4096];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        closeFd(c.fd);
        return;
    }
    if (n < 0)
        return;
    c.in.append(buf, static_cast<std::size_t>(n));
    auto end = c.in.find("\r\n\r\n");
    if (end == std::string::npos)
        end = c.in.find("\n\n");
    if (end == std::string::npos) {
        if (c.in.size() > m_options.maxRequestBytes) {
            ++m_tooLarge;
            respond(c, 431, "Request Header Fields Too Large", "request header too large\n", false);
        }
        return;
    }
    // "METHOD TARGET HTTP/x.y"; the headers are not needed for one answer and a close.
    const std::string line = c.in.substr(0, c.in.find_first_of("\r\n"));
    const auto sp1 = line.find(' ');
    const auto sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
    if (sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0) {
        ++m_badRequests;
        respond(c, 400, "Bad Request", "bad request\n", false);
        return;
    }
    const std::string method = line.substr(0, sp1);
    std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    target = target.substr(0, target.find('?'));
    if (method != "GET" && method != "HEAD") {
        respond(c, 405, "Method Not Allowed", "only GET and HEAD\n", false);
        return;
    }
    if (target != "/metrics") {
        respond(c, 404, "Not Found", "the metrics are at /metrics\n", method == "HEAD");
        return;
    }
    ++m_scrapes;
    respond(c, 200, "OK", m_body(), method == "HEAD");
}

void MetricsServer::respond(Connection& c, int status, const char* reason, const std::string& body, bool head)
{
    c.writing = true;
    c.deadline = Clock::now() + m_options.writeTimeout;
    c.in.clear();
    c.out = "HTTP/1.1 " + std::to_string(status) + ' ' + reason + "\r\nContent-Type: "
        + (status == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8")
        + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
    if (!head)
        c.out += body;
    c.sent = 0;
}

std::vector<prometheus::MetricFamily> MetricsServer::families(const MetricLabels& labels) const
{
    using prometheus::MetricType;
    std::vector<prometheus::MetricFamily> f;
    f.push_back(singleFamily("idem_exporter_scrapes_total", "Requests of /metrics answered.", MetricType::Counter,
        labels, static_cast<double>(m_scrapes.load())));
    f.push_back(singleFamily("idem_exporter_http_connections", "HTTP connections open now.", MetricType::Gauge, labels,
        static_cast<double>(m_open.load())));
    prometheus::MetricFamily closed { "idem_exporter_http_connections_closed_total",
        "HTTP connections the exporter closed without an answer or with an error, by reason.", MetricType::Counter,
        {} };
    const std::pair<const char*, std::int64_t> reasons[] = { { "header_timeout", m_headerTimeouts.load() },
        { "write_timeout", m_writeTimeouts.load() }, { "evicted", m_evicted.load() }, { "refused", m_refused.load() },
        { "too_large", m_tooLarge.load() }, { "bad_request", m_badRequests.load() } };
    for (const auto& [reason, n] : reasons) {
        prometheus::ClientMetric m;
        m.label = labels;
        m.label.push_back({ "reason", reason });
        m.counter.value = static_cast<double>(n);
        closed.metric.push_back(std::move(m));
    }
    f.push_back(std::move(closed));
    return f;
}

} // namespace idem::cli
