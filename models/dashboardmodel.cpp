#include "models/dashboardmodel.h"

#include <QCoreApplication>
#include <QLocale>

#include <algorithm>
#include <cmath>

#include "models/consolesession.h"
#include "operations/outcomeseries.h"

namespace idem::console {

namespace {
    // A tick may use a tenth of the interval; a slower one stretches the interval, so a
    // struggling server gets less load from the console rather than more (DESIGN section 6).
    constexpr qint64 tickBudgetDivisor = 10;
    constexpr std::chrono::milliseconds maxDelay { 60000 };
    // A tick answers in milliseconds; silence this long means the database is not answering.
    constexpr qint64 overdueAfterMs = 2000;
    // After a failed exact refresh (timeout, privilege), wait this long before this console
    // asks again; the database's own attempt marker keeps other consoles off it meanwhile.
    constexpr qint64 exactRetryAfterMs = 60000;
    // An exact refresh may take much longer than a tick: its own statement timeout.
    constexpr int exactTimeoutMs = 600000;

    QString count(qint64 n) { return QLocale().toString(n); }

    QString windowText(int minutes)
    {
        return minutes % 60 == 0
            ? QCoreApplication::translate("idem::console::DashboardModel", "last %1 h").arg(minutes / 60)
            : QCoreApplication::translate("idem::console::DashboardModel", "last %1 min").arg(minutes);
    }

    QString durationText(double seconds)
    {
        const auto s = static_cast<qint64>(std::floor(seconds));
        if (s < 60)
            return QCoreApplication::translate("idem::console::DashboardModel", "%1 s").arg(s);
        if (s < 3600)
            return QCoreApplication::translate("idem::console::DashboardModel", "%1 min %2 s").arg(s / 60).arg(s % 60);
        return QCoreApplication::translate("idem::console::DashboardModel", "%1 h %2 min")
            .arg(s / 3600)
            .arg((s % 3600) / 60);
    }
    // How old a figure is, as a person says it on a tile's last line: "20 s", "11 min", "3 h".
    QString ageText(double seconds)
    {
        const auto s = static_cast<qint64>(std::floor(std::max(0.0, seconds)));
        if (s < 60)
            return QCoreApplication::translate("idem::console::DashboardModel", "%1 s").arg(s);
        if (s < 3600)
            return QCoreApplication::translate("idem::console::DashboardModel", "%1 min").arg(s / 60);
        return QCoreApplication::translate("idem::console::DashboardModel", "%1 h").arg(s / 3600);
    }
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

void DashboardModel::showStatic(
    const DashboardSettings& settings, const idem::DashboardReading& reading, int figuresWindowMinutes)
{
    if (!m_static)
        return;
    m_settings = settings;
    m_figuresWindowMinutes = figuresWindowMinutes;
    resetData();
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
            !si.isReader && !si.schemaMissing()
                ? QCoreApplication::translate("idem::console::DashboardModel", "Role %1 may not read the Idem tables.")
                      .arg(si.role)
                : QCoreApplication::translate("idem::console::DashboardModel", "No Idem schema %1 to read yet.")
                      .arg(si.schema));
        return;
    }
    if (m_freshness == Freshness::Disconnected || m_freshness == Freshness::NoData)
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
    // The whole window once (after a connect or a change), then only the newest minutes: the
    // previous one too, since workers flush the minute that just closed a moment later.
    // Two windows: when a counter tile turned red is found from the windows ending in each of
    // the last window's minutes (redSince()).
    if (m_historyLoadedMinutes < 2 * m_settings.windowMinutes || !m_lastServerMs)
        options.historyMinutes = 2 * m_settings.windowMinutes;
    else
        options.historyMinutes
            = std::clamp<int>(static_cast<int>((QDateTime::currentMSecsSinceEpoch() - m_lastServerMs) / 60000) + 2, 2,
                m_settings.windowMinutes);

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
    if (m_pending)
        m_pendingSince.start();
}

