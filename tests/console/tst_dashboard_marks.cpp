// Issue #27 in the console: every chart with a time axis marks the events that explain a change.
// Real events are planted through the product's own functions (an annotation, a pause and its
// resume, a requeue, a second annotation seconds after the requeue, an event of a kind this
// console does not know) and moved to known times, the audit chain re-hashed so that it still
// verifies; the dashboard must mark each at its time on all six time axes, with its letter, colour
// and a tooltip that a hover shows, the two close ones as one group, only the events of the
// filtered scope, and a new annotation without waiting for the minute's read. Without a database:
// a bulk action's hundreds of events and mixed neighbours stay one readable box each, boxes never
// overlap and stay inside the plot.

#include <QtTest>

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QDateTimeAxis>
#include <QGraphicsItem>
#include <QLabel>
#include <set>
#include <QLineEdit>
#include <QLineSeries>
#include <QSettings>
#include <QStandardPaths>
#include <QToolTip>
#include <QValueAxis>

#include "app/mainwindow.h"
#include "models/dashboardmodel.h"
#include "models/eventwatch.h"
#include "models/pausewatch.h"
#include "models/profilestore.h"
#include "operations/actions.h"
#include "operations/audit.h"
#include "operations/events.h"
#include "operations/pauses.h"
#include "tests/console/consolewindow_support.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/chartpanel.h"
#include "views/dashboardwidget.h"
#include "views/eventmarks.h"
#include "views/language.h"
#include "views/latencychart.h"

using namespace idem::console;
using namespace idem::test;

namespace {
const idem::SchemaName schema;

// An event as the audit table has it: the reference the marks are checked against.
struct Planted {
    qint64 id = 0;
    qint64 atMs = 0;
    QString action;
};

// Where a time falls on a chart, by Qt Charts' own mapping (not the marks' arithmetic).
double xOf(QChart* chart, qint64 ms)
{
    QAbstractSeries* series = nullptr;
    for (auto* s : chart->series())
        if (qobject_cast<QLineSeries*>(s)) {
            series = s;
            break;
        }
    const auto* y = chart->axes(Qt::Vertical).value(0);
    // Any value inside the y range: only x matters.
    const double yValue = y->type() == QAbstractAxis::AxisTypeLogValue ? 1.0 : 0.0;
    return chart->mapToPosition(QPointF(double(ms), yValue), series).x();
}

QStringList boxTexts(const EventMarks* marks)
{
    QStringList out;
    for (const auto& m : marks->marks())
        out << m.boxText;
    return out;
}
} // namespace

class TestDashboardMarks : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void marksStandWhereTheEventsHappened();
    void hoverShowsTheTooltip();
    void onlyTheFilteredScopesEvents();
    void aNewAnnotationIsMarkedWithoutWaiting();
    void deploysNeverCrowdOutOperatorMarks();
    void crowdedMarksStayReadable();

private:
    void openWindow();
    void setOperation(const QString& operation);
    void screenshot(QWidget* widget, const QString& name);

    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_owner;
    ConsoleWindow m_console;
    std::vector<Planted> m_planted; // oldest first
    qint64 m_activePauseMs = 0;
};

