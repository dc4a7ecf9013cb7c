// Desktop conventions of the console (issue 7): the UI language switches live and every Chinese
// string is translated; standard shortcuts reach their actions and the Help dialog lists them;
// light / dark override the platform palette and are remembered. The real MainWindow, driven
// with keys and menu actions, against a scratch database (F5 must make a real tick happen).

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QFile>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTranslator>
#include <QXmlStreamReader>
#include <QtTest>

#include <map>
#include <memory>

#include "app/mainwindow.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/jobsmodel.h"
#include "models/profilestore.h"
#include "models/rolerights.h"
#include "operations/rights.h"
#include "schema/migrate.h"
#include "tests/support/testdb.h"
#include "views/chartpanel.h"
#include "views/consolewidget.h"
#include "views/dashboardwidget.h"
#include "views/language.h"
#include "views/shortcutsdialog.h"
#include "views/taskbrowserwidget.h"
#include "views/taskdetailpane.h"
#include "views/theme.h"
#include "views/tilewidget.h"
#include <QComboBox>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QToolButton>

using namespace idem::console;

namespace {
constexpr int timeoutMs = 20000;

QSettings consoleSettings()
{
    return QSettings(
        QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"));
}

QStringList menuTitles(QMainWindow* w)
{
    QStringList out;
    const auto actions = w->menuBar()->actions();
    for (auto* a : actions)
        out << a->text();
    return out;
}

QStringList tabTitles(MainWindow* w)
{
    QStringList out;
    auto* pages = w->console()->pages();
    for (int i = 0; i < pages->count(); ++i)
        out << pages->tabText(i);
    return out;
}

struct TsMessage {
    QString context;
    QString source;
    QStringList translations; // one, or the numerus forms
    bool unfinished = false;
};

// Every <message> of a Qt Linguist file, obsolete and vanished ones left out.
QList<TsMessage> readTs(const QString& path, QString* error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot open %1").arg(path);
        return {};
    }
    QList<TsMessage> out;
    QXmlStreamReader xml(&file);
    QString context;
    TsMessage m;
    bool skip = false;
    bool numerus = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const auto name = xml.name();
            if (name == QLatin1String("name")) {
                context = xml.readElementText();
            } else if (name == QLatin1String("message")) {
                m = TsMessage { context, {}, {}, false };
                skip = false;
                numerus = xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes");
            } else if (name == QLatin1String("source")) {
                m.source = xml.readElementText();
            } else if (name == QLatin1String("translation")) {
                const auto type = xml.attributes().value(QLatin1String("type"));
                skip = type == QLatin1String("obsolete") || type == QLatin1String("vanished");
                m.unfinished = type == QLatin1String("unfinished");
                // Plain translations are text; numerus ones hold <numerusform> children.
                if (!numerus)
                    m.translations << xml.readElementText();
            } else if (name == QLatin1String("numerusform")) {
                m.translations << xml.readElementText();
            }
        } else if (xml.isEndElement() && xml.name() == QLatin1String("message")) {
            if (!skip)
                out << m;
        }
    }
    if (xml.hasError())
        *error = QStringLiteral("%1: %2 at line %3").arg(path, xml.errorString()).arg(xml.lineNumber());
    return out;
}

QSet<QString> placeholders(const QString& text)
{
    static const QRegularExpression re(QStringLiteral("%(L?[0-9]+|L?n)"));
    QSet<QString> out;
    auto it = re.globalMatch(text);
    while (it.hasNext())
        out.insert(it.next().captured(0));
    return out;
}
} // namespace

class TestDesktop : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void translationsAreEmbedded();
    void everyChineseStringIsTranslated();
    void languageSwitchesLive();
    void sharedWordsInChinese();
    void languageMenuTicksTheRunningChoice();
    void tileWordsFollowLanguage();
    void shortcuts();
    void themeOverride();

private:
    void openWindow();
    void closeWindow();

    std::unique_ptr<idem::test::ScratchDatabase> m_db;
    std::unique_ptr<ConsoleSession> m_session;
    std::unique_ptr<ProfileStore> m_profiles;
    std::unique_ptr<MainWindow> m_window;
    QColor m_platformWindow;
};

