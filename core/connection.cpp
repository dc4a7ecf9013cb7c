#include "core/connection.h"

#include <cstdlib>
#include <pqxx/pqxx>
#include <thread>

#include <libpq-fe.h>

namespace idem {

const char* connectErrorKindName(ConnectErrorKind kind)
{
    switch (kind) {
    case ConnectErrorKind::BadConninfo:
        return "invalid connection string";
    case ConnectErrorKind::Refused:
        return "server not reachable";
    case ConnectErrorKind::Authentication:
        return "authentication failed";
    case ConnectErrorKind::Tls:
        return "TLS failure";
    case ConnectErrorKind::Timeout:
        return "connection timed out";
    case ConnectErrorKind::ReadOnly:
        return "not the primary";
    case ConnectErrorKind::Other:
        break;
    }
    return "connection failed";
}

ConnectError::ConnectError(ConnectErrorKind kind, const std::string& message)
    : std::runtime_error(message)
    , m_kind(kind)
{
}

std::map<std::string, std::string> parseConninfo(const std::string& conninfo)
{
    char* err = nullptr;
    PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
    if (!opts) {
        std::string reason = err ? err : "out of memory";
        PQfreemem(err);
        while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' '))
            reason.pop_back();
        throw ConnectError(ConnectErrorKind::BadConninfo, reason);
    }
    std::map<std::string, std::string> out;
    for (PQconninfoOption* o = opts; o->keyword; ++o) {
        if (o->val)
            out.emplace(o->keyword, o->val);
    }
    PQconninfoFree(opts);
    return out;
}

std::string formatConninfo(const std::map<std::string, std::string>& options)
{
    std::string out;
    for (const auto& [key, value] : options) {
        if (!out.empty())
            out += ' ';
        out += key;
        out += "='";
        for (char c : value) {
            if (c == '\'' || c == '\\')
                out += '\\';
            out += c;
        }
        out += '\'';
    }
    return out;
}

std::string redactConninfo(const std::string& conninfo)
{
    auto options = parseConninfo(conninfo);
    options.erase("password");
    options.erase("sslpassword");
    return formatConninfo(options);
}

ConnectErrorKind classifyConnectFailure(const std::string& m)
{
    const auto has = [&m](const char* s) { return m.find(s) != std::string::npos; };
    if (has("invalid connection option") || has("missing \"=\"") || has("invalid URI")
        || has("unterminated quoted string") || has("invalid sslmode") || has("definition of service")
        || has("invalid integer value") || has("invalid port number"))
        return ConnectErrorKind::BadConninfo;
    if (has("certificate") || has("SSL") || has("ssl") || has("TLS"))
        return ConnectErrorKind::Tls;
    if (has("password authentication failed") || has("no password supplied") || has("pg_hba.conf")
        || has("authentication failed") || (has("does not exist") && has("role")))
        return ConnectErrorKind::Authentication;
    if (has("timeout expired") || has("timed out"))
        return ConnectErrorKind::Timeout;
    if (has("Connection refused") || has("could not translate host name") || has("No route to host")
        || has("Network is unreachable") || has("No such file or directory"))
        return ConnectErrorKind::Refused;
    return ConnectErrorKind::Other;
}

std::string describeLostConnection(const std::string& raw)
{
    std::string m = raw;
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ' || m.back() == '.'))
        m.pop_back();
    const auto has = [&m](const char* s) { return m.find(s) != std::string::npos; };
    if (has("terminating connection due to administrator command"))
        return "the server ended this session (an administrator's pg_terminate_backend, or the server is shutting "
               "down)";
    if (has("the database system is shutting down") || has("the database system is starting up")
        || has("the database system is in recovery mode"))
        return "the server is restarting";
    if (has("server closed the connection unexpectedly") || has("not connected")
        || has("Could not obtain client encoding") || has("no connection to the server") || has("connection not open")
        || has("Lost connection"))
        return "the server closed the connection (it may be restarting or stopped)";
    if (has("Connection reset by peer") || has("Broken pipe") || has("could not receive data")
        || has("could not send data") || has("Connection timed out") || has("No route to host"))
        return "the network connection to the server broke (" + m + ")";
    return "the connection to the server was lost (" + m + ")";
}

