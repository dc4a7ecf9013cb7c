#include "models/pausewatch.h"

#include <QCoreApplication>
#include <QDateTime>

#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/visibletext.h"

namespace idem::console {

namespace {
    bool covers(const std::string& pause, const QString& asked)
    {
        return pause == "*" || (!asked.isEmpty() && asked != QLatin1String("*") && pause == asked.toStdString());
    }
} // namespace

PauseWatch::PauseWatch(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_poll(session, [] {
        return [](pqxx::connection& conn, const idem::SchemaName& schema) {
            return QVariant::fromValue(idem::listPauses(conn, schema, windowMinutes));
        };
    })
{
    connect(&m_poll, &SessionPoll::answered, this, [this](const QVariant& answer, bool) {
        m_list = answer.value<idem::PauseList>();
        m_readAt.start();
        Q_EMIT changed();
    });
    connect(&m_poll, &SessionPoll::failed, this, &PauseWatch::changed);
    connect(&m_poll, &SessionPoll::stopped, this, [this] {
        // Not connected (or no pauses in this schema): nothing is known to be paused. The pages
        // say the connection state themselves.
        m_list.reset();
        Q_EMIT changed();
    });
    m_poll.setInterval(5000);
    // One statement under the monitor connection's statement timeout (5 s): bounded as a tick is, on a server that does not answer.
    m_poll.setBound(5000);
    m_poll.start();
}

PauseWatch::~PauseWatch() = default;

std::optional<qint64> PauseWatch::remainingNow(const idem::Pause& pause) const
{
    if (!pause.remainingMs)
        return std::nullopt;
    return std::max<qint64>(0, *pause.remainingMs - msSinceRead());
}

std::vector<idem::Pause> PauseWatch::active() const
{
    std::vector<idem::Pause> out;
    if (m_list)
        for (const auto& p : m_list->pauses)
            if (p.active)
                out.push_back(p);
    return out;
}

std::vector<idem::Pause> PauseWatch::coveringAll(const QString& tenant, const QString& operation) const
{
    std::vector<idem::Pause> out;
    for (const auto& p : active())
        if (covers(p.tenant, tenant) && covers(p.operation, operation))
            out.push_back(p);
    return out;
}

std::vector<idem::Pause> PauseWatch::coveringSome(const QString& tenant, const QString& operation) const
{
    // An empty filter is every tenant or operation: '*' to the list's own test.
    const auto any = [](const QString& v) { return v.isEmpty() ? std::string("*") : v.toStdString(); };
    std::vector<idem::Pause> out;
    if (m_list)
        for (const auto* p : m_list->covering(any(tenant), any(operation)))
            out.push_back(*p);
    return out;
}

PauseChange::PauseChange(ConsoleSession* admin, QObject* parent)
    : QObject(parent)
    , m_request(admin, SessionRequest::Kind::Write)
{
    qRegisterMetaType<PauseOutcome>();
    connect(&m_request, &SessionRequest::answered, this,
        [this](const QVariant& answer) { Q_EMIT done(answer.value<PauseOutcome>()); });
    connect(&m_request, &SessionRequest::failed, this, [this](const Failure& failure) { Q_EMIT failed(failure.text()); });
}

void PauseChange::pause(const idem::PauseRequest& request)
{
    m_request.run([request](pqxx::connection& conn, const idem::SchemaName& schema) {
        const auto change = idem::setPause(conn, schema, request);
        return QVariant::fromValue(PauseOutcome { change.auditId, change.wasPaused, pauseScopeText(change.pause),
            pauseUntilText(change.pause, change.pause.remainingMs), {} });
    });
}

void PauseChange::resume(const idem::Pause& pause, const std::string& reason)
{
    m_request.run([pause, reason](pqxx::connection& conn, const idem::SchemaName& schema) {
        const auto change = idem::resumePause(conn, schema, pause.tenant, pause.operation, reason);
        PauseOutcome out { change.auditId, false, pauseScopeText(change.tenant, change.operation), {}, {} };
        for (const auto& [t, o] : change.stillPausedBy)
            out.stillPausedBy << pauseScopeText(t, o);
        return QVariant::fromValue(out);
    });
}

QString pauseScopeText(const std::string& tenant, const std::string& operation)
{
    const QString scope = visibleText(tenant) + QLatin1Char(':') + visibleText(operation);
    if (tenant == "*" && operation == "*")
        return QCoreApplication::translate("idem::console::PauseWatch", "%1 (everything)").arg(scope);
    if (tenant == "*")
        return QCoreApplication::translate("idem::console::PauseWatch", "%1 (all tenants)").arg(scope);
    if (operation == "*")
        return QCoreApplication::translate("idem::console::PauseWatch", "%1 (all operations)").arg(scope);
    return scope;
}

QString pauseScopeText(const idem::Pause& pause) { return pauseScopeText(pause.tenant, pause.operation); }

QString pauseUntilText(const idem::Pause& pause, std::optional<qint64> remainingMs)
{
    if (!pause.untilUs)
        return QCoreApplication::translate("idem::console::PauseWatch", "until resumed");
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(*pause.untilUs / 1000).toLocalTime();
    const bool today = at.date() == QDate::currentDate();
    const QString when = at.toString(today ? QStringLiteral("HH:mm:ss") : QStringLiteral("yyyy-MM-dd HH:mm"));
    const qint64 left = remainingMs.value_or(pause.remainingMs.value_or(0));
    return QCoreApplication::translate("idem::console::PauseWatch", "until %1 (%2 left)").arg(when, durationText(double(std::max<qint64>(left, 0))));
}

} // namespace idem::console
