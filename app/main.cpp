#include <QAbstractItemView>
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QPointer>
#include <QSettings>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "app/fleetwindow.h"
#include "app/mainwindow.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/fleetmodel.h"
#include "models/latencywatch.h"
#include "models/patroniwatcher.h"
#include "models/pausewatch.h"
#include "models/profilestore.h"
#include "views/dashboardwidget.h"
#include "views/fleetwidget.h"
#include "views/language.h"
#include "views/snapshotwindow.h"
#include "views/theme.h"

using namespace idem::console;

namespace {

// --screenshot: once the first attempt has settled (connected and the dashboard's first tick
// drawn, or failed), save
// what a person would see and quit. Screenshot scripts and reviews use it under Xvfb or
// QT_QPA_PLATFORM=offscreen.
void arrangeScreenshot(MainWindow* window, const QString& file)
{
    ConsoleSession* session = window->adminSession();
    ConsoleSession* monitor = window->monitorSession();
    auto* settle = new QTimer(window);
    settle->setSingleShot(true);
    settle->setInterval(400);
    auto countsSeen = std::make_shared<bool>(false);
    const auto restart = [settle] { settle->start(); };
    QObject::connect(session, &ConsoleSession::stateChanged, settle, restart);
    QObject::connect(session, &ConsoleSession::failed, settle, restart);
    QObject::connect(session, &ConsoleSession::serverInfoChanged, settle, restart);
    QObject::connect(monitor, &ConsoleSession::stateChanged, settle, restart);
    QObject::connect(window->dashboard()->model(), &DashboardModel::updated, settle, [window, settle, countsSeen] {
        *countsSeen = window->dashboard()->model()->ticks() > 0;
        settle->start();
    });
    // The pauses' banner, badges and bands come from their own read.
    QObject::connect(window->pauseWatch(), &PauseWatch::changed, settle, restart);
    // So do the latency chart and tile (issue #27).
    LatencyWatch* latency = window->dashboard()->latencyWatch();
    if (latency)
        QObject::connect(latency, &LatencyWatch::changed, settle, restart);
    // The Patroni cluster on the Connection page has its own read (issue #29).
    PatroniWatcher* patroni = window->findChild<PatroniWatcher*>();
    if (patroni)
        QObject::connect(patroni, &PatroniWatcher::changed, settle, restart);
    // The pages load their tables on their own (tasks, audit): the picture waits for them too.
    const auto views = window->findChildren<QAbstractItemView*>();
    for (QAbstractItemView* view : views) {
        if (QAbstractItemModel* model = view->model()) {
            QObject::connect(model, &QAbstractItemModel::modelReset, settle, restart);
            QObject::connect(model, &QAbstractItemModel::rowsInserted, settle, restart);
            QObject::connect(model, &QAbstractItemModel::layoutChanged, settle, restart);
        }
    }
    QObject::connect(
        settle, &QTimer::timeout, window, [window, session, monitor, settle, countsSeen, file, latency, patroni] {
            const bool busy = session->state() == ConsoleSession::State::Connecting || session->migrating()
                || monitor->state() == ConsoleSession::State::Connecting || (monitor->canPoll() && !*countsSeen)
                || (monitor->canPoll() && window->pauseWatch()->reads() == 0 && window->pauseWatch()->error().isEmpty())
                || (monitor->canPoll() && latency && latency->reads() == 0
                    && latency->error().isEmpty())
                || (patroni && patroni->configured() && patroni->reads() == 0);
            if (busy) {
                settle->start();
                return;
            }
            const bool saved = window->frontWindow()->grab().save(file);
            std::fprintf(stderr, "idem-console: %s %s\n", saved ? "saved" : "could not save", qPrintable(file));
            QApplication::exit(saved ? 0 : 1);
        });
    settle->start(1500);
    // Never hang a script: a connect timeout is 10 s, so 60 s means something is wrong.
    QTimer::singleShot(60000, window, [] {
        std::fprintf(stderr, "idem-console: --screenshot gave up waiting\n");
        QApplication::exit(1);
    });
}

// --fleet --screenshot: once every database has said how it is (or after 30 s), save the Fleet
// window and quit.
void arrangeFleetScreenshot(FleetWindow* fleet, const QString& file)
{
    auto* check = new QTimer(fleet);
    check->setInterval(500);
    auto waited = std::make_shared<int>(0);
    QObject::connect(check, &QTimer::timeout, fleet, [fleet, file, check, waited] {
        const bool settled = fleet->model()->count(Level::NoData) == 0 || ++*waited > 60;
        if (!settled)
            return;
        check->stop();
        const bool saved = fleet->grab().save(file);
        std::fprintf(stderr, "idem-console: %s %s\n", saved ? "saved" : "could not save", qPrintable(file));
        QApplication::exit(saved ? 0 : 1);
    });
    check->start();
}

// --snapshot: once the window is there, show the --page asked for; with --screenshot, save it and
// quit (1 when the bundle could not be opened, saying why).
void arrangeSnapshot(SnapshotOpener* opener, const QString& page, const QString& file)
{
    QObject::connect(opener, &SnapshotOpener::opened, qApp, [page, file] {
        SnapshotWindow* window = nullptr;
        for (QWidget* w : QApplication::topLevelWidgets())
            if (auto* s = qobject_cast<SnapshotWindow*>(w))
                window = s;
        if (!window)
            return;
        const int index = page == QLatin1String("tasks") ? 1 : page == QLatin1String("audit") ? 2 : 0;
        window->pages()->setCurrentIndex(index);
        if (file.isEmpty())
            return;
        QTimer::singleShot(600, window, [window, file] {
            const bool saved = window->grab().save(file);
            std::fprintf(stderr, "idem-console: %s %s\n", saved ? "saved" : "could not save", qPrintable(file));
            QApplication::exit(saved ? 0 : 1);
        });
    });
    if (!file.isEmpty())
        QObject::connect(opener, &SnapshotOpener::failed, qApp, [](const QString&, const QString& message) {
            std::fprintf(stderr, "idem-console: %s\n", qPrintable(message));
            QApplication::exit(1);
        });
}

} // namespace

