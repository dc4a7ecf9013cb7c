#include <QtTest>

#include <QAbstractItemModelTester>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTextBrowser>
#include <QXYSeries>
#include <QChartView>
#include <QDateTimeAxis>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPointer>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "operations/actions.h"
#include "operations/events.h"
#include "operations/pauses.h"
#include "operations/latency.h"
#include "operations/tasklist.h"
#include "schema/migrate.h"
#include "core/sha256.h"
#include "operations/signing.h"
#include "operations/snapshot.h"
#include "operations/snapshotbundle.h"
#include "operations/snapshotjson.h"
#include "core/taskstore.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/snapshotauditmodel.h"
#include "models/snapshottaskmodel.h"
#include "tests/console/roundticks.h"
#include "tests/support/bundleforge.h"
#include "tests/support/taskrows.h"
#include "tests/support/testdb.h"
#include "views/chartpanel.h"
#include "views/dashboardwidget.h"
#include "views/eventmarks.h"
#include "views/latencychart.h"
#include "views/snapshotauditpage.h"
#include "views/snapshottaskpane.h"
#include "views/snapshottaskspage.h"
#include "views/snapshotworkpage.h"
#include "views/snapshotwindow.h"
#include "views/tilewidget.h"
#include "views/trustedkeysdialog.h"
#include "models/trustedkeystore.h"

using namespace idem::console;
using idem::test::roundTicksProblem;
using idem::test::ScratchDatabase;

// File > Open snapshot: a bundle exported from a database in a known state opens read-only in
// the console's own dashboard, task and audit views, says whose snapshot it is and when, and
// whether it verifies; broken bundles give a clear message and no window; nothing connects.
class TestSnapshotViewer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void cleanup();

    void opensWhatWasExported();
    void tamperedBundleOpensWithRedBanner();
    void resignedByAnotherKeyIsNeverGreen();
    void forgedEventsResignedByTrustedKeyAreFlagged();
    void brokenBundlesSayWhyAndOpenNothing_data();
    void brokenBundlesSayWhyAndOpenNothing();
    void oldestFormatOpens();
    void largeBundleOpensOffTheUiThread();
    void modelsPassTheTester();
    void closesWithCtrlWAndEscape();
    void drawsLatencyAndEventsOfItsWindow();
    void showsTheIncidentsWork();

private:
    void act(const std::string& key, idem::RecoveryAction action, const std::string& reason);
    QString copyBundle(const QString& name);
    SnapshotWindow* open(const QString& dir);
    QString openFails(const QString& dir);
    void save(QWidget* w, const char* name);
    int connectionsToDatabase();

    std::unique_ptr<ScratchDatabase> m_db;
    std::unique_ptr<pqxx::connection> m_conn;
    QTemporaryDir m_tmp;
    QString m_bundle; // signed, from the known state
    idem::SnapshotData m_data; // what was exported
    std::string m_headHash; // the audit's head in the database
    std::optional<idem::SigningKey> m_key; // signed m_bundle; trusted by the console
};

namespace {
SnapshotWindow* findWindow()
{
    for (QWidget* w : QApplication::topLevelWidgets())
        if (auto* s = qobject_cast<SnapshotWindow*>(w))
            return s;
    return nullptr;
}

QString tileText(SnapshotWindow* w, Tile t) { return w->dashboard()->tile(t)->valueText(); }

QStringList column(const QAbstractItemModel* m, int column, int role = Qt::DisplayRole)
{
    QStringList out;
    for (int r = 0; r < m->rowCount(); ++r)
        out << m->index(r, column).data(role).toString();
    return out;
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), bytes.size());
}

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
} // namespace

void TestSnapshotViewer::act(const std::string& key, idem::RecoveryAction action, const std::string& reason)
{
    const auto v = idem::readRowVersions(*m_conn, idem::SchemaName(), { key });
    QVERIFY(v[0]);
    idem::ActionOptions o;
    o.reason = reason;
    o.actor = "oncall@laptop";
    QCOMPARE(idem::applyAction(*m_conn, idem::SchemaName(), action, *v[0], o).outcome, idem::ActionOutcome::Applied);
}

void TestSnapshotViewer::initTestCase()
{
    IDEM_REQUIRE_DATABASE();
    QVERIFY(m_tmp.isValid());
    // The console's settings (its trusted keys among them) in a directory of this run only. Not
    // QStandardPaths' test mode: that puts every test's settings in one ~/.qttest, where a test
    // running beside this one (ctest -j 2) rewrote the trusted keys under it.
    qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_tmp.filePath(QStringLiteral("config"))));
    m_db = std::make_unique<ScratchDatabase>("snapshotviewer", idem::test::migrated);
    m_conn = m_db->connect();
    idem::migrate(*m_conn, { idem::SchemaName(), false });
    {
        pqxx::work w(*m_conn);
        w.exec(idem::test::plantTasksSql(R"(
                ('ta:charge:p1', 'processing', interval '10 minutes', 1, NULL, NULL, NULL, interval '1 minute'),
                ('tb:refund:p2', 'processing', interval '10 minutes', 2, NULL, NULL, NULL, interval '3 minutes'),
                ('ta:charge:e1', 'processing', interval '-1 minute', 1, NULL, NULL, NULL, interval '2 minutes'),
                ('tb:ship:e2', 'processing', interval '-5 minutes', 3, NULL, NULL, NULL, interval '20 minutes'),
                ('ta:charge:u1', 'retryable_failed', NULL, 2, 'unknown', 'answer lost', NULL, interval '6 minutes'),
                ('ta:charge:f1', 'failed', NULL, 1, 'permanent', 'card declined', '{"receipt": "RECEIPT-42"}',
                    interval '8 minutes'),
                ('tb:refund:f2', 'failed', NULL, 5, 'retryable', 'gave up', NULL, interval '9 minutes'),
                ('tc:refund:f3', 'failed', NULL, 1, 'permanent', 'bad account', NULL, interval '12 minutes')
        )"));
        w.exec(R"(
            INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts,
                created_at, updated_at)
            SELECT 'ta:charge:s' || i, 'v1:' || repeat('b', 64), 'succeeded', '{"ok": true}', 1,
                   now() - interval '1 hour', now() - interval '30 minutes'
            FROM generate_series(1, 20) i
        )");
        w.exec(R"(
            -- through add_counters(), the workers' flush: it writes the totals the tick reads too
            SELECT idem.add_counters(jsonb_agg(jsonb_build_object('m', extract(epoch FROM date_trunc('minute', now()) - back)::bigint,
                   't', t, 'o', o, 'w', oc, 'n', n)))
            FROM (VALUES
                (interval '1 minute', 'ta', 'charge', 'acquired', 10), (interval '1 minute', 'ta', 'charge', 'conflict', 2),
                (interval '2 minutes', 'tb', 'refund', 'replayed', 4),
                (interval '1 minute', 'ta', 'charge', 'retry_failed', 7), (interval '3 minutes', 'tb', 'refund', 'retry_failed', 3)
            ) AS v(back, t, o, oc, n)
        )");
        w.commit();
    }
    // Real recovery actions: a hash-chained audit the viewer can recheck offline.
    act("ta:charge:e1", idem::RecoveryAction::Release, "worker host died");
    act("tc:refund:f3", idem::RecoveryAction::Requeue, "account fixed, retry");
    {
        pqxx::read_transaction t(*m_conn);
        m_headHash = t.exec("SELECT entry_hash FROM idem.task_idempotency_audit ORDER BY id DESC LIMIT 1")[0][0]
                         .as<std::string>();
    }

    idem::SnapshotOptions o;
    idem::SnapshotContext c;
    c.producer = "tst_snapshotviewer";
    c.conninfo = m_db->dsn();
    // The exporting console's: red at 2; the ratio as snapshot.json stores it, a fraction (amber
    // from 30 %, red from 50 %), while the tile shows percent.
    c.thresholds = { { "expired_leases", 1.0, 2.0 }, { "duplicate_ratio", 0.3, 0.5 } };
    m_data = idem::readSnapshot(*m_conn, o, c);
    m_bundle = m_tmp.filePath(QStringLiteral("bundle"));
    m_key = idem::SigningKey::generate();
    idem::writeSnapshotBundle(m_bundle.toStdString(), m_data, false, &*m_key);
    idem::TrustedKeys trusted;
    trusted.addPem("incident laptop", m_key->publicPem());
    saveTrustedKeys(trusted);
    QCOMPARE(loadTrustedKeys().keys.size(), std::size_t(1));
}

