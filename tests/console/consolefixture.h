#pragma once

// What every console test builds: a session with its worker thread, a profile store in a
// throwaway settings file, the console's main content with its dashboard page and the real
// connection dialog, plus ways to drive the dialog the way a person would.

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>
#include <string>

#include "models/consolesession.h"
#include "models/profilestore.h"
#include "models/dashboardmodel.h"
#include "views/connectiondialog.h"
#include "views/consolewidget.h"
#include "views/dashboardwidget.h"
#include "views/tilewidget.h"
#include "views/noticebanner.h"
#include "views/statuspanel.h"

namespace idem::test {

constexpr int consoleTimeoutMs = 20000;

struct ConsoleFixture {
    QTemporaryDir dir;
    console::ConsoleSession session;
    console::ProfileStore profiles { std::make_unique<QSettings>(
        dir.filePath(QStringLiteral("idem-console.conf")), QSettings::IniFormat) };
    QSettings dashboardSettings { dir.filePath(QStringLiteral("dashboard.conf")), QSettings::IniFormat };
    console::ConsoleWidget window { &session };
    console::ConnectionDialog dialog { &session, &profiles };
    console::DashboardWidget* dashboard = new console::DashboardWidget(&session, &dashboardSettings); // window owns it

    ConsoleFixture()
    {
        window.addPage(dashboard, QStringLiteral("Dashboard"), 0);
        window.show();
        dialog.show();
    }

    template <typename T = QLineEdit> T* child(const char* name)
    {
        return dialog.findChild<T*>(QString::fromLatin1(name));
    }
};

// Replaces a line edit's text by typing, as a person would.
inline void typeInto(QLineEdit* edit, const QString& text)
{
    QVERIFY(edit);
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Delete);
    QTest::keyClicks(edit, text);
    QCOMPARE(edit->text(), text);
}

inline void typeInto(QLineEdit* edit, const std::string& text) { typeInto(edit, QString::fromStdString(text)); }

inline void chooseSslMode(QComboBox* combo, const QString& mode)
{
    QVERIFY(combo);
    const int index = combo->findData(mode);
    QVERIFY2(index >= 0, qPrintable(mode));
    combo->setCurrentIndex(index);
}

inline void click(QPushButton* button)
{
    QVERIFY(button);
    QVERIFY(button->isEnabled());
    QTest::mouseClick(button, Qt::LeftButton);
}

inline QString dialogError(ConsoleFixture& f)
{
    auto* label = f.child<QLabel>("errorLabel");
    return label && label->isVisible() ? label->text() : QString();
}

} // namespace idem::test
