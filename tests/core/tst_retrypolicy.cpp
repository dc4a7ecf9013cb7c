#include <QtTest>

#include <climits>
#include <cstdint>
#include <limits>
#include <random>

#include "core/retrypolicy.h"

using namespace std::chrono_literals;

// Backoff with full jitter: the window doubles from the base and stops at the cap, and a
// delay is anywhere in it, so clients that failed together come back apart.
class TestRetryPolicy : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void ceilingAfter_data();
    void ceilingAfter();
    void ceilingNeverShrinks_data();
    void ceilingNeverShrinks();
    void delaysFillTheWindow_data();
    void delaysFillTheWindow();
    void meanGrowsWithAttempt();
    void validate_data();
    void validate();
};

namespace {
idem::RetryPolicy policy(std::int64_t baseMs, std::int64_t maxMs)
{
    idem::RetryPolicy p;
    p.baseDelay = std::chrono::milliseconds(baseMs);
    p.maxDelay = std::chrono::milliseconds(maxMs);
    return p;
}
constexpr qint64 noCap = std::chrono::milliseconds::max().count();
} // namespace

void TestRetryPolicy::ceilingAfter_data()
{
    QTest::addColumn<qint64>("base");
    QTest::addColumn<qint64>("cap");
    QTest::addColumn<int>("attempt");
    QTest::addColumn<qint64>("expected");
    QTest::addRow("first attempt: the base") << qint64(100) << qint64(1000) << 1 << qint64(100);
    QTest::addRow("doubles") << qint64(100) << qint64(1000) << 2 << qint64(200);
    QTest::addRow("doubles again") << qint64(100) << qint64(1000) << 4 << qint64(800);
    QTest::addRow("capped") << qint64(100) << qint64(1000) << 5 << qint64(1000);
    QTest::addRow("stays capped") << qint64(100) << qint64(1000) << 1000 << qint64(1000);
    QTest::addRow("INT_MAX attempts") << qint64(100) << qint64(1000) << INT_MAX << qint64(1000);
    QTest::addRow("cap not a power of two of the base") << qint64(3) << qint64(1000) << 9 << qint64(768);
    QTest::addRow("... then the cap") << qint64(3) << qint64(1000) << 10 << qint64(1000);
    QTest::addRow("defaults, attempt 8") << qint64(200) << qint64(30000) << 8 << qint64(25600);
    QTest::addRow("defaults, attempt 9") << qint64(200) << qint64(30000) << 9 << qint64(30000);
    QTest::addRow("zero base") << qint64(0) << qint64(1000) << 7 << qint64(0);
    QTest::addRow("zero base, INT_MAX attempts") << qint64(0) << qint64(1000) << INT_MAX << qint64(0);
    QTest::addRow("base equals cap") << qint64(500) << qint64(500) << 3 << qint64(500);
    QTest::addRow("no real cap, attempt 63") << qint64(1) << noCap << 63 << (qint64(1) << 62);
    QTest::addRow("no real cap, attempt 64") << qint64(1) << noCap << 64 << noCap;
    QTest::addRow("no real cap, attempt 500") << qint64(1) << noCap << 500 << noCap;
}

void TestRetryPolicy::ceilingAfter()
{
    QFETCH(qint64, base);
    QFETCH(qint64, cap);
    QFETCH(int, attempt);
    QFETCH(qint64, expected);
    QCOMPARE(static_cast<qint64>(policy(base, cap).ceilingAfter(attempt).count()), expected);
}

void TestRetryPolicy::ceilingNeverShrinks_data()
{
    QTest::addColumn<qint64>("base");
    QTest::addColumn<qint64>("cap");
    QTest::addRow("defaults") << qint64(200) << qint64(30000);
    QTest::addRow("one hour cap") << qint64(7) << qint64(3'600'000);
    QTest::addRow("no real cap") << qint64(1) << noCap;
    QTest::addRow("large base, no real cap") << (qint64(1) << 40) << noCap;
}

void TestRetryPolicy::ceilingNeverShrinks()
{
    QFETCH(qint64, base);
    QFETCH(qint64, cap);
    const auto p = policy(base, cap);
    std::int64_t previous = 0;
    for (int attempt = 1; attempt <= 300; ++attempt) {
        const auto ceiling = p.ceilingAfter(attempt).count();
        QVERIFY2(ceiling >= previous && ceiling <= cap,
            qPrintable(QStringLiteral("attempt %1: %2 after %3").arg(attempt).arg(ceiling).arg(previous)));
        previous = ceiling;
    }
    QCOMPARE(static_cast<qint64>(previous), cap);
}