void TestSnapshotViewer::cleanupTestCase()
{
    m_conn.reset();
    m_db.reset();
}

void TestSnapshotViewer::cleanup()
{
    for (QWidget* w : QApplication::topLevelWidgets())
        if (qobject_cast<SnapshotWindow*>(w) || qobject_cast<QMessageBox*>(w))
            delete w;
}

void TestSnapshotViewer::save(QWidget* w, const char* name)
{
    const QImage image = w->grab().toImage();
    QVERIFY(!image.isNull());
    const auto dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR");
    if (!dir.isEmpty())
        QVERIFY(image.save(QDir(dir).filePath(QString::fromLatin1(name))));
}

int TestSnapshotViewer::connectionsToDatabase()
{
    pqxx::read_transaction t(*m_conn);
    return t.exec_params("SELECT count(*) FROM pg_stat_activity WHERE datname = $1", m_db->name())[0][0].as<int>();
}

QString TestSnapshotViewer::copyBundle(const QString& name)
{
    const QString to = m_tmp.filePath(name);
    QDirIterator it(m_bundle, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString from = it.next();
        const QString target = QDir(to).filePath(QDir(m_bundle).relativeFilePath(from));
        QDir().mkpath(QFileInfo(target).path());
        if (!QFile::copy(from, target))
            return {};
    }
    return to;
}

SnapshotWindow* TestSnapshotViewer::open(const QString& dir)
{
    QWidget parent;
    SnapshotOpener* opener = openSnapshotWindow(dir, &parent);
    QSignalSpy opened(opener, &SnapshotOpener::opened);
    QSignalSpy failed(opener, &SnapshotOpener::failed);
    if (!opened.wait(20000))
        qWarning() << "not opened:" << (failed.isEmpty() ? QString() : failed.first().at(1).toString());
    return findWindow();
}

QString TestSnapshotViewer::openFails(const QString& dir)
{
    auto* parent = new QWidget;
    SnapshotOpener* opener = openSnapshotWindow(dir, parent);
    QSignalSpy failed(opener, &SnapshotOpener::failed);
    if (!failed.wait(20000)) {
        delete parent;
        return QStringLiteral("(no failure)");
    }
    auto* box = parent->findChild<QMessageBox*>(QStringLiteral("snapshotOpenError"));
    const QString text = box ? box->text() : QStringLiteral("(no message box)");
    if (box && box->isVisible())
        save(box, "snapshot-open-error.png");
    delete parent;
    return text;
}