void DashboardModel::onTickDone(quint64 id, const QVariant& answer)
{
    if (id != m_pending)
        return;
    m_pending = 0;
    m_failures = 0;
    const auto tick = answer.value<DashboardTick>();
    ingest(tick);
    maybeRefreshExact();
    // A tick slower than its own statement timeout was not executing all that time (the server
    // cancels a statement sooner): it waited on a stopped backend or the network. That is no
    // measure of the load the console puts on the server, so it does not stretch the polling.
    const bool hung = m_statementTimeoutMs > 0 && tick.elapsedMs > m_statementTimeoutMs;
    const auto budgeted
        = hung ? std::chrono::milliseconds(0) : std::chrono::milliseconds(tick.elapsedMs * tickBudgetDivisor);
    schedule(std::max(std::chrono::milliseconds(m_settings.intervalMs), budgeted));
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
    setFreshness(Freshness::Live, {});
    evaluateLevels();
    Q_EMIT updated();
}

bool DashboardModel::usesOwnExact(const idem::StatsSnapshot& s) const
{
    // A standby reads the primary's shared figures while the primary keeps them fresh; when
    // nobody there does, its consoles count for themselves.
    return idem::needsOwnExact(s, !m_settings.tenant.isEmpty() || !m_settings.operation.isEmpty());
}

void DashboardModel::maybeRefreshExact()
{
    if (m_static || m_exactPending || !m_latest || !m_session || !m_session->canPoll())
        return;
    if (m_exactFailedAt.isValid() && m_exactFailedAt.elapsed() < exactRetryAfterMs)
        return;
    const auto& s = m_latest->stats;
    const bool own = usesOwnExact(s);
    if (!own && !s.exactDue)
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
}

void DashboardModel::onTickFailed(quint64 id, const Failure& failure)
{
    if (id != m_pending || id == 0) {
        if (id == 0 && m_pending == 0)
            setFreshness(Freshness::Disconnected, failure.text());
        return;
    }
    m_pending = 0;
    if (failure.kind == FailureKind::ConnectionLost) {
        // The session reconnects by itself; its state change says the rest.
        setFreshness(Freshness::Disconnected, failure.text());
        return;
    }
    ++m_failures;
    setFreshness(Freshness::Failed, failure.text());
    const std::chrono::milliseconds backoff(qint64(m_settings.intervalMs) << std::min(m_failures, 5));
    schedule(std::min(maxDelay, backoff));
}

void DashboardModel::schedule(std::chrono::milliseconds after)
{
    m_nextTick = std::min(after, maxDelay);
    if (!m_settings.paused && m_session->canPoll())
        m_timer.start(m_nextTick);
}

void DashboardModel::onClock()
{
    if (m_pending && m_pendingSince.isValid() && m_pendingSince.elapsed() >= overdueAfterMs)
        setFreshness(Freshness::Waiting,
            QCoreApplication::translate(
                "idem::console::DashboardModel", "No answer from the database for %1 s (a tick gives up after %2 s).")
                .arg(m_pendingSince.elapsed() / 1000)
                .arg(m_statementTimeoutMs / 1000.0));
    else if (m_freshness != Freshness::Live)
        Q_EMIT freshnessChanged(); // "last good data N s ago" moves on
}

