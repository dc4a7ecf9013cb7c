#include "views/dashboardwidget.h"

#include <QAction>
#include <QComboBox>
#include <QEvent>
#include <QCoreApplication>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QSystemTrayIcon>
#include <QTime>
#include <QToolButton>
#include <QVBoxLayout>

#include <limits>

#include "models/breakdownmodel.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/eventwatch.h"
#include "models/latencywatch.h"
#include "models/pausewatch.h"
#include "models/visibletext.h"
#include "views/breakdownpanel.h"
#include "views/chartpanel.h"
#include "views/refusalnote.h"
#include "views/dashboardsettingsdialog.h"
#include "views/fencingpanel.h"
#include "views/horizonnotice.h"
#include "views/integritynotice.h"
#include "views/latencychart.h"
#include "views/pausedialog.h"
#include "views/theme.h"
#include "views/tilegrid.h"
#include "views/tilewidget.h"

namespace idem::console {

namespace {
    // Replication lag of a standby the dashboard reads from, in seconds: amber, then red.
    constexpr int standbyLagCautionSeconds = 5;
    constexpr int standbyLagCriticalSeconds = 30;

    // A static dashboard's time: the snapshot's, in UTC and local time.
    QString snapshotTime(qint64 ms)
    {
        const auto at = QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
        return DashboardWidget::tr("%1 UTC (%2 local)")
            .arg(at.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")),
                at.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")));
    }
} // namespace

DashboardWidget::DashboardWidget(ConsoleSession* monitor, QSettings* settings, QWidget* parent)
    : QWidget(parent)
    , m_monitor(monitor)
{
    setObjectName(QStringLiteral("dashboardPage"));
    if (!settings && monitor) {
        m_ownSettings = std::make_unique<QSettings>(
            QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"));
        settings = m_ownSettings.get();
    }
    m_settings = settings;
    m_model = monitor ? new DashboardModel(monitor, this) : new DashboardModel(this);
    if (monitor)
        m_model->setSettings(DashboardSettings::load(*m_settings));

    buildControls();
    buildStatusLines();
    m_tileGrid = new TileGrid;
    connect(m_tileGrid, &TileGrid::clicked, this, [this](Tile tile) {
        Q_EMIT openRows(m_model->filterFor(tile), tileTitle(tile), m_model->opensWords(tile), DashboardModel::sortFor(tile));
    });
    m_charts = new ChartPanel;
    buildWatches();
    layOut();

    if (monitor && QSystemTrayIcon::isSystemTrayAvailable()) {
        m_tray = new QSystemTrayIcon(windowIcon(), this);
        m_tray->setToolTip(tr("Idem console"));
        m_tray->show();
    }

    syncControls();
    connectControls();
    retranslateControls();
    connectModel();
    refreshView();
    refreshLatencyChart();
}

void DashboardWidget::buildControls()
{
    // Controls: how often, what window, which tenant / operation.
    m_interval = new QComboBox;
    m_interval->setObjectName(QStringLiteral("intervalCombo"));
    for (const int s : { 1, 2, 5, 10, 30, 60 })
        m_interval->addItem(QString(), s * 1000);
    m_pause = new QToolButton;
    m_pause->setObjectName(QStringLiteral("pauseButton"));
    m_pause->setCheckable(true);
    m_window = new QComboBox;
    m_window->setObjectName(QStringLiteral("windowCombo"));
    for (const int minutes : { 15, 60, 360, 1440 })
        m_window->addItem(QString(), minutes);
    m_tenant = new QLineEdit;
    m_tenant->setObjectName(QStringLiteral("tenantFilter"));

    m_tenant->setClearButtonEnabled(true);
    m_operation = new QLineEdit;
    m_operation->setObjectName(QStringLiteral("operationFilter"));

    m_operation->setClearButtonEnabled(true);
    auto* refresh = new QToolButton;
    refresh->setObjectName(QStringLiteral("refreshButton"));
    m_refresh = refresh;
    auto* thresholds = new QPushButton;
    m_thresholds = thresholds;
    thresholds->setObjectName(QStringLiteral("thresholdsButton"));

    m_controls = new QWidget;
    m_controls->setObjectName(QStringLiteral("dashboardControls"));
    m_controls->setVisible(m_monitor != nullptr);
    auto* controls = new QHBoxLayout(m_controls);
    controls->setContentsMargins(0, 0, 0, 0);
    for (auto& label : m_controlLabels)
        label = new QLabel;
    controls->addWidget(m_controlLabels[0]);
    controls->addWidget(m_interval);
    controls->addWidget(m_pause);
    controls->addWidget(refresh);
    // What the interval box cannot say: the polling backs off after failed reads, or stretches.
    m_pollingNote = new QLabel;
    m_pollingNote->setObjectName(QStringLiteral("pollingNote"));
    theme::followTone(m_pollingNote, theme::Tone::Caution, true);
    m_pollingNote->hide();
    controls->addWidget(m_pollingNote);
    controls->addSpacing(12);
    controls->addWidget(m_controlLabels[1]);
    controls->addWidget(m_window);
    controls->addSpacing(12);
    controls->addWidget(m_controlLabels[2]);
    controls->addWidget(m_tenant);
    controls->addWidget(m_controlLabels[3]);
    controls->addWidget(m_operation);
    controls->addStretch(1);
    m_pauseIntake = new QPushButton;
    m_pauseIntake->setObjectName(QStringLiteral("pauseIntakeButton"));
    m_pauseIntake->hide();
    m_resumeIntake = new QPushButton;
    m_resumeIntake->setObjectName(QStringLiteral("resumeIntakeButton"));
    m_resumeIntake->hide();
    controls->addWidget(m_pauseIntake);
    controls->addWidget(m_resumeIntake);
    controls->addSpacing(12);
    controls->addWidget(thresholds);
}

void DashboardWidget::buildStatusLines()
{
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("dashboardStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_freshness = new QLabel;
    m_freshness->setObjectName(QStringLiteral("dashboardFreshness"));
    // Two lines, always, each elided to the width (never wrapped: a wrapped third line would be
    // cut in half at this height and run into the alert line); the whole text is the tooltip. A
    // reason that grows must not re-lay out the charts below mid-outage.
    m_freshness->setWordWrap(false);
    m_freshness->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
    m_freshness->setFixedHeight(m_freshness->fontMetrics().lineSpacing() * 2 + 2);
    m_freshness->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_alert = new QLabel;
    m_alert->setObjectName(QStringLiteral("dashboardAlert"));
    theme::followTone(m_alert, theme::Tone::Bad, true);
    m_alert->hide();
}

void DashboardWidget::buildWatches()
{
    if (!m_monitor) {
        // A snapshot's figures come with showSnapshotExtras(), if it carries any.
        m_tileGrid->setTileVisible(Tile::WorstP95RunTime, false);
        m_charts->latency()->hide();
        return;
    }
    const auto& s = m_model->settings();
    // The worst p95 tile's figures (issue #27) are the latency read's, not the tick's.
    m_latency = new LatencyWatch(m_monitor, this);
    m_latency->setScope(s.windowMinutes, s.tenant, s.operation);
    connect(m_latency, &LatencyWatch::changed, this, [this] {
        m_model->setLatency(m_latency->state());
        refreshLatencyChart();
    });
    m_events = new EventWatch(m_monitor, this);
    m_events->setScope(s.windowMinutes, s.tenant, s.operation);
    connect(m_events, &EventWatch::changed, this, [this] {
        m_charts->setEvents(m_events->events());
        m_charts->setEventsOmitted(m_events->reading().omitted, m_events->reading().omittedUncounted);
    });
    m_breakdown = new BreakdownPanel(m_monitor);
    m_breakdown->watch()->setScope(s.windowMinutes, s.tenant, s.operation, m_model->statementTimeoutMs());
    connect(m_breakdown, &BreakdownPanel::openRows, this, &DashboardWidget::openRows);
}

void DashboardWidget::layOut()
{
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_controls);
    m_pauseRefusal = new RefusalNote(QStringLiteral("dashboardPauseRefusal"));
    layout->addWidget(m_pauseRefusal);
    layout->addWidget(m_status);
    layout->addWidget(m_freshness);
    layout->addWidget(m_alert);
    auto* integrity = new IntegrityNotice; // issue #31: refused counter flushes, a held exact refresh
    layout->addWidget(integrity);
    connect(m_model, &DashboardModel::updated, integrity, [this, integrity] {
        if (const auto& r = m_model->latest())
            integrity->showFor(r->stats);
    });
    if (m_monitor) // issue 46: the transaction horizon held while the Idem tables' dead rows grow
        layout->addWidget(new HorizonNotice(m_monitor));
    if (m_monitor) // issue 46: late calls refused after takeovers, run times against the lease
        layout->addWidget(new FencingPanel(m_monitor));
    layout->addWidget(m_tileGrid);
    if (m_breakdown)
        layout->addWidget(m_breakdown);
    layout->addWidget(m_charts, 1);
}

void DashboardWidget::connectControls()
{
    connect(
        m_interval, &QComboBox::activated, this, [this] { m_model->setInterval(m_interval->currentData().toInt()); });
    connect(m_pause, &QToolButton::toggled, m_model, &DashboardModel::setPaused);
    connect(m_refresh, &QToolButton::clicked, m_model, &DashboardModel::tickNow);
    connect(
        m_window, &QComboBox::activated, this, [this] { m_model->setWindowMinutes(m_window->currentData().toInt()); });
    const auto applyFilter = [this] { m_model->setFilter(m_tenant->text(), m_operation->text()); };
    connect(m_tenant, &QLineEdit::editingFinished, this, applyFilter);
    connect(m_operation, &QLineEdit::editingFinished, this, applyFilter);
    connect(m_thresholds, &QPushButton::clicked, this, &DashboardWidget::editThresholds);
    auto* thresholdsKey = new QAction(this);
    thresholdsKey->setObjectName(QStringLiteral("thresholdsAction"));
    thresholdsKey->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_T));
    thresholdsKey->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(thresholdsKey, &QAction::triggered, m_thresholds, [thresholds = m_thresholds] {
        if (thresholds->isVisible()) // a snapshot's static dashboard hides its controls
            thresholds->click();
    });
    addAction(thresholdsKey);
}

void DashboardWidget::connectModel()
{
    connect(m_model, &DashboardModel::updated, this, &DashboardWidget::refreshView);
    connect(m_model, &DashboardModel::freshnessChanged, this, &DashboardWidget::refreshStatus);
    connect(m_model, &DashboardModel::freshnessChanged, this, &DashboardWidget::refreshFreshness);
    connect(m_model, &DashboardModel::freshnessChanged, this, &DashboardWidget::refreshAlerts);
    connect(m_model, &DashboardModel::settingsChanged, this, [this] {
        saveSettings();
        syncControls();
        const auto& s = m_model->settings();
        if (m_latency) {
            m_latency->setScope(s.windowMinutes, s.tenant, s.operation);
            refreshLatencyChart();
        }
        if (m_events)
            m_events->setScope(s.windowMinutes, s.tenant, s.operation);
        if (m_breakdown)
            m_breakdown->watch()->setScope(s.windowMinutes, s.tenant, s.operation, m_model->statementTimeoutMs());
        refreshTiles(); // new thresholds colour the tiles now, not at the next tick
    });
    connect(m_model, &DashboardModel::alert, this, &DashboardWidget::showAlert);
}

DashboardWidget::~DashboardWidget() = default;

TileWidget* DashboardWidget::tile(Tile tile) const { return m_tileGrid->tile(tile); }

void DashboardWidget::retranslateControls()
{
    for (int i = 0; i < m_interval->count(); ++i)
        m_interval->setItemText(i, tr("every %1 s").arg(m_interval->itemData(i).toInt() / 1000.0));
    const char* const windows[] = { QT_TR_NOOP("15 min"), QT_TR_NOOP("1 h"), QT_TR_NOOP("6 h"), QT_TR_NOOP("24 h") };
    for (int i = 0; i < m_window->count() && i < 4; ++i)
        m_window->setItemText(i, tr(windows[i]));
    m_pause->setText(tr("Pause"));
    m_tenant->setPlaceholderText(tr("all tenants"));
    m_operation->setPlaceholderText(tr("all operations"));
    m_refresh->setText(tr("Refresh now"));
    m_thresholds->setText(tr("Thresholds…"));
    m_pauseIntake->setText(tr("Pause intake…"));
    m_resumeIntake->setText(tr("Resume intake…"));
    if (auto* key = findChild<QAction*>(QStringLiteral("thresholdsAction")))
        key->setText(m_thresholds->text());
    const char* const labels[] = { QT_TR_NOOP("Refresh"), QT_TR_NOOP("Window"), QT_TR_NOOP("Tenant"), QT_TR_NOOP("Operation") };
    for (std::size_t i = 0; i < m_controlLabels.size(); ++i)
        m_controlLabels[i]->setText(tr(labels[i]));
}

void DashboardWidget::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslateControls();
        refreshView(); // status, freshness and tile tooltips in the new language
        refreshLatencyChart(); // the chart's note, written from the watch's words
        refreshAlerts();
    }
    QWidget::changeEvent(event);
}

