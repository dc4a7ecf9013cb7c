#pragma once

#include <QString>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace idem::test {

// A TCP port on the loopback that completes the handshake (the kernel does that for a listening
// socket) but never says a word: a client waits on it until its own timeout, as on a hung server.
class SilentServer {
public:
    SilentServer()
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr {};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(m_fd, 8) != 0
            || ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
            return;
        m_port = ntohs(addr.sin_port);
    }
    ~SilentServer()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    SilentServer(const SilentServer&) = delete;
    SilentServer& operator=(const SilentServer&) = delete;
    int port() const { return m_port; }
    QString dsn(int connectTimeoutSeconds = 2) const
    {
        return QStringLiteral("host=127.0.0.1 port=%1 dbname=x user=x connect_timeout=%2")
            .arg(m_port)
            .arg(connectTimeoutSeconds);
    }

private:
    int m_fd = -1;
    int m_port = 0;
};

} // namespace idem::test