void TestDesktop::initTestCase()
{
    // The console's settings file goes to a scratch location, never the user's.
    QStandardPaths::setTestModeEnabled(true);
    {
        auto s = consoleSettings();
        QFile::remove(s.fileName());
    }
    // Before anything touches the palette: what "System" must come back to.
    m_platformWindow = theme::platformPalette().color(QPalette::Window);
    IDEM_REQUIRE_DATABASE();
    m_db = std::make_unique<idem::test::ScratchDatabase>("desktop", idem::test::migrated);
    auto c = m_db->connect();
    idem::migrate(*c, { idem::SchemaName(), false });
    language::apply(QStringLiteral("en"));
}

void TestDesktop::cleanupTestCase()
{
    closeWindow();
    theme::apply(Theme::System);
    language::apply(QStringLiteral("en"));
}

void TestDesktop::openWindow()
{
    closeWindow();
    m_session = std::make_unique<ConsoleSession>();
    m_profiles = std::make_unique<ProfileStore>();
    m_window = std::make_unique<MainWindow>(m_session.get(), m_profiles.get());
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
}

void TestDesktop::closeWindow()
{
    m_window.reset();
    m_profiles.reset();
    m_session.reset();
}

void TestDesktop::translationsAreEmbedded()
{
    for (const QString& code : language::available()) {
        QTranslator t;
        QVERIFY2(t.load(language::resourcePath(code)), qPrintable(language::resourcePath(code)));
        QCOMPARE(t.language(), code);
    }
    QTranslator zh;
    QVERIFY(zh.load(language::resourcePath(QStringLiteral("zh_CN"))));
    QCOMPARE(zh.translate("idem::console::MainWindow", "&File"), QStringLiteral("文件(&F)"));
    QCOMPARE(zh.translate("idem::console::Tile", "Expired leases"), QStringLiteral("过期租约"));
    // The system locale decides when nothing is chosen; a choice always wins.
    QCOMPARE(language::resolve(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
    QCOMPARE(language::resolve(QStringLiteral("fr")), QStringLiteral("en"));
}

void TestDesktop::everyChineseStringIsTranslated()
{
    const QString dir = qEnvironmentVariable("IDEM_SOURCE_DIR");
    QVERIFY2(!dir.isEmpty(), "IDEM_SOURCE_DIR is not set (ctest sets it)");
    QString error;
    const auto messages = readTs(dir + QStringLiteral("/translations/idem_console_zh_CN.ts"), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY2(messages.size() > 200, qPrintable(QString::number(messages.size())));
    QStringList untranslated, badPlaceholders;
    for (const auto& m : messages) {
        bool empty = m.translations.isEmpty();
        for (const auto& t : m.translations)
            empty = empty || t.isEmpty();
        if (m.unfinished || empty) {
            untranslated << QStringLiteral("%1: \"%2\"").arg(m.context, m.source);
            continue;
        }
        // Every %1 / %n of the source must survive, or .arg() fills the wrong hole.
        for (const auto& t : m.translations) {
            QSet<QString> want = placeholders(m.source), got = placeholders(t);
            const auto plain = [](QSet<QString> s) {
                QSet<QString> out;
                for (auto x : s)
                    out.insert(x.remove(QLatin1Char('L')));
                return out;
            };
            if (plain(want) != plain(got))
                badPlaceholders << QStringLiteral("%1: \"%2\" → \"%3\"").arg(m.context, m.source, t);
        }
    }
    QVERIFY2(untranslated.isEmpty(),
        qPrintable(QStringLiteral("%1 untranslated message(s) in idem_console_zh_CN.ts "
                                  "(scripts/update-translations.sh, then translate):\n  %2")
                       .arg(untranslated.size())
                       .arg(untranslated.join(QStringLiteral("\n  ")))));
    QVERIFY2(badPlaceholders.isEmpty(), qPrintable(badPlaceholders.join(QLatin1Char('\n'))));
}

// Words the console shares with idemctl (operations/wording, issue 41 items 6 and 11): a filter
// in words (the Jobs page's Filter column, Apply to all) and a missing right read in Chinese in
// the Chinese console, with the values as they are.
void TestDesktop::sharedWordsInChinese()
{
    idem::TaskFilter f;
    f.statuses = { "failed", "retryable_failed" };
    f.operation = "charge";
    f.exhausted = true;
    f.errorContains = "503";
    idem::Rights rights;
    rights.known = true;
    rights.login = rights.caller = "alice";
    rights.rights.push_back({ "read", "idem_reader", true });
    const auto role = RoleRights::fromRights(rights);
    QCOMPARE(taskFilterText(f),
        QStringLiteral(
            "status failed or retryable_failed, operation charge, retries exhausted (not a permanent error), "
            "error message containing \"503\" (any case)"));
    QVERIFY(language::apply(QStringLiteral("zh_CN")));
    const QString words = taskFilterText(f);
    for (const char* english : { "status", "operation", "retries", "exhausted", "error message", " or " })
        QVERIFY2(!words.contains(QLatin1String(english)), qPrintable(words));
    for (const char* value : { "failed", "retryable_failed", "charge", "503" })
        QVERIFY2(words.contains(QLatin1String(value)), qPrintable(words));
    QCOMPARE(jobFilterText(idem::jobFilterJson(f)), words);
    const QString refusal = role.refusal(QStringLiteral("approve"));
    QVERIFY2(!refusal.contains(QStringLiteral("does not hold")) && refusal.contains(QStringLiteral("idem_may_approve"))
            && refusal.contains(QStringLiteral("alice")),
        qPrintable(refusal));
    // The Tasks page's new controls, as a Chinese operator sees them.
    openWindow();
    QVERIFY(m_window->showPage(QStringLiteral("tasks")));
    auto* exhausted = m_window->findChild<QCheckBox*>(QStringLiteral("exhaustedFilter"));
    auto* contains = m_window->findChild<QLineEdit*>(QStringLiteral("errorContainsFilter"));
    QVERIFY(exhausted && contains);
    QCOMPARE(exhausted->text(), QStringLiteral("重试已用尽"));
    QCOMPARE(contains->placeholderText(), QStringLiteral("错误信息包含…"));
    if (const QString dir = qEnvironmentVariable("IDEM_SCREENSHOT_DIR"); !dir.isEmpty()) {
        for (const bool dark : { false, true }) {
            theme::apply(dark ? Theme::Dark : Theme::Light);
            QCoreApplication::processEvents();
            m_window->grab().save(
                dir + (dark ? QStringLiteral("/tasks-zh_CN-dark.png") : QStringLiteral("/tasks-zh_CN-light.png")));
        }
        theme::apply(Theme::Light);
    }
    closeWindow();
    QVERIFY(language::apply(QStringLiteral("en")));
    QCOMPARE(role.refusal(QStringLiteral("approve")),
        QStringLiteral("Role alice does not hold the approve right (role idem_may_approve): the database refuses this "
                       "to it. An administrator grants it with GRANT idem_may_approve TO alice."));
}

void TestDesktop::languageSwitchesLive()
{
    openWindow();
    const QStringList englishMenus
        = { QStringLiteral("&File"), QStringLiteral("&Connection"), QStringLiteral("&View"), QStringLiteral("&Help") };
    const QStringList chineseMenus = { QStringLiteral("文件(&F)"), QStringLiteral("连接(&C)"),
        QStringLiteral("视图(&V)"), QStringLiteral("帮助(&H)") };
    for (const auto& m : englishMenus)
        QVERIFY2(menuTitles(m_window.get()).contains(m), qPrintable(menuTitles(m_window.get()).join(u',')));
    QCOMPARE(tabTitles(m_window.get()).mid(0, 6),
        QStringList({ QStringLiteral("Dashboard"), QStringLiteral("Tasks"), QStringLiteral("Audit"),
            QStringLiteral("Jobs"), QStringLiteral("Storage"), QStringLiteral("Connection") }));
    TileWidget* tile = m_window->dashboard()->tile(Tile::ExpiredLeases);
    QCOMPARE(tile->titleText(), QStringLiteral("Expired leases"));

    // View > Language > 简体中文, as a person picks it: everything listed changes without a restart.
    auto* chinese = m_window->findChild<QAction*>(QStringLiteral("language_zh_CN"));
    QVERIFY(chinese);
    chinese->trigger();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LanguageChange);
    QCOMPARE(language::current(), QStringLiteral("zh_CN"));
    for (const auto& m : chineseMenus)
        QVERIFY2(menuTitles(m_window.get()).contains(m), qPrintable(menuTitles(m_window.get()).join(u',')));
    QCOMPARE(tabTitles(m_window.get()).mid(0, 6),
        QStringList({ QStringLiteral("仪表盘"), QStringLiteral("任务"), QStringLiteral("审计"), QStringLiteral("作业"),
            QStringLiteral("存储"), QStringLiteral("连接") }));
    QCOMPARE(tile->titleText(), QStringLiteral("过期租约"));
    QCOMPARE(m_window->windowTitle(), QStringLiteral("Idem 控制台"));
    // The dashboard's toolbar, chart titles and legends switch too.
    const auto zh = [](const char* context, const char* source) {
        return QCoreApplication::translate(context, source);
    };
    auto* pause = m_window->dashboard()->findChild<QToolButton*>(QStringLiteral("pauseButton"));
    QVERIFY(pause);
    QCOMPARE(pause->text(), zh("idem::console::DashboardWidget", "Pause"));
    QVERIFY(pause->text() != QStringLiteral("Pause"));
    QStringList titles;
    for (auto* v : m_window->dashboard()->charts()->findChildren<QChartView*>())
        titles << v->chart()->title();
    QVERIFY2(titles.contains(zh("idem::console::ChartPanel", "Claim outcomes per minute")), qPrintable(titles.join(u',')));
    QVERIFY(!titles.contains(QStringLiteral("Claim outcomes per minute")));
    QCOMPARE(m_window->dashboard()->charts()->series(QStringLiteral("new"))->name(), zh("idem::console::ChartPanel", "new"));
    QVERIFY(m_window->dashboard()->charts()->series(QStringLiteral("new"))->name() != QStringLiteral("new"));
    // The Tasks, Audit and Connection pages switch too, filters and buttons included (issue 24
    // item 11: they stayed English until a restart), and nothing needs a restart any more.
    QVERIFY(!m_window->findChild<QAction*>(QStringLiteral("languageRestartNote")));
    auto* tasks = m_window->findChild<TaskBrowserWidget*>();
    QCOMPARE(tasks->findChild<QPushButton*>(QStringLiteral("applyFilter"))->text(), QStringLiteral("应用"));
    QCOMPARE(tasks->findChild<QPushButton*>(QStringLiteral("copyKeyButton"))->text(), QStringLiteral("复制键"));
    QCOMPARE(tasks->findChild<QLineEdit*>(QStringLiteral("prefixFilter"))->placeholderText(), QStringLiteral("键前缀"));
    QCOMPARE(tasks->findChild<QComboBox*>(QStringLiteral("statusFilter"))->itemText(0),
        zh("idem::console::TaskBrowserWidget", "Any status"));
    QVERIFY(tasks->findChild<QComboBox*>(QStringLiteral("statusFilter"))->itemText(0) != QStringLiteral("Any status"));
    auto* audit = m_window->findChild<QWidget*>(QStringLiteral("auditPage"));
    QVERIFY(audit);
    QCOMPARE(audit->findChild<QPushButton*>(QStringLiteral("verifyChainButton"))->text(), QStringLiteral("校验哈希链"));
    QCOMPARE(audit->findChild<QPushButton*>(QStringLiteral("auditApply"))->text(), QStringLiteral("应用"));
    QCOMPARE(audit->findChild<QLineEdit*>(QStringLiteral("auditKeyFilter"))->placeholderText(),
        zh("idem::console::AuditWidget", "key (exact)"));
    auto* asOf = m_window->findChild<QLabel*>(QStringLiteral("asOfValueLabel"));
    QVERIFY(asOf);
    QCOMPARE(asOf->text(), QStringLiteral("连接于："));
    // Qt appends the display name to a title that does not end with it: in Chinese it must be
    // the Chinese name, or every window reads "… – Idem 控制台 – Idem console".
    QCOMPARE(QGuiApplication::applicationDisplayName(), QStringLiteral("Idem 控制台"));
    QVERIFY(m_window->windowTitle().endsWith(QGuiApplication::applicationDisplayName()));
    QCOMPARE(consoleSettings().value(QStringLiteral("ui/language")).toString(), QStringLiteral("zh_CN"));
    // A dialog opened now speaks Chinese too.
    m_window->showShortcuts();
    auto* dialog = m_window->findChild<ShortcutsDialog*>();
    QVERIFY(dialog);
    QCOMPARE(dialog->windowTitle(), QStringLiteral("键盘快捷键"));
    dialog->close();
    QTRY_VERIFY(!m_window->findChild<ShortcutsDialog*>());

    // And back.
    auto* english = m_window->findChild<QAction*>(QStringLiteral("language_en"));
    QVERIFY(english);
    english->trigger();
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LanguageChange);
    QCOMPARE(language::current(), QStringLiteral("en"));
    for (const auto& m : englishMenus)
        QVERIFY2(menuTitles(m_window.get()).contains(m), qPrintable(menuTitles(m_window.get()).join(u',')));
    QCOMPARE(tabTitles(m_window.get()).mid(0, 6),
        QStringList({ QStringLiteral("Dashboard"), QStringLiteral("Tasks"), QStringLiteral("Audit"),
            QStringLiteral("Jobs"), QStringLiteral("Storage"), QStringLiteral("Connection") }));
    QCOMPARE(tile->titleText(), QStringLiteral("Expired leases"));
    QCOMPARE(m_window->windowTitle(), QStringLiteral("Idem console"));
    QCOMPARE(QGuiApplication::applicationDisplayName(), QStringLiteral("Idem console"));
    QCOMPARE(tasks->findChild<QPushButton*>(QStringLiteral("applyFilter"))->text(), QStringLiteral("Apply"));
    QCOMPARE(audit->findChild<QPushButton*>(QStringLiteral("verifyChainButton"))->text(), QStringLiteral("Verify chain"));
    QCOMPARE(asOf->text(), QStringLiteral("Connected at:"));
    QCOMPARE(consoleSettings().value(QStringLiteral("ui/language")).toString(), QStringLiteral("en"));
    QCOMPARE(pause->text(), QStringLiteral("Pause"));
    QCOMPARE(m_window->dashboard()->charts()->series(QStringLiteral("new"))->name(), QStringLiteral("new"));
    // The task detail's tabs come back to English.
    auto* detailTabs = m_window->findChild<TaskBrowserWidget*>()->detail()->findChild<QTabWidget*>();
    QVERIFY(detailTabs);
    QCOMPARE(detailTabs->tabText(0), QStringLiteral("Result"));
    QCOMPARE(detailTabs->tabText(1), QStringLiteral("Error history"));
    QCOMPARE(detailTabs->tabText(2), QStringLiteral("Audit"));
    m_window->showShortcuts();
    dialog = m_window->findChild<ShortcutsDialog*>();
    QVERIFY(dialog);
    QCOMPARE(dialog->windowTitle(), QStringLiteral("Keyboard shortcuts"));
    dialog->close();
    QTRY_VERIFY(!m_window->findChild<ShortcutsDialog*>());

    // "System" forgets the choice: the next start follows the locale again.
    m_window->findChild<QAction*>(QStringLiteral("language_system"))->trigger();
    QCOMPARE(consoleSettings().value(QStringLiteral("ui/language")).toString(), QString());
    QCOMPARE(language::current(), language::resolve(QString()));
    language::apply(QStringLiteral("en"));
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LanguageChange);
}