void DashboardWidget::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    showFreshness(m_freshnessLines[0], m_freshnessLines[1]);
    refreshAlerts();
}

void DashboardWidget::showFreshness(const QString& first, const QString& second)
{
    m_freshnessLines[0] = first;
    m_freshnessLines[1] = second;
    m_freshnessFull = second.isEmpty() ? first : first + QLatin1Char(' ') + second;
    const QFontMetrics fm = m_freshness->fontMetrics();
    const int width = std::max(80, m_freshness->contentsRect().width());
    QString shown = fm.elidedText(first, Qt::ElideRight, width);
    if (!second.isEmpty())
        shown += QLatin1Char('\n') + fm.elidedText(second, Qt::ElideRight, width);
    m_freshness->setText(shown);
    // The server's own message (SQLSTATE, context) after a failed read: for whoever asks.
    const QString detail
        = m_model->freshness() == DashboardModel::Freshness::Failed ? m_model->reasonDetail() : QString();
    m_freshness->setToolTip(detail.isEmpty()
            ? m_freshnessFull
            : m_freshnessFull + QStringLiteral("\n\n") + tr("The server said: %1").arg(detail));
}

void DashboardWidget::syncControls()
{
    const auto& s = m_model->settings();
    const QSignalBlocker b1(m_interval), b2(m_pause), b3(m_window);
    int i = m_interval->findData(s.intervalMs);
    if (i < 0) {
        m_interval->addItem(tr("every %1 s").arg(s.intervalMs / 1000.0), s.intervalMs);
        i = m_interval->count() - 1;
    }
    m_interval->setCurrentIndex(i);
    m_pause->setChecked(s.paused);
    m_window->setCurrentIndex(std::max(0, m_window->findData(s.windowMinutes)));
    if (!m_tenant->hasFocus())
        m_tenant->setText(s.tenant);
    if (!m_operation->hasFocus())
        m_operation->setText(s.operation);
}

