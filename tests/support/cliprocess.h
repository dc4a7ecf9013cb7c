#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

namespace idem::test {

// What a finished command printed and how it ended (-1: crashed or timed out).
struct CliRun {
    int exitCode = -1;
    QString out;
    QString err;
};

QString describe(const CliRun& run);

// The test's environment without the variables that could pick a database for the command
// (IDEM_DSN, PG*): only what a test passes may decide where the command connects.
QProcessEnvironment cleanEnvironment();

// Waits for a started process, killing it after timeoutMs, and collects its output.
CliRun finishProcess(QProcess& p, int timeoutMs);

// Runs a program with cleanEnvironment() and waits for it.
CliRun runProgram(const QString& program, const QStringList& args, int timeoutMs = 60000);

} // namespace idem::test