void TestDesktop::languageMenuTicksTheRunningChoice()
{
    // Started with --language en and nothing saved: English is ticked, not System.
    {
        auto s = consoleSettings();
        s.remove(QStringLiteral("ui/language"));
    }
    language::apply(QStringLiteral("en"));
    openWindow();
    auto* english = m_window->findChild<QAction*>(QStringLiteral("language_en"));
    auto* system = m_window->findChild<QAction*>(QStringLiteral("language_system"));
    QVERIFY(english && system);
    QVERIFY(english->isChecked());
    QVERIFY(!system->isChecked());
    // Started without a choice: System.
    language::apply(QString());
    openWindow();
    QVERIFY(m_window->findChild<QAction*>(QStringLiteral("language_system"))->isChecked());
    language::apply(QStringLiteral("en"));
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LanguageChange);
}

// Issue 41 item 11: the Tasks page's match sentence ended in English ("every row") after a
// switch to Chinese, the tile's words having been written once, when the tile was clicked.
void TestDesktop::tileWordsFollowLanguage()
{
    openWindow();
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(m_db->dsn());
    m_session->connectTo(s);
    DashboardModel* model = m_window->dashboard()->model();
    QTRY_VERIFY_WITH_TIMEOUT(model->ticks() >= 1, timeoutMs);
    auto* tasks = m_window->findChild<TaskBrowserWidget*>();
    QVERIFY(tasks);
    const auto labels = [tasks] {
        QStringList out;
        for (const auto* l : tasks->findChildren<QLabel*>())
            if (!l->text().isEmpty())
                out << l->text();
        return out;
    };
    for (const Tile tile : { Tile::TotalRows, Tile::Failed, Tile::FailedRetries, Tile::LongUnfinished }) {
        const QString english = model->opensText(tile);
        QVERIFY2(!english.isEmpty(), qPrintable(tileTitle(tile)));
        m_window->console()->pages()->setCurrentIndex(0); // the dashboard, as a person clicks it
        QTest::mouseClick(m_window->dashboard()->tile(tile), Qt::LeftButton);
        QTRY_VERIFY2_WITH_TIMEOUT(tasks->countText().endsWith(english),
            qPrintable(tileTitle(tile) + QStringLiteral(": ") + tasks->countText()), timeoutMs);

        m_window->findChild<QAction*>(QStringLiteral("language_zh_CN"))->trigger();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LanguageChange);
        QCOMPARE(language::current(), QStringLiteral("zh_CN"));
        const QString chinese = model->opensText(tile);
        QVERIFY2(chinese != english, qPrintable(chinese));
        // At once, and after the page's next count.
        QVERIFY2(tasks->countText().endsWith(chinese), qPrintable(tasks->countText()));
        QVERIFY2(!labels().join(u'\n').contains(english), qPrintable(labels().join(u'\n')));
        tasks->refresh();
        QTRY_VERIFY_WITH_TIMEOUT(tasks->countText().endsWith(chinese), timeoutMs);
        QVERIFY2(!labels().join(u'\n').contains(english), qPrintable(labels().join(u'\n')));

        m_window->findChild<QAction*>(QStringLiteral("language_en"))->trigger();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LanguageChange);
        QVERIFY2(tasks->countText().endsWith(english), qPrintable(tasks->countText()));
    }
    language::apply(QStringLiteral("en"));
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LanguageChange);
}