void TestSnapshotViewer::opensWhatWasExported()
{
    const int before = connectionsToDatabase();
    SnapshotWindow* w = open(m_bundle);
    QVERIFY(w);
    QVERIFY(w->isVisible());

    // Marked as a snapshot of this database, with its time, read-only, verified.
    const QDateTime at = snapshotTakenAt(m_data);
    QVERIFY(at.isValid());
    const QString banner = w->banner()->text();
    QVERIFY2(banner.contains(QString::fromStdString(m_db->name())), qPrintable(banner));
    QVERIFY2(banner.contains(at.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) + QStringLiteral(" UTC")),
        qPrintable(banner));
    QVERIFY(banner.contains(at.toLocalTime().toString(QStringLiteral("HH:mm:ss"))));
    QVERIFY(banner.contains(QStringLiteral("read-only")));
    QVERIFY(banner.contains(QStringLiteral("tst_snapshotviewer")));
    QVERIFY2(w->verified(), qPrintable(w->verificationBanner()->text()));
    QVERIFY(w->verificationBanner()->text().startsWith(QStringLiteral("Signature valid, by the trusted key “incident laptop”")));
    QVERIFY(w->trustSignerButton()->isHidden());
    QVERIFY(w->windowTitle().contains(QStringLiteral("read-only")));

    // Dashboard: the live tiles, fed from the snapshot's figures, static, coloured by its thresholds.
    QVERIFY(w->dashboard()->model()->isStatic());
    QCOMPARE(tileText(w, Tile::Processing), QStringLiteral("2"));
    QCOMPARE(tileText(w, Tile::ExpiredLeases), QStringLiteral("2"));
    QCOMPARE(tileText(w, Tile::Failed), QStringLiteral("2"));
    QCOMPARE(tileText(w, Tile::Uncertain), QStringLiteral("1"));
    QCOMPARE(tileText(w, Tile::DigestConflicts), QStringLiteral("2"));
    QCOMPARE(tileText(w, Tile::DuplicateRatio), QLocale().toString(37.5, 'f', 1) + QStringLiteral(" %"));
    QCOMPARE(w->dashboard()->tile(Tile::ExpiredLeases)->level(), Level::Critical); // the snapshot's threshold, not 10
    // 37.5 % against amber 30 % / red 50 %: amber, as the exporting console showed it.
    QCOMPARE(w->dashboard()->tile(Tile::DuplicateRatio)->level(), Level::Warning);
    QVERIFY(!w->dashboard()->tile(Tile::Processing)->stale());
    QVERIFY(w->dashboard()->tile(Tile::Processing)->toolTip().contains(QStringLiteral("As of ")));
    QVERIFY(w->dashboard()->statusText().contains(at.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))));
    QVERIFY(w->dashboard()->findChild<QWidget*>(QStringLiteral("dashboardControls"))->isHidden());
    // The counters history feeds the per-minute charts: 10 new claims, 4 replays.
    const auto sum = [&](const char* series) {
        double s = 0;
        for (const auto& p : w->dashboard()->charts()->series(QString::fromLatin1(series))->points())
            s += p.y();
        return s;
    };
    QCOMPARE(sum("new"), 10.0);
    QCOMPARE(sum("replay"), 4.0);
    // Failed retries as snapshot.json holds them, minute by minute (they were drawn as zero).
    std::map<qint64, double> retryFailed;
    for (const auto& c : m_data.history.rows)
        if (c.outcome == "retry_failed")
            retryFailed[QDateTime::fromString(QString::fromStdString(c.bucket), Qt::ISODateWithMs).toMSecsSinceEpoch()]
                += double(c.n);
    QCOMPARE(retryFailed.size(), std::size_t(2));
    std::map<qint64, double> drawn;
    for (const auto& p : w->dashboard()->charts()->series(QStringLiteral("failedretries"))->points())
        if (p.y() != 0)
            drawn[qint64(p.x())] = p.y();
    QCOMPARE(drawn, retryFailed);
    // Time ticks on round minutes, local time.
    for (auto* view : w->dashboard()->charts()->findChildren<QChartView*>()) {
        for (auto* axis : view->chart()->axes(Qt::Horizontal)) {
            auto* x = qobject_cast<QDateTimeAxis*>(axis);
            if (!x)
                continue;
            const QString problem = roundTicksProblem(x);
            QVERIFY2(problem.isEmpty(), qPrintable(view->chart()->title() + QLatin1String(": ") + problem));
        }
    }
    w->pages()->setCurrentWidget(w->dashboard());
    save(w, "snapshot-dashboard.png");

    // A tile opens its row set on the Tasks page, in the set's order, with its bound stated.
    QTest::mouseClick(w->dashboard()->tile(Tile::ExpiredLeases), Qt::LeftButton);
    QCOMPARE(w->pages()->currentWidget(), w->tasks());
    QCOMPARE(w->tasks()->currentSet(), QStringLiteral("expired_leases"));
    QCOMPARE(column(w->tasks()->table()->model(), SnapshotTaskModel::KeyColumn),
        (QStringList { QStringLiteral("tb:ship:e2"), QStringLiteral("ta:charge:e1") }));
    QVERIFY2(w->tasks()->setInfo()->text().contains(QStringLiteral("2 of 2 rows")),
        qPrintable(w->tasks()->setInfo()->text()));
    QTest::mouseClick(w->dashboard()->tile(Tile::Failed), Qt::LeftButton);
    QCOMPARE(w->tasks()->currentSet(), QStringLiteral("failed"));
    QCOMPARE(column(w->tasks()->table()->model(), SnapshotTaskModel::KeyColumn),
        (QStringList { QStringLiteral("ta:charge:f1"), QStringLiteral("tb:refund:f2") }));
    // The detail of a row, from the snapshot alone.
    w->tasks()->table()->selectRow(0);
    auto* pane = w->tasks()->detail();
    QCOMPARE(pane->keyField()->text(), QStringLiteral("ta:charge:f1"));
    QVERIFY(pane->resultView()->toPlainText().contains(QStringLiteral("RECEIPT-42")));
    QVERIFY(pane->errorsView()->toPlainText().contains(QStringLiteral("card declined")));
    QVERIFY(w->tasks()->selectSet(QStringLiteral("uncertain")));
    QCOMPARE(column(w->tasks()->table()->model(), SnapshotTaskModel::KeyColumn),
        QStringList { QStringLiteral("ta:charge:u1") });
    QVERIFY(w->tasks()->selectSet(QStringLiteral("longest_running")));
    QCOMPARE(w->tasks()->table()->model()->rowCount(), 4);
    // The released key's detail lists its audit entry from the snapshot's tail.
    const auto keys = column(w->tasks()->table()->model(), SnapshotTaskModel::KeyColumn);
    w->tasks()->table()->selectRow(static_cast<int>(keys.indexOf(QStringLiteral("ta:charge:e1"))));
    QCOMPARE(pane->auditTable()->rowCount(), 1);
    QCOMPARE(pane->auditTable()->item(0, 1)->text(), QStringLiteral("release"));
    QVERIFY(pane->leaseField()->text().contains(QStringLiteral("expired")));
    w->pages()->setCurrentWidget(w->tasks());
    save(w, "snapshot-tasks.png");

    // Audit: the tail, the chain head as the database has it, the tail rechecked offline.
    w->pages()->setCurrentWidget(w->audit());
    QCOMPARE(w->audit()->model()->rowCount(), 2);
    QCOMPARE(column(w->audit()->model(), SnapshotAuditModel::KeyColumn),
        (QStringList { QStringLiteral("tc:refund:f3"), QStringLiteral("ta:charge:e1") }));
    QVERIFY(w->audit()->headLabel()->text().contains(QString::fromStdString(m_headHash)));
    QVERIFY2(w->audit()->tailCheckLabel()->text().contains(QStringLiteral("every hash and link is correct")),
        qPrintable(w->audit()->tailCheckLabel()->text()));
    w->audit()->view()->selectRow(0);
    QCOMPARE(w->audit()->reasonView()->toPlainText(), QStringLiteral("account fixed, retry"));
    QVERIFY(w->audit()->diffTable()->rowCount() > 0);
    save(w, "snapshot-audit.png");
    w->pages()->setCurrentWidget(w->details());
    save(w, "snapshot-details.png");

    // It never connected anywhere: no session object, no new backend on the database.
    QVERIFY(w->findChildren<ConsoleSession*>().isEmpty());
    QCOMPARE(connectionsToDatabase(), before);
}

