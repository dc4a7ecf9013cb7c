#include "models/horizonwatch.h"

#include <QCoreApplication>
#include <QLocale>

#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/storagemodel.h"
#include "models/visibletext.h"

namespace idem::console {

HorizonWatch::HorizonWatch(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_poll(session, [] {
        return [](pqxx::connection& conn, const idem::SchemaName& schema) {
            return QVariant::fromValue(idem::readHorizon(conn, schema, 5000, 5));
        };
    })
{
    qRegisterMetaType<idem::HorizonReading>();
    connect(&m_poll, &SessionPoll::answered, this, [this](const QVariant& answer, bool) {
        m_reading = answer.value<idem::HorizonReading>();
        m_verdict = m_memory.judge(*m_reading, m_heldAfter);
        Q_EMIT changed();
    });
    connect(&m_poll, &SessionPoll::failed, this, &HorizonWatch::changed);
    connect(&m_poll, &SessionPoll::stopped, this, [this] {
        m_reading.reset();
        m_verdict = {};
        Q_EMIT changed();
    });
    m_poll.setInterval(15000);
    m_poll.setBound(5000);
    m_poll.start();
}

HorizonWatch::~HorizonWatch() = default;

namespace horizontext {

    QString kind(const std::string& kind)
    {
        if (kind == "session")
            return QCoreApplication::translate("idem::console::HorizonWatch", "session");
        if (kind == "prepared")
            return QCoreApplication::translate("idem::console::HorizonWatch", "prepared transaction");
        if (kind == "slot")
            return QCoreApplication::translate("idem::console::HorizonWatch", "replication slot");
        if (kind == "slot_catalog")
            return QCoreApplication::translate("idem::console::HorizonWatch", "replication slot (catalogues only)");
        if (kind == "standby")
            return QCoreApplication::translate("idem::console::HorizonWatch", "standby feedback");
        return visibleText(kind);
    }

    QString holder(const idem::HorizonHolder& h)
    {
        QStringList parts;
        QString head = kind(h.kind);
        if (!h.name.empty())
            head += QLatin1Char(' ') + visibleText(h.name);
        if (h.pid)
            head += QCoreApplication::translate("idem::console::HorizonWatch", " pid %1").arg(*h.pid);
        parts << head;
        if (!h.role.empty())
            parts << QCoreApplication::translate("idem::console::HorizonWatch", "role %1").arg(visibleText(h.role));
        if (!h.application.empty())
            parts << QCoreApplication::translate("idem::console::HorizonWatch", "application %1")
                         .arg(visibleText(h.application));
        if (!h.client.empty())
            parts << QCoreApplication::translate("idem::console::HorizonWatch", "from %1").arg(visibleText(h.client));
        if (!h.state.empty())
            parts << visibleText(h.state);
        if (h.ageSeconds)
            parts << QCoreApplication::translate("idem::console::HorizonWatch", "open %1")
                         .arg(durationText(double(*h.ageSeconds) * 1000.0));
        parts << QCoreApplication::translate("idem::console::HorizonWatch", "%1 xids")
                     .arg(QLocale().toString(static_cast<qlonglong>(h.xidAge)));
        return parts.join(QStringLiteral(" · "));
    }

    QString alertLine(const idem::HorizonReading& r, const idem::HorizonVerdict& v, double heldAfterSeconds)
    {
        const auto* h = r.oldest();
        if (!h)
            return {};
        return QCoreApplication::translate("idem::console::HorizonWatch",
            "⚠ The transaction horizon is held past %1 by %2, and the Idem tables' dead rows grew by %3 since %4: "
            "VACUUM cannot remove them until it ends (Storage page).")
            .arg(durationText(double(heldAfterSeconds) * 1000.0), holder(*h),
                QLocale().toString(static_cast<qlonglong>(v.grewBy)), storagetext::when(v.since));
    }

} // namespace horizontext

} // namespace idem::console
