// The one duration formatter (issue 44 item 6): every length of time the console and idemctl
// write comes from idem::splitDuration, in three forms and one rounding. Written by hand here,
// so a change of form or rounding shows as a failure, not as a silently different number.

#include <QLocale>
#include <QtTest>

#include "models/durationtext.h"
#include "operations/duration.h"

using idem::DurationForm;

class TestDuration : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }
    void forms_data();
    void forms();
    void parts();
};

void TestDuration::forms_data()
{
    QTest::addColumn<double>("ms");
    QTest::addColumn<int>("form");
    QTest::addColumn<QString>("text");
    const auto whole = int(DurationForm::Whole), largest = int(DurationForm::Largest), precise = int(DurationForm::Precise);
    // Whole: the two largest units, whole seconds rounded down, a zero second unit left out.
    QTest::addRow("zero") << 0.0 << whole << "0 s";
    QTest::addRow("under a second") << 999.0 << whole << "0 s";
    QTest::addRow("45 s") << 45'999.0 << whole << "45 s";
    QTest::addRow("a minute exactly") << 60'000.0 << whole << "1 min";
    QTest::addRow("3 min 12 s, rounded down") << 192'999.0 << whole << "3 min 12 s";
    QTest::addRow("not 3 min 13 s") << 192'500.0 << whole << "3 min 12 s";
    QTest::addRow("59 min 59 s") << 3'599'999.0 << whole << "59 min 59 s";
    QTest::addRow("an hour, seconds dropped") << 3'659'000.0 << whole << "1 h";
    QTest::addRow("2 h 5 min") << (2 * 3600 + 5 * 60 + 59) * 1000.0 << whole << "2 h 5 min";
    QTest::addRow("3 d 4 h") << (3 * 86400 + 4 * 3600 + 3599) * 1000.0 << whole << "3 d 4 h";
    QTest::addRow("400 d") << 400 * 86400 * 1000.0 << whole << "400 d";
    QTest::addRow("negative") << -4'500.0 << whole << "-4 s";
    QTest::addRow("negative under a second") << -400.0 << whole << "0 s";
    QTest::addRow("not a number") << std::nan("") << whole << "0 s";
    // Largest: the first of those alone, rounded down.
    QTest::addRow("largest 45 s") << 45'999.0 << largest << "45 s";
    QTest::addRow("largest 3 min") << 239'999.0 << largest << "3 min";
    QTest::addRow("largest 2 h") << (3 * 3600 - 1) * 1000.0 << largest << "2 h";
    QTest::addRow("largest 3 d") << (4 * 86400 - 1) * 1000.0 << largest << "3 d";
    // Precise: three significant figures below a minute (rounded to nearest), then Whole.
    QTest::addRow("precise zero") << 0.0 << precise << "0 ms";
    QTest::addRow("0.42 ms") << 0.4249 << precise << "0.425 ms";
    QTest::addRow("12.3 ms") << 12.34 << precise << "12.3 ms";
    QTest::addRow("850 ms") << 850.4 << precise << "850 ms";
    QTest::addRow("999.7 ms is 1 s") << 999.7 << precise << "1 s";
    QTest::addRow("1.24 s") << 1'244.0 << precise << "1.24 s";
    QTest::addRow("12.4 s") << 12'449.0 << precise << "12.4 s";
    QTest::addRow("a minute on: whole") << 65'900.0 << precise << "1 min 5 s";
    QTest::addRow("59.96 s is no 60 s") << 59'960.0 << precise << "59 s";
}

// idemctl (English, Qt-free) and the console (its wrapper, here in English) write the same.
void TestDuration::forms()
{
    QFETCH(double, ms);
    QFETCH(int, form);
    QFETCH(QString, text);
    const auto f = static_cast<DurationForm>(form);
    QCOMPARE(QString::fromStdString(idem::formatDuration(ms, f)), text);
    QCOMPARE(idem::console::durationText(ms, f), text);
}

void TestDuration::parts()
{
    using U = idem::DurationUnit;
    QCOMPARE(idem::splitDuration(192'999.0),
        (idem::DurationParts { false, { { 3, U::Minute }, { 12, U::Second } } }));
    QCOMPARE(idem::splitDuration(-7'200'000.0, DurationForm::Largest), (idem::DurationParts { true, { { 2, U::Hour } } }));
    QCOMPARE(idem::splitDuration(12.34, DurationForm::Precise), (idem::DurationParts { false, { { 12.3, U::Millisecond } } }));
    QCOMPARE(QString::fromLatin1(idem::durationUnitWords(U::Day)), QStringLiteral("%1 d"));
}

QTEST_GUILESS_MAIN(TestDuration)
#include "tst_duration.moc"