std::unique_ptr<pqxx::connection> connect(const std::string& conninfo, const ConnectOptions& options)
{
    // Parsing first rejects a malformed string with libpq's own reason before any I/O, and
    // lets us add defaults without caring whether the user wrote a URI or key=value pairs.
    auto parsed = parseConninfo(conninfo);
    if (!parsed.count("connect_timeout") && !std::getenv("PGCONNECT_TIMEOUT") && options.connectTimeoutSeconds > 0)
        parsed["connect_timeout"] = std::to_string(options.connectTimeoutSeconds);
    if (!parsed.count("application_name") && !parsed.count("fallback_application_name"))
        parsed["fallback_application_name"] = options.applicationName;
    try {
        return std::make_unique<pqxx::connection>(formatConninfo(parsed));
    } catch (const pqxx::broken_connection& e) {
        std::string message = e.what();
        while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
            message.pop_back();
        throw ConnectError(classifyConnectFailure(message), message);
    }
}

namespace {
    // The first line of a server's or libpq's message, without its severity and padding.
    std::string firstLine(const std::string& raw)
    {
        std::string m = raw.substr(0, raw.find('\n'));
        for (const char* prefix : { "ERROR:", "FATAL:" })
            if (m.rfind(prefix, 0) == 0)
                m.erase(0, std::char_traits<char>::length(prefix));
        const auto first = m.find_first_not_of(' ');
        m.erase(0, first == std::string::npos ? m.size() : first);
        while (!m.empty() && (m.back() == ' ' || m.back() == '.'))
            m.pop_back();
        return m;
    }
} // namespace

bool isReadOnlyRefusal(const pqxx::sql_error& e) { return e.sqlstate() == readOnlySqlstate; }

std::string describeReadOnly(const std::string& serverMessage)
{
    const std::string reason = firstLine(serverMessage);
    return "the server is read-only (not the primary)" + (reason.empty() ? std::string() : ": " + reason);
}

bool sessionReadOnly(pqxx::connection& conn)
{
    pqxx::nontransaction n(conn);
    return n.exec("SELECT current_setting('transaction_read_only')")[0][0].as<std::string>() == "on";
}

std::unique_ptr<pqxx::connection> connectPrimary(const std::string& conninfo, const ConnectOptions& options)
{
    auto conn = connect(conninfo, options);
    bool readOnly = false;
    try {
        readOnly = sessionReadOnly(*conn);
    } catch (const pqxx::broken_connection& e) {
        throw ConnectError(ConnectErrorKind::Other, describeLostConnection(e.what()));
    }
    if (readOnly)
        throw ConnectError(ConnectErrorKind::ReadOnly,
            "the server is read-only (not the primary): " + std::string(conn->hostname() ? conn->hostname() : "")
                + " port " + (conn->port() ? conn->port() : "")
                + " is a standby or has default_transaction_read_only on; with several hosts in the conninfo, "
                  "target_session_attrs=read-write makes libpq pick the primary");
    return conn;
}

std::unique_ptr<pqxx::connection> connectPrimaryWaiting(const std::string& conninfo, const ConnectOptions& options,
    std::chrono::milliseconds patience, const std::function<void(const ConnectError&)>& onRetry)
{
    const auto until = std::chrono::steady_clock::now() + patience;
    for (;;) {
        try {
            return connectPrimary(conninfo, options);
        } catch (const ConnectError& e) {
            const auto kind = e.kind();
            const bool passing = kind == ConnectErrorKind::Refused || kind == ConnectErrorKind::Timeout
                || kind == ConnectErrorKind::ReadOnly || kind == ConnectErrorKind::Other;
            if (!passing || std::chrono::steady_clock::now() >= until)
                throw;
            if (onRetry)
                onRetry(e);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
}

} // namespace idem

namespace idem {

bool behindPooler(pqxx::connection& conn)
{
    pqxx::read_transaction tx(conn);
    const int serverPid = tx.exec("SELECT pg_backend_pid()")[0][0].as<int>();
    tx.commit();
    return serverPid != conn.backendpid();
}

} // namespace idem
