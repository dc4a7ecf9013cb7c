#include <QtTest>

#include <QElapsedTimer>

#include <cerrno>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "schema/migrate.h"
#include "tests/support/exporterprocess.h"
#include "tests/support/testdb.h"

// Issue 31, item 5: slow clients must not silence `idemctl exporter`. Under a slowloris of 64
// connections that each send a header byte every second, every scrape is answered within a
// bound and the slow connections are closed after the header timeout; past --max-connections the
// oldest slow one makes room; a header past the size bound is answered 431 and closed.
namespace {

// A raw loopback TCP connection, blocking only where a scrape waits with a deadline.
class RawSocket {
public:
    explicit RawSocket(quint16 port)
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a {};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            ::close(m_fd);
            m_fd = -1;
        }
    }
    ~RawSocket()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    RawSocket(const RawSocket&) = delete;
    RawSocket& operator=(const RawSocket&) = delete;
    bool connected() const { return m_fd >= 0; }
    bool send(const QByteArray& bytes)
    {
        return m_fd >= 0 && ::send(m_fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == bytes.size();
    }
    // True once the server has closed its side (EOF or reset), without waiting.
    bool closedByServer()
    {
        char buf[4096];
        for (;;) {
            const ssize_t n = ::recv(m_fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n > 0) {
                m_received.append(buf, static_cast<int>(n));
                continue;
            }
            return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
        }
    }
    // Everything until the server closes, or what came before the deadline.
    QByteArray readAll(int timeoutMs)
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs) {
            pollfd p { m_fd, POLLIN, 0 };
            ::poll(&p, 1, static_cast<int>(timeoutMs - t.elapsed()));
            if (closedByServer())
                break;
        }
        return m_received;
    }

private:
    int m_fd = -1;
    QByteArray m_received;
};

struct Scrape {
    bool answered = false;
    qint64 ms = 0;
    QByteArray response;
};

Scrape scrape(quint16 port, int timeoutMs)
{
    QElapsedTimer t;
    t.start();
    RawSocket s(port);
    Scrape out;
    if (!s.connected() || !s.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n"))
        return out;
    out.response = s.readAll(timeoutMs);
    out.ms = t.elapsed();
    out.answered = out.response.startsWith("HTTP/1.1 200 ") && out.response.contains("\nidem_up{schema=\"idem\"} ");
    return out;
}

using idem::test::sampleIn;

// With the database named and read every second.
class Exporter : public idem::test::ExporterProcessBase {
public:
    bool start(const QString& dsn, const QStringList& extra)
    {
        return ExporterProcessBase::start(
            QStringList { QStringLiteral("--dsn"), dsn, QStringLiteral("--interval"), QStringLiteral("1s") } + extra);
    }
};

std::vector<std::unique_ptr<RawSocket>> slowClients(quint16 port, int n)
{
    std::vector<std::unique_ptr<RawSocket>> out;
    for (int i = 0; i < n; ++i) {
        out.push_back(std::make_unique<RawSocket>(port));
        out.back()->send("GET /metrics HTTP/1.1\r\nX-Slow: ");
    }
    return out;
}

int closedCount(std::vector<std::unique_ptr<RawSocket>>& clients)
{
    int n = 0;
    for (auto& c : clients)
        n += c->closedByServer() ? 1 : 0;
    return n;
}
} // namespace

class TestExporterSlow : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void slowlorisKeepsScrapesAnswered();
    void pastTheLimitTheOldestSlowMakesRoom();
    void oversizedHeaderIsRefused();

private:
    std::unique_ptr<idem::test::ScratchDatabase> m_db;
};

void TestExporterSlow::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("exporterslow", idem::test::migrated);
    auto c = m_db->connect();
    idem::migrate(*c, { idem::SchemaName(), true });
}

