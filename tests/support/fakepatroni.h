#pragma once

// A Patroni REST endpoint of the tests' own (issue #29, 40): an HTTP server on loopback whose every
// connection gets what `answer` writes (or nothing), to show the console a cluster that answers,
// refuses, stalls, floods or lies.

#include <QList>
#include <QTcpServer>
#include <QTcpSocket>
#include <QtTest>

#include <functional>
#include <utility>

namespace idem::test {

// A one-shot HTTP server on loopback: each connection gets what `answer` writes (or nothing).
class FakePatroni : public QObject {
public:
    using Answer = std::function<void(QTcpSocket*)>;
    explicit FakePatroni(Answer answer)
        : m_answer(std::move(answer))
    {
        QVERIFY(m_server.listen(QHostAddress::LocalHost));
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket* s = m_server.nextPendingConnection()) {
                ++requests;
                connect(s, &QTcpSocket::readyRead, s, [this, s] {
                    m_request += s->readAll();
                    if (m_request.contains("\r\n\r\n") && !m_answered.contains(s)) {
                        m_answered << s;
                        m_answer(s);
                    }
                });
            }
        });
    }
    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_server.serverPort()); }
    const QByteArray& request() const { return m_request; }
    void setAnswer(Answer answer) { m_answer = std::move(answer); }
    int requests = 0;

    static Answer http(int status, const QByteArray& body, const QByteArray& reason = "OK")
    {
        return [=](QTcpSocket* s) {
            s->write("HTTP/1.1 " + QByteArray::number(status) + ' ' + reason
                + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: "
                + QByteArray::number(body.size()) + "\r\n\r\n" + body);
            s->disconnectFromHost();
        };
    }

private:
    QTcpServer m_server;
    Answer m_answer;
    QByteArray m_request;
    QList<QTcpSocket*> m_answered;
};

} // namespace idem::test