void DashboardWidget::saveSettings()
{
    if (m_settings)
        m_model->settings().save(*m_settings);
}

void DashboardWidget::editThresholds()
{
    auto* dialog = new DashboardSettingsDialog(m_model->settings(), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &DashboardSettingsDialog::accepted, this, [this, dialog] {
        auto s = m_model->settings();
        const auto chosen = dialog->settings();
        s.thresholds = chosen.thresholds;
        s.longUnfinishedMinutes = chosen.longUnfinishedMinutes;
        m_model->setSettings(s);
    });
    dialog->open();
}

void DashboardWidget::setPauseControl(PauseWatch* watch, ConsoleSession* admin)
{
    m_pauses = watch;
    m_admin = admin;
    m_pauseIntake->setVisible(m_monitor != nullptr);
    m_resumeIntake->setVisible(m_monitor != nullptr);
    connect(m_pauseIntake, &QPushButton::clicked, this, [this] {
        const auto& s = m_model->settings();
        openPauseDialog(this, m_admin, m_pauses, s.tenant, s.operation);
    });
    connect(m_resumeIntake, &QPushButton::clicked, this, &DashboardWidget::resumeIntake);
    connect(watch, &PauseWatch::changed, this, &DashboardWidget::refreshPauses);
    for (auto* s : { m_admin, m_monitor })
        if (s) {
            connect(s, &ConsoleSession::stateChanged, this, &DashboardWidget::refreshPauses);
            connect(s, &ConsoleSession::serverInfoChanged, this, &DashboardWidget::refreshPauses);
        }
    connect(m_model, &DashboardModel::settingsChanged, this, &DashboardWidget::refreshPauses);
    refreshPauses();
}

