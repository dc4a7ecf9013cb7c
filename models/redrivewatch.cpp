#include "models/redrivewatch.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QLocale>

#include <algorithm>

#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/taskbrowsermodel.h"
#include "models/visibletext.h"

namespace idem::console {

bool canRedriveNow(const idem::RedriveStatus& status) { return status.registered && status.onlineWorkers > 0; }

bool redriveItemOpen(const idem::RedriveItemRow& item) { return item.state == "queued" || item.state == "running"; }

QString isoTimeText(const std::string& iso)
{
    const auto at = QDateTime::fromString(QString::fromStdString(iso), Qt::ISODateWithMs);
    return at.isValid() ? formatTimeUs(at.toMSecsSinceEpoch() * 1000) : QString::fromStdString(iso);
}

QString redriveOfferText(const std::string& operation, const std::optional<idem::RedriveStatus>& status)
{
    const QString op = visibleText(operation);
    if (!status || !status->registered)
        return QCoreApplication::translate("idem::console::RedriveWatch",
            "%1 is not re-drivable (no worker registered it, so no request is stored): the key waits for its "
            "client")
            .arg(op);
    if (status->onlineWorkers > 0)
        return QCoreApplication::translate(
            "idem::console::RedriveWatch", "%n worker(s) of %1 are online", nullptr, status->onlineWorkers)
            .arg(op);
    if (const auto* last = status->lastOffline())
        return QCoreApplication::translate("idem::console::RedriveWatch",
            "No re-driver for %1 is online (%2 was last seen %3 ago, at %4): the key waits for its client")
            .arg(op, visibleText(last->worker), durationText(double(last->secondsAgo) * 1000.0),
                isoTimeText(last->lastSeen));
    return QCoreApplication::translate(
        "idem::console::RedriveWatch", "No re-driver for %1 is online: the key waits for its client")
        .arg(op);
}

RedriveStatusWatch::RedriveStatusWatch(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_poll(session, [] {
        return [](pqxx::connection& conn, const idem::SchemaName& schema) {
            // Every registered operation: as many rows as registrations, not keys.
            return QVariant::fromValue(idem::readRedriveStatus(conn, schema));
        };
    })
{
    qRegisterMetaType<std::vector<idem::RedriveStatus>>();
    connect(&m_poll, &SessionPoll::answered, this, [this](const QVariant& answer, bool) {
        m_list = answer.value<std::vector<idem::RedriveStatus>>();
        Q_EMIT changed();
    });
    connect(&m_poll, &SessionPoll::failed, this, &RedriveStatusWatch::changed);
    connect(&m_poll, &SessionPoll::stopped, this, [this] {
        m_list.reset();
        Q_EMIT changed();
    });
    m_poll.setInterval(5000);
    m_poll.setBound(5000);
    m_poll.start();
}

RedriveStatusWatch::~RedriveStatusWatch() = default;

std::optional<idem::RedriveStatus> RedriveStatusWatch::status(
    const std::string& tenant, const std::string& operation) const
{
    if (!m_list)
        return std::nullopt;
    // A registration of this tenant, or one of every tenant ('*'): the one that can re-execute first.
    std::optional<idem::RedriveStatus> exact, every;
    for (const auto& s : *m_list) {
        if (s.operation == operation && s.tenant == tenant)
            exact = s;
        else if (s.operation == operation && s.tenant == "*")
            every = s;
    }
    if (exact && canRedriveNow(*exact))
        return exact;
    if (every && canRedriveNow(*every))
        return every;
    return exact ? exact : every;
}

bool RedriveStatusWatch::canReexecute(const std::string& tenant, const std::string& operation) const
{
    const auto s = status(tenant, operation);
    return s && canRedriveNow(*s);
}

QString RedriveStatusWatch::offerText(const std::string& tenant, const std::string& operation) const
{
    if (!error().isEmpty() && !m_list)
        return QCoreApplication::translate(
            "idem::console::RedriveWatch", "Whether a re-driver is online could not be read: %1")
            .arg(error());
    if (!m_list)
        return QCoreApplication::translate("idem::console::RedriveWatch", "Looking for re-drivers of %1…")
            .arg(visibleText(operation));
    return redriveOfferText(operation, status(tenant, operation));
}

std::vector<idem::RedriveStatus> RedriveStatusWatch::reexecutable() const
{
    std::vector<idem::RedriveStatus> out;
    if (m_list)
        for (const auto& s : *m_list)
            if (canRedriveNow(s))
                out.push_back(s);
    return out;
}

RedriveStatusWatch::Offer RedriveStatusWatch::offerFor(
    const std::optional<std::string>& tenant, const std::optional<std::string>& operation) const
{
    Offer o;
    if (operation && tenant) {
        o.any = canReexecute(*tenant, *operation);
        (o.any ? o.offers : o.refusals) << offerText(*tenant, *operation);
        return o;
    }
    if (!m_list) {
        o.refusals << offerText(tenant.value_or("*"), operation.value_or(""));
        return o;
    }
    for (const auto& s : *m_list)
        if ((!operation || s.operation == *operation) && (!tenant || s.tenant == *tenant || s.tenant == "*")
            && canRedriveNow(s)) {
            o.any = true;
            o.offers << redriveOfferText(s.operation, s);
        }
    o.offers.removeDuplicates();
    if (operation && !o.any)
        o.refusals << offerText(tenant.value_or("*"), *operation);
    else if (!operation)
        o.refusals << (o.any ? QCoreApplication::translate("idem::console::RedriveWatch",
                           "Keys of other operations are requeued only: they wait for their clients")
                             : QCoreApplication::translate("idem::console::RedriveWatch",
                                 "No re-driver of any operation is online: the keys wait for their clients"));
    return o;
}

KeyRedriveWatch::KeyRedriveWatch(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_poll(session, [this]() -> DatabaseJob {
        const std::string key = m_key.toStdString();
        if (key.empty())
            return {}; // nothing to follow
        return [key](pqxx::connection& conn, const idem::SchemaName& schema) {
            // Two reads of one key each: its items (at most 100) and whether its request is stored.
            KeyRedrive r { idem::readRedriveItems(conn, schema, key), idem::readStoredRequest(conn, schema, key) };
            return QVariant::fromValue(r);
        };
    })
{
    qRegisterMetaType<KeyRedrive>();
    connect(&m_poll, &SessionPoll::answered, this, [this](const QVariant& answer, bool superseded) {
        if (superseded)
            return; // the next read is under way
        m_current = answer.value<KeyRedrive>();
        Q_EMIT changed();
        const bool open = std::any_of(m_current->items.begin(), m_current->items.end(), redriveItemOpen);
        m_poll.readIn(open ? m_openMs : m_idleMs);
    });
    connect(&m_poll, &SessionPoll::failed, this, [this] {
        Q_EMIT changed();
        m_poll.readIn(m_idleMs);
    });
    connect(&m_poll, &SessionPoll::stopped, this, [this] {
        m_current.reset();
        Q_EMIT changed();
    });
    m_poll.setBound(5000);
    m_poll.start(); // with no key, nothing is read
}

KeyRedriveWatch::~KeyRedriveWatch() = default;

void KeyRedriveWatch::setIntervals(int openMs, int idleMs)
{
    m_openMs = std::max(100, openMs);
    m_idleMs = std::max(100, idleMs);
}

void KeyRedriveWatch::setKey(const QString& key)
{
    if (key == m_key && (m_current || m_poll.pending()))
        return;
    m_key = key;
    m_current.reset();
    Q_EMIT changed();
    m_poll.rescope(); // a read of the key before is dropped; none for no key
}

QString redriveStateLabel(const std::string& state)
{
    if (state == "queued")
        return QCoreApplication::translate("idem::console::RedriveWatch", "queued");
    if (state == "running")
        return QCoreApplication::translate("idem::console::RedriveWatch", "running");
    if (state == "succeeded")
        return QCoreApplication::translate("idem::console::RedriveWatch", "succeeded");
    if (state == "failed")
        return QCoreApplication::translate("idem::console::RedriveWatch", "failed");
    if (state == "conflict")
        return QCoreApplication::translate("idem::console::RedriveWatch", "conflict");
    if (state == "gone")
        return QCoreApplication::translate("idem::console::RedriveWatch", "gone");
    return visibleText(state);
}

QString redriveOutcomesText(std::int64_t requeued, const idem::RedriveOutcomes& o)
{
    const QLocale locale;
    QStringList parts;
    const std::pair<const char*, std::int64_t> states[] = { { "succeeded", o.succeeded }, { "failed", o.failed },
        { "conflict", o.conflict }, { "gone", o.gone }, { "running", o.running }, { "queued", o.queued } };
    for (const auto& [state, n] : states)
        if (n > 0)
            parts << QCoreApplication::translate("idem::console::RedriveWatch", "%1 %2")
                         .arg(locale.toString(qlonglong(n)), redriveStateLabel(state));
    if (requeued > o.total())
        parts << QCoreApplication::translate("idem::console::RedriveWatch", "%1 not re-executable (no stored request)")
                     .arg(locale.toString(qlonglong(requeued - o.total())));
    if (parts.isEmpty())
        return QCoreApplication::translate("idem::console::RedriveWatch", "%1 requeued: none re-executed yet")
            .arg(locale.toString(qlonglong(requeued)));
    return QCoreApplication::translate("idem::console::RedriveWatch", "%1 requeued: %2")
        .arg(locale.toString(qlonglong(requeued)), parts.join(QStringLiteral(", ")));
}

QString byteSizeText(std::int64_t bytes)
{
    const QLocale locale;
    if (bytes >= 1024 * 1024)
        return QCoreApplication::translate("idem::console::RedriveWatch", "%1 MiB")
            .arg(locale.toString(double(bytes) / (1024.0 * 1024.0), 'f', 1));
    if (bytes >= 1024)
        return QCoreApplication::translate("idem::console::RedriveWatch", "%1 KiB")
            .arg(locale.toString(double(bytes) / 1024.0, 'f', 1));
    return QCoreApplication::translate("idem::console::RedriveWatch", "%n byte(s)", nullptr, int(bytes));
}

QString storedRequestText(const idem::StoredRequest& r)
{
    if (!r.stored)
        return QCoreApplication::translate("idem::console::RedriveWatch",
            "No request is stored for this key: a re-execution has nothing to run (its operation is not "
            "re-drivable, or the key was claimed before it was registered).");
    const QString size = byteSizeText(r.bytes);
    if (!r.readable)
        return QCoreApplication::translate(
            "idem::console::RedriveWatch", "A request is stored (%1); reading it needs the read_requests right.")
            .arg(size);
    return !r.storedAt.empty() ? QCoreApplication::translate("idem::console::RedriveWatch",
               "A request is stored (%1, since %2); fields its operation redacts read \"[redacted]\".")
                                     .arg(size, isoTimeText(r.storedAt))
                               : QCoreApplication::translate("idem::console::RedriveWatch",
                                   "A request is stored (%1); fields its operation redacts read \"[redacted]\".")
                                     .arg(size);
}

} // namespace idem::console
