#include "models/approvalsmodel.h"

#include <QDateTime>
#include <QGuiApplication>
#include <QPalette>

#include <memory>

#include "models/consolesession.h"
#include "models/visibletext.h"

namespace idem::console {

namespace {
    QString localTime(std::int64_t us)
    {
        return QDateTime::fromMSecsSinceEpoch(us / 1000).toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    }

    QString q(const std::string& s) { return visibleText(QString::fromStdString(s)); }
} // namespace

ApprovalsModel::ApprovalsModel(ConsoleSession* session, QObject* parent)
    : RowTableModel(parent)
    , m_session(session)
{
    qRegisterMetaType<std::vector<idem::ApprovalRequest>>();
    qRegisterMetaType<idem::ApprovalDecision>();
    using R = idem::ApprovalRequest;
    setColumns({
        { QT_TR_NOOP("Request"), [](const R& r) { return QString::number(r.id); } },
        { QT_TR_NOOP("What"), [](const R& r) { return q(r.what()); } },
        { QT_TR_NOOP("Requested by"),
            [](const R& r) {
                return QString(q(r.requestedLogin) + QStringLiteral(" (") + q(r.requestedActor) + QLatin1Char(')'));
            } },
        { QT_TR_NOOP("Reason"), [](const R& r) { return q(r.requestedReason); } },
        { QT_TR_NOOP("Until"),
            [](const R& r) {
                const bool approved = r.state == "approved";
                const QString until
                    = localTime(approved && r.approvalExpiresAtUs ? *r.approvalExpiresAtUs : r.approvableUntilUs);
                if (r.expired())
                    return tr("%1 (expired)").arg(until);
                if (approved)
                    return r.jobId ? tr("%1 (approved; may run until then)").arg(until)
                                   : tr("%1 (approved; to be used by then)").arg(until);
                return until;
            } },
        { QT_TR_NOOP("Spec sha256"), [](const R& r) { return QString::fromStdString(r.specSha256); } },
    });
}

ApprovalsModel::~ApprovalsModel()
{
    if (m_session) {
        if (m_loading)
            m_session->cancel(m_loading);
        if (m_deciding)
            m_session->cancel(m_deciding);
    }
}

QString ApprovalsModel::whyNot(int row) const
{
    if (row < 0 || row >= rowCount())
        return tr("Select the request to approve or decline.");
    return whyNot(request(row));
}

QString ApprovalsModel::whyNot(const idem::ApprovalRequest& r) const
{
    if (r.state == "approved") {
        if (r.expired())
            return tr("Its approval expired: it can no longer be used.");
        return tr("Approved already by %1: it waits to be used.").arg(q(r.approvedLogin));
    }
    if (r.expired())
        return tr("Its time for approval ended: it can no longer be approved.");
    return {};
}

QVariant ApprovalsModel::rowData(const idem::ApprovalRequest& r, int, int role) const
{
    if (role == IdRole)
        return qint64(r.id);
    if (role == KindRole)
        return QString::fromStdString(r.kind);
    if (role == SpecRole)
        return QString::fromStdString(r.specSha256);
    if (role == Qt::ToolTipRole) {
        const QString why = whyNot(r);
        return why.isEmpty() ? tr("Spec sha256 %1").arg(QString::fromStdString(r.specSha256)) : why;
    }
    if (role == Qt::ForegroundRole && !whyNot(r).isEmpty())
        return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
    return {};
}

void ApprovalsModel::reload()
{
    if (!m_session || m_loading)
        return;
    auto requestId = std::make_shared<quint64>(0);
    *requestId = m_session->submit(
        [](pqxx::connection& conn, const idem::SchemaName& schema) {
            return QVariant::fromValue(idem::listApprovalRequests(conn, schema));
        },
        this,
        [this, requestId](const QVariant& answer) {
            if (*requestId != m_loading)
                return;
            m_loading = 0;
            m_error.clear();
            beginResetModel();
            m_rows = answer.value<std::vector<idem::ApprovalRequest>>();
            endResetModel();
            Q_EMIT loaded();
        },
        [this, requestId](const Failure& failure) {
            if (*requestId != m_loading)
                return;
            m_loading = 0;
            m_error = failure.text();
            Q_EMIT loaded();
        });
    m_loading = *requestId;
}

void ApprovalsModel::approve(int row, const QString& reason) { decide(row, reason, true); }

void ApprovalsModel::decline(int row, const QString& reason) { decide(row, reason, false); }

void ApprovalsModel::decide(int row, const QString& reason, bool approving)
{
    if (!m_session || m_deciding || row < 0 || row >= rowCount())
        return;
    const std::int64_t id = request(row).id;
    const std::string spec = request(row).specSha256;
    const std::string why = reason.toStdString();
    auto requestId = std::make_shared<quint64>(0);
    *requestId = m_session->submit(
        [id, spec, why, approving](pqxx::connection& conn, const idem::SchemaName& schema) {
            return QVariant::fromValue(approving ? idem::approveRequest(conn, schema, id, spec, why)
                                                 : idem::declineRequest(conn, schema, id, why));
        },
        this,
        [this, requestId, approving](const QVariant& answer) {
            if (*requestId != m_deciding)
                return;
            m_deciding = 0;
            const auto d = answer.value<idem::ApprovalDecision>();
            QString text;
            if (!approving)
                text = d.jobId ? tr("Request %1 declined: job %2 is cancelled, nothing of it ran. Audit entry #%3.")
                                     .arg(d.id)
                                     .arg(*d.jobId)
                                     .arg(d.auditId)
                               : tr("Request %1 declined: it can no longer be approved or used. Audit entry #%2.")
                                     .arg(d.id)
                                     .arg(d.auditId);
            else if (d.jobId)
                text = tr("Job %1 approved: the console that requested it runs it now if it is still open; else anyone "
                          "with its action's right resumes it (Jobs page > Resume, idemctl job resume %1) until %2. "
                          "Audit entry #%3.")
                           .arg(*d.jobId)
                           .arg(d.expiresAtUs ? localTime(*d.expiresAtUs) : QString())
                           .arg(d.auditId);
            else
                text = tr("Change request %1 approved: it may be used once until %2. Audit entry #%3.")
                           .arg(d.id)
                           .arg(d.expiresAtUs ? localTime(*d.expiresAtUs) : QString())
                           .arg(d.auditId);
            Q_EMIT finished(true, text, d.auditId);
            reload();
        },
        [this, requestId, approving](const Failure& failure) {
            if (*requestId != m_deciding)
                return;
            m_deciding = 0;
            Q_EMIT finished(false,
                (approving ? tr("Not approved: %1") : tr("Not declined: %1")).arg(visibleLines(failure.text())), 0);
        });
    m_deciding = *requestId;
}

} // namespace idem::console
