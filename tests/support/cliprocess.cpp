#include "tests/support/cliprocess.h"

#include <QFileInfo>

namespace idem::test {

QString describe(const CliRun& run)
{
    return QStringLiteral("exit %1\nstdout:\n%2\nstderr:\n%3").arg(run.exitCode).arg(run.out, run.err);
}

QProcessEnvironment cleanEnvironment()
{
    auto env = QProcessEnvironment::systemEnvironment();
    for (const auto& name : { "IDEM_DSN", "PGPASSWORD", "PGSERVICE", "PGHOST", "PGPORT", "PGUSER", "PGDATABASE" })
        env.remove(QString::fromLatin1(name));
    return env;
}

QString programFromEnvironment(const char* variable)
{
    const QString path = qEnvironmentVariable(variable);
    if (path.isEmpty() || !QFileInfo(path).isExecutable())
        qFatal("%s is %s: run the tests through ctest, which sets it to the program's path",
            variable, path.isEmpty() ? "not set" : qPrintable(QStringLiteral("not an executable: ") + path));
    return path;
}

CliRun finishProcess(QProcess& p, int timeoutMs)
{
    CliRun run;
    if (p.state() == QProcess::NotRunning && p.error() == QProcess::FailedToStart) {
        run.err = QStringLiteral("did not start: ") + p.errorString();
        return run;
    }
    // A process that already ended while the test ran the event loop (a QTRY_ wait) is finished,
    // not lost: waitForFinished() answers false for it ("Unknown error"), and tst_patroni's demo,
    // done before a slow switchover was, read as one that never ended.
    if (p.state() != QProcess::NotRunning && !p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        run.err = QStringLiteral("did not finish: ") + p.errorString();
        return run;
    }
    run.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    run.out = QString::fromUtf8(p.readAllStandardOutput());
    run.err = QString::fromUtf8(p.readAllStandardError());
    return run;
}

CliRun runProgram(const QString& program, const QStringList& args, int timeoutMs)
{
    QProcess p;
    p.setProcessEnvironment(cleanEnvironment());
    p.start(program, args);
    return finishProcess(p, timeoutMs);
}

} // namespace idem::test
