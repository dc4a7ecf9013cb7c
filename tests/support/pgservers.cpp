#include "tests/support/pgservers.h"

#include <QDir>

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QThread>
#include <algorithm>

#include <csignal>
#include <fstream>
#include <grp.h>
#include <netinet/in.h>
#include <pqxx/pqxx>
#include <pwd.h>
#include <set>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/connection.h"

namespace idem::test {

namespace {

    const QString pgbouncerBin = QStringLiteral("/usr/sbin/pgbouncer");

    QString postgresBinDir()
    {
        QDir root(QStringLiteral("/usr/lib/postgresql"));
        auto versions = root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name);
        std::sort(
            versions.begin(), versions.end(), [](const QString& a, const QString& b) { return a.toInt() > b.toInt(); });
        for (const auto& v : versions) {
            const QString bin = root.filePath(v + QStringLiteral("/bin"));
            if (QFileInfo::exists(bin + QStringLiteral("/initdb"))
                && QFileInfo::exists(bin + QStringLiteral("/pg_basebackup")))
                return bin;
        }
        return {};
    }

    bool asRoot() { return ::geteuid() == 0; }

    // The servers refuse to run as root: as root they run as the postgres OS user, which must
    // then own their directories.
    QString giveToServerUser(const QString& path)
    {
        if (!asRoot())
            return {};
        const passwd* pw = ::getpwnam("postgres");
        if (!pw)
            return QStringLiteral("running as root needs the postgres OS user (apt-get install postgresql creates it)");
        if (::chown(QFile::encodeName(path).constData(), pw->pw_uid, pw->pw_gid) != 0)
            return QStringLiteral("cannot give %1 to the postgres user").arg(path);
        return {};
    }

    // Runs a server program to completion (as postgres when root); false on failure or timeout.
    bool runServerProgram(const QStringList& argv, int timeoutMs, QString* output)
    {
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.setWorkingDirectory(QStringLiteral("/"));
        if (asRoot())
            p.start(QStringLiteral("runuser"),
                QStringList { QStringLiteral("-u"), QStringLiteral("postgres"), QStringLiteral("--") } + argv);
        else
            p.start(argv.first(), argv.mid(1));
        const bool finished = p.waitForStarted(5000) && p.waitForFinished(timeoutMs);
        if (!finished) {
            p.kill();
            p.waitForFinished(2000);
        }
        if (output)
            *output = QString::fromLocal8Bit(p.readAll());
        return finished && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    }

    QString tail(const QString& path, int lines = 15)
    {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly))
            return QStringLiteral("(no log at %1)").arg(path);
        const auto all = QString::fromLocal8Bit(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        return all.mid(std::max<qsizetype>(0, all.size() - lines)).join(QLatin1Char('\n'));
    }

    bool writeFile(const QString& path, const QString& text, QFileDevice::Permissions perms)
    {
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate))
            return false;
        f.write(text.toUtf8());
        f.close();
        return f.setPermissions(perms) && giveToServerUser(path).isEmpty();
    }

    // A server as a child of the test: as the postgres user when root, its output appended to
    // logFile, and sent deathSignal by the kernel if the test dies first (a crashed or killed
    // test leaves no server behind).
    std::unique_ptr<QProcess> startServerChild(const QStringList& argv, const QString& logFile, int deathSignal)
    {
        auto p = std::make_unique<QProcess>();
        p->setProcessChannelMode(QProcess::MergedChannels);
        p->setStandardOutputFile(logFile, QIODevice::Append);
        p->setWorkingDirectory(QStringLiteral("/"));
        const bool root = asRoot();
        uid_t uid = 0;
        gid_t gid = 0;
        if (root) {
            const passwd* pw = ::getpwnam("postgres");
            if (!pw)
                return nullptr;
            uid = pw->pw_uid;
            gid = pw->pw_gid;
        }
        p->setChildProcessModifier([root, uid, gid, deathSignal] {
            if (root && (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0))
                ::_exit(127);
            // After setuid, which clears it.
            ::prctl(PR_SET_PDEATHSIG, deathSignal);
        });
        p->start(argv.first(), argv.mid(1));
        if (!p->waitForStarted(5000))
            return nullptr;
        return p;
    }

    void stopChild(QProcess* p, int signal)
    {
        if (!p || p->state() == QProcess::NotRunning)
            return;
        ::kill(static_cast<pid_t>(p->processId()), signal);
        if (!p->waitForFinished(10000)) {
            p->kill();
            p->waitForFinished(2000);
        }
    }

    QString quoteIni(const std::string& s)
    {
        return QString::fromStdString(s).replace(QLatin1Char('"'), QStringLiteral("\"\""));
    }

} // namespace

