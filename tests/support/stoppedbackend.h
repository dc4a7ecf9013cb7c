#pragma once

// A console's backend stopped with SIGSTOP: the server has taken the statement and never answers,
// as a hung host or a cut network would, so only the console's own bound can end the wait.
// Shared by the tests of those bounds (tst_dashboard_outage, tst_readbounds).

#include <QChar>
#include <QFile>
#include <QProcess>
#include <QString>

#include <csignal>
#include <string>
#include <sys/types.h>
#include <unistd.h>

#include <pqxx/pqxx>

namespace idem::test {

// The one backend of an idem-console on database `dbname` other than `except`; 0 when there is
// not exactly one.
inline int consoleBackendPid(pqxx::connection& admin, const std::string& dbname, int except = 0)
{
    pqxx::read_transaction t(admin);
    const auto r = t.exec_params("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name ="
                                 " 'idem-console' AND pid <> $2",
        dbname, except);
    return r.size() == 1 ? r[0][0].as<int>() : 0;
}

// SIGSTOP to a backend, and a detached shell that sends it SIGCONT after `seconds` whatever
// becomes of the test: killed before its guard runs (a timeout), it would leave the backend
// stopped, and a stopped backend holds up every DROP DATABASE ... WITH (FORCE) on the cluster.
inline bool stopBackend(int pid, int seconds)
{
    // Its output to the null device: a shell holding the test's stdout would keep ctest (which
    // reads it to the end) waiting for the shell's sleep after the test has finished.
    QProcess shell;
    shell.setProgram(QStringLiteral("/bin/sh"));
    shell.setArguments(
        { QStringLiteral("-c"), QStringLiteral("sleep %1; kill -CONT %2 2>/dev/null").arg(seconds).arg(pid) });
    shell.setStandardInputFile(QProcess::nullDevice());
    shell.setStandardOutputFile(QProcess::nullDevice());
    shell.setStandardErrorFile(QProcess::nullDevice());
    if (!shell.startDetached())
        return false;
    return ::kill(pid, SIGSTOP) == 0;
}

// A process's state letter from /proc (T: stopped), or a blank once it is gone.
inline QChar processState(int pid)
{
    QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!f.open(QIODevice::ReadOnly))
        return QLatin1Char(' ');
    // "pid (comm) S ...": the state follows the command's closing parenthesis.
    const QByteArray stat = f.readAll();
    const int close = stat.lastIndexOf(')');
    return close > 0 && close + 2 < stat.size() ? QChar::fromLatin1(stat.at(close + 2)) : QLatin1Char(' ');
}

} // namespace idem::test
