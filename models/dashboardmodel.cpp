#include "models/dashboardmodel.h"

#include <QCoreApplication>
#include <QLocale>

#include <algorithm>

#include "models/consolesession.h"
#include "models/latencywatch.h"
#include "models/olderschema.h"

namespace idem::console {

namespace {
    // An exact refresh may take much longer than a tick: its own statement timeout.
    constexpr int exactTimeoutMs = 600000;

    QString seconds(qint64 ms) { return QString::number(ms / 1000.0); }
} // namespace

DashboardModel::DashboardModel(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_session(session)
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, [this] {
        if (!m_settings.paused)
            tickNow();
    });
    m_clock.setInterval(1000);
    connect(&m_clock, &QTimer::timeout, this, &DashboardModel::onClock);
    m_clock.start();
    connect(session, &ConsoleSession::stateChanged, this, &DashboardModel::onSessionState);
    connect(session, &ConsoleSession::serverInfoChanged, this, &DashboardModel::onSessionState);
    connect(session, &ConsoleSession::migratingChanged, this, [this] {
        // A migration runs without the tick's statement timeout (DatabaseWorker): set it again.
        m_prepared = false;
        onSessionState();
    });
    onSessionState();
}

DashboardModel::DashboardModel(QObject* parent)
    : QObject(parent)
    , m_static(true)
{
}

void DashboardModel::showStatic(const DashboardSettings& settings, const idem::DashboardReading& reading,
    int figuresWindowMinutes, const std::vector<LiveSample>& earlier)
{
    if (!m_static)
        return;
    m_settings = settings;
    m_figuresWindowMinutes = figuresWindowMinutes;
    resetData();
    for (const auto& sample : earlier)
        if (sample.ms < reading.serverNowMs)
            m_history.addLive(sample);
    ingest({ reading, 0, settings.windowMinutes });
    Q_EMIT settingsChanged();
}

DashboardModel::~DashboardModel()
{
    if (m_pending && m_session)
        m_session->cancel(m_pending);
}

void DashboardModel::setSettings(const DashboardSettings& settings)
{
    const bool query = settings.windowMinutes != m_settings.windowMinutes || settings.tenant != m_settings.tenant
        || settings.operation != m_settings.operation
        || settings.longUnfinishedMinutes != m_settings.longUnfinishedMinutes;
    const bool filter = settings.tenant != m_settings.tenant || settings.operation != m_settings.operation;
    const bool resume = m_settings.paused && !settings.paused;
    m_settings = settings;
    m_settings.intervalMs
        = std::clamp(m_settings.intervalMs, DashboardSettings::minIntervalMs, DashboardSettings::maxIntervalMs);
    if (query) {
        ++m_generation;
        m_historyLoadedMinutes = 0;
        m_ownExact.reset();
        m_ownExactAt.invalidate();
    }
    if (filter)
        resetData();
    if (m_settings.paused)
        m_timer.stop();
    Q_EMIT settingsChanged();
    if (query || resume)
        tickNow();
    else if (m_timer.isActive())
        schedule(std::chrono::milliseconds(m_settings.intervalMs));
    evaluateLevels();
    Q_EMIT updated();
}

void DashboardModel::setInterval(int ms)
{
    auto s = m_settings;
    s.intervalMs = ms;
    setSettings(s);
}

void DashboardModel::setPaused(bool paused)
{
    auto s = m_settings;
    s.paused = paused;
    setSettings(s);
}

void DashboardModel::setWindowMinutes(int minutes)
{
    auto s = m_settings;
    s.windowMinutes = minutes;
    setSettings(s);
}

void DashboardModel::setFilter(const QString& tenant, const QString& operation)
{
    auto s = m_settings;
    s.tenant = tenant.trimmed();
    s.operation = operation.trimmed();
    setSettings(s);
}

void DashboardModel::setThreshold(Tile tile, const Threshold& threshold)
{
    auto s = m_settings;
    s.thresholds[static_cast<std::size_t>(tile)] = threshold;
    setSettings(s);
}

void DashboardModel::resetData()
{
    m_latest.reset();
    m_attempts.reset();
    m_ownExact.reset();
    m_ownExactAt.invalidate();
    m_history.clear();
    m_levels.fill(Level::NoData);
    m_openAlerts.clear();
    m_lastServerMs = 0;
    m_historyFromMinute = 0;
}

