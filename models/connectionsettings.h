#pragma once

#include <QMetaType>
#include <QString>

#include <string>

namespace idem::console {

// What the connection dialog collects. The password lives only in memory: profiles drop it,
// and nothing here is ever logged.
struct ConnectionSettings {
    QString conninfo; // key=value conninfo, postgresql:// URI, a bare service name, or empty (PG* only)
    QString password;
    QString sslmode; // empty: whatever the conninfo or PGSSLMODE says
    QString sslRootCert;
    QString sslCert;
    QString sslKey;
    QString schema = QStringLiteral("idem");
    // Where the dashboard and the other pages read (a streaming standby, say); empty: the same
    // server. The password, TLS fields and schema above apply to it too.
    QString monitorConninfo;
    // What this database is for people ("prod", "staging"), and its colour by name (environment.h):
    // every window and dialog of the connection carries both. Stored in the profile; no secret.
    QString environment;
    QString environmentColour;
};

// The conninfo as libpq should see it: a bare word is a service name (as psql's
// `psql service=NAME`), non-empty dialog fields override the string's own options, and
// anything left unset is filled in by libpq from PG* variables, pg_service.conf and ~/.pgpass.
// Throws idem::ConnectError(BadConninfo) with libpq's reason.
std::string effectiveConninfo(const ConnectionSettings& settings);

// The same without any secret (password, sslpassword): what profiles, window titles and
// logs may hold. Throws like effectiveConninfo.
std::string storableConninfo(const ConnectionSettings& settings);

// The settings of the monitor connection: the monitor conninfo (preferring a standby unless it
// says otherwise) in place of the connection's own, or the same server when there is none.
ConnectionSettings monitorSettings(const ConnectionSettings& settings);

// Splits a password written into the conninfo out into the password field, so that a DSN
// handed over on the command line can be shown in the dialog without echoing the secret.
ConnectionSettings withPasswordSeparated(ConnectionSettings settings);

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::ConnectionSettings)
