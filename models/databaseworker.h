#pragma once

#include <QObject>
#include <QVariant>

#include <atomic>
#include <functional>
#include <memory>

#include <pqxx/connection>

#include "core/identifier.h"

#include "models/connectionsettings.h"
#include "models/jobinterrupt.h"
#include "models/workermessages.h"

namespace idem::console {

// A unit of work for a connection's worker thread: it gets the open connection and the
// schema, runs there, and returns its answer as a QVariant holding a registered value type.
// Throwing (pqxx errors, idem::ConnectError, std::exception) reports a Failure instead. A job
// must bound its own statements (SET LOCAL statement_timeout) and never touch widgets.
using DatabaseJob = std::function<QVariant(pqxx::connection& conn, const idem::SchemaName& schema)>;

// Owns one database connection and everything that touches it. It lives on its own
// QThread (a libpq connection belongs to one thread); ConsoleSession calls the request
// functions there by queued invocation and receives the answers by queued signal, so the
// UI thread never waits on the database.
class DatabaseWorker : public QObject {
    Q_OBJECT
public:
    DatabaseWorker();
    ~DatabaseWorker() override;

    // What other threads may do to the job running on this worker's connection (the session
    // bounds a job on a server that does not answer). Taken before the worker moves to its thread.
    std::shared_ptr<JobInterrupt> interrupt() const { return m_interrupt; }

    // Each of these runs on the worker thread and answers with exactly one signal.
    void open(quint64 requestId, const idem::console::ConnectionSettings& settings);
    void close();
    void migrateSchema(quint64 requestId);
    // Reads the server info again on the open connection: answers inspected or failed.
    void reinspect(quint64 requestId);
    // Runs job unless *cancelled is set by the time it comes up; answers jobDone or failed
    // (a cancelled job answers nothing).
    void runJob(quint64 requestId, const idem::console::DatabaseJob& job,
        const std::shared_ptr<std::atomic_bool>& cancelled);

Q_SIGNALS:
    void opened(const idem::console::ServerInfo& info);
    void migrated(const idem::console::MigrationOutcome& outcome);
    void inspected(const idem::console::ServerInfo& info);
    void failed(const idem::console::Failure& failure);
    void jobDone(quint64 requestId, const QVariant& answer);

private:
    ServerInfo inspect(quint64 requestId);
    // Runs a request body, turning every way a database call can fail into one Failure.
    template <typename F> void guarded(quint64 requestId, F&& body);
    // Closes the connection (if any), after a cancel request still reading it.
    void drop();

    struct Connection;
    std::unique_ptr<Connection> m_db;
    std::shared_ptr<JobInterrupt> m_interrupt = std::make_shared<JobInterrupt>();
};

} // namespace idem::console
