#include <QtTest>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QTableView>

#include "core/canonicaljson.h"
#include "core/digest.h"
#include "core/fieldprints.h"
#include "core/key.h"
#include "core/runner.h"
#include "core/taskstore.h"
#include "models/taskbrowsermodel.h"
#include "operations/fieldcompare.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "tests/support/cliprocess.h"
#include "views/taskbrowserwidget.h"
#include "views/taskdetailpane.h"

using idem::console::ConsoleSession;
using idem::console::TaskBrowserModel;
using idem::console::TaskBrowserWidget;
using namespace idem::test;

// Which field differed (schema v34, issue 46 item 3): a C++ worker opts its "charge" operation in
// to field fingerprints; a second request with the same key and one field changed conflicts; the
// Tasks page's detail and idemctl tasks show (text and --json) name the field that differed and
// the ones that matched; the database holds fingerprints and names, never a value; names are
// escaped and cut; an operation that did not opt in keeps nothing.
class TestFieldPrints : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void conflictNamesTheFieldThatDiffered();
    void hostileNamesAreEscapedAndCut();
    void operationNotOptedInKeepsNothing();

private:
    // Runs the request to success (or to its first answer) through a worker that fingerprints
    // "charge"; returns the outcome's kind.
    idem::RunOutcome::Kind run(const std::string& key, const nlohmann::json& request, idem::StoreOptions options);
    QString detailText(const std::string& key);
    std::string heldBytes(const std::string& key);
    static idem::StoreOptions optedIn();
    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    std::unique_ptr<ConsoleSession> m_session;
};

namespace {
const std::string fieldKey = "console-test-field-key-0123456789";
}

idem::StoreOptions TestFieldPrints::optedIn()
{
    idem::StoreOptions o;
    o.fingerprintFieldsOf = { "charge" };
    o.fieldKey = fieldKey;
    return o;
}

void TestFieldPrints::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<ScratchDatabase>("fieldprints", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    m_session = std::make_unique<ConsoleSession>();
    QVERIFY(connectSession(*m_session, m_db->dsn()));
}

void TestFieldPrints::cleanupTestCase()
{
    m_session.reset();
    m_conn.reset();
    m_db.reset();
}

idem::RunOutcome::Kind TestFieldPrints::run(const std::string& key, const nlohmann::json& request, idem::StoreOptions options)
{
    auto conn = m_db->connect();
    idem::TaskStore store(*conn, std::move(options));
    idem::RunOptions run;
    run.request = idem::canonicalJson(request);
    return idem::runTask(store, idem::TaskKey::parse(key), idem::requestDigest(request),
        [](pqxx::work&, const idem::TaskContext&) { return std::string(R"({"paid":true})"); }, run)
        .kind;
}

QString TestFieldPrints::detailText(const std::string& key)
{
    TaskBrowserWidget widget(m_session.get(), m_session.get());
    widget.resize(1100, 700);
    widget.show();
    QSignalSpy pages(widget.model(), &TaskBrowserModel::pageLoaded);
    idem::TaskFilter f;
    f.keyPrefix = key;
    widget.applyFilter(f);
    if (!pages.wait(browserTimeoutMs))
        return QStringLiteral("<no page>");
    const int row = widget.model()->rowOfKey(QString::fromStdString(key));
    if (row < 0)
        return QStringLiteral("<no row>");
    widget.view()->selectRow(row);
    auto* conflicts = widget.findChild<QLabel*>(QStringLiteral("detailConflicts"));
    if (!QTest::qWaitFor([&] { return conflicts->text().contains(QStringLiteral("Fields:")); }, browserTimeoutMs))
        return conflicts->text();
    if (const QByteArray dir = qgetenv("IDEM_SCREENSHOT_DIR"); !dir.isEmpty()) {
        QTest::qWait(200);
        widget.grab().save(QDir(QString::fromLocal8Bit(dir))
                               .filePath(QStringLiteral("fields-%1.png").arg(QString::fromStdString(key).section(':', 2))));
    }
    return conflicts->text();
}

std::string TestFieldPrints::heldBytes(const std::string& key)
{
    const auto r = querySql(*m_conn,
        "SELECT coalesce((SELECT fields::text || field_count FROM idem.idem_request_fields WHERE idempotency_key = $1), '')"
        " || coalesce((SELECT coalesce(last_fields::text, '') || coalesce(last_field_count::text, '')"
        " FROM idem.task_idempotency_conflicts WHERE idempotency_key = $1), '')",
        key);
    return r[0][0].as<std::string>();
}

