#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include <pqxx/connection>

namespace idem {

// Why a connection could not be opened, in the words an operator needs to fix it.
enum class ConnectErrorKind {
    BadConninfo, // the string itself does not parse
    Refused, // nothing listens there, or the host does not resolve
    Authentication, // wrong password, unknown role, no pg_hba entry
    Tls, // certificate verification or TLS negotiation failed
    Timeout,
    Other,
};

const char* connectErrorKindName(ConnectErrorKind kind);

class ConnectError : public std::runtime_error {
public:
    ConnectError(ConnectErrorKind kind, const std::string& message);
    ConnectErrorKind kind() const { return m_kind; }

private:
    ConnectErrorKind m_kind;
};

// Options as libpq parsed them from a conninfo string, URI or service name (nothing from the
// environment: libpq applies PG* variables, pg_service.conf and ~/.pgpass itself at connect).
// Throws ConnectError(BadConninfo) with libpq's reason.
std::map<std::string, std::string> parseConninfo(const std::string& conninfo);

// The same connection as a key=value string, with any password removed. Safe for logs,
// window titles, settings and snapshots.
std::string redactConninfo(const std::string& conninfo);

// Serialises options back into a key=value conninfo string, quoting as libpq expects.
std::string formatConninfo(const std::map<std::string, std::string>& options);

struct ConnectOptions {
    std::string applicationName = "idem"; // used unless the conninfo names one
    int connectTimeoutSeconds = 10; // used unless the conninfo or PGCONNECT_TIMEOUT sets one
};

// Opens a connection the way psql would (PG* variables, pg_service.conf, ~/.pgpass, sslmode,
// sslrootcert, sslcert, sslkey), bounded by a connect timeout. Throws ConnectError.
std::unique_ptr<pqxx::connection> connect(const std::string& conninfo, const ConnectOptions& options = {});

// Sorts a libpq connection failure message into a kind.
ConnectErrorKind classifyConnectFailure(const std::string& libpqMessage);

// What happened to a connection that was open, in words, from libpq's or libpqxx's message
// (after a restart often only "Could not obtain client encoding: not connected."): the server
// closed it, ended the session, the network broke. The detail is kept when it says more.
std::string describeLostConnection(const std::string& libpqMessage);

// Whether a connection pooler (PgBouncer) answers in the server's place: the server backend's
// pid differs from the one libpq got in the cancel key (PgBouncer hands out a key of its own).
// Behind one, nothing that lasts longer than a transaction (a session advisory lock, a SET)
// stays with this client. One statement, in a transaction of its own.
bool behindPooler(pqxx::connection& conn);

} // namespace idem