void DashboardWidget::resumeIntake()
{
    if (!m_pauses)
        return;
    const auto& s = m_model->settings();
    const auto covering = m_pauses->coveringSome(s.tenant, s.operation);
    if (covering.size() == 1) {
        openResumeDialog(this, m_admin, m_pauses, covering.front());
        return;
    }
    auto* menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("resumeIntakeMenu"));
    menu->setAttribute(Qt::WA_DeleteOnClose);
    for (const auto& p : covering) {
        auto* a = menu->addAction(tr("Resume %1…").arg(pauseScopeText(p)));
        a->setObjectName(QStringLiteral("resumeIntakeAction"));
        a->setData(QString::fromStdString(p.scope()));
        connect(a, &QAction::triggered, this, [this, p] { openResumeDialog(this, m_admin, m_pauses, p); });
    }
    menu->popup(m_resumeIntake->mapToGlobal(QPoint(0, m_resumeIntake->height())));
}

void DashboardWidget::refreshPauses()
{
    if (!m_pauses)
        return;
    const auto& s = m_model->settings();
    const QString scope = pauseScopeText(s.tenant.isEmpty() ? std::string("*") : s.tenant.toStdString(),
        s.operation.isEmpty() ? std::string("*") : s.operation.toStdString());
    const auto whole = m_pauses->coveringAll(s.tenant, s.operation);
    const auto some = m_pauses->coveringSome(s.tenant, s.operation);
    QStringList scopes;
    for (const auto& p : some)
        scopes << pauseScopeText(p);
    // A badge only where the tiles' whole scope is paused: figures over all tenants are not "paused"
    // because one tenant is (the banner and the tooltip say that much).
    const QString badge = !whole.empty() ? tr("intake paused") : QString();
    const QString tip = some.empty() ? QString()
        : !whole.empty()             ? tr("Intake of %1 is paused by: %2.").arg(scope, scopes.join(QStringLiteral(", ")))
                                     : tr("Intake of some of %1 is paused by: %2.").arg(scope, scopes.join(QStringLiteral(", ")));
    for (auto* t : m_tileGrid->tiles())
        t->setPaused(badge, tip);
    // Every pause of the scope the list still holds: in force up to now, expired up to its end.
    std::vector<PauseSpan> spans;
    if (const auto& list = m_pauses->list())
        for (const auto& p : list->pauses) {
            const auto meets = [](const std::string& pause, const QString& asked) {
                return pause == "*" || asked.isEmpty() || pause == asked.toStdString();
            };
            if (!meets(p.tenant, s.tenant) || !meets(p.operation, s.operation))
                continue;
            const qint64 to = p.untilUs ? *p.untilUs / 1000 : std::numeric_limits<qint64>::max();
            spans.push_back({ p.pausedAtUs / 1000, p.active && !p.untilUs ? std::numeric_limits<qint64>::max() : to });
        }
    m_charts->setPauseSpans(std::move(spans));

    const QString refusal = pauseRefusal(m_admin);
    m_pauseRefusal->setReasons(
        refusal.isEmpty() || !m_monitor ? QStringList() : QStringList { tr("Pause intake: %1").arg(refusal) });
    m_pauseIntake->setEnabled(refusal.isEmpty());
    m_pauseIntake->setToolTip(refusal.isEmpty() ? tr("Pause intake of %1 (the filtered scope): claim() turns its keys "
                                                     "away until resumed or for a length you choose.")
                                                      .arg(scope)
                                                : refusal);
    m_resumeIntake->setEnabled(refusal.isEmpty() && !some.empty());
    m_resumeIntake->setToolTip(!refusal.isEmpty() ? refusal
            : some.empty()                        ? tr("Nothing of %1 is paused.").arg(scope)
                                                  : tr("Lift a pause of %1: %2.").arg(scope, scopes.join(QStringLiteral(", "))));
}