void TestRetryPolicy::delaysFillTheWindow_data()
{
    QTest::addColumn<qint64>("base");
    QTest::addColumn<qint64>("cap");
    QTest::addColumn<int>("attempt");
    QTest::addRow("first attempt") << qint64(200) << qint64(30000) << 1;
    QTest::addRow("third attempt") << qint64(200) << qint64(30000) << 3;
    QTest::addRow("capped") << qint64(200) << qint64(30000) << 20;
    QTest::addRow("tiny window") << qint64(1) << qint64(1) << 5;
    QTest::addRow("zero window") << qint64(0) << qint64(0) << 5;
}

void TestRetryPolicy::delaysFillTheWindow()
{
    QFETCH(qint64, base);
    QFETCH(qint64, cap);
    QFETCH(int, attempt);
    const auto p = policy(base, cap);
    const auto ceiling = p.ceilingAfter(attempt).count();
    std::mt19937_64 rng(20240601); // fixed: the bounds below must not be luck
    constexpr int draws = 20000;
    std::int64_t lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t hi = -1;
    double sum = 0;
    for (int i = 0; i < draws; ++i) {
        const auto d = p.delayAfter(attempt, rng).count();
        QVERIFY2(d >= 0 && d <= ceiling, qPrintable(QString::number(d)));
        lo = std::min(lo, d);
        hi = std::max(hi, d);
        sum += static_cast<double>(d);
    }
    // Full jitter, not "half plus jitter": both ends of the window are reached, mean in the middle.
    QVERIFY2(lo <= ceiling / 100, qPrintable(QString::number(lo)));
    QVERIFY2(hi >= ceiling - ceiling / 100, qPrintable(QString::number(hi)));
    const double mean = sum / draws;
    QVERIFY2(std::abs(mean - static_cast<double>(ceiling) / 2) <= 0.02 * static_cast<double>(ceiling) + 0.01,
        qPrintable(QString::number(mean)));
}

void TestRetryPolicy::meanGrowsWithAttempt()
{
    const auto p = policy(100, 5000);
    std::mt19937_64 rng(7);
    double previous = -1;
    for (int attempt = 1; attempt <= 6; ++attempt) { // ceilings 100 ... 3200
        double sum = 0;
        for (int i = 0; i < 5000; ++i)
            sum += static_cast<double>(p.delayAfter(attempt, rng).count());
        const double mean = sum / 5000;
        QVERIFY2(mean > previous * 1.7,
            qPrintable(QStringLiteral("attempt %1: %2 after %3").arg(attempt).arg(mean).arg(previous)));
        previous = mean;
    }
}

void TestRetryPolicy::validate_data()
{
    QTest::addColumn<int>("maxAttempts");
    QTest::addColumn<qint64>("base");
    QTest::addColumn<qint64>("cap");
    QTest::addColumn<qint64>("maxAge");
    QTest::addColumn<bool>("valid");
    QTest::addRow("defaults") << 5 << qint64(200) << qint64(30000) << qint64(0) << true;
    QTest::addRow("no delay at all") << 1 << qint64(0) << qint64(0) << qint64(0) << true;
    QTest::addRow("with a maximum age") << 3 << qint64(10) << qint64(10) << qint64(60000) << true;
    QTest::addRow("zero attempts") << 0 << qint64(200) << qint64(30000) << qint64(0) << false;
    QTest::addRow("negative attempts") << -3 << qint64(200) << qint64(30000) << qint64(0) << false;
    QTest::addRow("negative base") << 5 << qint64(-1) << qint64(30000) << qint64(0) << false;
    QTest::addRow("negative cap") << 5 << qint64(0) << qint64(-1) << qint64(0) << false;
    QTest::addRow("negative maximum age") << 5 << qint64(200) << qint64(30000) << qint64(-1) << false;
    QTest::addRow("cap below base") << 5 << qint64(200) << qint64(100) << qint64(0) << false;
}

void TestRetryPolicy::validate()
{
    QFETCH(int, maxAttempts);
    QFETCH(qint64, base);
    QFETCH(qint64, cap);
    QFETCH(qint64, maxAge);
    QFETCH(bool, valid);
    auto p = policy(base, cap);
    p.maxAttempts = maxAttempts;
    p.maxAge = std::chrono::milliseconds(maxAge);
    if (valid)
        p.validate();
    else
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, p.validate());
}

QTEST_GUILESS_MAIN(TestRetryPolicy)
#include "tst_retrypolicy.moc"
