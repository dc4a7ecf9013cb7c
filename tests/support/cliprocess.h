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

// A program the test runs, from the environment variable ctest sets (tests/CMakeLists.txt): a path
// compiled in would differ in every clone and defeat ccache. Aborts the test, naming the variable,
// when it is missing or not executable.
QString programFromEnvironment(const char* variable);

// The idemctl binary of this build (IDEMCTL_PATH).
inline QString idemctlPath() { return programFromEnvironment("IDEMCTL_PATH"); }

// Runs a program with cleanEnvironment() and waits for it.
CliRun runProgram(const QString& program, const QStringList& args, int timeoutMs = 60000);

} // namespace idem::test