QString pgBouncerProblem()
{
    if (!QFileInfo(pgbouncerBin).isExecutable())
        return QStringLiteral("%1 is missing: these tests run a real PgBouncer (apt-get install pgbouncer, or "
                              "scripts/deps.sh test)")
            .arg(pgbouncerBin);
    return {};
}

QString postgresServerProblem()
{
    if (postgresBinDir().isEmpty())
        return QStringLiteral(
            "no PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) under /usr/lib/postgresql: "
            "apt-get install postgresql, or scripts/deps.sh test");
    return {};
}

int freeLoopbackPort()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0
        && ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    ::close(fd);
    return port;
}

std::string passwordOf(const std::string& dsn)
{
    const auto o = idem::parseConninfo(dsn);
    if (auto p = o.find("password"); p != o.end())
        return p->second;
    const auto passfile = o.find("passfile");
    const auto user = o.count("user") ? o.at("user") : std::string("postgres");
    if (passfile == o.end())
        return {};
    std::ifstream in(passfile->second);
    std::string line;
    while (std::getline(in, line)) {
        // host:port:db:user:password; the suite's passfiles have no escaped colons.
        std::vector<std::string> f;
        std::size_t from = 0;
        for (int i = 0; i < 4; ++i) {
            const auto colon = line.find(':', from);
            if (colon == std::string::npos)
                break;
            f.push_back(line.substr(from, colon - from));
            from = colon + 1;
        }
        if (f.size() == 4 && (f[3] == user || f[3] == "*"))
            return line.substr(from);
    }
    return {};
}

LocalPgBouncer::LocalPgBouncer(const std::string& backendDsn, const Options& options)
    : m_options(options)
    , m_dir(QDir::tempPath() + QStringLiteral("/idem-pgbouncer-XXXXXX"))
{
    if (m_problem = pgBouncerProblem(); !m_problem.isEmpty())
        return;
    if (!m_dir.isValid()) {
        m_problem = QStringLiteral("cannot create a temporary directory");
        return;
    }
    if (m_problem = giveToServerUser(m_dir.path()); !m_problem.isEmpty())
        return;
    const auto backend = idem::parseConninfo(backendDsn);
    m_backendUser = backend.count("user") ? backend.at("user") : "postgres";
    auto users = m_options.users;
    users[m_backendUser] = passwordOf(backendDsn);
    QString authFile;
    for (const auto& [user, password] : users)
        authFile += QStringLiteral("\"%1\" \"%2\"\n").arg(quoteIni(user), quoteIni(password));
    m_port = freeLoopbackPort();
    const QString dir = m_dir.path();
    const QString ini = QStringLiteral("[databases]\n"
                                       "* = host=%1 port=%2\n"
                                       "[pgbouncer]\n"
                                       "listen_addr = 127.0.0.1\n"
                                       "listen_port = %3\n"
                                       "unix_socket_dir =\n"
                                       "auth_type = trust\n"
                                       "auth_file = %4/users.txt\n"
                                       "admin_users = %5\n"
                                       "pool_mode = %6\n"
                                       "default_pool_size = %7\n"
                                       "max_client_conn = 500\n"
                                       "server_tls_sslmode = prefer\n"
                                       "logfile = %4/pgbouncer.log\n")
                            .arg(QString::fromStdString(backend.count("host") ? backend.at("host") : "127.0.0.1"),
                                QString::fromStdString(backend.count("port") ? backend.at("port") : "5432"))
                            .arg(m_port)
                            .arg(dir, QString::fromStdString(m_backendUser), QString::fromStdString(m_options.poolMode))
                            .arg(m_options.defaultPoolSize);
    if (!writeFile(dir + QStringLiteral("/users.txt"), authFile, QFileDevice::ReadOwner | QFileDevice::WriteOwner)
        || !writeFile(dir + QStringLiteral("/pgbouncer.ini"), ini, QFileDevice::ReadOwner | QFileDevice::WriteOwner)) {
        m_problem = QStringLiteral("cannot write PgBouncer's configuration in %1").arg(dir);
        return;
    }
    // SIGTERM: PgBouncer's immediate shutdown.
    m_process = startServerChild(
        { pgbouncerBin, dir + QStringLiteral("/pgbouncer.ini") }, dir + QStringLiteral("/output.log"), SIGTERM);
    if (!m_process) {
        m_problem = QStringLiteral("PgBouncer did not start\n%1").arg(logTail());
        return;
    }
    for (int i = 0; i < 100 && m_process->state() == QProcess::Running; ++i) {
        try {
            // Through the pool to the server: libpqxx refuses the admin console's "server version".
            pqxx::connection c(dsn("postgres"));
            return;
        } catch (const std::exception&) {
            QThread::msleep(50);
        }
    }
    m_problem = QStringLiteral("PgBouncer does not accept connections on 127.0.0.1:%1\n%2").arg(m_port).arg(logTail());
}