void TestSnapshotViewer::tamperedBundleOpensWithRedBanner()
{
    const QString dir = copyBundle(QStringLiteral("tampered"));
    QVERIFY(!dir.isEmpty());
    const QString csv = QDir(dir).filePath(QStringLiteral("rows/failed.csv"));
    QByteArray bytes = readFile(csv);
    QVERIFY(bytes.size() > 10);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x01);
    writeFile(csv, bytes);

    SnapshotWindow* w = open(dir);
    QVERIFY(w);
    QVERIFY(!w->verified());
    const QString text = w->verificationBanner()->text();
    QVERIFY2(
        text.contains(QStringLiteral("FAILED")) && text.contains(QStringLiteral("rows/failed.csv")), qPrintable(text));
    QVERIFY(w->verificationBanner()->styleSheet().contains(QStringLiteral("#b71c1c")));
    QVERIFY(w->windowTitle().startsWith(QStringLiteral("UNVERIFIED")));
    // The data still shows: the findings say how far to trust it.
    QCOMPARE(tileText(w, Tile::Processing), QStringLiteral("2"));
    save(w, "snapshot-tampered.png");
}

void TestSnapshotViewer::resignedByAnotherKeyIsNeverGreen()
{
    // Tampered, then re-signed with a key of the editor's own: every file matches the new
    // MANIFEST and the signature is valid, but nobody trusted that key.
    idem::SnapshotData edited = m_data;
    edited.figures.processing = 0;
    const auto other = idem::SigningKey::generate();
    const QString dir = m_tmp.filePath(QStringLiteral("resigned"));
    idem::writeSnapshotBundle(dir.toStdString(), edited, false, &other);
    const QString fingerprint = QString::fromStdString(idem::publicKeyFingerprint(other.publicPem()));

    SnapshotWindow* w = open(dir);
    QVERIFY(w);
    QVERIFY(!w->verified());
    const QString text = w->verificationBanner()->text();
    QVERIFY2(text.contains(QStringLiteral("Signed by an unknown key ") + fingerprint), qPrintable(text));
    QVERIFY(!text.contains(QStringLiteral("Signature valid")));
    QVERIFY(!w->verificationBanner()->styleSheet().contains(QStringLiteral("#e3f2e6"))); // never the green
    QVERIFY(w->windowTitle().startsWith(QStringLiteral("UNVERIFIED")));
    QVERIFY(!w->trustSignerButton()->isHidden());
    save(w, "snapshot-unknown-signer.png");

    // Trusted by the operator under a name (what the button's dialog saves): green, named.
    TrustedKeysDialog dialog(loadTrustedKeys());
    QVERIFY(!dialog.addKey(QStringLiteral("junk"), QStringLiteral("not a key")));
    QVERIFY(dialog.errorLabel()->text().startsWith(QStringLiteral("Not added")));
    QCOMPARE(dialog.table()->rowCount(), 1);
    QVERIFY(dialog.addKey(QStringLiteral("night shift"), QString::fromStdString(other.publicPem())));
    QCOMPARE(dialog.table()->rowCount(), 2);
    QCOMPARE(dialog.table()->item(1, 1)->text(), fingerprint);
    w->recheckTrust(dialog.keys());
    QVERIFY(w->verified());
    QVERIFY2(w->verificationBanner()->text().contains(QStringLiteral("trusted key “night shift”")),
        qPrintable(w->verificationBanner()->text()));
    QVERIFY(w->trustSignerButton()->isHidden());
    // Removed again: back to unknown.
    dialog.table()->selectRow(1);
    dialog.removeSelected();
    QCOMPARE(dialog.table()->rowCount(), 1);
    w->recheckTrust(dialog.keys());
    QVERIFY(!w->verified());
}

// Issue 40: the events made to contradict the bundle's own audit tail, re-signed with the key this
// console trusts: never green, a red banner naming what contradicts what, every text escaped.
void TestSnapshotViewer::forgedEventsResignedByTrustedKeyAreFlagged()
{
    const QString dir = copyBundle(QStringLiteral("forged"));
    QVERIFY(!dir.isEmpty());
    std::int64_t cited = 0;
    QVERIFY(idem::test::editSnapshotJson(
        dir, [&](nlohmann::json& j) { cited = idem::test::forgeEvents(j, "op (mallory)", "no one released it"); }));
    QVERIFY(cited > 0);
    QVERIFY(idem::test::resignBundle(dir, *m_key));

    SnapshotWindow* w = open(dir);
    QVERIFY(w);
    QVERIFY(!w->verified());
    const QString text = w->verificationBanner()->text();
    QVERIFY2(text.contains(QStringLiteral("CONTRADICTS ITSELF")), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("signed by the trusted key “incident laptop”")));
    QVERIFY2(text.contains(QStringLiteral("contradicts audit entry %1 of the hash-chained audit tail: actor "
                                          "&quot;op (mallory)&quot;")
                               .arg(cited)),
        qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("text &quot;no one released it&quot; where the entry has "
                                         "&quot;worker host died&quot;")));
    QVERIFY(text.contains(QStringLiteral("\\x1b[2J\\u202eevil")));
    QVERIFY(text.contains(QStringLiteral("is dated after the snapshot was taken")));
    QVERIFY(!text.contains(QChar(0x1b)) && !text.contains(QChar(0x202e)));
    QVERIFY(w->verificationBanner()->styleSheet().contains(QStringLiteral("#b71c1c")));
    QVERIFY(w->windowTitle().startsWith(QStringLiteral("UNVERIFIED")));
    // The forged event's mark on the charts shows its text escaped too.
    bool marked = false;
    for (const auto& e : w->dashboard()->charts()->events())
        if (e.kind == QStringLiteral("fail")) {
            marked = true;
            QVERIFY2(e.text.contains(QStringLiteral("\\u202e")) && !e.text.contains(QChar(0x202e))
                    && !e.text.contains(QChar(0x1b)),
                qPrintable(e.text));
        }
    QVERIFY(marked);
    save(w, "snapshot-forged.png");
    // What the Details page lists says it too.
    QVERIFY(w->details()->toPlainText().contains(QStringLiteral("CONTRADICTION in snapshot.json")));
    QVERIFY(!w->details()->toPlainText().contains(QChar(0x202e)));
}