void TestDashboardMarks::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QSettings(QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"))
        .clear();
    language::apply(QStringLiteral("en"));
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("dashmarks", idem::test::migrated);
    m_owner = m_db->connect();
    idem::migrate(*m_owner, { schema, true });
    plantTask(*m_owner, "acme:charge:f1", "failed", 1, 5, "permanent");

    // The events, through the product's functions, in the order of their times to be.
    idem::Annotation deploy;
    deploy.text = "deploy v2.4 <b>not bold</b>";
    deploy.actor = "alice@laptop";
    idem::annotate(*m_owner, schema, deploy);
    idem::PauseRequest pause;
    pause.tenant = "acme";
    pause.operation = "charge";
    pause.reason = "card network outage";
    pause.actor = "bob@ops";
    idem::setPause(*m_owner, schema, pause);
    idem::resumePause(*m_owner, schema, "acme", "charge", "card network back", "bob@ops");
    // A kind this console has no row for (a newer server's, whose registry of audit actions has
    // more than this console knows): drawn all the same.
    execSql(*m_owner, "INSERT INTO idem.idem_audit_actions (action, keyless) VALUES ('canary', true)");
    execSql(*m_owner,
        "SELECT idem.audit_append('', 'canary', 'canary at 5 % of charge', 'ci-bot', 'null'::jsonb,"
        " jsonb_build_object('tenant', '*', 'operation', 'charge'))");
    const auto v = idem::readRowVersions(*m_owner, schema, { "acme:charge:f1" });
    QVERIFY(v[0]);
    idem::ActionOptions requeue;
    requeue.reason = "card network fixed";
    requeue.actor = "carol@ops";
    QCOMPARE(idem::applyAction(*m_owner, schema, idem::RecoveryAction::Requeue, *v[0], requeue).outcome,
        idem::ActionOutcome::Applied);
    idem::Annotation hotfix;
    hotfix.text = "hotfix applied";
    hotfix.actor = "carol@ops";
    hotfix.tenant = "acme";
    hotfix.operation = "charge";
    idem::annotate(*m_owner, schema, hotfix);

    // Moved to known times, minutes apart, the last two 3 s apart; then every hash again, so the
    // chain verifies as it did.
    const double minutesAgo[] = { 13, 10.5, 8, 5.5, 3, 3 - 3.0 / 60 };
    const auto ids = querySql(*m_owner, "SELECT id FROM idem.task_idempotency_audit ORDER BY id");
    QCOMPARE(ids.size(), pqxx::result::size_type(6));
    for (int i = 0; i < 6; ++i)
        execSql(*m_owner,
            "UPDATE idem.task_idempotency_audit SET at = date_trunc('second', now()) - $2::float8 * interval '1 minute'"
            " WHERE id = $1",
            ids[i][0].as<qint64>(), minutesAgo[i]);
    execSql(*m_owner, R"(
        DO $$
        DECLARE r record; prev text := repeat('0', 64);
        BEGIN
            FOR r IN SELECT id FROM idem.task_idempotency_audit ORDER BY id LOOP
                UPDATE idem.task_idempotency_audit a SET prev_hash = prev,
                       entry_hash = idem.audit_entry_hash(a.id, (extract(epoch FROM a.at) * 1000000)::bigint,
                           a.idempotency_key, a.action, a.reason, a.db_role, a.os_user, a.client_host, a.application,
                           a.before_image, a.after_image, prev)
                 WHERE a.id = r.id RETURNING a.entry_hash INTO prev;
            END LOOP;
        END $$)");
    QVERIFY(idem::verifyChain(*m_owner, schema).ok());

    // And one pause in force now: the latency chart shades it too.
    idem::PauseRequest refund;
    refund.tenant = "acme";
    refund.operation = "refund";
    refund.reason = "refund provider migration";
    refund.actor = "dave@ops";
    m_activePauseMs = idem::setPause(*m_owner, schema, refund).pause.pausedAtUs / 1000;

    for (const auto& row : querySql(*m_owner,
             "SELECT id, floor(extract(epoch FROM at) * 1000)::bigint, action FROM idem.task_idempotency_audit ORDER "
             "BY at, id"))
        m_planted.push_back(
            { row[0].as<qint64>(), row[1].as<qint64>(), QString::fromStdString(row[2].as<std::string>()) });
    QCOMPARE(int(m_planted.size()), 7);
}

void TestDashboardMarks::cleanupTestCase()
{
    m_console.reset();
    m_owner.reset();
    m_db.reset();
}

void TestDashboardMarks::openWindow()
{
    openConsoleWindow(m_console, m_db->dsn());
    if (QTest::currentTestFailed())
        return;
    QTRY_VERIFY_WITH_TIMEOUT(m_console.window->dashboard()->eventWatch()->reads() >= 1, browserTimeoutMs);
}