void DashboardModel::onSessionState()
{
    using State = ConsoleSession::State;
    const auto state = m_session->state();
    if (state != State::Connected) {
        m_prepared = false;
        m_timer.stop();
        if (m_pending)
            m_session->cancel(m_pending);
        m_pending = 0;
        QString why = state == State::Connecting
            ? QCoreApplication::translate("idem::console::DashboardModel", "Connecting…")
            : QCoreApplication::translate("idem::console::DashboardModel", "Not connected.");
        if (state == State::Failed && m_session->lastFailure())
            why = m_session->lastFailure()->textWithRetry();
        setFreshness(Freshness::Disconnected, why);
        return;
    }
    if (!m_session->canPoll()) {
        const auto& si = m_session->serverInfo();
        setFreshness(Freshness::NoData,
            si.schemaOlder() ? olderSchemaRefusal(*m_session)
            : !si.isReader && !si.schemaMissing()
                ? QCoreApplication::translate("idem::console::DashboardModel", "Role %1 may not read the Idem tables.")
                      .arg(si.role)
                : QCoreApplication::translate("idem::console::DashboardModel", "No Idem schema %1 to read yet.")
                      .arg(si.schema));
        return;
    }
    if (m_poll.freshness() == Freshness::Disconnected || m_poll.freshness() == Freshness::NoData)
        setFreshness(m_latest ? Freshness::Waiting : Freshness::NoData,
            m_latest ? QCoreApplication::translate("idem::console::DashboardModel", "Reconnected; reading…")
                     : QCoreApplication::translate("idem::console::DashboardModel", "Reading…"));
    if (!m_pending && !m_session->migrating())
        tickNow();
}

void DashboardModel::tickNow()
{
    if (m_static)
        return;
    if (m_pending || !m_session->canPoll() || m_session->migrating())
        return;
    m_timer.stop();
    idem::DashboardOptions options;
    options.stats.windowMinutes = m_settings.windowMinutes;
    options.stats.longUnfinishedAfterMinutes = m_settings.longUnfinishedMinutes;
    options.stats.statementTimeoutMs = m_statementTimeoutMs;
    if (!m_settings.tenant.isEmpty())
        options.stats.tenant = m_settings.tenant.toStdString();
    if (!m_settings.operation.isEmpty())
        options.stats.operation = m_settings.operation.toStdString();
    // The whole window twice over once (after a connect or a change), then only the newest minutes.
    options.historyMinutes = DashboardPolling::historyMinutes(
        m_historyLoadedMinutes, m_settings.windowMinutes, m_lastServerMs, QDateTime::currentMSecsSinceEpoch());

    // Behind a pooler the tick sets nothing for the session (DashboardOptions::noSessionState).
    options.noSessionState = m_session->serverInfo().pooler;
    const bool prepare = !m_prepared && !options.noSessionState;
    const int timeoutMs = m_statementTimeoutMs;
    const int generation = m_generation;
    auto job = [options, prepare, timeoutMs](pqxx::connection& conn, const idem::SchemaName& schema) {
        if (prepare)
            idem::prepareDashboardConnection(conn, timeoutMs);
        QElapsedTimer clock;
        clock.start();
        DashboardTick tick;
        tick.reading = idem::readDashboard(conn, schema, options);
        tick.elapsedMs = clock.elapsed();
        tick.historyMinutes = options.historyMinutes;
        return QVariant::fromValue(tick);
    };
    auto id = std::make_shared<quint64>(0);
    *id = m_session->submit(
        std::move(job), this,
        [this, id, generation, prepare](const QVariant& answer) {
            if (*id != m_pending)
                return;
            if (prepare)
                m_prepared = true;
            if (generation != m_generation) {
                m_pending = 0;
                tickNow(); // asked under a filter or window that has changed since
                return;
            }
            onTickDone(*id, answer);
        },
        [this, id](const Failure& failure) { onTickFailed(*id, failure); });
    m_pending = *id;
    if (m_pending) {
        m_pendingSince.start();
        m_session->bound(
            m_pending, { DashboardPolling::cancelAfter(timeoutMs), DashboardPolling::cutAfter(timeoutMs) });
    }
}

void DashboardModel::onTickDone(quint64 id, const QVariant& answer)
{
    if (id != m_pending)
        return;
    m_pending = 0;
    const auto tick = answer.value<DashboardTick>();
    ingest(tick);
    maybeRefreshExact();
    schedule(m_poll.answered(tick.elapsedMs, m_settings.intervalMs, m_statementTimeoutMs));
}