void TestSnapshotViewer::brokenBundlesSayWhyAndOpenNothing_data()
{
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QStringList>("says");
    QTest::addRow("truncated") << "truncated" << QStringList { QStringLiteral("damaged") };
    QTest::addRow("not JSON") << "garbage"
                              << QStringList { QStringLiteral("damaged"), QStringLiteral("not valid JSON") };
    QTest::addRow("wrong type") << "type"
                                << QStringList { QStringLiteral("damaged"), QStringLiteral("/figures/processing") };
    QTest::addRow("newer format") << "newer"
                                  << QStringList { QStringLiteral("made by a newer Idem (format 7)"),
                                         QStringLiteral("reads up to format 1") };
    QTest::addRow("format 0") << "zero"
                              << QStringList { QStringLiteral("format 0"), QStringLiteral("no Idem release") };
    // Issue #27: an event whose time or kind is damaged is refused, not marked somewhere else.
    QTest::addRow("event time") << "eventtime"
                                << QStringList { QStringLiteral("damaged"), QStringLiteral("/events/rows/0/at") };
    QTest::addRow("event kind") << "eventkind"
                                << QStringList { QStringLiteral("damaged"), QStringLiteral("/events/rows/1/action") };
    QTest::addRow("not a bundle") << "empty" << QStringList { QStringLiteral("not a snapshot bundle") };
    QTest::addRow("missing folder") << "missing" << QStringList { QStringLiteral("not a snapshot bundle") };
}

void TestSnapshotViewer::brokenBundlesSayWhyAndOpenNothing()
{
    QFETCH(QString, damage);
    QFETCH(QStringList, says);
    const QString name = QStringLiteral("broken-") + damage;
    QString dir = copyBundle(name);
    QVERIFY(!dir.isEmpty());
    const QString json = QDir(dir).filePath(QStringLiteral("snapshot.json"));
    auto j = nlohmann::json::parse(readFile(json).toStdString());
    if (damage == QLatin1String("truncated")) {
        const QByteArray bytes = readFile(json);
        writeFile(json, bytes.left(bytes.size() / 2));
    } else if (damage == QLatin1String("garbage")) {
        writeFile(json, "{\"format\": \"idem-snapshot\", \"format_version\": 1,,, }");
    } else if (damage == QLatin1String("type")) {
        j["figures"]["processing"] = "two";
        writeFile(json, QByteArray::fromStdString(j.dump()));
    } else if (damage == QLatin1String("newer")) {
        j["format_version"] = 7;
        writeFile(json, QByteArray::fromStdString(j.dump()));
    } else if (damage == QLatin1String("zero")) {
        j["format_version"] = 0;
        writeFile(json, QByteArray::fromStdString(j.dump()));
    } else if (damage == QLatin1String("eventtime")) {
        QVERIFY(j["events"]["rows"].size() >= 2);
        j["events"]["rows"][0]["at"] = "2024-13-45T99:00:00Z";
        writeFile(json, QByteArray::fromStdString(j.dump()));
    } else if (damage == QLatin1String("eventkind")) {
        j["events"]["rows"][1]["action"] = "<script>";
        writeFile(json, QByteArray::fromStdString(j.dump()));
    } else if (damage == QLatin1String("empty")) {
        QVERIFY(QDir(dir).removeRecursively());
        QVERIFY(QDir().mkpath(dir));
    } else {
        dir = m_tmp.filePath(QStringLiteral("no-such-folder"));
    }
    const QString message = openFails(dir);
    for (const auto& s : says)
        QVERIFY2(message.contains(s), qPrintable(message));
    QVERIFY(!findWindow());
}

void TestSnapshotViewer::oldestFormatOpens()
{
    // Format 1 as docs/snapshot-format.md describes it, written by hand the way the first Idem
    // that wrote it would have: `application` null in audit entries (a schema before v3), a
    // standby, no signing, and a field this reader does not know, which it must ignore.
    const nlohmann::ordered_json row = { { "idempotency_key", "old:charge:1" }, { "status", "failed" },
        { "request_hash", "v1:" + std::string(64, 'c') }, { "result_json", nullptr }, { "error_message", "declined" },
        { "error_class", "permanent" }, { "owner_token", nullptr }, { "lease_until", nullptr },
        { "next_attempt_at", nullptr }, { "attempts", 1 }, { "max_attempts", 5 },
        { "created_at", "2024-05-01T09:59:00.000000Z" }, { "updated_at", "2024-05-01T09:59:30.000000Z" },
        { "errors", "[]" } };
    const auto emptySet = [](const char* name) {
        return nlohmann::ordered_json { { "name", name }, { "description", "" }, { "order", "" }, { "limit", 1000 },
            { "total", 0 }, { "truncated", false }, { "csv", std::string("rows/") + name + ".csv" },
            { "rows", nlohmann::ordered_json::array() } };
    };
    auto failed = emptySet("failed");
    failed["total"] = 1;
    failed["rows"].push_back(row);
    const auto counters = [](const char* d) {
        return nlohmann::ordered_json { { "description", d }, { "limit", 100000 }, { "total", 0 },
            { "truncated", false }, { "csv", "x.csv" }, { "rows", nlohmann::ordered_json::array() } };
    };
    const nlohmann::ordered_json j = { { "format", "idem-snapshot" }, { "format_version", 1 },
        { "producer", "idemctl 0.0.9" }, { "taken_at", "2024-05-01T10:00:00.000000Z" },
        { "scope",
            { { "schema", "idem" }, { "tenant", nullptr }, { "operation", nullptr }, { "window_minutes", 15 },
                { "long_unfinished_after_minutes", 60 }, { "history_minutes", 60 } } },
        { "redaction", { { "enabled", false }, { "form", "" } } },
        { "server",
            { { "conninfo", "host=db.example.org dbname=jobs user=reader" }, { "version", "15.6" },
                { "version_num", 150006 }, { "database", "jobs" }, { "in_recovery", true }, { "schema_version", 2 },
                { "schema_latest_known", 2 } } },
        { "roles",
            { { "monitor",
                  { { "current_user", "reader" }, { "session_user", "reader" }, { "superuser", false },
                      { "idem_reader", true }, { "idem_operator", false } } },
                { "admin", nullptr } } },
        { "settings", { { "thresholds", nlohmann::ordered_json::array() }, { "poll", nullptr } } },
        { "figures",
            { { "processing", 0 }, { "expired_leases", 0 }, { "oldest_processing_age_seconds", nullptr },
                { "retryable_failed", 0 }, { "uncertain", 0 }, { "failed_permanent", 1 }, { "failed_exhausted", 0 },
                { "long_unfinished", 1 }, { "duplicate_ratio", nullptr }, { "claims", 0 }, { "retries", 0 },
                { "failed_retries", 0 }, { "digest_conflicts", 0 }, { "stale_token_rejections", 0 },
                { "total_rows_estimate", nullptr }, { "as_of", "2024-05-01T10:00:00.000000Z" }, { "in_recovery", true },
                { "replication_lag_seconds", 1.5 } } },
        { "counters_history", counters("history") }, { "recent_conflicts", counters("conflicts") },
        { "row_sets", { emptySet("expired_leases"), emptySet("longest_running"), failed, emptySet("uncertain") } },
        { "audit",
            { { "limit", 200 }, { "total", 1 }, { "truncated", false }, { "head_id", 1 },
                { "head_hash", std::string(64, '1') },
                { "tail",
                    { { { "id", 1 }, { "at", "2024-05-01T09:59:40.000000Z" }, { "idempotency_key", "old:charge:1" },
                        { "action", "fail" }, { "reason", "stop" }, { "db_role", "op" }, { "os_user", "ann" },
                        { "client_host", "[local]" }, { "application", nullptr }, { "before_image", "{}" },
                        { "after_image", "{}" }, { "prev_hash", std::string(64, '0') },
                        { "entry_hash", std::string(64, '1') } } } } } },
        { "signing", nullptr }, { "a_field_from_the_future", { { "ignored", true } } } };
    const QString dir = m_tmp.filePath(QStringLiteral("oldest"));
    QVERIFY(QDir().mkpath(dir));
    const std::string text = j.dump(2) + "\n";
    writeFile(QDir(dir).filePath(QStringLiteral("snapshot.json")), QByteArray::fromStdString(text));
    writeFile(QDir(dir).filePath(QStringLiteral("MANIFEST")),
        QByteArray::fromStdString(idem::sha256Hex(text) + "  snapshot.json\n"));

    SnapshotWindow* w = open(dir);
    QVERIFY(w);
    QVERIFY2(w->verified(), qPrintable(w->verificationBanner()->text()));
    QVERIFY(w->verificationBanner()->text().startsWith(QStringLiteral("Unsigned")));
    const QString banner = w->banner()->text();
    QVERIFY2(banner.contains(QStringLiteral("jobs@db.example.org")), qPrintable(banner));
    QVERIFY(banner.contains(QStringLiteral("2024-05-01 10:00:00 UTC")));
    QVERIFY(banner.contains(QStringLiteral("format version 1")));
    QCOMPARE(tileText(w, Tile::Failed), QStringLiteral("1"));
    QCOMPARE(tileText(w, Tile::Processing), QStringLiteral("0"));
    QVERIFY(w->dashboard()->statusText().contains(QStringLiteral("standby")));
    QVERIFY(w->tasks()->selectSet(QStringLiteral("failed")));
    QCOMPARE(column(w->tasks()->table()->model(), SnapshotTaskModel::KeyColumn),
        QStringList { QStringLiteral("old:charge:1") });
    QCOMPARE(w->audit()->model()->rowCount(), 1);
    // The planted hashes are not real ones: the offline check says so, in red, without refusing to show it.
    QVERIFY(w->audit()->tailCheckLabel()->text().contains(QStringLiteral("#1")));
}