void TestDashboardMarks::setOperation(const QString& operation)
{
    auto* watch = m_console.window->dashboard()->eventWatch();
    typeDashboardFilter(*m_console.window, QStringLiteral("operationFilter"), operation, [watch] { return watch->reads(); });
}

void TestDashboardMarks::marksStandWhereTheEventsHappened()
{
    openWindow();
    auto* dashboard = m_console.window->dashboard();
    auto* watch = dashboard->eventWatch();
    QVERIFY2(watch->error().isEmpty(), qPrintable(watch->error()));
    QCOMPARE(int(watch->events().size()), 7);
    // Read once, the next read a minute away (not every tick).
    QVERIFY(watch->nextReadInMs() > 30000);

    const auto marksList = dashboard->charts()->eventMarks();
    QCOMPARE(marksList.size(), 6); // five time axes and latency's
    QCOMPARE(marksList.last()->chart(), dashboard->charts()->latency()->chart());
    for (auto* marks : marksList) {
        const QString chart = marks->chart()->title();
        // Six boxes: the requeue and the annotation 3 s after it are one group of two.
        QCOMPARE(boxTexts(marks),
            (QStringList { QStringLiteral("A"), QStringLiteral("P"), QStringLiteral("R"), QStringLiteral("c"),
                QStringLiteral("2"), QStringLiteral("P") }));
        // Every event has its line at its own time, as Qt Charts maps that time.
        std::size_t n = 0;
        for (const auto& m : marks->marks()) {
            QCOMPARE(m.lineX.size(), m.events.size());
            for (std::size_t i = 0; i < m.events.size(); ++i, ++n) {
                const auto& planted = m_planted.at(n);
                QCOMPARE(m.events[i].auditId, planted.id);
                QCOMPARE(m.events[i].atMs, planted.atMs);
                QCOMPARE(m.events[i].kind, planted.action);
                const double expected = xOf(marks->chart(), planted.atMs);
                QVERIFY2(std::abs(m.lineX[i] - expected) < 0.5,
                    qPrintable(QStringLiteral("%1, %2: line at %3, its time at %4")
                                   .arg(chart, planted.action)
                                   .arg(m.lineX[i])
                                   .arg(expected)));
            }
            // The box over its lines, inside the plot.
            QVERIFY(m.box.left() <= m.lineX.back() + 1 && m.box.right() >= m.lineX.front() - 1);
            QVERIFY(marks->chart()->plotArea().contains(m.box));
        }
        QCOMPARE(n, m_planted.size());
        const auto& all = marks->marks();
        for (std::size_t i = 1; i < all.size(); ++i)
            QVERIFY2(all[i - 1].box.right() < all[i].box.left(), qPrintable(chart));

        // What each says.
        QCOMPARE(all[0].colour, eventKindStyle(QStringLiteral("annotate")).colour);
        // No scope for an annotation of everything; the actor as the audit has it: role (who).
        QVERIFY2(all[0].toolTip.contains(QStringLiteral(" · annotation · "))
                && all[0].toolTip.contains(QStringLiteral(" (alice@laptop)")),
            qPrintable(all[0].toolTip));
        QVERIFY(all[0].toolTip.contains(QStringLiteral("deploy v2.4 <b>not bold</b>")));
        QVERIFY2(all[1].toolTip.contains(QStringLiteral("intake paused · acme:charge · "))
                && all[1].toolTip.contains(QStringLiteral("card network outage")),
            qPrintable(all[1].toolTip));
        QVERIFY2(all[2].toolTip.contains(QStringLiteral("intake resumed"))
                && all[2].toolTip.contains(QStringLiteral("card network back")),
            qPrintable(all[2].toolTip));
        // The unknown kind: grey, under its own name, with its text.
        QCOMPARE(all[3].colour, eventKindStyle(QStringLiteral("no-such-kind")).colour);
        QVERIFY(!eventKindStyle(QStringLiteral("canary")).known);
        QVERIFY2(all[3].toolTip.contains(QStringLiteral("canary · *:charge (all tenants) · "))
                && all[3].toolTip.contains(QStringLiteral(" (ci-bot)"))
                && all[3].toolTip.contains(QStringLiteral("canary at 5 % of charge")),
            qPrintable(all[3].toolTip));
        // The group: how many, then each.
        const QStringList group = all[4].toolTip.split(QLatin1Char('\n'));
        QCOMPARE(group.value(0), QStringLiteral("2 events"));
        QVERIFY2(group.value(1).contains(QStringLiteral("requeued · acme:charge · "))
                && group.value(1).contains(QStringLiteral("carol@ops")),
            qPrintable(all[4].toolTip));
        QCOMPARE(group.value(2), QStringLiteral("card network fixed"));
        QVERIFY(group.value(3).contains(QStringLiteral("annotation · acme:charge")));
        QCOMPARE(group.value(4), QStringLiteral("hotfix applied"));
        QCOMPARE(all[4].colour, QColor(0x45, 0x5a, 0x64)); // two kinds: neither's colour
        QVERIFY(all[5].toolTip.contains(QStringLiteral("refund provider migration")));

        // The hoverable items say the same, as escaped rich text.
        const auto items = marks->markItems();
        QCOMPARE(items.size(), int(all.size()));
        QVERIFY2(items[0]->toolTip().contains(QStringLiteral("deploy v2.4 &lt;b&gt;not bold&lt;/b&gt;")),
            qPrintable(items[0]->toolTip()));
        QVERIFY(!items[0]->toolTip().contains(QStringLiteral("<b>not bold")));
    }

    // The pause in force is shaded on the latency chart too, from when it began.
    // (The pause watch's answer may land after the events': wait for it with a bounded clock.)
    QTRY_COMPARE_WITH_TIMEOUT(dashboard->charts()->latency()->pauseBands().size(), 1, 10000);
    const auto bands = dashboard->charts()->latency()->pauseBands();
    QCOMPARE(qint64(bands[0]->upperSeries()->at(0).x()), m_activePauseMs);
    QTRY_COMPARE_WITH_TIMEOUT(dashboard->charts()->pauseBands().size(), 6, 10000);
    screenshot(m_console.window.get(), QStringLiteral("marks-dashboard-en.png"));
    screenshot(dashboard->charts(), QStringLiteral("marks-charts-en.png"));

    language::apply(QStringLiteral("zh_CN"));
    // Written again in the new language: wait for the evidence, not a fixed time.
    QTRY_VERIFY_WITH_TIMEOUT(!dashboard->charts()->eventMarks().first()->marks().empty()
            && !dashboard->charts()->eventMarks().first()->marks()[0].toolTip.contains(QStringLiteral("annotation")),
        10000);
    const auto& zh = dashboard->charts()->eventMarks().first()->marks();
    QVERIFY2(!zh[0].toolTip.contains(QStringLiteral("annotation")), qPrintable(zh[0].toolTip));
    screenshot(dashboard->charts(), QStringLiteral("marks-charts-zh_CN.png"));
    language::apply(QStringLiteral("en"));
    QTest::qWait(100);
}

