#include "models/latencywatch.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QLocale>

#include <algorithm>
#include <cmath>
#include <limits>

#include <pqxx/pqxx>

#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/tilepresenter.h"
#include "models/visibletext.h"
#include "operations/latency.h"

namespace idem::console {

namespace {
    // A minute [m, m + 1 min) is folded once it has been closed for a minute: the roll-up can take
    // the minute after folded_to at folded_to + 2 min. A little later, so the server's clock has
    // surely passed it.
    constexpr qint64 dueAfterFoldedToMs = 120000 + 3000;
    // The roll-up folds at most this many minutes a call (rollupLatency's default): a call that
    // folded as many may have left more due.
    constexpr int rollupMaxMinutes = 60;

    QString clockText(qint64 ms) { return QDateTime::fromMSecsSinceEpoch(ms).toLocalTime().toString(QStringLiteral("HH:mm")); }
} // namespace

LatencyWatch::LatencyWatch(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_poll(session, [this] { return makeJob(); })
{
    qRegisterMetaType<LatencyReading>();
    connect(&m_poll, &SessionPoll::answered, this, &LatencyWatch::onAnswer);
    connect(&m_poll, &SessionPoll::failed, this, &LatencyWatch::onFailure);
    connect(&m_poll, &SessionPoll::stopped, this, [this] {
        m_reading.reset();
        Q_EMIT changed();
    });
    // Three statements of 5 s at most: bounded as a tick is, on a server that does not answer.
    m_poll.setBound(15000);
    m_poll.start();
}

LatencyWatch::~LatencyWatch() = default;

void LatencyWatch::setScope(int windowMinutes, const QString& tenant, const QString& operation)
{
    if (windowMinutes == m_windowMinutes && tenant == m_tenant && operation == m_operation)
        return;
    m_windowMinutes = windowMinutes;
    m_tenant = tenant;
    m_operation = operation;
    // Figures of another scope must not stand under this one's title.
    m_reading.reset();
    m_poll.rescope();
    Q_EMIT changed();
}

DatabaseJob LatencyWatch::makeJob() const
{
    idem::LatencyQuery perMinute;
    perMinute.minutes = m_windowMinutes;
    perMinute.tenant = m_tenant.trimmed().toStdString();
    perMinute.operation = m_operation.trimmed().toStdString();
    perMinute.byOperation = false; // the filtered operation, or every operation as one
    perMinute.perMinute = true;
    idem::LatencyQuery byOperation = perMinute;
    byOperation.byOperation = true;
    byOperation.perMinute = false;
    // A standby (or any read-only server) cannot fold: it reads what its primary's readers folded.
    const bool rollup = m_poll.session() && !m_poll.session()->serverInfo().readOnly;
    return [perMinute, byOperation, rollup](pqxx::connection& conn, const idem::SchemaName& schema) {
        LatencyReading out;
        // The roll-up in a short transaction of its own, each with its own limit (behind a pooler
        // a session's statement timeout does not follow the connection).
        const auto view
            = idem::readLatencyView(conn, schema, perMinute, byOperation, rollup ? rollupMaxMinutes : 0, 5000);
        out.minutesFolded = view.minutesFolded;
        const auto& minutes = view.perMinute;
        const auto& operations = view.byOperation;
        out.foldedToMs = minutes.toUs / 1000;
        out.serverNowMs = minutes.serverNowUs / 1000;
        for (const auto& h : minutes.histograms) {
            if (!h.minuteUs || h.count <= 0)
                continue;
            const LatencyPoint p { *h.minuteUs / 1000, h.p50, h.p95, h.p99 };
            if (h.kind == idem::LatencyKind::Run)
                out.run.push_back(p);
            else if (h.kind == idem::LatencyKind::TimeToSuccess)
                out.timeToSuccess.push_back(p);
        }
        const auto byMinute = [](const LatencyPoint& a, const LatencyPoint& b) { return a.minuteMs < b.minuteMs; };
        std::sort(out.run.begin(), out.run.end(), byMinute);
        std::sort(out.timeToSuccess.begin(), out.timeToSuccess.end(), byMinute);
        for (const auto& h : operations.histograms)
            if (h.kind == idem::LatencyKind::Run && h.count > 0)
                out.runByOperation.push_back({ visibleText(h.operation), h.count, h.p95 });
        sortLatencyByP95(out.runByOperation);
        return QVariant::fromValue(out);
    };
}

void LatencyWatch::onAnswer(const QVariant& answer, bool superseded)
{
    if (superseded)
        return; // the poll reads again at once
    auto reading = answer.value<LatencyReading>();
    const std::optional<qint64> before = m_reading ? std::optional(m_reading->foldedToMs) : std::nullopt;
    const bool more = reading.minutesFolded >= rollupMaxMinutes;
    m_reading = std::move(reading);
    ++m_reads;
    Q_EMIT changed();
    if (more)
        m_poll.readIn(1000); // the roll-up is catching up: the next hour of minutes
    else
        armNext(before);
}

void LatencyWatch::onFailure(const Failure& failure)
{
    // Said once, where the figures would be; tried again later, less often each time.
    Q_EMIT changed();
    if (failure.kind != FailureKind::ConnectionLost) {
        m_poll.readIn(m_retryMs);
        m_retryMs = std::min(maxRetryMs, m_retryMs * 2);
    }
}

void LatencyWatch::armNext(std::optional<qint64> previousFoldedToMs)
{
    if (!m_reading)
        return;
    // By the server's clock as of the read (the answer came a moment ago).
    qint64 delay = m_reading->foldedToMs + dueAfterFoldedToMs - m_reading->serverNowMs;
    if (delay <= 0 && previousFoldedToMs && *previousFoldedToMs == m_reading->foldedToMs) {
        // Due, yet nothing new: another session is folding it, or (a standby) its primary has
        // not yet. Again later, less often while it stays so.
        delay = m_retryMs;
        m_retryMs = std::min(maxRetryMs, m_retryMs * 2);
    } else {
        m_retryMs = retryMs;
    }
    m_poll.readIn(std::clamp<qint64>(delay, 1000, 10 * 60000));
}

qint64 LatencyWatch::foldedToMs() const { return m_reading ? m_reading->foldedToMs : 0; }

TileValue latencyWorstTile(const LatencyState& state, const Threshold& threshold)
{
    TileValue v;
    v.text = QStringLiteral("–");
    if (!state.error.isEmpty())
        v.more = QCoreApplication::translate("idem::console::LatencyWatch", "The last read failed: %1").arg(state.error);
    if (!state.reading) {
        v.detail = state.error.isEmpty() ? QCoreApplication::translate("idem::console::LatencyWatch", "not read yet") : QCoreApplication::translate("idem::console::LatencyWatch", "could not be read");
        v.pending = true;
        return v;
    }
    const auto& ops = state.reading->runByOperation;
    const QString window = windowText(state.windowMinutes);
    const qint64 foldedToMs = state.reading->foldedToMs;
    if (ops.empty()) {
        v.detail = QCoreApplication::translate("idem::console::LatencyWatch", "no runs in the %1 to %2").arg(window, clockText(foldedToMs));
        return v;
    }
    const auto& worst = ops.front();
    v.text = durationText(worst.p95Ms, idem::DurationForm::Precise);
    v.value = worst.p95Ms / 1000.0;
    v.level = levelOf(v.value, threshold);
    v.detail = QCoreApplication::translate("idem::console::LatencyWatch", "%1, %2 to %3").arg(worst.operation, window, clockText(foldedToMs));
    QString slowest = QCoreApplication::translate("idem::console::LatencyWatch", "Slowest operations (p95 run time):");
    constexpr std::size_t shown = 5;
    for (std::size_t i = 0; i < ops.size() && i < shown; ++i) {
        // Outside the translate() call: lupdate's parser loops on a template argument there.
        const int runs = static_cast<int>(std::min<qint64>(ops[i].count, std::numeric_limits<int>::max()));
        slowest += QLatin1Char('\n')
            + QCoreApplication::translate("idem::console::LatencyWatch", "%1: %2 (%Ln runs)", nullptr, runs)
                  .arg(ops[i].operation, durationText(ops[i].p95Ms, idem::DurationForm::Precise));
    }
    if (ops.size() > shown)
        slowest += QLatin1Char('\n') + QCoreApplication::translate("idem::console::LatencyWatch", "… and %n more", nullptr, int(ops.size() - shown));
    v.more = v.more.isEmpty() ? slowest : v.more + QLatin1Char('\n') + slowest;
    return v;
}

void sortLatencyByP95(std::vector<OperationLatency>& ops)
{
    std::sort(ops.begin(), ops.end(), [](const OperationLatency& a, const OperationLatency& b) {
        return a.p95Ms != b.p95Ms ? a.p95Ms > b.p95Ms : a.operation < b.operation;
    });
}

} // namespace idem::console
