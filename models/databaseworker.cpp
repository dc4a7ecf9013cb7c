#include "models/databaseworker.h"

#include "operations/rights.h"

#include <QCoreApplication>

#include <optional>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "operations/node.h"
#include "operations/readframe.h"
#include "schema/inspect.h"
#include "schema/migrate.h"

namespace idem::console {

namespace {

    // Every read the console makes is bounded, so a slow server stretches a poll instead of
    // piling them up; the value is a constant, not user input.
    constexpr const char* readTimeoutSql = "SET LOCAL statement_timeout = '5s'";
    // The schema's and the rights' reads of the server are bounded too, lock waits included: a
    // session holding a lock on a schema table (a migration, a LOCK TABLE) held a console's start
    // for as long as it kept it (issue 40); past the bound the schema "cannot be read" for now,
    // said with the server's words, and the next read of the server tries again.
    constexpr int inspectBoundMs = 5000;

    QString q(const std::string& s) { return QString::fromStdString(s); }
    QString q(const char* s) { return s ? QString::fromUtf8(s) : QString(); }

    QDateTime fromEpochMs(const pqxx::field& f) { return QDateTime::fromMSecsSinceEpoch(f.as<qint64>()); }

    FailureKind kindOf(idem::ConnectErrorKind kind)
    {
        switch (kind) {
        case idem::ConnectErrorKind::BadConninfo:
            return FailureKind::BadConninfo;
        case idem::ConnectErrorKind::Refused:
            return FailureKind::Refused;
        case idem::ConnectErrorKind::Authentication:
            return FailureKind::Authentication;
        case idem::ConnectErrorKind::Tls:
            return FailureKind::Tls;
        case idem::ConnectErrorKind::Timeout:
            return FailureKind::Timeout;
        case idem::ConnectErrorKind::ReadOnly: // the console connects to standbys too: never refused as such
        case idem::ConnectErrorKind::Other:
            break;
        }
        return FailureKind::Other;
    }

    // libpq's text is padded for a terminal (tabs, doubled spaces, a trailing newline); keep
    // its line breaks, lose the rest.
    QString trimmed(const char* what)
    {
        QStringList lines;
        const auto raw = QString::fromUtf8(what).split(QLatin1Char('\n'));
        for (const auto& line : raw) {
            if (!line.trimmed().isEmpty())
                lines << line.simplified();
        }
        return lines.join(QLatin1Char('\n'));
    }

    // libpq prefixes the server's text with its severity; the banner says "failed" already.
    QString serverMessage(const char* what)
    {
        QString text = trimmed(what);
        if (text.startsWith(QStringLiteral("ERROR:")))
            text = text.mid(6).trimmed();
        return text;
    }

