#pragma once

// Real infrastructure for the tests that need more than the suite's one cluster (issue 15):
// a PgBouncer in front of it, and throwaway primaries and streaming standbys of their own.
// Everything runs on loopback, on its own port, in a directory under the test's temporary
// directory, as the postgres OS user when the test runs as root (initdb, pg_ctl and PgBouncer
// refuse root), and is stopped by its destructor. A missing binary is a failure that says
// which package to install, never a skip.

#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <pqxx/connection>

namespace idem::test {

// Why the binaries these helpers need are not there, or empty.
QString pgBouncerProblem();
QString postgresServerProblem();

// A port on 127.0.0.1 that nothing listens on right now.
int freeLoopbackPort();

// The password libpq would use for the DSN: its password option, else its passfile's entry.
std::string passwordOf(const std::string& dsn);

// A PgBouncer 1.18 in front of the server `backendDsn` names. Clients connect without TLS and
// without a password (auth_type trust, the users listed in its auth_file); PgBouncer logs in to
// the server with the users' passwords. Every database name maps to the same name there.
class LocalPgBouncer {
public:
    struct Options {
        std::string poolMode = "transaction";
        int defaultPoolSize = 4;
        // The server logins it may use: user -> password. The backend DSN's user is always in.
        std::map<std::string, std::string> users;
    };
    LocalPgBouncer(const std::string& backendDsn, const Options& options);
    ~LocalPgBouncer();
    LocalPgBouncer(const LocalPgBouncer&) = delete;
    LocalPgBouncer& operator=(const LocalPgBouncer&) = delete;

    // Empty when it runs; otherwise what went wrong, with the tail of its log.
    const QString& problem() const { return m_problem; }
    int port() const { return m_port; }
    int poolSize() const { return m_options.defaultPoolSize; }
    // A conninfo through the pool for dbname as user (the backend DSN's user when empty).
    std::string dsn(const std::string& dbname, const std::string& user = {}) const;
    // Its admin console (SHOW POOLS, SHOW SERVERS), for psql: libpqxx refuses its version.
    std::string adminDsn() const;
    QString logTail() const;

private:
    Options m_options;
    std::string m_backendUser;
    QTemporaryDir m_dir;
    int m_port = 0;
    QString m_problem;
    std::unique_ptr<QProcess> m_process;
};

// What a pooled server backend carries over from earlier clients: settings changed for the
// session (pg_settings source 'session', minus the parameters PgBouncer itself keeps in step)
// and prepared statements. Holds poolSize transactions open at once through the pool, so that
// every server connection the pool may have is looked at. One line per finding, empty when
// every backend is clean; `seen` gets the backend pids looked at.
QStringList pooledBackendLeftovers(const LocalPgBouncer& bouncer, const std::string& dbname, const std::string& user,
    std::vector<int>* seen = nullptr);

// A cluster of its own (trust on loopback, fsync off) in a temporary directory: a primary made
// by initdb, or a streaming standby of one made with pg_basebackup.
class LocalCluster {
public:
    // initdb and start. extraConf lines go into postgresql.conf.
    static std::unique_ptr<LocalCluster> primary(const QStringList& extraConf = {});
    // pg_basebackup -R from `from`, then start; application_name is its name for
    // synchronous_standby_names.
    static std::unique_ptr<LocalCluster> standbyOf(
        const LocalCluster& from, const QString& applicationName, const QStringList& extraConf = {});
    ~LocalCluster();
    LocalCluster(const LocalCluster&) = delete;
    LocalCluster& operator=(const LocalCluster&) = delete;

    const QString& problem() const { return m_problem; }
    int port() const { return m_port; }
    std::string dsn(const std::string& dbname = "postgres") const;
    // An immediate shutdown (SIGQUIT): the crash a failover follows.
    void crash();
    // The server goes down at once and comes back on the same port and data, as a restart
    // looks to its clients (their connections broken). False (problem() says why) on failure.
    bool restart();
    // pg_ctl promote, waiting until it accepts writes. False (problem() says why) on failure.
    bool promote();
    // Appends to its configuration and reloads (SIGHUP).
    bool reconfigure(const QStringList& conf);
    // Pids of its walsender processes (on a primary with a standby attached).
    std::vector<long> walSenderPids() const;
    QString logTail() const;

private:
    LocalCluster();
    bool run(const QStringList& argv, int timeoutMs, QString* output = nullptr);
    bool startServer();

    QTemporaryDir m_dir;
    QString m_data;
    int m_port = 0;
    QString m_problem;
    std::unique_ptr<QProcess> m_process;
};

} // namespace idem::test
