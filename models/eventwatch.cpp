#include "models/eventwatch.h"

#include <QCoreApplication>
#include <QDateTime>

#include <pqxx/pqxx>

#include "models/consolesession.h"
#include "models/pausewatch.h"
#include "models/visibletext.h"
#include "operations/actions.h"
#include "operations/events.h"
#include "operations/pauses.h"
#include "operations/snapshot.h"
#include "operations/tasklist.h"

namespace idem::console {

namespace {
    // The kinds idem_events names, how their marks look and what they are called. A new kind (a
    // newer server's) needs a row here to get its own letter and colour; without one it is still
    // drawn, grey, under its own name. Letters are unique; colours are mid-tones that carry white
    // letters and stand out on the light and the dark chart alike.
    struct KindRow {
        const char* kind;
        const char* letter;
        QRgb colour;
        const char* label;
    };
    const KindRow kindTable[] = {
        { "annotate", "A", 0x1f6fd1, QT_TRANSLATE_NOOP("idem::console::EventWatch", "annotation") },
        { "deploy", "D", 0x2b8a3e, QT_TRANSLATE_NOOP("idem::console::EventWatch", "deploy") },
        { "failover", "F", 0xc0392b, QT_TRANSLATE_NOOP("idem::console::EventWatch", "failover") },
        { "pause", "P", 0xa86400, QT_TRANSLATE_NOOP("idem::console::EventWatch", "intake paused") },
        { "resume", "R", 0xa86400, QT_TRANSLATE_NOOP("idem::console::EventWatch", "intake resumed") },
        { "requeue", "Q", 0x7b4bc4, QT_TRANSLATE_NOOP("idem::console::EventWatch", "requeued") },
        { "release", "L", 0x7b4bc4, QT_TRANSLATE_NOOP("idem::console::EventWatch", "lease released") },
        { "fail", "X", 0x7b4bc4, QT_TRANSLATE_NOOP("idem::console::EventWatch", "marked failed") },
        { "retention", "T", 0x5d6d7e, QT_TRANSLATE_NOOP("idem::console::EventWatch", "retention changed") },
        { "purge", "C", 0x5d6d7e, QT_TRANSLATE_NOOP("idem::console::EventWatch", "purged") },
    };
    constexpr QRgb unknownColour = 0x6e6e6e;

    // How far around the chart's window the events are read: the time axis is a little wider
    // than the window, and a minute's events may come in late.
    constexpr qint64 marginBeforeMs = 2 * 60000;
    constexpr qint64 marginAfterMs = 60000;
} // namespace

EventKindStyle eventKindStyle(const QString& kind)
{
    for (const auto& row : kindTable)
        if (kind == QLatin1String(row.kind))
            return { QString::fromLatin1(row.letter), QColor::fromRgb(row.colour),
                QCoreApplication::translate("idem::console::EventWatch", row.label), true };
    // Lower case: never one of the table's letters.
    const QString letter = kind.isEmpty() ? QStringLiteral("?") : kind.left(1).toLower();
    return { letter, QColor::fromRgb(unknownColour), kind.isEmpty() ? QStringLiteral("?") : kind, false };
}

QStringList knownEventKinds()
{
    QStringList out;
    for (const auto& row : kindTable)
        out << QString::fromLatin1(row.kind);
    return out;
}

QString eventHeadline(const ChartEvent& e, bool withDate)
{
    const QString when = QDateTime::fromMSecsSinceEpoch(e.atMs).toLocalTime().toString(
        withDate ? QStringLiteral("yyyy-MM-dd HH:mm:ss") : QStringLiteral("HH:mm:ss"));
    QStringList parts { when, eventKindStyle(e.kind).label };
    if (!(e.tenant == QLatin1String("*") && e.operation == QLatin1String("*")))
        parts << pauseScopeText(e.tenant.toStdString(), e.operation.toStdString());
    parts << e.actor;
    return parts.join(QStringLiteral(" · "));
}

EventWatch::EventWatch(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_poll(session, [this] { return makeJob(); })
{
    qRegisterMetaType<EventReading>();
    connect(&m_poll, &SessionPoll::answered, this, [this](const QVariant& answer, bool superseded) {
        if (superseded)
            return; // the poll reads again at once
        m_reading = answer.value<EventReading>();
        ++m_reads;
        Q_EMIT changed();
    });
    connect(&m_poll, &SessionPoll::failed, this, &EventWatch::changed);
    connect(&m_poll, &SessionPoll::stopped, this, [this] {
        // Disconnected or an older schema: no marks (the dashboard says the connection state).
        m_reading = EventReading();
        Q_EMIT changed();
    });
    m_poll.setInterval(int(intervalMs));
    // Four statements of 5 s at most (the time, the events, and when a kind came back full what
    // was left out): bounded as a tick is, on a server that does not answer.
    m_poll.setBound(20000);
    m_poll.start();
}

EventWatch::~EventWatch() = default;

void EventWatch::setScope(int windowMinutes, const QString& tenant, const QString& operation)
{
    if (windowMinutes == m_windowMinutes && tenant == m_tenant && operation == m_operation)
        return;
    m_windowMinutes = windowMinutes;
    m_tenant = tenant;
    m_operation = operation;
    // Another scope's marks must not stand on this one's charts.
    m_reading = EventReading();
    m_poll.rescope();
    Q_EMIT changed();
}

DatabaseJob EventWatch::makeJob() const
{
    const qint64 windowMs = qint64(m_windowMinutes) * 60000;
    const std::string tenant = m_tenant.trimmed().toStdString();
    const std::string operation = m_operation.trimmed().toStdString();
    return [windowMs, tenant, operation](pqxx::connection& conn, const idem::SchemaName& schema) {
        EventReading out;
        // A filter no key could carry has no events either (and idem_events would be refused it).
        for (const auto* name : { &tenant, &operation })
            if (!name->empty() && !idem::validPauseName(*name))
                return QVariant::fromValue(out);
        const auto recent = idem::readRecentEvents(conn, schema, (windowMs + marginBeforeMs) * 1000,
            marginAfterMs * 1000, tenant, operation, maxEvents, 5000);
        const auto& list = recent.list;
        out.fromMs = recent.fromUs / 1000;
        out.toMs = recent.toUs / 1000;
        out.omitted = list.omitted();
        out.omittedUncounted = list.omittedUncounted;
        out.truncated = list.truncated();
        for (const auto& e : list.events) {
            out.events.push_back({ e.auditId, e.atUs / 1000, visibleText(e.action), visibleText(e.tenant),
                visibleText(e.operation), visibleText(e.actor), visibleText(e.text) });
        }
        return QVariant::fromValue(out);
    };
}

std::vector<ChartEvent> snapshotEvents(const idem::SnapshotData& data)
{
    std::vector<ChartEvent> out;
    if (!data.events)
        return out;
    for (const auto& e : data.events->rows) {
        // Checked when the snapshot was read: every time parses.
        const auto us = idem::parseIsoMicros(e.at);
        if (!us)
            continue;
        out.push_back({ e.auditId, *us / 1000, visibleText(e.action), visibleText(e.tenant), visibleText(e.operation),
            visibleText(e.actor), visibleText(e.text) });
    }
    return out;
}

} // namespace idem::console
