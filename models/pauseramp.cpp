#include "models/pauseramp.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QLocale>

#include <algorithm>

#include "models/consolesession.h"

namespace idem::console {

namespace {
    QString figure(const idem::PauseForecast& f, qint64 n)
    {
        const QString number = QLocale().toString(n);
        return f.dueBounded ? QCoreApplication::translate("idem::console::PauseRamp", "at least %1").arg(number) : number;
    }
} // namespace

PauseForecastRead::PauseForecastRead(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_request(session, SessionRequest::Kind::Read)
{
    qRegisterMetaType<idem::PauseForecast>();
    connect(&m_request, &SessionRequest::answered, this,
        [this](const QVariant& answer) { Q_EMIT answered(answer.value<idem::PauseForecast>()); });
    connect(&m_request, &SessionRequest::failed, this, [this](const Failure& failure) { Q_EMIT failed(failure.text()); });
}

void PauseForecastRead::read(const idem::Pause& pause, int minutes)
{
    const std::string tenant = pause.tenant, operation = pause.operation;
    m_request.run(
        [tenant, operation, minutes](pqxx::connection& conn, const idem::SchemaName& schema) {
            return QVariant::fromValue(idem::forecastResume(conn, schema, tenant, operation, minutes));
        },
        10000);
}

PauseRampChange::PauseRampChange(ConsoleSession* admin, QObject* parent)
    : QObject(parent)
    , m_request(admin, SessionRequest::Kind::Write)
{
    connect(&m_request, &SessionRequest::answered, this, [this](const QVariant& answer) {
        const auto v = answer.toList();
        Q_EMIT done(v.value(0).toLongLong(), v.value(1).toLongLong());
    });
    connect(&m_request, &SessionRequest::failed, this, [this](const Failure& failure) { Q_EMIT failed(failure.text()); });
}

void PauseRampChange::start(const idem::RampRequest& request)
{
    m_request.run([request](pqxx::connection& conn, const idem::SchemaName& schema) {
        const auto change = idem::startRamp(conn, schema, request);
        return QVariant(QVariantList { qint64(change.auditId), qint64(change.endsAtUs) });
    });
}

QString forecastText(const idem::PauseForecast& f)
{
    qint64 busiest = 0;
    for (const auto& [us, n] : f.dueByMinute)
        busiest = std::max<qint64>(busiest, n);
    const QString since
        = QDateTime::fromMSecsSinceEpoch(f.turnedAwaySinceUs / 1000).toLocalTime().toString(QStringLiteral("HH:mm"));
    return QCoreApplication::translate("idem::console::PauseRamp", "Resuming sends %1 retries due in the next %2 min (%3 due already, %4 in the busiest minute) and "
              "%5 claims turned away since %6: %7 in all.")
        .arg(figure(f, f.dueTotal), QString::number(f.minutes), figure(f, f.dueNow), figure(f, busiest),
            QLocale().toString(qlonglong(f.turnedAway)), since, figure(f, f.total));
}

QString rampText(const idem::Ramp& r)
{
    if (r.done())
        return QCoreApplication::translate("idem::console::PauseRamp", "Ramp done: every key admitted.");
    const auto rate = r.failureRate();
    const QString failures = rate
        ? QCoreApplication::translate("idem::console::PauseRamp", "%1 % of %2 admitted claims failed")
              .arg(QLocale().toString(*rate * 100, 'f', 1), QLocale().toString(qlonglong(r.claimed)))
        : QCoreApplication::translate("idem::console::PauseRamp", "no admitted claim yet");
    return QCoreApplication::translate("idem::console::PauseRamp", "Ramping: step %1 of %2, %3 % of keys admitted; %4 (re-pauses above %5 %).")
        .arg(QString::number(r.step + 1), QString::number(r.stepCount()), QString::number(r.percent), failures,
            QLocale().toString(r.abortAbove * 100, 'g', 3));
}

} // namespace idem::console