void DashboardWidget::refreshLatencyChart()
{
    if (m_latency)
        m_charts->latency()->setData(*m_latency, m_model->settings().operation);
}

void DashboardWidget::showSnapshotExtras(const std::optional<LatencyReading>& latency, std::vector<ChartEvent> events)
{
    m_charts->latency()->setSnapshot(latency, m_model->settings().operation);
    m_charts->latency()->show();
    m_tileGrid->setTileVisible(Tile::WorstP95RunTime, latency.has_value());
    if (latency)
        m_model->setLatency({ &*latency, m_model->settings().windowMinutes, QString() });
    m_charts->setEvents(std::move(events));
}

void DashboardWidget::showTile(TileWidget* tile, const TileValue& value, bool stale, const QString& thresholdText)
{
    // A tile whose own read has not answered yet (the worst p95) is greyed as stale figures are.
    tile->setValue(value, stale || value.pending, thresholdText);
}

void DashboardWidget::refreshTiles()
{
    const bool stale = m_model->freshness() != DashboardModel::Freshness::Live;
    const QString asOfLine = m_model->isStatic() && m_model->latest()
        ? QStringLiteral("\n") + tr("As of %1 (snapshot).").arg(snapshotTime(m_model->latest()->serverNowMs))
        : QString();
    const TilePresenter presenter = m_model->presenter();
    for (auto* t : m_tileGrid->tiles())
        showTile(t, presenter.tile(t->tile()), stale, presenter.thresholdText(t->tile()) + asOfLine);
}