LocalPgBouncer::~LocalPgBouncer() { stopChild(m_process.get(), SIGTERM); }

std::string LocalPgBouncer::dsn(const std::string& dbname, const std::string& user) const
{
    return "host=127.0.0.1 port=" + std::to_string(m_port) + " dbname=" + dbname
        + " user=" + (user.empty() ? m_backendUser : user) + " sslmode=disable connect_timeout=10";
}

std::string LocalPgBouncer::adminDsn() const { return dsn("pgbouncer"); }

QString LocalPgBouncer::logTail() const { return tail(m_dir.path() + QStringLiteral("/pgbouncer.log")); }

QStringList pooledBackendLeftovers(
    const LocalPgBouncer& bouncer, const std::string& dbname, const std::string& user, std::vector<int>* seen)
{
    QStringList found;
    std::vector<std::unique_ptr<pqxx::connection>> conns;
    std::vector<std::unique_ptr<pqxx::work>> held;
    // Not counted: the parameters PgBouncer sets on a server itself to match each client (its
    // "track" list), and transaction_isolation / _read_only / _deferrable, which every
    // transaction starts afresh from the default_transaction_* settings (those are counted).
    const char* sql = "SELECT pg_backend_pid(),"
                      " (SELECT coalesce(string_agg(name || '=' || setting, ', ' ORDER BY name), '') FROM pg_settings"
                      "   WHERE source = 'session' AND name NOT IN ('application_name', 'client_encoding', 'DateStyle',"
                      "     'TimeZone', 'standard_conforming_strings', 'IntervalStyle', 'transaction_isolation',"
                      "     'transaction_read_only', 'transaction_deferrable')),"
                      " (SELECT coalesce(string_agg(name, ', ' ORDER BY name), '') FROM pg_prepared_statements),"
                      " current_setting('transaction_read_only')";
    std::set<int> pids;
    for (int i = 0; i < bouncer.poolSize(); ++i) {
        conns.push_back(std::make_unique<pqxx::connection>(bouncer.dsn(dbname, user)));
        held.push_back(std::make_unique<pqxx::work>(*conns.back()));
        const auto row = held.back()->exec(sql)[0];
        const int pid = row[0].as<int>();
        pids.insert(pid);
        const auto settings = row[1].as<std::string>();
        const auto prepared = row[2].as<std::string>();
        if (!settings.empty())
            found << QStringLiteral("backend %1 keeps session settings: %2")
                         .arg(pid)
                         .arg(QString::fromStdString(settings));
        if (!prepared.empty())
            found << QStringLiteral("backend %1 keeps prepared statements: %2")
                         .arg(pid)
                         .arg(QString::fromStdString(prepared));
        if (row[3].as<std::string>() != "off")
            found << QStringLiteral("backend %1 starts transactions read-only").arg(pid);
    }
    if (static_cast<int>(pids.size()) != bouncer.poolSize())
        found << QStringLiteral("%1 transactions held open through the pool shared %2 backends")
                     .arg(bouncer.poolSize())
                     .arg(pids.size());
    if (seen)
        seen->assign(pids.begin(), pids.end());
    return found;
}

