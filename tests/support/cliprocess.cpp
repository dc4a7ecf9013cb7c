#include "tests/support/cliprocess.h"

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

CliRun finishProcess(QProcess& p, int timeoutMs)
{
    CliRun run;
    if (!p.waitForFinished(timeoutMs)) {
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