void DashboardWidget::refreshView()
{
    // Every event the marks show is an audit entry (deploys aside, read once a minute): a new
    // head means new marks, read now rather than at the next minute.
    if (m_events && m_model->latest()) {
        const qint64 head = m_model->latest()->stats.auditHeadId;
        if (m_auditHead && *m_auditHead != head)
            m_events->refreshNow();
        m_auditHead = head;
    }
    const auto& s = m_model->settings();
    refreshTiles();
    refreshPauses();
    m_charts->update(*m_model);
    refreshAlerts();
    if (m_model->isStatic()) {
        const auto& r = m_model->latest();
        QStringList snap;
        snap << (r ? tr("As of %1, the snapshot's server clock").arg(snapshotTime(r->serverNowMs)) : tr("No data"));
        if (r && r->stats.inRecovery)
            snap << tr("read from a standby");
        snap << tr("figures over the last %1 min, charts over the last %2 min")
                    .arg(m_model->figuresWindowMinutes())
                    .arg(s.windowMinutes);
        m_status->setText(snap.join(QStringLiteral(" · ")));
        showFreshness(tr("Snapshot: read-only, not live."), QString());
        theme::followTone(m_freshness, theme::Tone::Muted, true);
        return;
    }

    refreshStatus();
    refreshFreshness();
}

