#include <QtTest>

#include "models/viewlink.h"

using namespace idem::console;

Q_DECLARE_METATYPE(idem::console::ViewLink)

// Share a view (issue 41 item 9): an idem:// link names a profile, a page, the Tasks filter and
// the dashboard's window, round trips whole, and a hostile link is refused with words.
class TestViewLink : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void everyFilterField();
    void hostile_data();
    void hostile();
};

namespace {
idem::TaskFilter fullFilter()
{
    // Every field TaskFilter has, each set to a value other than its default.
    idem::TaskFilter f;
    f.statuses = { "failed", "retryable_failed" };
    f.tenant = "acme & co=1";
    f.operation = "charge#card";
    f.keyPrefix = "acme & co=1:charge#card:order 42%_+";
    f.minAttempts = 2;
    f.expiredLease = true;
    f.liveLease = true;
    f.uncertain = true;
    f.errorClass = "retryable";
    f.exhausted = true;
    f.failedSince = "2026-12-07T10:00:00.000000Z";
    f.unfinishedForMinutes = 30;
    f.digestConflicts = true;
    f.updatedWithinMinutes = 15;
    f.conflictWithinMinutes = 20;
    f.failedRetryInWindow = true;
    f.errorContains = "gateway 503 \"bad\" 网关";
    return f;
}
} // namespace

void TestViewLink::roundTrip_data()
{
    QTest::addColumn<ViewLink>("link");
    for (const auto& page : viewLinkPages()) {
        ViewLink l;
        l.profile = QStringLiteral("Prod EU / 支付");
        l.page = page;
        l.windowMinutes = 60;
        l.tenant = QStringLiteral("acme");
        l.operation = QStringLiteral("charge");
        if (page == QLatin1String("tasks"))
            l.filter = fullFilter();
        QTest::addRow("%s", qPrintable(page)) << l;
    }
    ViewLink bare;
    bare.profile = QStringLiteral("local");
    QTest::addRow("bare") << bare;
    ViewLink empty;
    empty.profile = QStringLiteral("p");
    empty.page = QStringLiteral("tasks");
    empty.filter = idem::TaskFilter {};
    QTest::addRow("every task") << empty;
}

void TestViewLink::roundTrip()
{
    QFETCH(ViewLink, link);
    const QString text = buildViewLink(link);
    QVERIFY2(text.startsWith(QStringLiteral("idem://view?profile=")), qPrintable(text));
    QVERIFY(text.size() <= maxViewLinkLength);
    // Nothing a shell or a chat would break on.
    QVERIFY2(!text.contains(QLatin1Char(' ')) && !text.contains(QLatin1Char('"')), qPrintable(text));
    const auto back = parseViewLink(text);
    QVERIFY2(back.link, qPrintable(back.error));
    QCOMPARE(*back.link, link);
}

void TestViewLink::everyFilterField()
{
    // A tripwire for a field added to TaskFilter: a link carries the filter as a recovery job's
    // JSON, so add the field to jobFilterJson() and taskFilterFromJobJson() (operations/jobs.cpp)
    // and to fullFilter() and the list below, then set the size here to the new one.
    QCOMPARE(sizeof(idem::TaskFilter), std::size_t(320));
    // Each field on its own survives the trip, so a field left out of the link would fail here.
    const auto full = fullFilter();
    const auto one = [](auto set) {
        ViewLink l;
        l.profile = QStringLiteral("p");
        l.page = QStringLiteral("tasks");
        l.filter = idem::TaskFilter {};
        set(*l.filter);
        return l;
    };
    const std::vector<ViewLink> links = {
        one([&](auto& f) { f.statuses = full.statuses; }),
        one([&](auto& f) { f.tenant = full.tenant; }),
        one([&](auto& f) { f.operation = full.operation; }),
        one([&](auto& f) { f.keyPrefix = full.keyPrefix; }),
        one([&](auto& f) { f.minAttempts = full.minAttempts; }),
        one([&](auto& f) { f.expiredLease = true; }),
        one([&](auto& f) { f.liveLease = true; }),
        one([&](auto& f) { f.uncertain = true; }),
        one([&](auto& f) { f.errorClass = full.errorClass; }),
        one([&](auto& f) { f.exhausted = true; }),
        one([&](auto& f) { f.failedSince = full.failedSince; }),
        one([&](auto& f) { f.unfinishedForMinutes = full.unfinishedForMinutes; }),
        one([&](auto& f) { f.digestConflicts = true; }),
        one([&](auto& f) { f.updatedWithinMinutes = full.updatedWithinMinutes; }),
        one([&](auto& f) { f.conflictWithinMinutes = full.conflictWithinMinutes; }),
        one([&](auto& f) {
            f.updatedWithinMinutes = 5;
            f.failedRetryInWindow = true;
        }),
        one([&](auto& f) { f.errorContains = full.errorContains; }),
    };
    for (const auto& l : links) {
        QVERIFY(!(*l.filter == idem::TaskFilter {}));
        const auto back = parseViewLink(buildViewLink(l));
        QVERIFY2(back.link, qPrintable(back.error));
        QVERIFY2(*back.link == l, qPrintable(buildViewLink(l)));
    }
}