LocalCluster::LocalCluster()
    : m_dir(QDir::tempPath() + QStringLiteral("/idem-cluster-XXXXXX"))
{
}

// SIGQUIT: the postmaster's immediate shutdown, which takes its children with it.
LocalCluster::~LocalCluster() { stopChild(m_process.get(), SIGQUIT); }

bool LocalCluster::run(const QStringList& argv, int timeoutMs, QString* output)
{
    QString out;
    const bool ok = runServerProgram(argv, timeoutMs, &out);
    if (!ok)
        m_problem = QStringLiteral("%1 failed: %2").arg(argv.join(QLatin1Char(' ')), out.trimmed());
    if (output)
        *output = out;
    return ok;
}

bool LocalCluster::startServer()
{
    m_process = startServerChild({ postgresBinDir() + QStringLiteral("/postgres"), QStringLiteral("-D"), m_data },
        m_dir.path() + QStringLiteral("/server.log"), SIGQUIT);
    if (!m_process) {
        m_problem = QStringLiteral("postgres did not start");
        return false;
    }
    for (int i = 0; i < 300 && m_process->state() == QProcess::Running; ++i) {
        try {
            pqxx::connection c(dsn());
            return true;
        } catch (const std::exception&) {
            // A standby accepts connections once it reached a consistent state.
            QThread::msleep(100);
        }
    }
    m_problem = QStringLiteral("the server on port %1 does not accept connections\n%2").arg(m_port).arg(logTail());
    return false;
}

std::unique_ptr<LocalCluster> LocalCluster::primary(const QStringList& extraConf)
{
    std::unique_ptr<LocalCluster> c(new LocalCluster);
    if (c->m_problem = postgresServerProblem(); !c->m_problem.isEmpty())
        return c;
    if (c->m_problem = giveToServerUser(c->m_dir.path()); !c->m_problem.isEmpty())
        return c;
    c->m_data = c->m_dir.path() + QStringLiteral("/data");
    if (!c->run({ postgresBinDir() + QStringLiteral("/initdb"), QStringLiteral("-D"), c->m_data, QStringLiteral("-U"),
                    QStringLiteral("postgres"), QStringLiteral("-A"), QStringLiteral("trust"),
                    QStringLiteral("--encoding=UTF8"), QStringLiteral("--locale=C"), QStringLiteral("-N") },
            60000))
        return c;
    c->m_port = freeLoopbackPort();
    QStringList conf { QStringLiteral("listen_addresses = '127.0.0.1'"), QStringLiteral("port = %1").arg(c->m_port),
        QStringLiteral("unix_socket_directories = ''"), QStringLiteral("fsync = off"),
        QStringLiteral("full_page_writes = off"), QStringLiteral("max_connections = 100"),
        QStringLiteral("wal_level = replica"), QStringLiteral("max_wal_senders = 5"),
        QStringLiteral("wal_sender_timeout = 0"), QStringLiteral("restart_after_crash = off") };
    conf += extraConf;
    if (!c->reconfigure(conf))
        return c;
    c->startServer();
    return c;
}