void DashboardModel::setFreshness(Freshness freshness, const QString& reason)
{
    if (freshness == m_freshness && reason == m_reason)
        return;
    m_freshness = freshness;
    m_reason = reason;
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

OpenAlert DashboardModel::redSince(Tile t) const
{
    const auto open = std::find_if(
        m_openAlerts.begin(), m_openAlerts.end(), [t](const OpenAlert& a) { return a.tile == t; });
    OpenAlert out = open != m_openAlerts.end() ? *open : OpenAlert { t, {}, true, false };
    if (!m_latest)
        return out;
    const qint64 now = m_latest->serverNowMs;
    if (!out.since.isValid())
        out.since = QDateTime::fromMSecsSinceEpoch(now);
    const auto& threshold = m_settings.thresholds[static_cast<std::size_t>(t)];
    const auto red = [&](std::optional<double> v) { return v && levelOf(v, threshold) == Level::Critical; };

    // The figure of the window that ended with minute m, as statsSql() computes it from the same counters.
    const qint64 window = m_settings.windowMinutes;
    const auto windowValue = [&](qint64 m) -> std::optional<double> {
        idem::CounterBucket sum;
        for (const auto& b : m_history.minutes()) {
            if (b.minuteEpoch <= m - window * 60 || b.minuteEpoch > m)
                continue;
            for (const auto& f : idem::outcomeFields())
                sum.*(f.field) += b.*(f.field);
        }
        const auto claims = sum.acquired + sum.duplicates();
        switch (t) {
        case Tile::DuplicateRatio:
            return sum.duplicateRatio() ? std::optional(*sum.duplicateRatio() * 100.0) : std::nullopt;
        case Tile::Retries:
            return perClaimsPercent(sum.reclaims(), claims);
        case Tile::FailedRetries:
            return perClaimsPercent(sum.failedRetries(), claims);
        case Tile::DigestConflicts:
            return perClaimsPercent(sum.conflict, claims);
        case Tile::StaleTokens:
            return perClaimsPercent(sum.staleToken, claims);
        default:
            return std::nullopt;
        }
    };
    switch (t) {
    case Tile::DuplicateRatio:
    case Tile::Retries:
    case Tile::FailedRetries:
    case Tile::DigestConflicts:
    case Tile::StaleTokens: {
        if (m_figuresWindowMinutes || !m_historyFromMinute)
            return out;
        const qint64 newest = now / 60000 * 60;
        qint64 first = newest;
        bool earlier = true;
        for (qint64 m = newest; m - (window - 1) * 60 >= m_historyFromMinute; m -= 60) {
            if (!red(windowValue(m))) {
                earlier = false;
                break;
            }
            first = m;
        }
        return { t, QDateTime::fromMSecsSinceEpoch(first * 1000), earlier, true };
    }
    case Tile::Processing:
    case Tile::ExpiredLeases: {
        const auto& ring = m_history.live();
        if (ring.size() == 0)
            return out;
        const qint64 gapMs = std::max<qint64>(5000, 3LL * m_settings.intervalMs);
        qint64 first = now;
        bool seen = false;
        bool earlier = true; // unless a sample before the run is found
        for (int i = int(ring.size()) - 1; i >= 0; --i) {
            const auto& sample = ring.at(i);
            // A gap (the console could not read) ends what the samples can tell.
            if (seen && first - sample.ms > gapMs)
                break;
            if (!red(double(t == Tile::Processing ? sample.processing : sample.expired))) {
                earlier = false;
                break;
            }
            first = sample.ms;
            seen = true;
        }
        return { t, QDateTime::fromMSecsSinceEpoch(first), earlier, false };
    }
    case Tile::OldestProcessing: {
        // The oldest row crossed the red line when its age did.
        const auto& s = m_latest->stats;
        if (s.oldestProcessingAgeSeconds && threshold.critical && *s.oldestProcessingAgeSeconds >= *threshold.critical)
            return { t, QDateTime::fromMSecsSinceEpoch(now - qint64((*s.oldestProcessingAgeSeconds - *threshold.critical) * 1000.0)),
                false, false };
        return out;
    }
    default:
        return out;
    }
}

QString DashboardModel::alertText(Tile t) const
{
    const TileValue v = tile(t);
    const auto& threshold = m_settings.thresholds[static_cast<std::size_t>(t)];
    const QString red = threshold.critical ? QLocale().toString(*threshold.critical) : QStringLiteral("–");
    if (tileSpec(t).perClaims && v.value)
        return QCoreApplication::translate("idem::console::DashboardModel", "%1 %2 (%3 % of claims; red from %4 %)")
            .arg(tileTitle(t), v.text, QLocale().toString(*v.value, 'f', 1), red);
    const QString unit = t == Tile::DuplicateRatio ? QStringLiteral(" %")
        : t == Tile::OldestProcessing              ? QStringLiteral(" s")
                                                   : QString();
    return QCoreApplication::translate("idem::console::DashboardModel", "%1 %2 (red from %3)")
        .arg(tileTitle(t), v.text, red + unit);
}

TileValue DashboardModel::tile(Tile t) const
{
    TileValue v;
    if (!m_latest) {
        v.text = QStringLiteral("–");
        return v;
    }
    const auto& s = m_latest->stats;
    const QString window = windowText(m_figuresWindowMinutes.value_or(m_settings.windowMinutes));
    const auto counted = [&](qint64 n, const QString& detail) {
        v.value = static_cast<double>(n);
        v.text = count(n);
        v.detail = detail;
    };
    // Events in the window: the count, coloured by its share of the window's claims.
    const auto perClaims = [&](qint64 n) {
        v.value = perClaimsPercent(n, s.claims);
        v.text = count(n);
        v.detail = QCoreApplication::translate("idem::console::DashboardModel", "%1 % of claims, %2")
                       .arg(QLocale().toString(*v.value, 'f', 1), window);
    };
    const auto atLeast = [&](idem::Figure f, qint64 n) {
        // A no-break space: a tile's detail line may wrap, never between "≥" and its number.
        return s.label(f).quality == idem::FigureQuality::LowerBound ? QStringLiteral("≥\u00a0") + count(n) : count(n);
    };
    // A lower bound reads "≥ 10,000" with the exact figure of the last refresh, and its age,
    // on the line below; an exact figure of now needs no words.
    const auto bounded = [&](std::initializer_list<idem::Figure> figures, bool duration) {
        bool lower = false;
        bool haveExact = true;
        double exact = 0;
        std::optional<double> age;
        for (auto f : figures) {
            const auto& l = s.label(f);
            if (l.quality != idem::FigureQuality::LowerBound)
                continue;
            lower = true;
            if (!l.exact) {
                haveExact = false;
                continue;
            }
            exact += *l.exact;
            age = age ? std::max(*age, l.exactAgeSeconds.value_or(0)) : l.exactAgeSeconds.value_or(0);
        }
        if (!lower)
            return;
        // Exact for the figures that were not capped, from this tick.
        if (haveExact && figures.size() > 1)
            for (auto f : figures)
                if (s.label(f).quality != idem::FigureQuality::LowerBound)
                    exact += f == idem::Figure::FailedPermanent ? double(s.failedPermanent) : double(s.failedExhausted);
        v.text = QStringLiteral("≥ ") + v.text;
        if (haveExact && age)
            v.quality = QCoreApplication::translate("idem::console::DashboardModel", "exact %1 · %2 ago")
                            .arg(duration ? durationText(exact) : count(static_cast<qint64>(exact)), ageText(*age));
        else
            v.quality = QCoreApplication::translate("idem::console::DashboardModel", "counted up to %1; exact count pending")
                            .arg(count(idem::boundedCountCap));
    };
    switch (t) {
    case Tile::Processing:
        counted(s.processing, QCoreApplication::translate("idem::console::DashboardModel", "live leases"));
        bounded({ idem::Figure::Processing }, false);
        break;
    case Tile::ExpiredLeases:
        counted(
            s.expiredLeases, QCoreApplication::translate("idem::console::DashboardModel", "processing, lease ran out"));
        bounded({ idem::Figure::ExpiredLeases }, false);
        break;
    case Tile::DuplicateRatio:
        if (s.duplicateRatio) {
            v.value = *s.duplicateRatio * 100.0;
            v.text = QStringLiteral("%1 %").arg(QLocale().toString(*v.value, 'f', 1));
            v.detail = QCoreApplication::translate("idem::console::DashboardModel", "of %1 claims, %2")
                           .arg(count(s.claims), window);
        } else {
            v.text = QStringLiteral("–");
            v.detail = QCoreApplication::translate("idem::console::DashboardModel", "no claims, %1").arg(window);
        }
        break;
    case Tile::WaitingRetry:
        counted(s.retryableFailed, QCoreApplication::translate("idem::console::DashboardModel", "retryable_failed now"));
        bounded({ idem::Figure::RetryableFailed }, false);
        break;
    case Tile::Retries:
        perClaims(s.retries);
        break;
    case Tile::FailedRetries:
        perClaims(s.failedRetries);
        break;
    case Tile::LongUnfinished:
        counted(s.longUnfinished,
            QCoreApplication::translate("idem::console::DashboardModel", "in flight after %1 min")
                .arg(m_settings.longUnfinishedMinutes));
        bounded({ idem::Figure::LongUnfinished }, false);
        break;
    case Tile::Failed:
        counted(s.failedPermanent + s.failedExhausted,
            QCoreApplication::translate("idem::console::DashboardModel", "%1 permanent · %2 exhausted")
                .arg(atLeast(idem::Figure::FailedPermanent, s.failedPermanent),
                    atLeast(idem::Figure::FailedExhausted, s.failedExhausted)));
        bounded({ idem::Figure::FailedPermanent, idem::Figure::FailedExhausted }, false);
        break;
    case Tile::DigestConflicts:
        perClaims(s.digestConflicts);
        break;
    case Tile::StaleTokens:
        perClaims(s.staleTokenRejections);
        break;
    case Tile::Uncertain:
        counted(s.uncertain, QCoreApplication::translate("idem::console::DashboardModel", "retryable, effect unknown"));
        bounded({ idem::Figure::Uncertain }, false);
        break;
    case Tile::OldestProcessing:
        if (s.oldestProcessingAgeSeconds) {
            v.value = *s.oldestProcessingAgeSeconds;
            v.text = durationText(*v.value);
            v.detail = QCoreApplication::translate("idem::console::DashboardModel", "since first seen");
            bounded({ idem::Figure::OldestProcessingAge }, true);
        } else {
            v.text = QStringLiteral("–");
            v.detail = QCoreApplication::translate("idem::console::DashboardModel", "nothing processing");
        }
        break;
    case Tile::TotalRows:
        if (s.totalRowsEstimate) {
            v.value = static_cast<double>(*s.totalRowsEstimate);
            v.text = QStringLiteral("≈ ") + count(*s.totalRowsEstimate);
            v.detail = totalRowsSourceText(s.label(idem::Figure::TotalRows).source);
        } else {
            v.text = QStringLiteral("–");
            v.detail = QCoreApplication::translate("idem::console::DashboardModel", "estimate: not analysed yet");
        }
        break;
    case Tile::COUNT:
        break;
    }
    v.level = v.value ? levelOf(v.value, m_settings.thresholds[static_cast<std::size_t>(t)]) : Level::Normal;
    v.opens = opensText(t);
    v.opensNothing = opensNothingText(t);
    return v;
}

QString totalRowsSourceText(const std::string& source)
{
    return source == idem::liveRowCounterSource
        ? QCoreApplication::translate("idem::console::DashboardModel", "estimate (live-row counter: not analysed yet)")
        : QCoreApplication::translate("idem::console::DashboardModel", "estimate (planner statistics)");
}

QString DashboardModel::opensNothingText(Tile t)
{
    const auto tr = [](const char* text) { return QCoreApplication::translate("idem::console::DashboardModel", text); };
    switch (t) {
    case Tile::DuplicateRatio:
        // Only the counters know a duplicate: a replay or an in-progress answer writes nothing to the row.
        return tr("It would open the keys whose claims were answered as duplicates, but a replayed or "
                  "in-progress answer leaves no mark on the row, so those keys cannot be found. Digest conflicts "
                  "opens the keys with a conflicting claim.");
    case Tile::StaleTokens:
        return tr("It would open the keys whose late workers were turned away, but a rejected stale token leaves no "
                  "mark on the row, so those keys cannot be found.");
    default:
        return {};
    }
}

QString DashboardModel::opensText(Tile t) const
{
    const int minutes = m_figuresWindowMinutes.value_or(m_settings.windowMinutes);
    const QString window = windowText(minutes);
    const auto tr = [](const char* text) { return QCoreApplication::translate("idem::console::DashboardModel", text); };
    switch (t) {
    case Tile::Processing:
        return tr("rows in processing with a live lease");
    case Tile::ExpiredLeases:
        return tr("rows in processing whose lease ran out");
    case Tile::WaitingRetry:
        return tr("rows waiting to retry (retryable_failed)");
    case Tile::Uncertain:
        return tr("rows waiting to retry whose last outcome is unknown");
    case Tile::LongUnfinished:
        return tr("rows processing or waiting to retry, first seen over %1 min ago").arg(m_settings.longUnfinishedMinutes);
    case Tile::OldestProcessing:
        return tr("every row in processing, the oldest first (selected)");
    case Tile::Failed:
        return tr("rows in failed");
    // The counter tiles count events; what they open are the keys those events left behind.
    case Tile::Retries:
        return tr("keys on attempt 2 or later, updated in the %1 (the tile counts takeovers)").arg(window);
    case Tile::FailedRetries:
        return tr("keys with a failure of attempt 2 or later in the %1, whatever their status now (the tile counts "
                  "failures: a key that failed twice counts twice)")
            .arg(window);
    case Tile::DigestConflicts:
        return tr("keys with a digest conflict in the %1 (the tile counts conflicting claims)").arg(window);
    case Tile::TotalRows:
        return tr("every row");
    case Tile::DuplicateRatio:
    case Tile::StaleTokens: // a rejected call leaves no mark on any row
    case Tile::COUNT:
        break;
    }
    return {};
}

std::optional<idem::TaskSort> DashboardModel::sortFor(Tile t)
{
    // The tile ages rows by created_at: the row it is about is the first one seen.
    if (t == Tile::OldestProcessing)
        return idem::TaskSort { idem::TaskSortColumn::CreatedAt, false };
    return std::nullopt;
}

idem::TaskFilter DashboardModel::filterFor(Tile t) const
{
    idem::TaskFilter f;
    if (!m_settings.tenant.isEmpty())
        f.tenant = m_settings.tenant.toStdString();
    if (!m_settings.operation.isEmpty())
        f.operation = m_settings.operation.toStdString();
    switch (t) {
    case Tile::Processing:
        f.statuses = { "processing" };
        f.liveLease = true;
        break;
    case Tile::ExpiredLeases:
        f.statuses = { "processing" };
        f.expiredLease = true;
        break;
    case Tile::OldestProcessing:
        f.statuses = { "processing" };
        break;
    case Tile::WaitingRetry:
        f.statuses = { "retryable_failed" };
        break;
    case Tile::Retries:
        // Every status: a retry that succeeded was a retry too (the retried-rows index serves it).
        f.minAttempts = 2;
        f.updatedWithinMinutes = m_figuresWindowMinutes.value_or(m_settings.windowMinutes);
        break;
    case Tile::FailedRetries:
        // The keys the figure counted: a failure of attempt 2 or later in the window, read from
        // the error history, whatever came after it (a later success included).
        f.minAttempts = 2;
        f.updatedWithinMinutes = m_figuresWindowMinutes.value_or(m_settings.windowMinutes);
        f.failedRetryInWindow = true;
        break;
    case Tile::LongUnfinished:
        // What the tile counts: work still in flight (failed rows have their own tile).
        f.statuses = { "processing", "retryable_failed" };
        f.unfinishedForMinutes = m_settings.longUnfinishedMinutes;
        break;
    case Tile::Failed:
        f.statuses = { "failed" };
        break;
    case Tile::DigestConflicts:
        f.digestConflicts = true;
        f.conflictWithinMinutes = m_figuresWindowMinutes.value_or(m_settings.windowMinutes);
        break;
    case Tile::Uncertain:
        f.statuses = { "retryable_failed" };
        f.uncertain = true;
        break;
    case Tile::DuplicateRatio:
    case Tile::StaleTokens:
    case Tile::TotalRows:
    case Tile::COUNT:
        break;
    }
    return f;
}

} // namespace idem::console
