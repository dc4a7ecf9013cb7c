#include "models/fencingwatch.h"

#include <QCoreApplication>
#include <QLocale>

#include "models/durationtext.h"
#include "models/visibletext.h"

namespace idem::console {

FencingWatch::FencingWatch(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_poll(session, [] {
        return [](pqxx::connection& conn, const idem::SchemaName& schema) {
            return QVariant::fromValue(
                idem::readFencing(conn, schema, idem::defaultFencingMinutes, idem::defaultFencingLimit, 5000));
        };
    })
{
    qRegisterMetaType<idem::FencingReading>();
    connect(&m_poll, &SessionPoll::answered, this, [this](const QVariant& answer, bool) {
        m_reading = answer.value<idem::FencingReading>();
        Q_EMIT changed();
    });
    connect(&m_poll, &SessionPoll::failed, this, &FencingWatch::changed);
    connect(&m_poll, &SessionPoll::stopped, this, [this] {
        m_reading.reset();
        Q_EMIT changed();
    });
    m_poll.setInterval(30000);
    m_poll.setBound(5000);
    m_poll.start();
}

FencingWatch::~FencingWatch() = default;

namespace fencingtext {

    namespace {
        QString duration(double ms) { return durationText(ms, idem::DurationForm::Precise); }
    } // namespace

    bool worthShowing(const idem::FencingReading& r)
    {
        return r.available && (r.takeovers > 0 || r.refused > 0 || r.worst() != nullptr);
    }

    QString headline(const idem::FencingReading& r)
    {
        QString out = QCoreApplication::translate(
            "idem::console::FencingWatch", "Fencing, last %1 min: leases taken over %2, late calls refused %3")
                          .arg(r.minutes)
                          .arg(QLocale().toString(static_cast<qlonglong>(r.takeovers)),
                              QLocale().toString(static_cast<qlonglong>(r.refused)));
        if (r.refused > 0)
            out += QCoreApplication::translate(
                "idem::console::FencingWatch", " (the fence held: each came from an attempt that had lost its key)");
        return out;
    }

    QString advice(const idem::FencingOperation& op)
    {
        const QString name = visibleText(op.operation);
        if (!op.runP99Ms)
            return QCoreApplication::translate("idem::console::FencingWatch", "%1: no run time measured yet").arg(name);
        const QString p99 = duration(*op.runP99Ms);
        if (!op.leaseMs)
            return QCoreApplication::translate("idem::console::FencingWatch", "%1: p99 run time %2; no lease recorded")
                .arg(name, p99);
        const QString lease = duration(static_cast<double>(*op.leaseMs));
        const auto p = op.overrunPercent();
        const QString percent = p ? QLocale().toString(*p, 'f', 1) : QString();
        if (*op.runP99Ms > static_cast<double>(*op.leaseMs))
            return p
                ? QCoreApplication::translate("idem::console::FencingWatch",
                    "%1: p99 run time %2 exceeds the %3 lease: %4 % of attempts outlive their lease")
                      .arg(name, p99, lease, percent)
                : QCoreApplication::translate("idem::console::FencingWatch", "%1: p99 run time %2 exceeds the %3 lease")
                      .arg(name, p99, lease);
        return p
            ? QCoreApplication::translate("idem::console::FencingWatch",
                "%1: p99 run time %2 is within the %3 lease: %4 % of attempts outlive it")
                  .arg(name, p99, lease, percent)
            : QCoreApplication::translate("idem::console::FencingWatch", "%1: p99 run time %2 is within the %3 lease")
                  .arg(name, p99, lease);
    }

    QStringList workers(const idem::FencingReading& r, int limit)
    {
        QStringList out;
        int shown = 0;
        for (const auto& w : r.workers) {
            if (shown == limit)
                break;
            out << QCoreApplication::translate(
                "idem::console::FencingWatch", "%1 (%2): late calls refused %3, leases taken over %4")
                       .arg(visibleText(w.worker), visibleText(w.operation),
                           QLocale().toString(static_cast<qlonglong>(w.refused)),
                           QLocale().toString(static_cast<qlonglong>(w.takeovers)));
            ++shown;
        }
        const auto more = static_cast<std::int64_t>(r.workers.size()) - shown + r.workersOmitted;
        if (more > 0)
            out << QCoreApplication::translate("idem::console::FencingWatch", "more workers: %1 (idemctl fencing)")
                       .arg(QLocale().toString(static_cast<qlonglong>(more)));
        return out;
    }

} // namespace fencingtext

} // namespace idem::console
