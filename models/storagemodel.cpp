#include "models/storagemodel.h"

#include <QCoreApplication>
#include <QLocale>
#include <QTimeZone>

#include <cmath>

#include <pqxx/transaction>

#include "models/consolesession.h"
#include "models/durationtext.h"

namespace idem::console {

namespace {
    QString count(std::int64_t n) { return QLocale().toString(static_cast<qlonglong>(n)); }

} // namespace

StorageModel::StorageModel(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_session(session)
{
    qRegisterMetaType<StorageAnswer>();
}

StorageModel::~StorageModel()
{
    if (m_session && m_pending)
        m_session->cancel(m_pending);
}

void StorageModel::reload()
{
    if (!m_session || m_pending)
        return;
    const auto options = m_options;
    m_pending = m_session->submit(
        [options](pqxx::connection& c, const idem::SchemaName& schema) {
            StorageAnswer answer;
            // idem_storage_sample() itself takes no sample on a standby or in a read-only session.
            answer.report = idem::readStorage(c, schema, options);
            pqxx::read_transaction tx(c);
            tx.exec_params("SELECT set_config('statement_timeout', $1, true)", std::to_string(options.statementTimeoutMs));
            answer.history = idem::readRowsHistory(tx, schema, options.sampleDays);
            tx.commit();
            return QVariant::fromValue(answer);
        },
        this,
        [this](const QVariant& v) {
            m_pending = 0;
            auto answer = v.value<StorageAnswer>();
            m_report = std::move(answer.report);
            m_history = std::move(answer.history);
            m_verdict = m_memory.judge(m_report->horizon, m_heldAfter);
            m_readAt = QDateTime::currentDateTime();
            m_error.clear();
            Q_EMIT updated();
        },
        [this](const Failure& failure) {
            m_pending = 0;
            m_error = failure.text();
            Q_EMIT failed(m_error);
        });
    // Bounded by the console too, when the server does not answer at all (a stopped process, a
    // cut network): the sample, the report and the history, each under the statement timeout.
    if (m_pending)
        m_session->bound(m_pending, ConsoleSession::boundFor(3 * options.statementTimeoutMs));
}

namespace {
    // The sources operations/storage.cpp names, in the reader's language; any other as it came.
    QString sourceText(const std::string& source)
    {
        if (source == "planner statistics (pg_class.reltuples) minus the unfinished rows")
            return QCoreApplication::translate(
                "idem::console::StorageModel", "planner statistics (pg_class.reltuples) minus the unfinished rows");
        if (source == "statistics collector (n_live_tup) minus the unfinished rows")
            return QCoreApplication::translate(
                "idem::console::StorageModel", "statistics collector (n_live_tup) minus the unfinished rows");
        if (source == "no estimate before the first ANALYZE")
            return QCoreApplication::translate("idem::console::StorageModel", "no estimate before the first ANALYZE");
        return QString::fromStdString(source);
    }
} // namespace

namespace storagetext {

    QDateTime parseTime(const std::string& iso)
    {
        // The server's ISO 8601 in UTC, with or without fractions and an explicit offset.
        QDateTime t = QDateTime::fromString(QString::fromStdString(iso), Qt::ISODateWithMs);
        if (!t.isValid())
            t = QDateTime::fromString(QString::fromStdString(iso), Qt::ISODate);
        return t;
    }

    QString horizon(std::int64_t seconds)
    {
        // Whole units only, and no "%n (s)" plural: the tests and idemctl read the same English.
        const auto in = [seconds](std::int64_t unit) { return seconds > 0 && seconds % unit == 0; };
        if (in(86400))
            return seconds == 86400
                ? QCoreApplication::translate("idem::console::StorageModel", "1 day")
                : QCoreApplication::translate("idem::console::StorageModel", "%1 days").arg(seconds / 86400);
        if (in(3600))
            return seconds == 3600
                ? QCoreApplication::translate("idem::console::StorageModel", "1 hour")
                : QCoreApplication::translate("idem::console::StorageModel", "%1 hours").arg(seconds / 3600);
        if (in(60))
            return seconds == 60
                ? QCoreApplication::translate("idem::console::StorageModel", "1 minute")
                : QCoreApplication::translate("idem::console::StorageModel", "%1 minutes").arg(seconds / 60);
        return seconds == 1 ? QCoreApplication::translate("idem::console::StorageModel", "1 second")
                            : QCoreApplication::translate("idem::console::StorageModel", "%1 seconds").arg(seconds);
    }

    QString meaning(const std::string& operation, std::int64_t horizonSeconds)
    {
        if (operation == "*")
            return QCoreApplication::translate(
                "idem::console::StorageModel", "A retry of any other key older than %1 executes again.")
                .arg(horizon(horizonSeconds));
        return QCoreApplication::translate(
            "idem::console::StorageModel", "A retry of a “%1” key older than %2 executes again.")
            .arg(QString::fromStdString(operation), horizon(horizonSeconds));
    }

    QString bytes(std::int64_t bytes)
    {
        return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
    }

    QString figure(std::int64_t value, const idem::FigureLabel& label)
    {
        switch (label.quality) {
        case idem::FigureQuality::LowerBound:
            return QStringLiteral("≥ ") + count(value);
        case idem::FigureQuality::Estimate:
            return QStringLiteral("≈ ") + count(value);
        case idem::FigureQuality::Exact:
        case idem::FigureQuality::ExactCached:
            break;
        }
        return count(value);
    }

    QString quality(const idem::FigureLabel& label, std::int64_t cap)
    {
        switch (label.quality) {
        case idem::FigureQuality::Exact:
            return QCoreApplication::translate("idem::console::StorageModel", "exact");
        case idem::FigureQuality::ExactCached:
            if (label.exactAgeSeconds)
                return QCoreApplication::translate("idem::console::StorageModel", "exact · %1 ago")
                    .arg(durationText(std::max(0.0, *label.exactAgeSeconds) * 1000.0));
            return QCoreApplication::translate("idem::console::StorageModel", "exact as of %1")
                .arg(when(label.observedAt));
        case idem::FigureQuality::LowerBound:
            if (label.exact && label.exactAgeSeconds)
                return QCoreApplication::translate("idem::console::StorageModel", "at least; exact %1 · %2 ago")
                    .arg(count(static_cast<std::int64_t>(*label.exact)), durationText(std::max(0.0, *label.exactAgeSeconds) * 1000.0));
            if (cap > 0)
                return QCoreApplication::translate("idem::console::StorageModel", "at least (counted up to %1)")
                    .arg(count(cap));
            return QCoreApplication::translate("idem::console::StorageModel", "at least");
        case idem::FigureQuality::Estimate:
            if (!label.source.empty())
                return QCoreApplication::translate("idem::console::StorageModel", "estimate (%1)")
                    .arg(sourceText(label.source));
            return QCoreApplication::translate("idem::console::StorageModel", "estimate");
        }
        return {};
    }

    QString when(const std::string& iso)
    {
        if (iso.empty())
            return QCoreApplication::translate("idem::console::StorageModel", "never");
        const QDateTime t = parseTime(iso);
        if (!t.isValid())
            return QString::fromStdString(iso);
        return t.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    }

    QString purgeRun(const idem::PurgeRun& run)
    {
        const QString who = run.application.empty()
            ? QString::fromStdString(run.actor.empty() ? run.dbRole : run.actor)
            : QCoreApplication::translate("idem::console::StorageModel", "%1 (%2)")
                  .arg(QString::fromStdString(run.actor.empty() ? run.dbRole : run.actor),
                      QString::fromStdString(run.application));
        if (run.state == "running" && run.alive == false)
            return QCoreApplication::translate("idem::console::StorageModel",
                "started %1 and stopped without finishing: its session is gone (a failover, a restart or a killed "
                "process); %2 rows removed, by %3. The next purge closes it as abandoned.")
                .arg(when(run.startedAt), count(run.rowsRemoved), who);
        if (run.state == "running" && !run.alive)
            return QCoreApplication::translate("idem::console::StorageModel",
                "running since %1 as of the replay point (a standby cannot see the primary's sessions): %2 rows "
                "removed so far, by %3")
                .arg(when(run.startedAt), count(run.rowsRemoved), who);
        if (run.state == "running")
            return QCoreApplication::translate(
                "idem::console::StorageModel", "running since %1: %2 rows removed so far, by %3")
                .arg(when(run.startedAt), count(run.rowsRemoved), who);
        const QString duration = QLocale().toString(run.durationSeconds, 'f', run.durationSeconds < 10 ? 1 : 0);
        if (run.state == "abandoned")
            return QCoreApplication::translate(
                "idem::console::StorageModel", "%1: stopped before it finished (%2 rows removed in %3 s), by %4")
                .arg(when(run.startedAt), count(run.rowsRemoved), duration, who);
        return QCoreApplication::translate("idem::console::StorageModel", "%1: %2 rows removed in %3 s, by %4")
            .arg(when(run.startedAt), count(run.rowsRemoved), duration, who);
    }

} // namespace storagetext

} // namespace idem::console