void TestSnapshotViewer::largeBundleOpensOffTheUiThread()
{
    // About 10 MB of snapshot.json: every set at its bound of 1000 rows, each with a 2.5 kB result.
    idem::SnapshotData big = m_data;
    const std::string result = "{\"blob\": \"" + std::string(2500, 'x') + "\"}";
    for (auto& set : big.rowSets) {
        set.rows.clear();
        for (int i = 0; i < 1000; ++i) {
            idem::SnapshotTaskRow r;
            r.key = "big:" + set.name + ":" + std::to_string(i);
            r.status = "failed";
            r.requestHash = "v1:" + std::string(64, 'd');
            r.resultJson = result;
            r.attempts = 1;
            r.maxAttempts = 5;
            r.createdAt = r.updatedAt = m_data.takenAt;
            r.errorsJson = "[]";
            set.rows.push_back(std::move(r));
        }
        set.total = 5000;
        set.truncated = true;
    }
    const QString dir = m_tmp.filePath(QStringLiteral("big"));
    idem::writeSnapshotBundle(dir.toStdString(), big, false, nullptr);
    const auto bytes = QFileInfo(QDir(dir).filePath(QStringLiteral("snapshot.json"))).size();
    QVERIFY(bytes > 10'000'000);

    // The event loop keeps turning while the bundle is hashed and parsed: the window stays usable.
    int beats = 0;
    QTimer heartbeat;
    heartbeat.setInterval(2);
    connect(&heartbeat, &QTimer::timeout, this, [&] { ++beats; });
    heartbeat.start();
    QElapsedTimer clock;
    clock.start();
    QWidget parent;
    SnapshotOpener* opener = openSnapshotWindow(dir, &parent);
    QCOMPARE(beats, 0);
    QSignalSpy opened(opener, &SnapshotOpener::opened);
    QVERIFY(opened.wait(30000));
    const qint64 total = clock.elapsed();
    QVERIFY2(beats > 0, "the UI thread did not run while the bundle was read");
    SnapshotWindow* w = findWindow();
    QVERIFY(w);
    QVERIFY(w->tasks()->selectSet(QStringLiteral("failed")));
    QCOMPARE(w->tasks()->table()->model()->rowCount(), 1000);
    QVERIFY(w->tasks()->setInfo()->text().contains(QStringLiteral("truncated")));
    // What the UI thread itself spends: building the window from the parsed snapshot.
    clock.restart();
    SnapshotWindow second(w->snapshot(), dir);
    second.show();
    QCoreApplication::processEvents();
    qInfo("snapshot.json %lld bytes: opened in %lld ms, %d heartbeats of the UI thread meanwhile; building and "
          "showing the window on the UI thread: %lld ms",
        qlonglong(bytes), total, beats, clock.elapsed());
}