void TestDashboardMarks::hoverShowsTheTooltip()
{
    auto* charts = m_console.window->dashboard()->charts();
    auto* marks = charts->eventMarks().first();
    auto* view = qobject_cast<QChartView*>(marks->chart()->scene()->views().value(0));
    QVERIFY(view);
    const auto& group = marks->marks().at(4);
    // Over the group's box: its tooltip, as a person hovering it sees it.
    const QPoint at = view->mapFromScene(marks->chart()->mapToScene(group.box.center()));
    QHelpEvent help(QEvent::ToolTip, at, view->viewport()->mapToGlobal(at));
    QApplication::sendEvent(view->viewport(), &help);
    QTRY_VERIFY(QToolTip::isVisible());
    QCOMPARE(QToolTip::text(), marks->markItems().at(4)->toolTip());
    QVERIFY(QToolTip::text().contains(QStringLiteral("hotfix applied")));
    // The tooltip as shown (grabbed at once: it hides, and goes, by itself).
    const QString dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR");
    for (QWidget* w : QApplication::topLevelWidgets())
        if (!dir.isEmpty() && w->inherits("QTipLabel") && w->isVisible())
            QVERIFY(w->grab().save(dir + QStringLiteral("/marks-tooltip-en.png")));
    QToolTip::hideText();
    QTRY_VERIFY(!QToolTip::isVisible());
    // On a line, below the box: the same.
    const QPoint onLine = view->mapFromScene(
        marks->chart()->mapToScene(QPointF(group.lineX.front(), marks->chart()->plotArea().center().y())));
    QHelpEvent help2(QEvent::ToolTip, onLine, view->viewport()->mapToGlobal(onLine));
    QApplication::sendEvent(view->viewport(), &help2);
    QTRY_VERIFY(QToolTip::isVisible());
    QCOMPARE(QToolTip::text(), marks->markItems().at(4)->toolTip());
    QToolTip::hideText();
    QTRY_VERIFY(!QToolTip::isVisible());
    // Away from every mark: the chart's own tooltip, which explains the letters.
    const double between = (marks->marks().at(0).box.right() + marks->marks().at(1).box.left()) / 2;
    const QPoint away
        = view->mapFromScene(marks->chart()->mapToScene(QPointF(between, marks->chart()->plotArea().center().y())));
    QHelpEvent help3(QEvent::ToolTip, away, view->viewport()->mapToGlobal(away));
    QApplication::sendEvent(view->viewport(), &help3);
    QTRY_VERIFY(QToolTip::isVisible());
    QVERIFY2(QToolTip::text().contains(QStringLiteral("A annotation"))
            && QToolTip::text().contains(QStringLiteral("Q requeued")),
        qPrintable(QToolTip::text()));
    QToolTip::hideText();
}

