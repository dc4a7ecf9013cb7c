#pragma once

#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QTcpSocket>
#include <QtNumeric>

#include "tests/support/cliprocess.h"

// `idemctl exporter` as the exporter tests run it (idemctlPath(): IDEMCTL_PATH, set by ctest).
namespace idem::test {

// A sample's value in exposition text ("name{labels} value"), or NaN when it is absent.
inline double sampleIn(const QByteArray& text, const QString& series)
{
    const QByteArray prefix = series.toUtf8() + ' ';
    for (const auto& line : text.split('\n'))
        if (line.startsWith(prefix))
            return line.mid(prefix.size()).toDouble();
    return qQNaN();
}

struct Http {
    int status = 0;
    QByteArray body;
};

// One blocking HTTP/1.0 GET on loopback: enough for /metrics and Prometheus' API.
inline Http httpGet(quint16 port, const QString& pathAndQuery)
{
    QTcpSocket s;
    s.connectToHost(QHostAddress::LocalHost, port);
    Http out;
    if (!s.waitForConnected(5000))
        return out;
    s.write("GET " + pathAndQuery.toUtf8() + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    QByteArray all;
    while (s.state() == QAbstractSocket::ConnectedState && s.waitForReadyRead(5000))
        all += s.readAll();
    all += s.readAll();
    const auto headerEnd = all.indexOf("\r\n\r\n");
    if (!all.startsWith("HTTP/1.") || headerEnd < 0)
        return out;
    out.status = all.mid(9, 3).toInt();
    out.body = all.mid(headerEnd + 4);
    return out;
}

// A running `idemctl exporter`: its port comes from its first stderr line (it listens on port 0).
class ExporterProcessBase {
public:
    bool start(const QStringList& args, int timeoutMs = 20000)
    {
        m_p.setProcessEnvironment(cleanEnvironment());
        m_p.start(idem::test::idemctlPath(),
            QStringList { QStringLiteral("exporter"), QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0") }
                + args);
        static const QRegularExpression serving(QStringLiteral("serving http://127\\.0\\.0\\.1:(\\d+)/metrics"));
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs && m_p.state() != QProcess::NotRunning) {
            m_p.waitForReadyRead(200);
            m_err += QString::fromUtf8(m_p.readAllStandardError());
            if (const auto m = serving.match(m_err); m.hasMatch()) {
                m_port = static_cast<quint16>(m.captured(1).toUInt());
                return true;
            }
        }
        return false;
    }
    quint16 port() const { return m_port; }
    bool running() const { return m_p.state() == QProcess::Running; }
    QString err()
    {
        m_err += QString::fromUtf8(m_p.readAllStandardError());
        return m_err;
    }
    // SIGTERM, as systemd stops it; the exit code.
    int stop()
    {
        m_p.terminate();
        if (!m_p.waitForFinished(10000)) {
            m_p.kill();
            m_p.waitForFinished();
            return -1;
        }
        err();
        return m_p.exitStatus() == QProcess::NormalExit ? m_p.exitCode() : -1;
    }
    ~ExporterProcessBase()
    {
        if (m_p.state() != QProcess::NotRunning)
            stop();
    }

private:
    QProcess m_p;
    QString m_err;
    quint16 m_port = 0;
};

} // namespace idem::test
