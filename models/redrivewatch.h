#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QStringList>

#include <optional>
#include <string>
#include <vector>

#include "models/sessionpoll.h"
#include "models/workermessages.h"
#include "operations/redrive.h"

namespace idem::console {

class ConsoleSession;

// Who can re-execute what, as the console last read it (schema v25, idem_redrive_status): one
// read per poll on the session's worker thread, the next armed only when the last answered. The
// requeue dialogs ask it whether "Re-execute now" can be offered for a key's operation.
// Nothing here waits on the database.
class RedriveStatusWatch : public QObject {
    Q_OBJECT
public:
    explicit RedriveStatusWatch(ConsoleSession* session, QObject* parent = nullptr);
    ~RedriveStatusWatch() override;

    void setInterval(int ms) { m_poll.setInterval(ms); }
    void refreshNow() { m_poll.refreshNow(); }
    // Read at least once since the session could be read.
    bool known() const { return m_list.has_value(); }
    QString error() const { return m_poll.error(); }
    int reads() const { return m_poll.reads(); }
    // The operation's status; nullopt when neither registered nor re-driven (or not read yet).
    std::optional<idem::RedriveStatus> status(const std::string& tenant, const std::string& operation) const;
    // Whether a key of tenant:operation can be re-executed now (registered, a re-driver online).
    bool canReexecute(const std::string& tenant, const std::string& operation) const;
    // One sentence for tenant:operation: "3 workers of charge are online", or why not ("No
    // re-driver for ship is online: the key waits for its client").
    QString offerText(const std::string& tenant, const std::string& operation) const;
    // Every registered operation with a re-driver online.
    std::vector<idem::RedriveStatus> reexecutable() const;
    // What a job over a filter's tenant and operation (unset: any) can re-execute: `offers` say who
    // is online ("3 workers of charge are online"), `refusals` why the rest wait for their clients.
    struct Offer {
        bool any = false;
        QStringList offers;
        QStringList refusals;
    };
    Offer offerFor(const std::optional<std::string>& tenant, const std::optional<std::string>& operation) const;

Q_SIGNALS:
    void changed();

private:
    SessionPoll m_poll;
    std::optional<std::vector<idem::RedriveStatus>> m_list;
};

// Registered, and a re-driver of it online.
bool canRedriveNow(const idem::RedriveStatus& status);
// Queued or running: a re-drive item still to end.
bool redriveItemOpen(const idem::RedriveItemRow& item);

// A key's re-drive items (newest first) and its stored request, as the Tasks detail shows them.
struct KeyRedrive {
    std::vector<idem::RedriveItemRow> items;
    idem::StoredRequest request;
};

// The words for one operation's re-drivers (status unset: not re-drivable), display-safe.
QString redriveOfferText(const std::string& operation, const std::optional<idem::RedriveStatus>& status);

// One key's re-executions and stored request, read again every few seconds while it is shown
// (faster while one is queued or running), so the Tasks detail follows them live.
class KeyRedriveWatch : public QObject {
    Q_OBJECT
public:
    static constexpr int openIntervalMs = 1000; // while an item is queued or running
    static constexpr int idleIntervalMs = 5000;

    explicit KeyRedriveWatch(ConsoleSession* session, QObject* parent = nullptr);
    ~KeyRedriveWatch() override;

    // Follows `key` (empty: none) from now, reading it at once.
    void setKey(const QString& key);
    const QString& key() const { return m_key; }
    void refreshNow() { m_poll.refreshNow(); }
    // The last read of the key shown; nullopt before it answered.
    const std::optional<KeyRedrive>& current() const { return m_current; }
    QString error() const { return m_poll.error(); }
    int reads() const { return m_poll.reads(); }
    void setIntervals(int openMs, int idleMs);

Q_SIGNALS:
    void changed();

private:
    SessionPoll m_poll;
    QString m_key;
    std::optional<KeyRedrive> m_current;
    int m_openMs = openIntervalMs;
    int m_idleMs = idleIntervalMs;
};

// "queued", "running", "succeeded", … for people; a state this console does not know, by its name.
QString redriveStateLabel(const std::string& state);
// "191 requeued: 185 succeeded, 4 failed, 2 running" (requeued: the rows the job requeued).
QString redriveOutcomesText(std::int64_t requeued, const idem::RedriveOutcomes& outcomes);
// An ISO 8601 UTC time as idemctl prints it, in the console's local time; as given when it does
// not read as one.
QString isoTimeText(const std::string& iso);
// "1.2 KiB", "512 bytes".
QString byteSizeText(std::int64_t bytes);
// What the Tasks detail says of a stored request: "No request is stored …", "A request is
// stored (1.2 KiB), …", or, without the read_requests right, that reading it needs it.
QString storedRequestText(const idem::StoredRequest& request);

} // namespace idem::console

Q_DECLARE_METATYPE(std::vector<idem::RedriveStatus>)
Q_DECLARE_METATYPE(idem::console::KeyRedrive)