void TestDashboardMarks::onlyTheFilteredScopesEvents()
{
    // refund: the annotation for everyone and refund's own pause; charge's events are not its.
    setOperation(QStringLiteral("refund"));
    auto* dashboard = m_console.window->dashboard();
    QTRY_COMPARE_WITH_TIMEOUT(int(dashboard->eventWatch()->events().size()), 2, browserTimeoutMs);
    for (auto* marks : dashboard->charts()->eventMarks()) {
        QCOMPARE(boxTexts(marks), (QStringList { QStringLiteral("A"), QStringLiteral("P") }));
        QCOMPARE(marks->marks().at(0).events.at(0).auditId, m_planted.at(0).id);
        QCOMPARE(marks->marks().at(1).events.at(0).auditId, m_planted.at(6).id);
    }
    setOperation(QString());
    QTRY_COMPARE_WITH_TIMEOUT(int(dashboard->eventWatch()->events().size()), 7, browserTimeoutMs);
}

void TestDashboardMarks::aNewAnnotationIsMarkedWithoutWaiting()
{
    // The minute's read is a minute away; the audit head the next tick reads is new, so the
    // marks are read again now.
    auto* watch = m_console.window->dashboard()->eventWatch();
    QVERIFY(watch->nextReadInMs() > 30000);
    idem::Annotation a;
    a.text = "config change: pool size 40";
    a.actor = "erin@ops";
    const auto e = idem::annotate(*m_owner, schema, a);
    QTRY_COMPARE_WITH_TIMEOUT(int(watch->events().size()), 8, browserTimeoutMs);
    for (auto* marks : m_console.window->dashboard()->charts()->eventMarks()) {
        const auto& last = marks->marks().back();
        QCOMPARE(last.events.back().auditId, e.auditId);
        QCOMPARE(last.events.back().atMs, e.atUs / 1000);
        QVERIFY(last.toolTip.contains(QStringLiteral("config change: pool size 40")));
    }
}

