#include <QtTest>

#include <QFile>

#include "tests/console/consolefixture.h"
#include "tests/support/testdb.h"

using idem::test::ConsoleFixture;

// Connection profiles as the dialog saves and loads them: everything needed to connect
// again, never a password, whichever field the password was typed into.
class TestProfiles : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void savedProfileHoldsNoPassword();
    void profileLoadsBackWithoutPassword();
    void serviceNameAndUriAreKept_data();
    void serviceNameAndUriAreKept();
    void unparseableConninfoIsNotSaved();

private:
    static QByteArray settingsFile(ConsoleFixture& f);
};

QByteArray TestProfiles::settingsFile(ConsoleFixture& f)
{
    f.profiles.sync();
    QFile file(f.profiles.fileName());
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll();
}

void TestProfiles::savedProfileHoldsNoPassword()
{
    ConsoleFixture f;
    const QString fieldSecret = QStringLiteral("s3cret-in-the-field");
    const QString inlineSecret = QStringLiteral("s3cret-in-the-string");
    const QString keySecret = QStringLiteral("s3cret-key-passphrase");
    idem::test::typeInto(f.child<QComboBox>("profileCombo")->lineEdit(), QStringLiteral("prod / eu"));
    idem::test::typeInto(f.child("conninfoEdit"),
        QStringLiteral("host=db.example.com port=5433 dbname=app user=alice password=%1 sslpassword=%2")
            .arg(inlineSecret, keySecret));
    idem::test::typeInto(f.child("passwordEdit"), fieldSecret);
    idem::test::chooseSslMode(f.child<QComboBox>("sslModeCombo"), QStringLiteral("verify-full"));
    idem::test::typeInto(f.child("sslRootCertEdit"), QStringLiteral("/etc/idem/root.crt"));
    idem::test::typeInto(f.child("sslCertEdit"), QStringLiteral("/etc/idem/alice.crt"));
    idem::test::typeInto(f.child("sslKeyEdit"), QStringLiteral("/etc/idem/alice.key"));
    idem::test::typeInto(f.child("schemaEdit"), QStringLiteral("idem_eu"));
    idem::test::click(f.child<QPushButton>("saveProfileButton"));
    QVERIFY2(idem::test::dialogError(f).isEmpty(), qPrintable(idem::test::dialogError(f)));

    const QByteArray text = settingsFile(f);
    QVERIFY2(!text.isEmpty(), qPrintable(f.profiles.fileName()));
    QVERIFY2(!text.contains(fieldSecret.toUtf8()), text.constData());
    QVERIFY2(!text.contains(inlineSecret.toUtf8()), text.constData());
    QVERIFY2(!text.contains(keySecret.toUtf8()), text.constData());
    QVERIFY2(!text.contains("s3cret"), text.constData());
    QVERIFY2(!text.contains("password"), text.constData());
    // What is needed to connect again is all there.
    for (const char* expected : { "db.example.com", "5433", "alice", "verify-full", "/etc/idem/root.crt",
             "/etc/idem/alice.crt", "/etc/idem/alice.key", "idem_eu" })
        QVERIFY2(text.contains(expected), expected);
    QCOMPARE(f.profiles.names(), QStringList { QStringLiteral("prod / eu") });
}

void TestProfiles::profileLoadsBackWithoutPassword()
{
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("profiles.conf"));
    {
        idem::console::ProfileStore store(std::make_unique<QSettings>(file, QSettings::IniFormat));
        idem::console::ConnectionSettings s;
        s.conninfo = QStringLiteral("postgresql://bob:hunter2@db.example.com/app?sslmode=require");
        s.password = QStringLiteral("hunter2");
        s.sslRootCert = QStringLiteral("/etc/idem/root.crt");
        s.schema = QStringLiteral("tasks");
        store.save({ QStringLiteral("staging"), s });
        store.setLastUsed(QStringLiteral("staging"));
    }
    QFile raw(file);
    QVERIFY(raw.open(QIODevice::ReadOnly));
    QVERIFY(!raw.readAll().contains("hunter2"));

    // A new dialog opens on the last used profile, password empty.
    idem::console::ConsoleSession session;
    idem::console::ProfileStore store(std::make_unique<QSettings>(file, QSettings::IniFormat));
    idem::console::ConnectionDialog dialog(&session, &store);
    const auto s = dialog.settings();
    QVERIFY2(s.conninfo.contains(QStringLiteral("host='db.example.com'")), qPrintable(s.conninfo));
    QVERIFY2(s.conninfo.contains(QStringLiteral("user='bob'")), qPrintable(s.conninfo));
    QVERIFY2(s.conninfo.contains(QStringLiteral("sslmode='require'")), qPrintable(s.conninfo));
    QVERIFY(s.password.isEmpty());
    QCOMPARE(s.sslRootCert, QStringLiteral("/etc/idem/root.crt"));
    QCOMPARE(s.schema, QStringLiteral("tasks"));
    QCOMPARE(dialog.findChild<QComboBox*>(QStringLiteral("profileCombo"))->currentText(), QStringLiteral("staging"));
}

void TestProfiles::serviceNameAndUriAreKept_data()
{
    QTest::addColumn<QString>("typed");
    QTest::addColumn<QString>("effective");
    QTest::addRow("service name") << QStringLiteral("idem-prod") << QStringLiteral("service='idem-prod'");
    QTest::addRow("uri") << QStringLiteral("postgres://carol@db:6543/app")
                         << QStringLiteral("dbname='app' host='db' port='6543' user='carol'");
    QTest::addRow("empty: PG* variables only") << QString() << QString();
}

void TestProfiles::serviceNameAndUriAreKept()
{
    QFETCH(QString, typed);
    QFETCH(QString, effective);
    idem::console::ConnectionSettings s;
    s.conninfo = typed;
    QCOMPARE(QString::fromStdString(idem::console::effectiveConninfo(s)), effective);
    QCOMPARE(QString::fromStdString(idem::console::storableConninfo(s)), effective);
}

void TestProfiles::unparseableConninfoIsNotSaved()
{
    ConsoleFixture f;
    idem::test::typeInto(f.child<QComboBox>("profileCombo")->lineEdit(), QStringLiteral("broken"));
    idem::test::typeInto(f.child("conninfoEdit"), QStringLiteral("host=x password='unterminated"));
    idem::test::click(f.child<QPushButton>("saveProfileButton"));
    QVERIFY2(
        idem::test::dialogError(f).startsWith(QStringLiteral("Not saved")), qPrintable(idem::test::dialogError(f)));
    QVERIFY(f.profiles.names().isEmpty());
    QVERIFY(!settingsFile(f).contains("unterminated"));
}

QTEST_MAIN(TestProfiles)
#include "tst_profiles.moc"
