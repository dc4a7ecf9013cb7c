#pragma once

#include <QColor>
#include <QMetaType>
#include <QObject>
#include <QPointer>
#include <QString>

#include <vector>

#include "models/sessionpoll.h"

namespace idem {
struct SnapshotData;
}

namespace idem::console {

class ConsoleSession;

// One event that explains a change in a chart (issue #27): a recovery action, a pause or resume,
// an operator's annotation, a deploy, and whatever kinds idem_events names later. Display-safe.
struct ChartEvent {
    qint64 auditId = 0; // 0: none
    qint64 atMs = 0; // server clock
    QString kind; // as idem_events names it: requeue, pause, annotate, deploy, …
    QString tenant; // "*" for all
    QString operation;
    QString actor;
    QString text;
};

// How a kind is drawn: its letter on the mark, its colour, its name for people. A kind not in
// the table (a newer server's) is drawn as a grey mark with the first letter of its name in lower
// case (the table's are capitals), and its name as idem_events gives it.
struct EventKindStyle {
    QString letter;
    QColor colour;
    QString label; // translated
    bool known = false;
};
EventKindStyle eventKindStyle(const QString& kind);
// Every kind of the table, in its order (the charts' tooltip explains their letters).
QStringList knownEventKinds();

// What one read brought back.
struct EventReading {
    std::vector<ChartEvent> events; // oldest first
    // Each kind (operators' actions, deploys, failovers) is bounded on its own to its newest
    // maxEvents (schema v24): how many the bounds left out; a server before v24 cannot count them
    // (omittedUncounted when its one bound was reached).
    qint64 omitted = 0;
    bool omittedUncounted = false;
    bool truncated = false; // omitted or omittedUncounted
    qint64 fromMs = 0; // the window read, server clock
    qint64 toMs = 0;
};

// The events of the dashboard's window, tenant and operation (idem_events, schema v17), read on
// the session's worker thread: when the scope changes, then once a minute (the marks of a 15 min
// to 24 h window need no more), or at once when asked (the console's own action, a pause read
// that changed). Nothing here waits on the database.
class EventWatch : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 intervalMs = 60000;
    // At most this many events of each kind a read (idem_events allows 10000); a bulk action of
    // more keys shows as one group of marks whose tooltip says how many it holds.
    static constexpr int maxEvents = 5000;

    explicit EventWatch(ConsoleSession* session, QObject* parent = nullptr);
    ~EventWatch() override;

    void setScope(int windowMinutes, const QString& tenant, const QString& operation);
    const std::vector<ChartEvent>& events() const { return m_reading.events; }
    bool truncated() const { return m_reading.truncated; }
    const EventReading& reading() const { return m_reading; }
    // Why the last read failed (kept until one succeeds); empty otherwise.
    QString error() const { return m_poll.error(); }
    int reads() const { return m_reads; }
    bool pending() const { return m_poll.pending(); }
    qint64 nextReadInMs() const { return m_poll.nextReadInMs(); }

public Q_SLOTS:
    void refreshNow() { m_poll.refreshNow(); }

Q_SIGNALS:
    void changed();

private:
    DatabaseJob makeJob() const;

    SessionPoll m_poll;
    int m_windowMinutes = 15;
    QString m_tenant;
    QString m_operation;
    EventReading m_reading;
    int m_reads = 0;
};

// A snapshot's events as the charts draw them (none when it carries none).
std::vector<ChartEvent> snapshotEvents(const idem::SnapshotData& data);

// "14:03:12 · annotation · db_role (os_user)" and the text under it, for a mark's tooltip
// (plain text; the view escapes it).
QString eventHeadline(const ChartEvent& event, bool withDate);

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::EventReading)