// Issue 40 item 2: 5,100 deploys, older than every operator event of the window (as a worker
// login reporting versions before the operators acted would leave them), crowded every pause and
// annotation off the charts and the console never said so. Each kind is bounded on its own now:
// every operator event keeps its mark, the deploys their newest 5,000, and the charts say how
// many are not marked.
void TestDashboardMarks::deploysNeverCrowdOutOperatorMarks()
{
    constexpr int deploys = EventWatch::maxEvents + 100;
    execSql(*m_owner,
        "INSERT INTO idem.idem_deploys (at, worker, old_version, new_version, db_role)"
        " SELECT now() - interval '14 minutes' + g * interval '10 milliseconds', 'spam', NULL, 'v' || g, 'idem_t_worker'"
        "   FROM generate_series(1, $1) g",
        deploys);
    const auto cleanup = qScopeGuard([this] { execSql(*m_owner, "DELETE FROM idem.idem_deploys WHERE worker = 'spam'"); });
    auto* dashboard = m_console.window->dashboard();
    auto* watch = dashboard->eventWatch();
    const auto operatorEvents = querySql(*m_owner,
        "SELECT id FROM idem.task_idempotency_audit WHERE at > now() - interval '15 minutes' ORDER BY at, id");
    QVERIFY(operatorEvents.size() >= 8);
    watch->refreshNow();
    QTRY_COMPARE_WITH_TIMEOUT(int(watch->events().size()), int(operatorEvents.size()) + EventWatch::maxEvents,
        browserTimeoutMs);
    // Every operator event is read and marked, the pause included.
    std::set<qint64> read;
    for (const auto& e : watch->events())
        if (e.kind != QLatin1String("deploy"))
            read.insert(e.auditId);
    for (const auto& row : operatorEvents)
        QVERIFY2(read.count(row[0].as<qint64>()), qPrintable(QString::number(row[0].as<qint64>())));
    const qint64 pauseId = m_planted.at(1).id;
    QCOMPARE(m_planted.at(1).action, QStringLiteral("pause"));
    for (auto* marks : dashboard->charts()->eventMarks()) {
        bool marked = false;
        for (const auto& m : marks->marks())
            for (const auto& e : m.events)
                marked = marked || (e.auditId == pauseId && e.kind == QLatin1String("pause"));
        QVERIFY(marked);
    }
    // And what the bound left out is said under the charts.
    auto* omitted = dashboard->charts()->findChild<QLabel*>(QStringLiteral("eventsOmitted"));
    QVERIFY(omitted);
    QTRY_VERIFY_WITH_TIMEOUT(!omitted->isHidden(), browserTimeoutMs);
    QVERIFY2(omitted->text().startsWith(QStringLiteral("100 more events in this window not marked")),
        qPrintable(omitted->text()));
    QCOMPARE(watch->reading().omitted, qint64(100));
    QCOMPARE(querySql(*m_owner, "SELECT count(*) FROM idem.idem_deploys WHERE worker = 'spam'")[0][0].as<int>(), deploys);
    screenshot(m_console.window.get(), QStringLiteral("marks-omitted.png"));

    // Gone again: nothing is said.
    execSql(*m_owner, "DELETE FROM idem.idem_deploys WHERE worker = 'spam'");
    watch->refreshNow();
    QTRY_VERIFY_WITH_TIMEOUT(omitted->isHidden(), browserTimeoutMs);
    QCOMPARE(int(watch->events().size()), int(operatorEvents.size()));
}