void TestViewLink::hostile_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("says");
    QTest::addRow("other scheme") << QStringLiteral("http://view?profile=p&page=tasks")
                                  << QStringLiteral("Not a console link");
    QTest::addRow("password in userinfo")
        << QStringLiteral("idem://user:secret@view?profile=p&page=tasks") << QStringLiteral("Not a console link");
    QTest::addRow("a dsn") << QStringLiteral("idem://view?profile=p&page=tasks&dsn=host%3Devil%20password%3Dx")
                           << QStringLiteral("never does");
    QTest::addRow("a password") << QStringLiteral("idem://view?profile=p&page=tasks&password=x")
                                << QStringLiteral("never does");
    QTest::addRow("other host") << QStringLiteral("idem://evil.example?profile=p&page=tasks")
                                << QStringLiteral("Not a console link");
    QTest::addRow("port") << QStringLiteral("idem://view:5432?profile=p&page=tasks")
                          << QStringLiteral("Not a console link");
    QTest::addRow("fragment") << QStringLiteral("idem://view?profile=p&page=tasks#x")
                              << QStringLiteral("Not a console link");
    QTest::addRow("no profile") << QStringLiteral("idem://view?page=tasks") << QStringLiteral("no profile");
    QTest::addRow("empty profile") << QStringLiteral("idem://view?profile=%20&page=tasks")
                                   << QStringLiteral("profile name");
    QTest::addRow("no page") << QStringLiteral("idem://view?profile=p") << QStringLiteral("no page");
    QTest::addRow("unknown page") << QStringLiteral("idem://view?profile=p&page=%3Cb%3Eadmin")
                                  << QStringLiteral("no page this console has");
    QTest::addRow("twice") << QStringLiteral("idem://view?profile=p&profile=q&page=tasks") << QStringLiteral("twice");
    QTest::addRow("window zero") << QStringLiteral("idem://view?profile=p&page=dashboard&window=0")
                                 << QStringLiteral("window");
    QTest::addRow("window text") << QStringLiteral("idem://view?profile=p&page=dashboard&window=15m")
                                 << QStringLiteral("window");
    QTest::addRow("window huge") << QStringLiteral("idem://view?profile=p&page=dashboard&window=99999999999")
                                 << QStringLiteral("window");
    QTest::addRow("control character") << QStringLiteral("idem://view?profile=p%1B%5B31m&page=tasks")
                                       << QStringLiteral("control");
    QTest::addRow("bidi override") << QStringLiteral("idem://view?profile=p%E2%80%AE&page=tasks")
                                   << QStringLiteral("control");
    QTest::addRow("not utf-8") << QStringLiteral("idem://view?profile=p%FF&page=tasks") << QStringLiteral("UTF-8");
    QTest::addRow("filter not json") << QStringLiteral("idem://view?profile=p&page=tasks&filter=%7B")
                                     << QStringLiteral("Tasks filter");
    QTest::addRow("filter unknown key") << QStringLiteral(
        "idem://view?profile=p&page=tasks&filter=%7B%22sql%22%3A%22x%22%7D")
                                        << QStringLiteral("Tasks filter");
    QTest::addRow("filter bad status") << QStringLiteral(
        "idem://view?profile=p&page=tasks&filter=%7B%22statuses%22%3A%5B%22x%22%5D%7D")
                                       << QStringLiteral("Tasks filter");
    QTest::addRow("filter wrong type") << QStringLiteral(
        "idem://view?profile=p&page=tasks&filter=%7B%22min_attempts%22%3A%22x%22%7D")
                                       << QStringLiteral("Tasks filter");
    QTest::addRow("tenant with colon") << QStringLiteral("idem://view?profile=p&page=dashboard&tenant=a%3Ab")
                                       << QStringLiteral("':'");
    QTest::addRow("too long") << QStringLiteral("idem://view?profile=") + QString(5000, QLatin1Char('a'))
            + QStringLiteral("&page=tasks")
                              << QStringLiteral("at most 4096");
    QTest::addRow("space") << QStringLiteral("idem://view?profile=a b&page=tasks") << QStringLiteral("spaces");
    QTest::addRow("empty") << QString() << QStringLiteral("Not a console link");
}

void TestViewLink::hostile()
{
    QFETCH(QString, text);
    QFETCH(QString, says);
    const auto r = parseViewLink(text);
    QVERIFY(!r.link);
    QVERIFY2(r.error.contains(says), qPrintable(r.error));
    // What the link carried reaches the words only escaped: no control character, no markup.
    for (const QChar c : r.error)
        QVERIFY2(c.category() != QChar::Other_Control && c.category() != QChar::Other_Format, qPrintable(r.error));
}

QTEST_GUILESS_MAIN(TestViewLink)
#include "tst_viewlink.moc"