void TestExporterSlow::slowlorisKeepsScrapesAnswered()
{
    Exporter exporter;
    QVERIFY2(exporter.start(QString::fromStdString(m_db->dsn()), {}), qPrintable(exporter.err()));
    QVERIFY(scrape(exporter.port(), 5000).answered);

    // 64 connections, each sending one more header byte every second (the default header timeout
    // is 5 s), while a scraper asks every half second: each scrape answered within half the header
    // timeout (an exporter held up by the slow ones would answer after it, or never), however
    // slowly a loaded machine answers.
    auto slow = slowClients(exporter.port(), 64);
    QElapsedTimer t;
    t.start();
    int answered = 0, asked = 0;
    qint64 worst = 0;
    while (t.elapsed() < 4000) {
        for (auto& c : slow)
            c->send("x");
        for (int i = 0; i < 2; ++i) {
            const auto s = scrape(exporter.port(), 2500);
            ++asked;
            answered += s.answered ? 1 : 0;
            worst = std::max(worst, s.ms);
            QTest::qWait(400);
        }
    }
    qInfo("%d of %d scrapes answered during the attack, the slowest in %lld ms", answered, asked,
        static_cast<long long>(worst));
    QCOMPARE(answered, asked);
    QVERIFY2(asked >= 4, qPrintable(QString::number(asked))); // two rounds of the attack at least

    // The slow ones are closed once their header time is up, however steadily they send.
    t.restart();
    int closed = 0;
    while (t.elapsed() < 6000 && (closed = closedCount(slow)) < 64) {
        for (auto& c : slow)
            c->send("x");
        QTest::qWait(250);
    }
    QCOMPARE(closed, 64);
    const auto after = scrape(exporter.port(), 2000);
    QVERIFY(after.answered);
    QCOMPARE(
        sampleIn(after.response,
            QStringLiteral("idem_exporter_http_connections_closed_total{schema=\"idem\",reason=\"header_timeout\"}")),
        64.0);
}

void TestExporterSlow::pastTheLimitTheOldestSlowMakesRoom()
{
    Exporter exporter;
    QVERIFY2(exporter.start(QString::fromStdString(m_db->dsn()),
                 { QStringLiteral("--max-connections"), QStringLiteral("16"), QStringLiteral("--header-timeout"),
                     QStringLiteral("30s") }),
        qPrintable(exporter.err()));
    // 40 slow connections against room for 16: the first 24 are closed to make room for the others,
    // then the first scrape closes one more (after it there is room again).
    auto slow = slowClients(exporter.port(), 40);
    for (int i = 0; i < 5; ++i) {
        const auto s = scrape(exporter.port(), 1000);
        QVERIFY2(s.answered, s.response.constData());
    }
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 30000 && closedCount(slow) < 25)
        QTest::qWait(50);
    // Always the oldest: the newest slow ones are still open.
    int firstOpen = -1;
    for (int i = 0; i < 40; ++i)
        if (!slow[i]->closedByServer()) {
            firstOpen = i;
            break;
        }
    QCOMPARE(closedCount(slow), 25);
    QCOMPARE(firstOpen, 25);
    const auto s = scrape(exporter.port(), 1000);
    QCOMPARE(sampleIn(s.response,
                 QStringLiteral("idem_exporter_http_connections_closed_total{schema=\"idem\",reason=\"evicted\"}")),
        25.0);
}

void TestExporterSlow::oversizedHeaderIsRefused()
{
    Exporter exporter;
    QVERIFY2(exporter.start(QString::fromStdString(m_db->dsn()), {}), qPrintable(exporter.err()));
    RawSocket big(exporter.port());
    QVERIFY(big.send("GET /metrics HTTP/1.1\r\nX-Big: " + QByteArray(20000, 'a')));
    const auto answer = big.readAll(3000);
    QVERIFY2(answer.startsWith("HTTP/1.1 431 "), answer.left(200).constData());
    RawSocket other(exporter.port());
    QVERIFY(other.send("GET / HTTP/1.1\r\n\r\n"));
    QVERIFY(other.readAll(3000).startsWith("HTTP/1.1 404 "));
    QVERIFY(scrape(exporter.port(), 2000).answered);
}

QTEST_GUILESS_MAIN(TestExporterSlow)
#include "tst_exporterslow.moc"