void TestDesktop::shortcuts()
{
    openWindow();
    ConnectionSettings s;
    s.conninfo = QString::fromStdString(m_db->dsn());
    m_session->connectTo(s);
    DashboardModel* model = m_window->dashboard()->model();
    QTRY_VERIFY_WITH_TIMEOUT(model->ticks() >= 1, timeoutMs);
    // Paused, only a refresh can make the next tick happen.
    model->setPaused(true);
    QTRY_VERIFY_WITH_TIMEOUT(!model->tickPending(), timeoutMs); // a tick under way has answered
    const int before = model->ticks();
    auto* refresh = m_window->findChild<QAction*>(QStringLiteral("refreshAction"));
    QVERIFY(refresh);
    QTRY_VERIFY(refresh->isEnabled());
    QSignalSpy refreshed(refresh, &QAction::triggered);
    QTest::keyClick(m_window.get(), Qt::Key_F5);
    QCOMPARE(refreshed.count(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(model->ticks() > before, timeoutMs);

    // Ctrl+F: the Tasks page in front, its key search focused.
    QTest::keyClick(m_window.get(), Qt::Key_F, Qt::ControlModifier);
    auto* pages = m_window->console()->pages();
    QCOMPARE(pages->currentWidget()->objectName(), QStringLiteral("taskBrowser"));
    QTRY_VERIFY(QApplication::focusWidget());
    QCOMPARE(QApplication::focusWidget()->objectName(), QStringLiteral("prefixFilter"));
    // Ctrl+1 / Ctrl+PgDown / Ctrl+PgUp move between pages.
    QTest::keyClick(m_window.get(), Qt::Key_1, Qt::ControlModifier);
    QCOMPARE(pages->currentWidget(), m_window->dashboard());
    QTest::keyClick(m_window.get(), Qt::Key_PageDown, Qt::ControlModifier);
    QCOMPARE(pages->currentWidget()->objectName(), QStringLiteral("taskBrowser"));
    QTest::keyClick(m_window.get(), Qt::Key_PageUp, Qt::ControlModifier);
    QCOMPARE(pages->currentWidget(), m_window->dashboard());

    // No key reaches two actions.
    std::map<QString, QString> owner;
    const auto actions = m_window->findChildren<QAction*>();
    for (QAction* a : actions) {
        const auto keys = a->shortcuts();
        for (const auto& k : keys) {
            const QString key = k.toString(QKeySequence::PortableText);
            const auto [it, fresh] = owner.emplace(key, a->text());
            QVERIFY2(fresh, qPrintable(QStringLiteral("%1 is on both %2 and %3").arg(key, it->second, a->text())));
        }
    }

    // F1: the shortcuts dialog, built from those same actions.
    QTest::keyClick(m_window.get(), Qt::Key_F1);
    auto* dialog = m_window->findChild<ShortcutsDialog*>();
    QVERIFY(dialog);
    QTRY_VERIFY(dialog->isVisible());
    std::map<QString, QString> listed;
    for (int row = 0; row < dialog->table()->rowCount(); ++row)
        listed[dialog->table()->item(row, 1)->text()] = dialog->table()->item(row, 0)->text();
    const auto native = [](const QKeySequence& k) { return k.toString(QKeySequence::NativeText); };
    QCOMPARE(listed[native(QKeySequence(Qt::Key_F5))], QStringLiteral("Connection › Refresh"));
    QCOMPARE(listed[native(QKeySequence(Qt::CTRL | Qt::Key_Q))], QStringLiteral("File › Quit"));
    QCOMPARE(listed[native(QKeySequence(Qt::CTRL | Qt::Key_F))], QStringLiteral("View › Find tasks…"));
    QCOMPARE(listed[native(QKeySequence(Qt::CTRL | Qt::Key_2))], QStringLiteral("View › Tasks"));
    // The recovery actions and the thresholds have keys of their own too.
    QCOMPARE(listed[native(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R))], QStringLiteral("Requeue…"));
    QCOMPARE(listed[native(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L))], QStringLiteral("Release lease…"));
    QCOMPARE(listed[native(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F))], QStringLiteral("Mark failed…"));
    QCOMPARE(listed[native(QKeySequence(Qt::CTRL | Qt::Key_T))], QStringLiteral("Thresholds…"));
    // Every button that acts has a key, and F1 lists it under the button's own words.
    QStringList listedNames;
    for (const auto& [key, name] : listed)
        listedNames << name;
    for (const char* name : { "verifyChainButton", "copyKeyButton", "copyJsonButton", "requeueButton",
             "releaseButton", "failButton", "thresholdsButton", "refreshButton" }) {
        auto* button = m_window->findChild<QAbstractButton*>(QLatin1String(name));
        QVERIFY2(button, name);
        QString text = button->text();
        text.remove(QLatin1Char('&'));
        QVERIFY2(listedNames.contains(text) || (QLatin1String(name) == QLatin1String("refreshButton")
                     && listed[native(QKeySequence(Qt::Key_F5))] == QStringLiteral("Connection › Refresh")),
            qPrintable(QStringLiteral("%1 (%2) has no key in F1: %3").arg(text, QLatin1String(name), listedNames.join(u','))));
    }
    QVERIFY2(listed.count(native(QKeySequence(Qt::Key_F1)) + QStringLiteral(", ")
                 + native(QKeySequence(Qt::CTRL | Qt::Key_Question))),
        "F1 / Ctrl+? is listed");
    // Every action with a key is in the table (an action added later appears by itself).
    int withKeys = 0;
    for (QAction* a : actions)
        withKeys += a->shortcuts().isEmpty() ? 0 : 1;
    QCOMPARE(dialog->table()->rowCount(), withKeys);
    // Every action's path and keys fit their column (issue 24 item 12: the Action column was cut
    // below the first screenful of rows).
    const QFontMetrics fm(dialog->table()->font());
    for (int row = 0; row < dialog->table()->rowCount(); ++row)
        for (int c = 0; c < 2; ++c) {
            const QString text = dialog->table()->item(row, c)->text();
            QVERIFY2(dialog->table()->columnWidth(c) >= fm.horizontalAdvance(text) + 8,
                qPrintable(QStringLiteral("%1: %2 px for %3 px").arg(text).arg(dialog->table()->columnWidth(c))
                               .arg(fm.horizontalAdvance(text))));
        }
    dialog->close();
    QTRY_VERIFY(!m_window->findChild<ShortcutsDialog*>());

    // Ctrl+Q: the console closes.
    QVERIFY(m_window->isVisible());
    m_window->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    QTest::keyClick(m_window.get(), Qt::Key_Q, Qt::ControlModifier);
    QTRY_VERIFY(!m_window->isVisible());
}