void DashboardWidget::refreshStatus()
{
    if (m_model->isStatic())
        return;
    const auto& s = m_model->settings();
    QStringList parts;
    if (const auto& r = m_model->latest()) {
        const auto asOf = QDateTime::fromMSecsSinceEpoch(r->serverNowMs).toLocalTime();
        parts << tr("As of %1 (server clock)").arg(asOf.toString(QStringLiteral("HH:mm:ss")));
        // On a standby the row figures and their lease expiry are judged as of its replay point
        // (idem_live_stats), the time shown here.
        QDateTime replayed = QDateTime::fromString(QString::fromStdString(r->stats.liveTakenAt), Qt::ISODateWithMs);
        if (!replayed.isValid())
            replayed = QDateTime::fromString(QString::fromStdString(r->stats.liveTakenAt), Qt::ISODate);
        const QString at = replayed.isValid() ? replayed.toLocalTime().toString(QStringLiteral("HH:mm:ss")) : QString();
        if (r->stats.inRecovery)
            parts << (r->stats.replicationLagSeconds
                    ? tr("standby (figures and lease expiry as of its replay point, %1), replication lag %2 s")
                          .arg(at, QLocale().toString(*r->stats.replicationLagSeconds, 'f', 1))
                    : tr("standby, nothing replayed yet"));
        else if (const auto& si = m_monitor->serverInfo(); !si.serverAddress.isEmpty() && si.timeline > 0)
            // Which primary: after a failover the same conninfo reaches another node.
            parts << tr("primary %1, timeline %2").arg(si.serverAddress).arg(si.timeline);
        else
            parts << tr("primary");
    } else {
        parts << tr("No data yet");
    }
    // The polling as it is, not as chosen: backing off after failed reads, or stretched.
    parts << tr("console load: %1 ms per tick, %2").arg(m_model->lastTickMs()).arg(m_model->pollingText());
    if (s.paused)
        parts << tr("PAUSED");
    m_status->setText(parts.join(QStringLiteral(" · ")));
    const bool differs = m_model->pollingDiffers();
    m_pollingNote->setVisible(differs);
    m_pollingNote->setText(m_model->pollingBrief());
    m_pollingNote->setToolTip(differs ? m_model->pollingText() : QString());
}