int main(int argc, char** argv)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Operator console for Idem task idempotency on PostgreSQL.\n"
                       "Without --dsn it opens the connection dialog. PG* environment variables, "
                       "pg_service.conf and ~/.pgpass apply as in psql."));
    const QCommandLineOption helpOption = parser.addHelpOption();
    const QCommandLineOption versionOption = parser.addVersionOption();
    const QCommandLineOption dsnOption(QStringLiteral("dsn"),
        QStringLiteral("Connect at start to DSN (libpq conninfo, postgresql:// URI or "
                       "service name), without the dialog."),
        QStringLiteral("DSN"));
    const QCommandLineOption schemaOption(QStringLiteral("schema"),
        QStringLiteral("Schema holding the Idem tables (default: idem)."), QStringLiteral("NAME"),
        QStringLiteral("idem"));
    const QCommandLineOption screenshotOption(QStringLiteral("screenshot"),
        QStringLiteral("Once connected (or failed), save the front window as an image to FILE and exit."),
        QStringLiteral("FILE"));
    const QCommandLineOption monitorOption(QStringLiteral("monitor-dsn"),
        QStringLiteral("Read the dashboard and task pages from DSN (e.g. a streaming standby; "
                       "target_session_attrs=prefer-standby unless it says otherwise). Default: the --dsn server."),
        QStringLiteral("DSN"));
    const QCommandLineOption patroniOption(QStringLiteral("patroni"),
        QStringLiteral("Show the Patroni cluster of --dsn on the Connection page, read from Patroni's REST API at URL "
                       "(http://host:8008; several, comma-separated, are asked in turn). No password in it."),
        QStringLiteral("URL"));
    const QCommandLineOption languageOption(QStringLiteral("language"),
        QStringLiteral("User interface language: en or zh_CN (default: View > Language, else the system "
                       "locale)."),
        QStringLiteral("LANG"));
    const QCommandLineOption pageOption(QStringLiteral("page"),
        QStringLiteral("Page to show first: dashboard, tasks, audit, storage or connection."), QStringLiteral("PAGE"),
        QStringLiteral("dashboard"));
    parser.addOptions({ dsnOption, monitorOption, patroniOption, schemaOption, screenshotOption });
    const QCommandLineOption themeOption(QStringLiteral("theme"),
        QStringLiteral("Theme for this run only: system, light or dark (default: View > Theme)."),
        QStringLiteral("THEME"));
    parser.addOptions({ languageOption, pageOption, themeOption });
    const QCommandLineOption snapshotOption(QStringLiteral("snapshot"),
        QStringLiteral("Open the incident snapshot bundle DIR read-only (no connection dialog). With --screenshot, "
                       "save the snapshot window (its --page) and exit."),
        QStringLiteral("DIR"));
    parser.addOption(snapshotOption);
    const QCommandLineOption fleetOption(QStringLiteral("fleet"),
        QStringLiteral("Open the Fleet window: every saved connection profile on one page (View > Fleet)."));
    parser.addOption(fleetOption);
    parser.addPositionalArgument(QStringLiteral("link"),
        QStringLiteral("An idem:// link (File > Copy link): open the view it names, connecting with the saved "
                       "profile of that name."),
        QStringLiteral("[idem://...]"));

    // --help and --version answer before QApplication exists, so they work over ssh
    // without a display; everything else is parsed again once Qt has taken its own options.
    QStringList rawArgs;
    for (int i = 0; i < argc; ++i)
        rawArgs << QString::fromLocal8Bit(argv[i]);
    if (parser.parse(rawArgs) && (parser.isSet(helpOption) || parser.isSet(versionOption))) {
        QCoreApplication::setApplicationName(QStringLiteral("idem-console"));
        QCoreApplication::setApplicationVersion(QStringLiteral(IDEM_VERSION));
        if (parser.isSet(versionOption))
            std::printf("idem-console %s\n", IDEM_VERSION);
        else
            std::printf("%s",
                qPrintable(
                    parser.helpText().replace(QStringLiteral("<executable_name>"), QStringLiteral("idem-console"))));
        return 0;
    }

    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Idem"));
    QApplication::setApplicationName(QStringLiteral("idem-console"));
    QApplication::setApplicationVersion(QStringLiteral(IDEM_VERSION));
    QApplication::setApplicationDisplayName(QStringLiteral("Idem console"));
    // The installed desktop entry and icons carry this id (packaging/); Wayland matches on it.
    QGuiApplication::setDesktopFileName(QStringLiteral("io.github.idem.Console"));
    QIcon icon;
    for (const int size : { 16, 32, 48, 64, 128, 256 })
        icon.addFile(QStringLiteral(":/icons/idem-%1.png").arg(size), QSize(size, size));
    QApplication::setWindowIcon(icon);
    parser.process(app);
    if (parser.isSet(languageOption) && !language::available().contains(parser.value(languageOption))) {
        std::fprintf(stderr, "idem-console: --language must be one of: %s\n",
            qPrintable(language::available().join(QStringLiteral(", "))));
        return 2;
    }
    const QStringList pages = { QStringLiteral("dashboard"), QStringLiteral("tasks"), QStringLiteral("audit"),
        QStringLiteral("jobs"), QStringLiteral("storage"), QStringLiteral("connection") };
    if (!pages.contains(parser.value(pageOption))) {
        std::fprintf(stderr, "idem-console: --page must be one of: %s\n", qPrintable(pages.join(QStringLiteral(", "))));
        return 2;
    }
    const std::pair<const char*, Theme> themes[]
        = { { "system", Theme::System }, { "light", Theme::Light }, { "dark", Theme::Dark } };
    std::optional<Theme> themeChoice;
    for (const auto& [name, t] : themes)
        if (parser.value(themeOption) == QLatin1String(name))
            themeChoice = t;
    if (parser.isSet(themeOption) && !themeChoice) {
        std::fprintf(stderr, "idem-console: --theme must be one of: system, light, dark\n");
        return 2;
    }
    {
        // Theme and language before the first widget exists; --theme and --language win over the
        // saved choices for this run only.
        QSettings settings(
            QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"));
        theme::apply(themeChoice.value_or(theme::load(settings)));
        language::apply(parser.isSet(languageOption) ? parser.value(languageOption) : language::loadChoice(settings));
    }

    if (parser.isSet(patroniOption)) {
        const PatroniEndpoints endpoints = parsePatroniEndpoints(parser.value(patroniOption));
        if (!endpoints.error.isEmpty() || endpoints.urls.isEmpty()) {
            std::fprintf(stderr, "idem-console: --patroni: %s\n",
                qPrintable(endpoints.error.isEmpty() ? QStringLiteral("no URL given") : endpoints.error));
            return 2;
        }
        if (!parser.isSet(dsnOption)) {
            std::fprintf(stderr, "idem-console: --patroni needs --dsn (a profile keeps its own in the dialog)\n");
            return 2;
        }
    }

    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1 || (positional.size() == 1 && !isViewLink(positional.first()))) {
        std::fprintf(stderr, "idem-console: the only argument it takes is one idem:// link\n");
        return 2;
    }
    const QString link = positional.isEmpty() ? QString() : positional.first();
    if (!link.isEmpty() && (parser.isSet(dsnOption) || parser.isSet(snapshotOption) || parser.isSet(fleetOption))) {
        std::fprintf(stderr, "idem-console: a link names its own profile: give it alone, without --dsn, --snapshot or --fleet\n");
        return 2;
    }

    ConsoleSession session;
    ProfileStore profiles;
    MainWindow window(&session, &profiles);
    window.showPage(parser.value(pageOption));
    if (parser.isSet(fleetOption)) {
        QPointer<FleetWindow> fleet = FleetWindow::showFleet(&profiles);
        if (parser.isSet(screenshotOption))
            arrangeFleetScreenshot(fleet, parser.value(screenshotOption));
        const int rc = QApplication::exec();
        delete fleet.data(); // its connections' threads end before the profiles go
        return rc;
    }
    window.show();

    if (parser.isSet(dsnOption)) {
        ConnectionSettings settings;
        settings.conninfo = parser.value(dsnOption);
        settings.schema = parser.value(schemaOption);
        settings.monitorConninfo = parser.value(monitorOption);
        session.setPatroniEndpoint(parser.value(patroniOption));
        session.connectTo(settings);
    } else if (!link.isEmpty()) {
        // The link's profile connects; a link that cannot be opened says why in the window
        // (and, for a profile this console lacks, offers the connection dialog).
        window.openLink(link);
    } else if (!parser.isSet(snapshotOption)) {
        window.openConnectionDialog();
    }
    if (parser.isSet(snapshotOption))
        arrangeSnapshot(openSnapshotWindow(parser.value(snapshotOption), &window), parser.value(pageOption),
            parser.value(screenshotOption));
    else if (parser.isSet(screenshotOption))
        arrangeScreenshot(&window, parser.value(screenshotOption));
    return QApplication::exec();
}