void TestDesktop::themeOverride()
{
    openWindow();
    TileWidget* tile = m_window->dashboard()->tile(Tile::Processing);
    const auto chartThemes = [this] {
        QSet<int> themes;
        const auto views = m_window->dashboard()->charts()->findChildren<QChartView*>();
        for (auto* v : views)
            themes.insert(v->chart()->theme());
        return themes;
    };

    m_window->findChild<QAction*>(QStringLiteral("theme_dark"))->trigger();
    QCoreApplication::processEvents();
    QVERIFY2(QApplication::palette().color(QPalette::Window).lightness() < 80,
        qPrintable(QApplication::palette().color(QPalette::Window).name()));
    QVERIFY(m_window->palette().color(QPalette::Window).lightness() < 80);
    QVERIFY(m_window->palette().color(QPalette::WindowText).lightness() > 180);
    // Tiles and charts follow: dark backgrounds, light text.
    QVERIFY(tile->palette().color(QPalette::Window).lightness() < 100);
    QVERIFY(
        tile->palette().color(QPalette::WindowText).lightness() - tile->palette().color(QPalette::Window).lightness()
        > 60);
    QCOMPARE(chartThemes(), QSet<int>({ int(QChart::ChartThemeDark) }));
    QCOMPARE(consoleSettings().value(QStringLiteral("ui/theme")).toString(), QStringLiteral("dark"));
    {
        auto s = consoleSettings();
        QCOMPARE(theme::load(s), Theme::Dark);
    }

    m_window->findChild<QAction*>(QStringLiteral("theme_light"))->trigger();
    QCoreApplication::processEvents();
    QVERIFY2(QApplication::palette().color(QPalette::Window).lightness() > 200,
        qPrintable(QApplication::palette().color(QPalette::Window).name()));
    QVERIFY(tile->palette().color(QPalette::Window).lightness() > 200);
    // Not connected, so the tile is greyed out: still well apart from its background.
    QVERIFY(
        tile->palette().color(QPalette::Window).lightness() - tile->palette().color(QPalette::WindowText).lightness()
        > 60);
    QCOMPARE(chartThemes(), QSet<int>({ int(QChart::ChartThemeLight) }));
    QCOMPARE(consoleSettings().value(QStringLiteral("ui/theme")).toString(), QStringLiteral("light"));

    m_window->findChild<QAction*>(QStringLiteral("theme_system"))->trigger();
    QCOMPARE(QApplication::palette().color(QPalette::Window), m_platformWindow);
    QCOMPARE(consoleSettings().value(QStringLiteral("ui/theme")).toString(), QStringLiteral("system"));
    {
        auto s = consoleSettings();
        QCOMPARE(theme::load(s), Theme::System);
    }
}

QTEST_MAIN(TestDesktop)
#include "tst_desktop.moc"