void DashboardWidget::refreshFreshness()
{
    using F = DashboardModel::Freshness;
    const auto f = m_model->freshness();
    const bool stale = f != F::Live;
    if (m_model->isStatic())
        return; // refreshView() says what a snapshot's data is
    for (auto* t : m_tileGrid->tiles()) {
        const TileValue v = m_model->tile(t->tile());
        if (t->stale() != (stale || v.pending))
            showTile(t, v, stale, m_model->presenter().thresholdText(t->tile()));
    }
    if (!stale) {
        // Live data from a standby is only as live as its replay: past a few seconds of lag the
        // banner says so in amber, past half a minute in red (issue 15 item 4).
        const auto& r = m_model->latest();
        const std::optional<double> lag = r && r->stats.inRecovery ? r->stats.replicationLagSeconds : std::nullopt;
        if (lag && *lag > standbyLagCautionSeconds) {
            showFreshness(tr("● Live from a standby %1 s behind its primary: figures and lease expiry are as of "
                                    "its replay point (amber above %2 s, red above %3 s)")
                                     .arg(QLocale().toString(*lag, 'f', 1))
                                     .arg(standbyLagCautionSeconds)
                                     .arg(standbyLagCriticalSeconds),
                QString());
            theme::followTone(m_freshness, *lag > standbyLagCriticalSeconds ? theme::Tone::Bad : theme::Tone::Caution, true);
            return;
        }
        showFreshness(tr("● Live"), QString());
        theme::followTone(m_freshness, theme::Tone::Good);
        return;
    }
    QString text;
    const QString reason = m_model->reason();
    switch (f) {
    case F::NoData:
        text = tr("No data: %1").arg(reason);
        break;
    case F::Waiting:
        text = tr("Stale: %1").arg(reason);
        break;
    case F::Failed:
        // The failure in words and when the next read comes: the backoff is no secret.
        text = tr("Stale, the last read failed: %1").arg(reason) + QLatin1Char(' ') + m_model->nextReadText();
        break;
    case F::Disconnected:
        text = tr("Disconnected: %1").arg(reason);
        break;
    case F::Live:
        break;
    }
    // The reason on the first line (elided if it must be), when the data was last good on the
    // second: that line is what an operator needs most and it is never cut.
    const QDateTime last = m_model->lastGoodAt();
    const QString second = last.isValid() ? tr("Last good data at %1 (%2 s ago).")
                                                .arg(last.toString(QStringLiteral("HH:mm:ss")),
                                                    QString::number(last.secsTo(QDateTime::currentDateTime())))
                                          : QString();
    showFreshness(oneLine(text), second);
    theme::followTone(m_freshness, theme::Tone::Caution, true);
}

void DashboardWidget::refreshAlerts()
{
    // The tiles red now with their latest values and since when, rewritten every tick: a line
    // that kept the words of the moment a tile turned red would soon contradict the tile.
    const auto& open = m_model->openAlerts();
    if (open.empty()) {
        m_alert->clear();
        m_alert->setToolTip(QString());
        m_alert->hide();
        return;
    }
    QStringList parts;
    for (const auto& a : open) {
        // When the run began, from the data (a minute of the counters, or a tick), local time.
        const QString at = a.since.toLocalTime().toString(a.minutes ? QStringLiteral("HH:mm") : QStringLiteral("HH:mm:ss"));
        parts << (a.orEarlier ? tr("%1 since %2 or earlier") : tr("%1 since %2")).arg(m_model->alertText(a.tile), at);
    }
    // Over data that is no longer live, "now" would be a claim nobody checked.
    const auto& latest = m_model->latest();
    const QString line = m_model->freshness() == DashboardModel::Freshness::Live || !latest
        ? tr("Red now: %1").arg(parts.join(QStringLiteral(" · ")))
        : tr("As of %1 (no live data since): red then: %2")
              .arg(QDateTime::fromMSecsSinceEpoch(latest->serverNowMs).toLocalTime().toString(QStringLiteral("HH:mm:ss")),
                  parts.join(QStringLiteral(" · ")));
    m_alert->setToolTip(line);
    m_alert->setText(m_alert->fontMetrics().elidedText(line, Qt::ElideRight, std::max(200, width() - 24)));
    m_alert->show();
}

void DashboardWidget::showAlert(Tile tile, const QString& text)
{
    refreshAlerts();
    if (m_tray)
        m_tray->showMessage(tr("Idem: %1").arg(tileTitle(tile)), text, QSystemTrayIcon::Critical);
}

QString DashboardWidget::statusText() const { return m_status->text(); }
QString DashboardWidget::freshnessText() const { return m_freshnessFull; }
QString DashboardWidget::freshnessToolTip() const { return m_freshness->toolTip(); }
QString DashboardWidget::pollingNoteText() const
{
    return m_pollingNote->isHidden() ? QString() : m_pollingNote->text();
}
QString DashboardWidget::pollingNoteToolTip() const
{
    return m_pollingNote->isHidden() ? QString() : m_pollingNote->toolTip();
}
QString DashboardWidget::alertText() const { return m_alert->isHidden() ? QString() : m_alert->toolTip(); }

} // namespace idem::console