std::unique_ptr<LocalCluster> LocalCluster::standbyOf(
    const LocalCluster& from, const QString& applicationName, const QStringList& extraConf)
{
    std::unique_ptr<LocalCluster> c(new LocalCluster);
    if (c->m_problem = postgresServerProblem(); !c->m_problem.isEmpty())
        return c;
    if (c->m_problem = giveToServerUser(c->m_dir.path()); !c->m_problem.isEmpty())
        return c;
    c->m_data = c->m_dir.path() + QStringLiteral("/data");
    if (!c->run(
            { postgresBinDir() + QStringLiteral("/pg_basebackup"), QStringLiteral("-D"), c->m_data,
                QStringLiteral("-h"), QStringLiteral("127.0.0.1"), QStringLiteral("-p"), QString::number(from.port()),
                QStringLiteral("-U"), QStringLiteral("postgres"), QStringLiteral("-X"), QStringLiteral("stream"),
                QStringLiteral("-c"), QStringLiteral("fast"), QStringLiteral("--no-sync") },
            60000))
        return c;
    c->m_port = freeLoopbackPort();
    if (!writeFile(
            c->m_data + QStringLiteral("/standby.signal"), {}, QFileDevice::ReadOwner | QFileDevice::WriteOwner)) {
        c->m_problem = QStringLiteral("cannot write standby.signal");
        return c;
    }
    QStringList conf { QStringLiteral("port = %1").arg(c->m_port),
        QStringLiteral("primary_conninfo = 'host=127.0.0.1 port=%1 user=postgres application_name=%2'")
            .arg(from.port())
            .arg(applicationName),
        QStringLiteral("hot_standby = on"), QStringLiteral("wal_receiver_status_interval = 1s"),
        QStringLiteral("hot_standby_feedback = on") };
    conf += extraConf;
    if (!c->reconfigure(conf))
        return c;
    c->startServer();
    return c;
}

bool LocalCluster::reconfigure(const QStringList& conf)
{
    QFile f(m_data + QStringLiteral("/postgresql.conf"));
    if (!f.open(QIODevice::Append)) {
        m_problem = QStringLiteral("cannot append to %1").arg(f.fileName());
        return false;
    }
    f.write((QStringLiteral("\n# idem tests\n") + conf.join(QLatin1Char('\n')) + QLatin1Char('\n')).toUtf8());
    f.close();
    if (!m_process || m_process->state() != QProcess::Running)
        return true;
    return ::kill(static_cast<pid_t>(m_process->processId()), SIGHUP) == 0;
}

std::string LocalCluster::dsn(const std::string& dbname) const
{
    return "host=127.0.0.1 port=" + std::to_string(m_port) + " dbname=" + dbname
        + " user=postgres sslmode=disable connect_timeout=5";
}

void LocalCluster::crash() { stopChild(m_process.get(), SIGQUIT); }

bool LocalCluster::restart()
{
    crash();
    return startServer();
}

bool LocalCluster::promote()
{
    if (!run({ postgresBinDir() + QStringLiteral("/pg_ctl"), QStringLiteral("promote"), QStringLiteral("-D"), m_data,
                 QStringLiteral("-w"), QStringLiteral("-t"), QStringLiteral("30") },
            40000))
        return false;
    for (int i = 0; i < 100; ++i) {
        try {
            pqxx::connection c(dsn());
            pqxx::nontransaction n(c);
            if (!n.exec("SELECT pg_is_in_recovery()")[0][0].as<bool>())
                return true;
        } catch (const std::exception&) {
        }
        QThread::msleep(100);
    }
    m_problem = QStringLiteral("the standby on port %1 still is in recovery after promote").arg(m_port);
    return false;
}

std::vector<long> LocalCluster::walSenderPids() const
{
    std::vector<long> pids;
    pqxx::connection c(dsn());
    pqxx::nontransaction n(c);
    for (const auto& row : n.exec("SELECT pid FROM pg_stat_replication"))
        pids.push_back(row[0].as<long>());
    return pids;
}

QString LocalCluster::logTail() const { return tail(m_dir.path() + QStringLiteral("/server.log")); }

} // namespace idem::test
