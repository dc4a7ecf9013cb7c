#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include <pqxx/connection>
#include <pqxx/except>

namespace idem {

// Why a connection could not be opened, in the words an operator needs to fix it.
enum class ConnectErrorKind {
    BadConninfo, // the string itself does not parse
    Refused, // nothing listens there, or the host does not resolve
    Authentication, // wrong password, unknown role, no pg_hba entry
    Tls, // certificate verification or TLS negotiation failed
    Timeout,
    ReadOnly, // the server takes no writes (a standby, default_transaction_read_only): not the primary
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

// connect(), then refuses a server whose new transactions are read-only (a hot standby, a primary
// being demoted, default_transaction_read_only = on) with ConnectError(ReadOnly): for clients that
// write. With several hosts in the conninfo, target_session_attrs=read-write makes libpq itself
// skip those; behind a proxy (HAProxy) this is what tells the client it landed on the wrong node.
std::unique_ptr<pqxx::connection> connectPrimary(const std::string& conninfo, const ConnectOptions& options = {});

// connectPrimary, tried again while a failover may be under way (nothing listens, the server is
// starting up or shutting down, it is read-only, the connect timed out) until `patience` has passed;
// `onRetry` hears each failure that is tried again. A failure no wait mends (a bad conninfo, the
// password, TLS) and the last one after `patience` are thrown.
std::unique_ptr<pqxx::connection> connectPrimaryWaiting(const std::string& conninfo, const ConnectOptions& options,
    std::chrono::milliseconds patience, const std::function<void(const ConnectError&)>& onRetry = {});

// Whether new transactions on this connection are read-only: transaction_read_only as a new
// transaction sees it (on for a hot standby, in_hot_standby, and for default_transaction_read_only
// = on). One statement, in a transaction of its own.
bool sessionReadOnly(pqxx::connection& conn);

// SQLSTATE 25006 (read_only_sql_transaction): the server refused a write because the transaction
// is read-only: a standby, a primary demoted by a switchover (behind HAProxy, for the seconds it
// takes to notice), default_transaction_read_only. Nothing of the statement took effect.
inline constexpr const char* readOnlySqlstate = "25006";
bool isReadOnlyRefusal(const pqxx::sql_error& e);

// "the server is read-only (not the primary): <the server's reason>", from the refusal's text.
std::string describeReadOnly(const std::string& serverMessage);

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