void DashboardModel::ingest(const DashboardTick& tick)
{
    auto r = tick.reading;
    if (m_ownExact && usesOwnExact(r.stats)) {
        // This console's own exact figures (a standby, a filter), aged to this reading.
        auto e = *m_ownExact;
        e.ageSeconds = m_ownExactAt.isValid() ? m_ownExactAt.elapsed() / 1000.0 : 0;
        if (e.oldestProcessingAgeSeconds)
            *e.oldestProcessingAgeSeconds += e.ageSeconds;
        idem::attachExact(r.stats, e);
        r.attempts = e.attempts;
    }
    m_history.addLive({ r.serverNowMs, r.stats.processing, r.stats.expiredLeases, tick.elapsedMs });
    m_history.mergeBuckets(r.buckets);
    if (r.attempts)
        m_attempts = r.attempts;
    if (tick.historyMinutes > m_historyLoadedMinutes || !m_historyFromMinute)
        m_historyFromMinute = (r.serverNowMs / 60000 - (tick.historyMinutes - 1)) * 60;
    m_historyLoadedMinutes = std::max<qint64>(m_historyLoadedMinutes, tick.historyMinutes);
    m_lastServerMs = r.serverNowMs;
    m_latest = std::move(r);
    m_lastTickMs = tick.elapsedMs;
    ++m_ticks;
    m_lastGoodAt = m_static ? QDateTime::fromMSecsSinceEpoch(m_lastServerMs) : QDateTime::currentDateTime();
    m_reasonDetail.clear();
    setFreshness(Freshness::Live, {});
    evaluateLevels();
    Q_EMIT updated();
}

bool DashboardModel::usesOwnExact(const idem::StatsReading& s) const
{
    // A standby reads the primary's shared figures while the primary keeps them fresh; when
    // nobody there does, its consoles count for themselves.
    return idem::needsOwnExact(s, !m_settings.tenant.isEmpty() || !m_settings.operation.isEmpty());
}

void DashboardModel::maybeRefreshExact()
{
    if (m_static || m_exactPending || !m_latest || !m_session || !m_session->canPoll())
        return;
    if (m_exactFailedAt.isValid() && m_exactFailedAt.elapsed() < DashboardPolling::exactRetryAfterMs)
        return;
    const auto& s = m_latest->stats;
    const bool own = usesOwnExact(s);
    if (!own && !s.exactDue)
        return;
    // A read-only server (a standby, a primary being demoted) stores nothing: its writers do.
    if (!own && m_session->serverInfo().readOnly)
        return;
    if (own && m_ownExact && m_ownExactAt.isValid() && m_ownExactAt.elapsed() < m_ownExact->periodSeconds * 1000)
        return;
    idem::StatsOptions options;
    options.longUnfinishedAfterMinutes = m_settings.longUnfinishedMinutes;
    if (!m_settings.tenant.isEmpty())
        options.tenant = m_settings.tenant.toStdString();
    if (!m_settings.operation.isEmpty())
        options.operation = m_settings.operation.toStdString();
    const int generation = m_generation;
    auto job = [options, own](pqxx::connection& conn, const idem::SchemaName& schema) {
        ExactRefresh out;
        out.own = own;
        if (own)
            out.figures = idem::readOwnExact(conn, schema, options, exactTimeoutMs);
        else
            out.refreshed = idem::refreshSharedExact(conn, schema, options.longUnfinishedAfterMinutes, exactTimeoutMs);
        return QVariant::fromValue(out);
    };
    m_exactPending = m_session->submit(
        std::move(job), this,
        [this, generation](const QVariant& answer) {
            m_exactPending = 0;
            m_exactFailedAt.invalidate();
            const auto out = answer.value<ExactRefresh>();
            if (out.refreshed)
                ++m_sharedRefreshes;
            if (out.own && generation == m_generation) {
                m_ownExact = out.figures;
                m_ownExactAt.start();
            }
        },
        [this](const Failure&) {
            m_exactPending = 0;
            m_exactFailedAt.start();
        });
    if (m_exactPending)
        ++m_exactJobs;
}