    // libpqxx 6.4 sometimes throws the right exception class with an empty sqlstate(); the
    // class still tells the code for the cases an operator meets in the console.
    QString sqlstateOf(const pqxx::sql_error& e)
    {
        if (!e.sqlstate().empty())
            return QString::fromStdString(e.sqlstate());
        if (dynamic_cast<const pqxx::insufficient_privilege*>(&e))
            return QStringLiteral("42501");
        if (dynamic_cast<const pqxx::undefined_table*>(&e))
            return QStringLiteral("42P01");
        return {};
    }

} // namespace

struct DatabaseWorker::Connection {
    std::unique_ptr<pqxx::connection> conn;
    idem::SchemaName schema;
    QString displayConninfo;
    bool pooler = false; // ServerInfo::pooler: nothing may be set for the session
    // Transactions were read-only when it was opened (a standby watched on purpose). A connection
    // opened writable that meets a read-only refusal was on a primary since demoted: it is
    // replaced, so that the reconnect finds the primary (a multi-host conninfo, a proxy).
    bool readOnlyAtOpen = false;
    QDateTime connectedAt; // the server's clock at the first read on it
    // libpq's connection under conn, for the polls' reads in one round trip each (readframe.h);
    // unset behind a pooler, where they keep their statement-by-statement form.
    idem::RawConnection raw;
};

DatabaseWorker::DatabaseWorker() = default;
DatabaseWorker::~DatabaseWorker() { drop(); }

void DatabaseWorker::drop()
{
    m_interrupt->detach();
    m_db.reset();
}

template <typename F> void DatabaseWorker::guarded(quint64 requestId, F&& body)
{
    Failure failure;
    failure.requestId = requestId;
    try {
        body();
        return;
    } catch (const idem::ConnectError& e) {
        failure.kind = kindOf(e.kind());
        failure.message = trimmed(e.what());
    } catch (const pqxx::broken_connection& e) {
        // The server went away mid-request; the session decides when to reconnect.
        drop();
        failure.kind = FailureKind::ConnectionLost;
        failure.message = q(idem::describeLostConnection(e.what()));
    } catch (const pqxx::sql_error& e) {
        failure.kind = FailureKind::Query;
        failure.sqlstate = sqlstateOf(e);
        failure.message = serverMessage(e.what());
        if (idem::isReadOnlyRefusal(e) && m_db && !m_db->readOnlyAtOpen) {
            // A switchover demoted this server under the console: a state to leave, like a lost
            // connection (the session reconnects); Failure::text() says it in words.
            m_db.reset();
            failure.kind = FailureKind::ConnectionLost;
        }
    } catch (const idem::MigrationRefused& e) {
        failure.kind = FailureKind::MigrationRefused;
        failure.message = trimmed(e.what());
    } catch (const std::exception& e) {
        failure.kind = FailureKind::Other;
        failure.message = trimmed(e.what());
    }
    if (requestId != 0 && m_interrupt->cutRequest() == requestId) {
        // The session cut this job's connection (ConsoleSession::JobBound): whatever libpq made
        // of it (a closed connection, an SSL error), that is what happened.
        drop();
        failure.kind = FailureKind::ConnectionLost;
        failure.sqlstate.clear();
        failure.message = QCoreApplication::translate("idem::console::ConsoleSession",
            "the console closed it: the server answered neither the read nor a request to cancel it (its server "
            "process may be stopped, or the network cut)");
    }
    Q_EMIT failed(failure);
}

void DatabaseWorker::open(quint64 requestId, const ConnectionSettings& settings)
{
    drop();
    std::optional<idem::SchemaName> schema;
    try {
        schema.emplace(settings.schema.trimmed().toStdString());
    } catch (const std::invalid_argument& e) {
        Failure f { requestId, FailureKind::BadSchemaName, trimmed(e.what()), {}, 0 };
        Q_EMIT failed(f);
        return;
    }
    guarded(requestId, [&] {
        auto db = std::make_unique<Connection>(Connection { nullptr, *schema, {} });
        db->displayConninfo = q(storableConninfo(settings));
        db->conn = idem::connect(effectiveConninfo(settings), { "idem-console" });
        m_db = std::move(db);
        m_interrupt->attach(m_db->conn.get());
        const ServerInfo info = inspect(requestId);
        m_db->readOnlyAtOpen = info.readOnly;
        Q_EMIT opened(info);
    });
}

void DatabaseWorker::close() { drop(); }

ServerInfo DatabaseWorker::inspect(quint64 requestId)
{
    auto& conn = *m_db->conn;
    const auto& schema = m_db->schema;
    ServerInfo info;
    info.requestId = requestId;
    info.schema = q(schema.name());
    info.displayConninfo = m_db->displayConninfo;
    info.host = q(conn.hostname());
    info.port = q(conn.port());
    info.database = q(conn.dbname());
    {
        pqxx::read_transaction t(conn);
        t.exec(readTimeoutSql);
        // pg_has_role errors on a role that does not exist (a cluster never migrated), and
        // to_regclass on a schema without USAGE; CASE keeps each check ahead of what it guards.
        const auto r = t.exec_params(
            "SELECT current_setting('server_version'), current_user, session_user,"
            "       (SELECT rolsuper FROM pg_roles WHERE rolname = current_user),"
            "       CASE WHEN EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_operator')"
            "            THEN pg_has_role(current_user, 'idem_operator', 'USAGE') ELSE false END,"
            "       CASE WHEN NOT EXISTS (SELECT FROM pg_namespace WHERE nspname = $2) THEN false"
            "            WHEN NOT has_schema_privilege($2, 'USAGE') THEN false"
            "            WHEN to_regclass($1) IS NULL THEN false"
            "            ELSE has_table_privilege($1, 'SELECT') END,"
            "       coalesce((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false),"
            "       (SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid()),"
            "       (SELECT cipher FROM pg_stat_ssl WHERE pid = pg_backend_pid()),"
            "       (extract(epoch FROM now()) OPERATOR(pg_catalog.*) 1000::numeric)::bigint,"
            "       pg_backend_pid(), pg_is_in_recovery(),"
            "       current_setting('synchronous_standby_names'), current_setting('synchronous_commit'),"
            "       current_setting('default_transaction_read_only')",
            schema.qualify("task_idempotency"), schema.name());
        const auto row = r[0];
        info.serverVersion = q(row[0].as<std::string>());
        info.role = q(row[1].as<std::string>());
        info.sessionRole = q(row[2].as<std::string>());
        info.superuser = row[3].as<bool>();
        info.isOperator = info.superuser || row[4].as<bool>();
        info.isReader = info.superuser || row[5].as<bool>();
        info.tls = row[6].as<bool>();
        info.tlsVersion = row[7].is_null() ? QString() : q(row[7].as<std::string>());
        info.tlsCipher = row[8].is_null() ? QString() : q(row[8].as<std::string>());
        info.asOf = fromEpochMs(row[9]);
        // PgBouncer hands libpq a cancel key of its own, not the server's: a backend pid that is
        // not the one the server reports means something pools in between. Under transaction
        // pooling the next statement may run on another backend, and what this one sets for its
        // session stays there for other clients: the console then sets nothing for the session.
        info.pooler = row[10].as<int>() != conn.backendpid();
        info.inRecovery = row[11].as<bool>();
        info.synchronousStandbyNames = q(row[12].as<std::string>());
        info.synchronousCommit = q(row[13].as<std::string>());
        // Asked as a setting: this read-only transaction's own transaction_read_only is on anyway.
        info.readOnly = info.inRecovery || row[14].as<std::string>() == "on";
        m_db->pooler = info.pooler;
        m_db->raw = info.pooler ? idem::RawConnection() : idem::rawConnection(t);

        const auto node = idem::readNodeIdentity(t);
        info.serverAddress = q(node.serverAddress);
        info.systemIdentifier = q(node.systemIdentifier);
        info.systemAllowed = node.systemAllowed;
        info.timeline = node.timeline;
        info.checkpointAllowed = node.checkpointAllowed;
        info.postmasterStart = QDateTime::fromMSecsSinceEpoch(node.postmasterStartUs / 1000);
        for (const auto& s : node.standbys)
            info.standbys.append(
                { q(s.name), q(s.syncState), q(s.state), s.replayLagMs, s.silentMs, s.replayBehindBytes });
        info.hiddenStandbys = node.hiddenStandbys;
    }
    if (!m_db->connectedAt.isValid())
        m_db->connectedAt = info.asOf;
    info.connectedAt = m_db->connectedAt;
    // The role's rights, right by right (schema v21); before v21, or without any Idem role,
    // idem_operator and idem_reader decide as they always did.
    info.rights = RoleRights::fromOperator(info.role, info.isOperator, info.isReader);
    try {
        const auto rights = idem::readRights(conn, schema, inspectBoundMs);
        if (rights.known)
            info.rights = RoleRights::fromRights(rights);
    } catch (const pqxx::broken_connection&) {
        throw;
    } catch (const pqxx::sql_error&) {
        // Not allowed to ask: the fallback above stands (the database decides anyway).
    }
    try {
        const auto state = idem::inspectSchemaBounded(conn, schema, inspectBoundMs);
        info.schemaExists = state.schemaExists;
        info.tableExists = state.articleTableExists;
        info.schemaVersion = state.version;
        info.schemaLatest = state.latest;
        for (const auto& p : state.problems)
            info.schemaProblems << q(p);
    } catch (const pqxx::broken_connection&) {
        throw;
    } catch (const pqxx::sql_error& e) {
        // Connected but not allowed to look (no USAGE on the schema, say): the connection is
        // still worth showing, with the reason in place of a version.
        info.schemaLatest = idem::latestSchemaVersion();
        info.schemaError = serverMessage(e.what());
    }
    // The first client to see a new timeline on the primary records it, so that a failover is an
    // event on every console's charts, not only on the one that noticed it.
    if (!info.readOnly && info.isReader && info.schemaError.isEmpty() && info.schemaVersion == info.schemaLatest) {
        try {
            const auto note = idem::noteTimeline(conn, schema);
            info.timelineOutcome = q(note.outcome);
            info.previousTimeline = note.previousTimeline;
            if (note.sinceUs != 0)
                info.timelineSince = QDateTime::fromMSecsSinceEpoch(note.sinceUs / 1000);
        } catch (const pqxx::broken_connection&) {
            throw;
        } catch (const pqxx::sql_error& e) {
            if (idem::isReadOnlyRefusal(e))
                throw;
            info.timelineError = serverMessage(e.what());
        }
    }
    return info;
}

void DatabaseWorker::runJob(
    quint64 requestId, const DatabaseJob& job, const std::shared_ptr<std::atomic_bool>& cancelled)
{
    if (cancelled && cancelled->load())
        return;
    if (!m_db) {
        Q_EMIT failed({ requestId, FailureKind::ConnectionLost,
            QCoreApplication::translate("idem::console::ConsoleSession", "not connected"), {}, 0 });
        return;
    }
    m_interrupt->begin(requestId);
    guarded(requestId, [&] {
        // Nothing pools in between: the job's framed reads go in one round trip each.
        std::optional<idem::DirectReads> direct;
        if (m_db->raw.pg)
            direct.emplace(*m_db->conn, m_db->raw);
        QVariant answer = job(*m_db->conn, m_db->schema);
        Q_EMIT jobDone(requestId, answer);
    });
    // Cut just as it answered: the answer stands, the connection does not (the next request
    // finds it gone and the session reconnects).
    if (m_interrupt->end() && m_db)
        drop();
}

void DatabaseWorker::reinspect(quint64 requestId)
{
    if (!m_db) {
        Q_EMIT failed({ requestId, FailureKind::ConnectionLost,
            QCoreApplication::translate("idem::console::ConsoleSession", "not connected"), {}, 0 });
        return;
    }
    guarded(requestId, [&] { Q_EMIT inspected(inspect(requestId)); });
}

void DatabaseWorker::migrateSchema(quint64 requestId)
{
    if (!m_db) {
        Q_EMIT failed({ requestId, FailureKind::ConnectionLost,
            QCoreApplication::translate("idem::console::ConsoleSession", "not connected"), {}, 0 });
        return;
    }
    guarded(requestId, [&] {
        // The dashboard bounds its ticks with a session statement timeout on a direct
        // connection; a migration (an adoption rewrites a whole table) must not be cut off by
        // it. Behind a pooler the dashboard sets nothing for the session, and neither may this.
        if (!m_db->pooler)
            pqxx::nontransaction(*m_db->conn).exec("SET statement_timeout = 0");
        const auto report = idem::migrate(*m_db->conn, { m_db->schema, true });
        MigrationOutcome outcome;
        outcome.requestId = requestId;
        outcome.fromVersion = report.fromVersion;
        outcome.toVersion = report.toVersion;
        for (const auto& a : report.applied)
            outcome.applied << q(a);
        outcome.rolesApplied = report.rolesApplied;
        outcome.adoptedExistingTable = report.adoptedExistingTable;
        outcome.after = inspect(requestId);
        Q_EMIT migrated(outcome);
    });
}

} // namespace idem::console