void TestSnapshotViewer::modelsPassTheTester()
{
    QString error;
    const SharedSnapshot s = SnapshotOpener::openNow(m_bundle, &error);
    QVERIFY2(s, qPrintable(error));
    SnapshotTaskModel tasks;
    QAbstractItemModelTester taskTester(&tasks, QAbstractItemModelTester::FailureReportingMode::QtTest);
    SnapshotAuditModel audit;
    QAbstractItemModelTester auditTester(&audit, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (const auto& set : s->data.rowSets) {
        tasks.setRowSet(s, QString::fromStdString(set.name));
        QCOMPARE(tasks.rowCount(), static_cast<int>(set.rows.size()));
        for (int r = 0; r < tasks.rowCount(); ++r)
            for (int c = 0; c < tasks.columnCount(); ++c)
                QVERIFY(tasks.index(r, c).data().isValid());
    }
    tasks.setRowSet(s, QStringLiteral("no_such_set"));
    QCOMPARE(tasks.rowCount(), 0);
    tasks.setRowSet(nullptr, {});
    audit.setSnapshot(s);
    QCOMPARE(audit.rowCount(), 2);
    audit.setSnapshot(nullptr);
    QCOMPARE(audit.rowCount(), 0);
}

void TestSnapshotViewer::closesWithCtrlWAndEscape()
{
    for (const QKeySequence& keys : { QKeySequence(QKeySequence::Close), QKeySequence(Qt::Key_Escape) }) {
        QPointer<SnapshotWindow> w = open(m_bundle);
        QVERIFY(w);
        w->show();
        w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(w));
        QTest::keySequence(w, keys);
        QTRY_VERIFY2(!w, qPrintable(keys.toString())); // closed and deleted (WA_DeleteOnClose)
    }
}

namespace {
// Where a time falls on a chart, by Qt Charts' own mapping.
double xOf(QChart* chart, qint64 ms)
{
    QAbstractSeries* series = nullptr;
    for (auto* s : chart->series())
        if (qobject_cast<QLineSeries*>(s)) {
            series = s;
            break;
        }
    const auto* y = chart->axes(Qt::Vertical).value(0);
    const double yValue = y->type() == QAbstractAxis::AxisTypeLogValue ? 1.0 : 0.0;
    return chart->mapToPosition(QPointF(double(ms), yValue), series).x();
}
} // namespace

// Issue #27: a snapshot carries the latency figures and the events of its window, and the viewer
// draws them as the live dashboard does: the latency chart and worst p95 tile from its folded
// minutes, every event marked at its time on every time axis. One without them says so.
void TestSnapshotViewer::drawsLatencyAndEventsOfItsWindow()
{
    // Twenty runs of 100 ms to 2 s in a minute closed three minutes ago, folded.
    const qint64 minuteMs = QDateTime::currentMSecsSinceEpoch() / 60000 * 60000 - 3 * 60000;
    {
        pqxx::work w(*m_conn);
        for (int i = 1; i <= 20; ++i) {
            const qint64 doneUs = (minuteMs + 1000 + i * 2000) * 1000;
            const qint64 startUs = doneUs - i * 100'000;
            w.exec_params("INSERT INTO idem.task_idempotency (idempotency_key, request_hash, status, result_json, attempts,"
                          " created_at, attempt_started_at, updated_at) VALUES ($1, 'v1:' || repeat('a', 64), 'succeeded',"
                          " '{}', 1, to_timestamp(0) + $2::bigint * interval '1 microsecond',"
                          " to_timestamp(0) + $2::bigint * interval '1 microsecond',"
                          " to_timestamp(0) + $3::bigint * interval '1 microsecond')",
                "tl:charge:k" + std::to_string(i), startUs, doneUs);
        }
        w.exec_params("UPDATE idem.idem_latency_state SET folded_to = to_timestamp($1::bigint / 1000) - interval '1 minute'",
            minuteMs);
        w.commit();
    }
    QVERIFY(idem::rollupLatency(*m_conn, idem::SchemaName()) >= 1);
    idem::Annotation a;
    a.text = "deploy v2.4";
    a.actor = "alice@laptop";
    idem::annotate(*m_conn, idem::SchemaName(), a);

    const auto data = idem::readSnapshot(*m_conn, {}, {});
    QVERIFY(data.latency && data.events);
    QCOMPARE(data.events->rows.size(), std::size_t(3)); // release, requeue, the annotation
    const QString dir = m_tmp.filePath(QStringLiteral("with-latency"));
    idem::writeSnapshotBundle(dir.toStdString(), data, false, nullptr);
    SnapshotWindow* w = open(dir);
    QVERIFY(w);
    w->pages()->setCurrentWidget(w->dashboard());
    auto* latency = w->dashboard()->charts()->latency();
    QTRY_VERIFY(latency->isVisible());
    // The planted minute's p95: the 19th of 20 runs, 1.9 s (the slot's middle, within 4 %).
    auto* p95 = latency->series(QStringLiteral("runP95"));
    QCOMPARE(p95->count(), 1);
    QCOMPARE(qint64(p95->at(0).x()), minuteMs);
    QVERIFY2(std::abs(p95->at(0).y() - 1.9) <= 0.04 * 1.9, qPrintable(QString::number(p95->at(0).y())));
    QCOMPARE(latency->series(QStringLiteral("ttsP50"))->count(), 1);
    QVERIFY2(latency->noteText().startsWith(QStringLiteral("last point")), qPrintable(latency->noteText()));
    auto* tile = w->dashboard()->latencyTile();
    QVERIFY(tile->isVisible());
    QVERIFY2(tile->detailText().startsWith(QStringLiteral("charge, ")), qPrintable(tile->detailText()));
    QVERIFY2(tile->valueText().endsWith(QStringLiteral(" s")), qPrintable(tile->valueText()));
    QVERIFY(std::abs(tile->valueText().chopped(2).toDouble() - 1.9) <= 0.04 * 1.9);

    // Every event of the snapshot marked at its time on every time axis shown: five, the console's
    // load (not part of a snapshot) giving its place to latency.
    const auto marksList = w->dashboard()->charts()->eventMarks();
    QCOMPARE(marksList.size(), 6);
    int shown = 0;
    for (auto* marks : marksList) {
        if (!marks->chart()->scene()->views().value(0)->isVisible()) {
            QVERIFY(marks->chart()->series().contains(w->dashboard()->charts()->series(QStringLiteral("tickms"))));
            continue;
        }
        ++shown;
        std::size_t n = 0;
        for (const auto& m : marks->marks())
            for (std::size_t i = 0; i < m.events.size(); ++i, ++n) {
                const auto& e = data.events->rows.at(n);
                QCOMPARE(m.events[i].kind, QString::fromStdString(e.action));
                QCOMPARE(m.events[i].text, QString::fromStdString(e.text));
                const qint64 at = *idem::parseIsoMicros(e.at) / 1000;
                QCOMPARE(m.events[i].atMs, at);
                QVERIFY2(std::abs(m.lineX[i] - xOf(marks->chart(), at)) < 0.5, qPrintable(marks->chart()->title()));
            }
        QCOMPARE(n, data.events->rows.size());
        QVERIFY(marks->marks().back().toolTip.contains(QStringLiteral("deploy v2.4")));
    }
    QCOMPARE(shown, 5);
    save(w, "snapshot-dashboard-marks.png");
    delete w;

    // A snapshot that carries neither (an older Idem's): the chart says so, and there are no marks.
    const QString old = copyBundle(QStringLiteral("without-latency"));
    const QString json = QDir(old).filePath(QStringLiteral("snapshot.json"));
    auto j = nlohmann::json::parse(readFile(json).toStdString());
    j.erase("latency_history");
    j.erase("events");
    writeFile(json, QByteArray::fromStdString(j.dump()));
    w = open(old);
    QVERIFY(w);
    latency = w->dashboard()->charts()->latency();
    QVERIFY2(latency->noteText().contains(QStringLiteral("carries no latency figures")), qPrintable(latency->noteText()));
    QVERIFY(w->dashboard()->latencyTile()->isHidden());
    for (auto* marks : w->dashboard()->charts()->eventMarks())
        QVERIFY(marks->marks().empty());
}