void TestDashboardMarks::crowdedMarksStayReadable()
{
    // A bare chart over 15 minutes, 400 px wide.
    QChart* chart = new QChart;
    auto* x = new QDateTimeAxis;
    auto* y = new QValueAxis;
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    auto* line = new QLineSeries;
    chart->addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
    chart->legend()->hide();
    const qint64 t0 = QDateTime(QDate(2024, 5, 1), QTime(10, 0)).toMSecsSinceEpoch();
    x->setRange(QDateTime::fromMSecsSinceEpoch(t0), QDateTime::fromMSecsSinceEpoch(t0 + 15 * 60000));
    QChartView view(chart);
    view.resize(400, 260);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    auto* marks = new EventMarks(chart, x);

    std::vector<ChartEvent> events;
    const auto add = [&](qint64 at, const char* kind, const QString& text) {
        events.push_back({ qint64(events.size() + 1), at, QString::fromLatin1(kind), QStringLiteral("acme"),
            QStringLiteral("charge"), QStringLiteral("op (carol)"), text });
    };
    // A bulk requeue: 150 keys within a second, at 2 min.
    for (int i = 0; i < 150; ++i)
        add(t0 + 2 * 60000 + i * 5, "requeue", QStringLiteral("key %1").arg(i));
    // Three kinds within 20 s at 7 min, then one on its own at 7.5 min (close, not touching).
    add(t0 + 7 * 60000, "pause", QStringLiteral("p"));
    add(t0 + 7 * 60000 + 10000, "annotate", QStringLiteral("a"));
    add(t0 + 7 * 60000 + 20000, "deploy", QStringLiteral("v9"));
    add(t0 + 7 * 60000 + 30000 + 60000, "resume", QStringLiteral("r"));
    // Before the window's start (the axis starts earlier): not drawn.
    add(t0 + 30000, "fail", QStringLiteral("too early"));
    std::rotate(events.begin(), events.end() - 1, events.end()); // oldest first
    marks->setEvents(events, t0 + 60000);

    const auto& all = marks->marks();
    QCOMPARE(boxTexts(marks), (QStringList { QStringLiteral("99+"), QStringLiteral("3"), QStringLiteral("R") }));
    QCOMPARE(int(all[0].events.size()), 150);
    QCOMPARE(all[0].colour, eventKindStyle(QStringLiteral("requeue")).colour); // one kind: its colour
    const QStringList tip = all[0].toolTip.split(QLatin1Char('\n'));
    QCOMPARE(tip.first(), QStringLiteral("150 events"));
    QCOMPARE(tip.last(), QStringLiteral("… and 142 more"));
    QCOMPARE(tip.size(), 1 + 8 * 2 + 1);
    QCOMPARE(all[1].colour, QColor(0x45, 0x5a, 0x64));
    // Boxes apart and inside the plot, each over its own lines.
    for (std::size_t i = 0; i < all.size(); ++i) {
        QVERIFY(chart->plotArea().contains(all[i].box));
        QVERIFY(all[i].box.width() >= EventMarks::boxMinWidth);
        if (i > 0)
            QVERIFY(all[i - 1].box.right() < all[i].box.left());
    }
    // The axis moves on (the window slides): the marks follow it.
    const double before = all[2].lineX.front();
    x->setRange(QDateTime::fromMSecsSinceEpoch(t0 + 60000), QDateTime::fromMSecsSinceEpoch(t0 + 16 * 60000));
    QVERIFY(marks->marks().at(2).lineX.front() < before);
    QCOMPARE(std::abs(marks->marks().at(2).lineX.front() - xOf(chart, t0 + 7 * 60000 + 90000)) < 0.5, true);
    // Resized: laid out again to the new plot.
    view.resize(800, 260);
    QTRY_VERIFY(std::abs(marks->marks().at(2).lineX.front() - xOf(chart, t0 + 7 * 60000 + 90000)) < 0.5
        && marks->marks().at(2).lineX.front() > before);
    screenshot(&view, QStringLiteral("marks-crowded.png"));
}

void TestDashboardMarks::screenshot(QWidget* widget, const QString& name)
{
    // IDEM_SCREENSHOT_DIR: the pictures, to look at (not checked).
    const QString dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR");
    if (dir.isEmpty())
        return;
    QTest::qWait(300);
    QVERIFY(widget->grab().save(dir + QLatin1Char('/') + name));
}

QTEST_MAIN(TestDashboardMarks)
#include "tst_dashboard_marks.moc"