void TestFieldPrints::conflictNamesTheFieldThatDiffered()
{
    const std::string key = "shop:charge:order-7";
    const nlohmann::json first = { { "order_id", "order-7" }, { "amount_cents", 1250 }, { "currency", "EUR" } };
    QCOMPARE(run(key, first, optedIn()), idem::RunOutcome::Kind::Succeeded);
    nlohmann::json changed = first;
    changed["amount_cents"] = 1390;
    QCOMPARE(run(key, changed, optedIn()), idem::RunOutcome::Kind::Conflict);

    // The database holds the fingerprints the library computes (the shared vectors check those
    // against Python and TypeScript), and none of the values.
    const auto kept = querySql(*m_conn,
        "SELECT f.fields = $2::jsonb, f.field_count, c.last_fields = $3::jsonb, c.last_field_count, c.n"
        " FROM idem.idem_request_fields f JOIN idem.task_idempotency_conflicts c USING (idempotency_key)"
        " WHERE f.idempotency_key = $1",
        key, idem::fieldFingerprints(idem::canonicalJson(first), fieldKey).json,
        idem::fieldFingerprints(idem::canonicalJson(changed), fieldKey).json);
    QCOMPARE(kept.size(), 1);
    QVERIFY(kept[0][0].as<bool>());
    QCOMPARE(kept[0][1].as<int>(), 3);
    QVERIFY(kept[0][2].as<bool>());
    QCOMPARE(kept[0][3].as<int>(), 3);
    QCOMPARE(kept[0][4].as<int>(), 1);
    const std::string held = heldBytes(key);
    QVERIFY(held.find("amount_cents") != std::string::npos);
    for (const char* value : { "1250", "1390", "EUR", "order-7" })
        QVERIFY2(held.find(value) == std::string::npos, value);

    // The Tasks page's detail.
    const QString shown = detailText(key);
    QVERIFY2(shown.contains(QStringLiteral("Fields: <b>amount_cents</b> differs; <b>currency, order_id</b> same")),
        qPrintable(shown));

    // idemctl tasks show, text and --json.
    const auto text = runProgram(idemctlPath(), { "tasks", "show", QString::fromStdString(key), "--dsn",
                                                    QString::fromStdString(m_db->dsn()) });
    QVERIFY2(text.exitCode == 0, qPrintable(describe(text)));
    QVERIFY2(text.out.contains(QStringLiteral("  fields    amount_cents differs; currency, order_id same\n")),
        qPrintable(text.out));
    const auto json = runProgram(idemctlPath(), { "tasks", "show", QString::fromStdString(key), "--dsn",
                                                    QString::fromStdString(m_db->dsn()), "--json" });
    QVERIFY2(json.exitCode == 0, qPrintable(describe(json)));
    const auto fields = QJsonDocument::fromJson(json.out.toUtf8()).object().value(QStringLiteral("fields")).toObject();
    QCOMPARE(fields.value(QStringLiteral("differ")).toArray(), QJsonArray({ QStringLiteral("amount_cents") }));
    QCOMPARE(fields.value(QStringLiteral("same")).toArray(),
        QJsonArray({ QStringLiteral("currency"), QStringLiteral("order_id") }));
    QCOMPARE(fields.value(QStringLiteral("not_compared")).toInt(), 0);
}

void TestFieldPrints::hostileNamesAreEscapedAndCut()
{
    const std::string key = "shop:charge:order-8";
    const std::string control = std::string("note\x1b[31m\n\xe2\x80\xae");
    const std::string longName(200, 'L');
    const std::string tooLong(300, 'T'); // over 256 bytes: counted, not fingerprinted
    nlohmann::json first = { { control, "a" }, { longName, 1 }, { tooLong, 1 }, { "qty", 1 } };
    QCOMPARE(run(key, first, optedIn()), idem::RunOutcome::Kind::Succeeded);
    nlohmann::json changed = first;
    changed[control] = "b";
    QCOMPARE(run(key, changed, optedIn()), idem::RunOutcome::Kind::Conflict);
    const QString shown = detailText(key);
    QVERIFY2(shown.contains(QStringLiteral("<b>note\\x1b[31m\\x0a\\u202e</b> differs")), qPrintable(shown));
    QVERIFY2(shown.contains(QStringLiteral("<b>") + QString(79, QLatin1Char('L')) + QChar(0x2026) + QStringLiteral(", qty</b> same")),
        qPrintable(shown));
    QVERIFY2(shown.contains(QStringLiteral("1 field(s) not compared")), qPrintable(shown));
    QVERIFY(!shown.contains(QChar(0x1b)) && !shown.contains(QChar(0x202e)));
    const auto text = runProgram(idemctlPath(), { "tasks", "show", QString::fromStdString(key), "--dsn",
                                                    QString::fromStdString(m_db->dsn()) });
    QVERIFY2(text.exitCode == 0, qPrintable(describe(text)));
    QVERIFY2(text.out.contains(QStringLiteral("  fields    note\\x1b[31m\\x0a\\u202e differs; ")), qPrintable(text.out));
    QVERIFY2(text.out.contains(QStringLiteral("1 field not compared")), qPrintable(text.out));
    QVERIFY(!text.out.contains(QChar(0x1b)));
    QVERIFY(text.out.size() < 2000);
}

void TestFieldPrints::operationNotOptedInKeepsNothing()
{
    const std::string key = "shop:refund:order-9";
    QCOMPARE(run(key, { { "amount_cents", 5 } }, optedIn()), idem::RunOutcome::Kind::Succeeded);
    QCOMPARE(run(key, { { "amount_cents", 6 } }, optedIn()), idem::RunOutcome::Kind::Conflict);
    QCOMPARE(heldBytes(key), std::string());
    QCOMPARE(querySql(*m_conn, "SELECT n FROM idem.task_idempotency_conflicts WHERE idempotency_key = $1", key)[0][0]
                 .as<int>(),
        1);
    const auto text = runProgram(idemctlPath(), { "tasks", "show", QString::fromStdString(key), "--dsn",
                                                    QString::fromStdString(m_db->dsn()) });
    QVERIFY(!text.out.contains(QStringLiteral("fields ")));
}

QTEST_MAIN(TestFieldPrints)
#include "tst_fieldprints.moc"