void DashboardModel::onTickFailed(quint64 id, const Failure& failure)
{
    if (id != m_pending || id == 0) {
        if (id == 0 && m_pending == 0)
            setFreshness(Freshness::Disconnected, failure.text());
        return;
    }
    m_pending = 0;
    m_reasonDetail = failure.detail();
    if (failure.kind == FailureKind::ConnectionLost) {
        // The session reconnects by itself; its state change says the rest.
        setFreshness(Freshness::Disconnected, failure.text());
        return;
    }
    QString why = failure.text();
    // The tick's own statement timeout (a cancel request says "user request" instead): the
    // dashboard knows how long it waited.
    if (failure.kind == FailureKind::Query && failure.sqlstate == QLatin1String("57014") && !failure.cancelledAfterMs
        && !failure.message.contains(QLatin1String("user request")))
        why = tr("The database did not answer within %1 s (a lock held by another session, or a busy server).")
                  .arg(seconds(m_statementTimeoutMs));
    // Scheduled before the words change, so that they can say when the next read comes.
    schedule(m_poll.failed(m_settings.intervalMs));
    if (!m_poll.setFreshness(Freshness::Failed, why))
        Q_EMIT freshnessChanged(); // the same failure again: the next read's time has changed
}

void DashboardModel::schedule(std::chrono::milliseconds after)
{
    const auto next = m_poll.delay(after);
    if (!m_settings.paused && m_session->canPoll())
        m_timer.start(next);
}

void DashboardModel::onClock()
{
    if (m_pending && m_pendingSince.isValid() && DashboardPolling::overdue(m_pendingSince.elapsed())) {
        m_reasonDetail.clear();
        setFreshness(Freshness::Waiting, overdueText());
    } else if (m_poll.freshness() != Freshness::Live || m_poll.failures() > 0) {
        Q_EMIT freshnessChanged(); // "last good data N s ago", "next read in N s" move on
    }
}

QString DashboardModel::overdueText() const
{
    const auto cancelAt = DashboardPolling::cancelAfter(m_statementTimeoutMs).count();
    const auto cutAt = DashboardPolling::cutAfter(m_statementTimeoutMs).count();
    const auto p = m_session ? m_session->progress(m_pending) : JobInterrupt::Progress {};
    if (!p.running)
        return tr("No answer for %1 s: the read waits for this console's connection, busy with another of its "
                  "reads.")
            .arg(m_pendingSince.elapsed() / 1000);
    const QString waited = QString::number(p.runningFor.count() / 1000);
    if (p.cut)
        return tr("No answer from the database for %1 s: the console closed the connection and opens a new one.")
            .arg(waited);
    switch (p.cancel) {
    case JobInterrupt::Cancel::None:
        break;
    case JobInterrupt::Cancel::Sending:
    case JobInterrupt::Cancel::Sent:
        return tr("No answer from the database for %1 s, not even to a cancel request at %2 s (a stopped server "
                  "process or a cut network); a new connection at %3 s.")
            .arg(waited, seconds(cancelAt), seconds(cutAt));
    case JobInterrupt::Cancel::Failed:
        return tr("No answer from the database for %1 s, and no cancel request could reach it (%2); a new connection "
                  "at %3 s.")
            .arg(waited, p.cancelError, seconds(cutAt));
    }
    return tr("No answer from the database for %1 s; the server ends a read at %2 s (statement timeout), else the "
              "console cancels it at %3 s and opens a new connection at %4 s.")
        .arg(waited, seconds(m_statementTimeoutMs), seconds(cancelAt), seconds(cutAt));
}

QDateTime DashboardModel::nextReadAt() const
{
    if (m_static || m_pending || m_settings.paused || !m_timer.isActive())
        return {};
    return QDateTime::currentDateTime().addMSecs(std::max(0, m_timer.remainingTime()));
}

QString DashboardModel::nextReadText() const
{
    if (m_settings.paused)
        return tr("Polling is paused.");
    if (m_pending)
        return tr("Reading again now.");
    const QDateTime at = nextReadAt();
    if (!at.isValid())
        return {};
    return tr("Next read at %1 (in %2 s).")
        .arg(at.toString(QStringLiteral("HH:mm:ss")))
        .arg((std::max(0, m_timer.remainingTime()) + 999) / 1000);
}

bool DashboardModel::pollingDiffers() const
{
    return !m_static && !m_settings.paused && (m_poll.failures() > 0 || stretched());
}

QString DashboardModel::pollingBrief() const
{
    if (!pollingDiffers())
        return {};
    if (m_poll.failures() > 0) {
        const QDateTime at = nextReadAt();
        return at.isValid() ? tr("backing off: next read at %1 (in %2 s)")
                                  .arg(at.toString(QStringLiteral("HH:mm:ss")))
                                  .arg((std::max(0, m_timer.remainingTime()) + 999) / 1000)
                            : tr("backing off: reading again now");
    }
    return tr("stretched to every %1 s").arg(QLocale().toString(m_poll.nextTick().count() / 1000.0, 'g', 3));
}

