#include <QtTest>

#include <QCheckBox>
#include <QClipboard>
#include <QDir>
#include <QFontMetrics>
#include <QGuiApplication>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QTemporaryDir>

#include "operations/signing.h"
#include "views/exportdialog.h"

using idem::console::ExportDialog;

// The export dialog's signing-key line with a long key path (issue 24 item 12: it ran off the
// dialog, since a path has no space to wrap at). The line stays in the dialog, elided in the
// middle; the tooltip and "Copy path" give the path whole and unchanged.
class TestExportKeyLine : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void longKeyPathStaysInTheDialog();
};

void TestExportKeyLine::longKeyPathStaysInTheDialog()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString folder = tmp.filePath(QStringLiteral("keys-of-the-payments-reconciliation-team-in-eu-west-1/"
                                                       "shared-by-the-on-call-operators-since-the-2026-audit"));
    QVERIFY(QDir().mkpath(folder));
    const QString keyPath = QDir(folder).filePath(QStringLiteral("idem-signing-key.pem"));
    idem::SigningKey::generate().save(keyPath.toStdString(), false);

    QSettings settings(tmp.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    ExportDialog dialog(&settings);
    dialog.setKeyPath(keyPath);
    dialog.findChild<QCheckBox*>(QStringLiteral("sign"))->setChecked(true);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));

    auto* line = dialog.findChild<QLabel*>(QStringLiteral("keyInfo"));
    QVERIFY(line->isVisible());
    // The key is read off the UI thread: the line says what it found once that answers.
    QTRY_VERIFY2(line->text().startsWith(QStringLiteral("Key ")), qPrintable(line->text()));
    // Every word of the line fits in the label, and the label in the dialog: nothing runs off.
    const QFontMetrics metrics(line->font());
    for (const QString& word : line->text().split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts))
        QVERIFY2(metrics.horizontalAdvance(word) <= line->contentsRect().width(),
            qPrintable(QStringLiteral("\"%1\" is %2 px in a %3 px line")
                           .arg(word)
                           .arg(metrics.horizontalAdvance(word))
                           .arg(line->contentsRect().width())));
    const QRect inDialog(line->mapTo(&dialog, QPoint(0, 0)), line->size());
    QVERIFY2(dialog.rect().contains(inDialog), qPrintable(QStringLiteral("line %1,%2 %3x%4 in a %5x%6 dialog")
                                                              .arg(inDialog.x())
                                                              .arg(inDialog.y())
                                                              .arg(inDialog.width())
                                                              .arg(inDialog.height())
                                                              .arg(dialog.width())
                                                              .arg(dialog.height())));
    // Tall enough for all its lines (a wrapped label beside buttons got one line's height), once
    // the layout has taken the new text (a posted layout request, as on screen).
    QTRY_VERIFY2(line->height() >= line->heightForWidth(line->width()),
        qPrintable(QStringLiteral("%1 px high, needs %2").arg(line->height()).arg(line->heightForWidth(line->width()))));
    // Elided in the middle: the start and the file name stay; the path itself is not rewritten.
    QVERIFY2(line->text().contains(QStringLiteral("…")), qPrintable(line->text()));
    QVERIFY2(line->text().contains(tmp.path().left(8)), qPrintable(line->text()));
    QVERIFY2(line->text().contains(QStringLiteral("signing-key.pem")), qPrintable(line->text()));
    QCOMPARE(dialog.keyPath(), keyPath);
    QCOMPARE(line->toolTip(), QDir::toNativeSeparators(keyPath));
    if (const QByteArray dir = qgetenv("IDEM_SCREENSHOT_DIR"); !dir.isEmpty()) {
        QDir().mkpath(QString::fromLocal8Bit(dir));
        dialog.grab().save(QDir(QString::fromLocal8Bit(dir)).filePath(QStringLiteral("exportdialog.png")));
    }

    auto* copy = dialog.findChild<QPushButton*>(QStringLiteral("copyKeyPath"));
    QVERIFY(copy && copy->isVisible());
    QGuiApplication::clipboard()->clear();
    QTest::mouseClick(copy, Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), QDir::toNativeSeparators(keyPath));

    // Unticked, the line and its button go.
    dialog.findChild<QCheckBox*>(QStringLiteral("sign"))->setChecked(false);
    QVERIFY(!line->isVisible());
    QVERIFY(!copy->isVisible());
}

QTEST_MAIN(TestExportKeyLine)
#include "tst_exportkeyline.moc"
