#pragma once

// Shared by the dashboard tests that drive the whole main window: a window on a session of its
// own, connected to a scratch database, and a dashboard filter typed in as a user does.

#include <QtTest>

#include <QLineEdit>

#include <memory>
#include <string>

#include "app/mainwindow.h"
#include "models/dashboardmodel.h"
#include "models/profilestore.h"
#include "tests/console/tst_taskbrowser_support.h"
#include "views/dashboardwidget.h"

namespace idem::test {

struct ConsoleWindow {
    std::unique_ptr<console::ConsoleSession> session;
    std::unique_ptr<console::ProfileStore> profiles;
    std::unique_ptr<console::MainWindow> window;

    // The window first: it watches the session.
    void reset()
    {
        window.reset();
        profiles.reset();
        session.reset();
    }
};

// A 1280x900 main window, shown, connected to `dsn`, its dashboard's first tick in. A failure
// fails the calling test (check QTest::currentTestFailed() after it).
inline void openConsoleWindow(ConsoleWindow& w, const std::string& dsn)
{
    w.reset();
    w.session = std::make_unique<console::ConsoleSession>();
    w.profiles = std::make_unique<console::ProfileStore>();
    w.window = std::make_unique<console::MainWindow>(w.session.get(), w.profiles.get());
    w.window->resize(1280, 900);
    w.window->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.window.get()));
    QVERIFY(connectSession(*w.session, dsn));
    QTRY_VERIFY_WITH_TIMEOUT(w.window->dashboard()->model()->ticks() >= 1, browserTimeoutMs);
}

// Types `text` into the dashboard's filter `objectName` (replacing what it held), presses Return
// and waits until `reads()` (a watch's read count) has grown: the new scope has been read.
template <typename Reads>
inline void typeDashboardFilter(console::MainWindow& window, const QString& objectName, const QString& text, Reads reads)
{
    auto* edit = window.dashboard()->findChild<QLineEdit*>(objectName);
    QVERIFY(edit);
    const int before = reads();
    edit->setFocus();
    edit->selectAll();
    QTest::keyClick(edit, Qt::Key_Delete);
    QTest::keyClicks(edit, text);
    QCOMPARE(edit->text(), text);
    QTest::keyClick(edit, Qt::Key_Return);
    QTRY_VERIFY_WITH_TIMEOUT(reads() > before, browserTimeoutMs);
}

} // namespace idem::test
