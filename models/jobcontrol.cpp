#include "models/jobcontrol.h"

#include <QVariantList>

namespace idem::console {

JobControl::JobControl(ConsoleSession* admin, QObject* parent)
    : QObject(parent)
    , m_preview(admin, SessionRequest::Kind::Read)
    , m_start(admin, SessionRequest::Kind::Write)
    , m_cancel(admin, SessionRequest::Kind::Write)
{
    qRegisterMetaType<idem::JobPreview>();
    qRegisterMetaType<idem::JobStart>();
    qRegisterMetaType<idem::ApprovalNeed>();
    connect(&m_preview, &SessionRequest::answered, this, [this](const QVariant& answer) {
        const auto both = answer.toList();
        Q_EMIT previewed(both.value(0).value<idem::JobPreview>(), both.value(1).value<idem::ApprovalNeed>());
    });
    connect(&m_preview, &SessionRequest::failed, this,
        [this](const Failure& failure) { Q_EMIT previewFailed(failure.text()); });
    connect(&m_start, &SessionRequest::answered, this,
        [this](const QVariant& answer) { Q_EMIT started(answer.value<idem::JobStart>()); });
    connect(&m_start, &SessionRequest::failed, this,
        [this](const Failure& failure) { Q_EMIT startFailed(failure.text()); });
    connect(&m_cancel, &SessionRequest::answered, this,
        [this](const QVariant& answer) { Q_EMIT cancelled(m_cancelling, answer.toLongLong()); });
    connect(&m_cancel, &SessionRequest::failed, this,
        [this](const Failure& failure) { Q_EMIT cancelFailed(m_cancelling, failure.text()); });
}

void JobControl::preview(idem::RecoveryAction action, const idem::TaskFilter& filter)
{
    m_preview.run([action, filter](pqxx::connection& conn, const idem::SchemaName& schema) {
        const auto preview = idem::previewJob(conn, schema, action, filter);
        // The database's own rule for what would wait for a second person (schema v23).
        const auto need = idem::approvalNeeded(conn, schema, "job", preview.applicable);
        return QVariant(QVariantList { QVariant::fromValue(preview), QVariant::fromValue(need) });
    });
}

void JobControl::start(const idem::JobRequest& request)
{
    m_start.run([request](pqxx::connection& conn, const idem::SchemaName& schema) {
        return QVariant::fromValue(idem::startJob(conn, schema, request));
    });
}

void JobControl::cancel(std::int64_t id, const std::string& reason)
{
    m_cancelling = id;
    m_cancel.run([id, reason](pqxx::connection& conn, const idem::SchemaName& schema) {
        const auto c = idem::cancelJob(conn, schema, id, reason);
        return QVariant(qlonglong(c.skippedCancelled));
    });
}

} // namespace idem::console
