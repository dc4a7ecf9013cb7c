#pragma once

#include <memory>

#include <QByteArray>
#include <QHostAddress>
#include <QObject>
#include <QTcpServer>
#include <QTcpSocket>

namespace idem::test {

// A TCP relay in front of PostgreSQL that counts what its clients send: every simple Query ('Q')
// and every Sync ('S', which ends an extended-protocol exec_params) is one round trip. The
// clients must connect with sslmode=disable (and gssencmode=disable) so the messages are
// readable. Runs in the test's event loop: process events while the client talks. Needs Qt
// Network.
class CountingProxy : public QObject {
public:
    CountingProxy(const QString& host, quint16 port)
        : m_host(host)
        , m_port(port)
    {
        connect(&m_server, &QTcpServer::newConnection, this, &CountingProxy::accept);
        m_listening = m_server.listen(QHostAddress::LocalHost);
    }
    bool listening() const { return m_listening; }
    quint16 port() const { return m_server.serverPort(); }
    int roundTrips() const { return m_roundTrips; }

private:
    void accept()
    {
        while (auto* client = m_server.nextPendingConnection()) {
            auto* upstream = new QTcpSocket(client);
            auto buffer = std::make_shared<QByteArray>();
            auto started = std::make_shared<bool>(false);
            connect(client, &QTcpSocket::readyRead, this, [=, this] {
                const QByteArray data = client->readAll();
                buffer->append(data);
                count(*buffer, *started);
                upstream->write(data);
            });
            connect(upstream, &QTcpSocket::readyRead, client, [=] { client->write(upstream->readAll()); });
            connect(client, &QTcpSocket::disconnected, upstream, &QTcpSocket::disconnectFromHost);
            connect(upstream, &QTcpSocket::disconnected, client, &QTcpSocket::disconnectFromHost);
            upstream->connectToHost(m_host, m_port);
            upstream->waitForConnected(5000);
        }
    }
    void count(QByteArray& buffer, bool& started)
    {
        const auto u32 = [&](int at) {
            return (quint32(quint8(buffer[at])) << 24) | (quint32(quint8(buffer[at + 1])) << 16)
                | (quint32(quint8(buffer[at + 2])) << 8) | quint32(quint8(buffer[at + 3]));
        };
        for (;;) {
            if (!started) { // the startup packet has no type byte
                if (buffer.size() < 4 || buffer.size() < int(u32(0)))
                    return;
                buffer.remove(0, int(u32(0)));
                started = true;
                continue;
            }
            if (buffer.size() < 5 || buffer.size() < 1 + int(u32(1)))
                return;
            if (buffer[0] == 'Q' || buffer[0] == 'S')
                ++m_roundTrips;
            buffer.remove(0, 1 + int(u32(1)));
        }
    }

    QTcpServer m_server;
    QString m_host;
    quint16 m_port;
    bool m_listening = false;
    int m_roundTrips = 0;
};

} // namespace idem::test