// Issue 41: the rows waiting to retry, the pauses and the jobs of the incident, and processing over
// the whole window (before: one point at the instant), as an operator opening the bundle sees them.
void TestSnapshotViewer::showsTheIncidentsWork()
{
    idem::PauseRequest hold;
    hold.tenant = "ta";
    hold.operation = "charge";
    hold.reason = "gateway answers 503 \u202e";
    hold.actor = "sre@desk";
    idem::setPause(*m_conn, idem::SchemaName(), hold);
    {
        pqxx::work w(*m_conn);
        w.exec(R"(
            INSERT INTO idem.idem_jobs (state, action, extra_attempts, filter, moment, cap, matched, reason, db_role,
                actor, application, changed, refused_busy, batches, needs_approval)
            VALUES ('awaiting_approval', 'requeue', 1, '{"statuses": ["failed"]}', now() - interval '2 minutes', 1000,
                    159, 'requeue what the gateway broke', 'op', 'alice@desk', 'idem-console', 0, 0, 0, true)
        )");
        w.commit();
    }
    idem::SnapshotContext c;
    c.producer = "tst_snapshotviewer";
    c.conninfo = m_db->dsn();
    const auto data = idem::readSnapshot(*m_conn, {}, c);
    const QString dir = m_tmp.filePath(QStringLiteral("work"));
    idem::writeSnapshotBundle(dir.toStdString(), data, false, &*m_key);

    SnapshotWindow* w = open(dir);
    QVERIFY(w);
    QVERIFY2(w->verified(), qPrintable(w->verificationBanner()->text()));
    // The waiting-to-retry tile opens the rows waiting to retry.
    QTest::mouseClick(w->dashboard()->tile(Tile::WaitingRetry), Qt::LeftButton);
    QCOMPARE(w->pages()->currentWidget(), w->tasks());
    QCOMPARE(w->tasks()->model()->rowCount(), int(data.figures.retryableFailed));
    // The requeued row (due now) first, then the uncertain one (due in a minute).
    QCOMPARE(column(w->tasks()->model(), SnapshotTaskModel::KeyColumn),
        (QStringList { QStringLiteral("tc:refund:f3"), QStringLiteral("ta:charge:u1") }));

    // Processing over the window: a point a minute, not one dot at the instant.
    auto* processing = w->dashboard()->charts()->series(QStringLiteral("processing"));
    QVERIFY(processing);
    QVERIFY2(processing->count() >= 30, qPrintable(QString::number(processing->count())));
    const qint64 from = snapshotTakenAt(data).toMSecsSinceEpoch() - 60LL * 60000;
    QVERIFY(processing->at(0).x() <= double(from + 60000));
    QCOMPARE(processing->at(processing->count() - 1).y(), double(data.figures.processing));
    QVERIFY(processing->chart()->title().contains(QStringLiteral("rows processing at the snapshot")));
    // The pause shades the charts from when it was set.
    QVERIFY(!w->dashboard()->charts()->pauseBands().isEmpty());
    w->pages()->setCurrentWidget(w->dashboard());
    save(w, "snapshot-processing.png");

    // Pauses and jobs, with who and why, the text escaped.
    w->pages()->setCurrentWidget(w->work());
    auto* pauses = w->work()->pauses();
    QCOMPARE(pauses->rowCount(), 1);
    QCOMPARE(pauses->item(0, SnapshotWorkPage::PauseScope)->text(), QStringLiteral("ta:charge"));
    QCOMPARE(pauses->item(0, SnapshotWorkPage::PauseState)->text(), QStringLiteral("in force"));
    QCOMPARE(pauses->item(0, SnapshotWorkPage::PauseReason)->text(), QStringLiteral("gateway answers 503 \\u202e"));
    QVERIFY(pauses->item(0, SnapshotWorkPage::PauseBy)->text().contains(QStringLiteral("sre@desk")));
    QVERIFY(w->work()->pausesLabel()->text().contains(QStringLiteral("1 in force")));
    auto* jobs = w->work()->jobs();
    QCOMPARE(jobs->rowCount(), 1);
    QCOMPARE(jobs->item(0, SnapshotWorkPage::JobState)->text(), QStringLiteral("waiting for approval"));
    QCOMPARE(jobs->item(0, SnapshotWorkPage::JobStartedBy)->text(), QStringLiteral("op (alice@desk)"));
    QCOMPARE(jobs->item(0, SnapshotWorkPage::JobApprovedBy)->text(), QStringLiteral("not yet"));
    QCOMPARE(jobs->item(0, SnapshotWorkPage::JobMatched)->text(), QLocale().toString(159));
    save(w, "snapshot-work.png");

    // An older bundle, without any of it, opens and says so.
    auto j = nlohmann::json::parse(idem::snapshotToJson(data));
    for (const char* field : { "pauses", "jobs", "processing_history" })
        j.erase(field);
    auto older = idem::snapshotFromJson(j.dump());
    older.rowSets.pop_back();
    const QString oldDir = m_tmp.filePath(QStringLiteral("work-old"));
    idem::writeSnapshotBundle(oldDir.toStdString(), older, false, &*m_key);
    delete w;
    w = open(oldDir);
    QVERIFY(w);
    QVERIFY(w->work()->pausesLabel()->text().contains(QStringLiteral("not in this snapshot")));
    QCOMPARE(w->work()->pauses()->rowCount(), 0);
}

QTEST_MAIN(TestSnapshotViewer)
#include "tst_snapshotviewer.moc"