QString DashboardModel::pollingText() const
{
    const QString chosen = QLocale().toString(m_settings.intervalMs / 1000.0, 'g', 3);
    if (m_settings.paused)
        return tr("polling paused");
    if (m_poll.failures() > 0) {
        const QDateTime at = nextReadAt();
        // No "%n read(s)": the English is the source text, read by the tests as it is.
        if (!at.isValid())
            return tr("reading again after failed reads (%1 in a row); every %2 s once reads answer")
                .arg(m_poll.failures())
                .arg(chosen);
        return tr("backing off after failed reads (%1 in a row): next read at %2 (in %3 s), not every %4 s")
            .arg(m_poll.failures())
            .arg(at.toString(QStringLiteral("HH:mm:ss")))
            .arg((std::max(0, m_timer.remainingTime()) + 999) / 1000)
            .arg(chosen);
    }
    if (stretched())
        return tr("every %1 s, stretched from %2 s: ticks over their budget")
            .arg(QLocale().toString(m_poll.nextTick().count() / 1000.0, 'g', 3), chosen);
    return tr("every %1 s").arg(chosen);
}

void DashboardModel::setFreshness(Freshness freshness, const QString& reason)
{
    if (m_poll.setFreshness(freshness, reason))
        Q_EMIT freshnessChanged();
}

void DashboardModel::evaluateLevels()
{
    for (int i = 0; i < tileCount; ++i) {
        const auto t = static_cast<Tile>(i);
        const TileValue v = tile(t);
        auto& was = m_levels[static_cast<std::size_t>(i)];
        const auto open = std::find_if(
            m_openAlerts.begin(), m_openAlerts.end(), [t](const OpenAlert& a) { return a.tile == t; });
        if (v.level == Level::Critical && open == m_openAlerts.end() && m_latest && !m_static) {
            // First seen now (server time): what tiles without a series of their own keep.
            OpenAlert a { t, QDateTime::fromMSecsSinceEpoch(m_latest->serverNowMs), true, false };
            m_openAlerts.push_back(a);
            m_openAlerts.back() = redSince(t);
        } else if (v.level == Level::Critical && open != m_openAlerts.end()) {
            *open = redSince(t);
        } else if (v.level != Level::Critical && open != m_openAlerts.end()) {
            m_openAlerts.erase(open);
        }
        if (v.level == Level::Critical && was != Level::Critical && m_latest && !m_static)
            Q_EMIT alert(t, alertText(t));
        was = v.level;
    }
}

void DashboardModel::setLatency(const LatencyState& state)
{
    m_latencyReading = state.reading ? std::make_shared<const LatencyReading>(*state.reading) : nullptr;
    m_latency = { m_latencyReading.get(), state.windowMinutes, state.error };
    m_latencySet = true;
    evaluateLevels();
    Q_EMIT updated();
}

TilePresenter DashboardModel::presenter() const
{
    TileInputs in;
    in.latency = m_latencySet ? &m_latency : nullptr;
    in.settings = &m_settings;
    in.figuresWindowMinutes = figuresWindowMinutes();
    in.figuresWindowOwn = m_figuresWindowMinutes.has_value();
    in.latest = m_latest ? &*m_latest : nullptr;
    in.history = &m_history;
    in.historyFromMinute = m_historyFromMinute;
    return TilePresenter(in);
}

OpenAlert DashboardModel::redSince(Tile t) const
{
    const auto open = std::find_if(
        m_openAlerts.begin(), m_openAlerts.end(), [t](const OpenAlert& a) { return a.tile == t; });
    return presenter().redSince(t, open != m_openAlerts.end() ? std::optional(*open) : std::nullopt);
}

QString DashboardModel::alertText(Tile t) const { return presenter().alertText(t); }

TileValue DashboardModel::tile(Tile t) const { return presenter().tile(t); }

QString DashboardModel::opensText(Tile t) const { return presenter().opensText(t); }

LiveText DashboardModel::opensWords(Tile t) const
{
    if (!tileSpec(t).opens)
        return {};
    // The words depend on the settings and window of the click, not on those of a later moment.
    return LiveText([t, settings = m_settings, window = figuresWindowMinutes()] {
        TileInputs in;
        in.settings = &settings;
        in.figuresWindowMinutes = window;
        return TilePresenter(in).opensText(t);
    });
}

idem::TaskFilter DashboardModel::filterFor(Tile t) const { return presenter().filterFor(t); }

} // namespace idem::console
