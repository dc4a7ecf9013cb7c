#include "views/approvalsdialog.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "models/consolesession.h"
#include "models/visibletext.h"
#include "operations/actions.h"
#include "operations/changerequests.h"
#include "operations/jobs.h"
#include "views/theme.h"

namespace idem::console {

namespace {
    QString localTime(std::int64_t us)
    {
        return QDateTime::fromMSecsSinceEpoch(us / 1000).toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    }

    QString q(const std::string& s) { return QString::fromStdString(s); }

    QTableWidgetItem* cell(const QString& text)
    {
        auto* item = new QTableWidgetItem(visibleText(text));
        item->setFlags(item->flags() & ~Qt::ItemIsEditable);
        item->setToolTip(visibleText(text));
        return item;
    }
} // namespace

ApprovalsDialog::ApprovalsDialog(ConsoleSession* admin, QWidget* parent)
    : QDialog(parent)
    , m_admin(admin)
    , m_intro(new QLabel)
    , m_table(new QTableWidget)
    , m_changesIntro(new QLabel)
    , m_changes(new QTableWidget)
    , m_reason(new QLineEdit)
    , m_refresh(new QPushButton)
    , m_approve(new QPushButton)
    , m_close(new QPushButton)
    , m_result(new QLabel)
{
    setObjectName(QStringLiteral("approvalsDialog"));
    setWindowTitle(tr("Approvals – Idem console"));
    m_intro->setWordWrap(true);
    m_intro->setText(tr("Recovery jobs waiting for a second person. Approving one lets exactly what is listed run: its "
                        "action, on the rows its filter matched at its moment, no more than counted. You cannot "
                        "approve a job your own login requested."));
    m_table->setObjectName(QStringLiteral("approvalsTable"));
    m_table->setColumnCount(8);
    m_table->setHorizontalHeaderLabels({ tr("Job"), tr("Action"), tr("Rows"), tr("Filter"), tr("As of"),
        tr("Requested by"), tr("Reason"), tr("Approvable until") });
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_changesIntro->setWordWrap(true);
    m_changesIntro->setText(tr("Changes waiting for a second person: a retention change or a manual purge, when the "
                               "approval policy holds them. Approving one lets exactly its spec be used, once."));
    m_changes->setObjectName(QStringLiteral("changeRequestsTable"));
    m_changes->setColumnCount(6);
    m_changes->setHorizontalHeaderLabels(
        { tr("Request"), tr("What"), tr("Requested by"), tr("Reason"), tr("Expires"), tr("Spec sha256") });
    m_changes->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_changes->setSelectionMode(QAbstractItemView::SingleSelection);
    m_changes->verticalHeader()->hide();
    m_changes->horizontalHeader()->setStretchLastSection(true);
    m_reason->setObjectName(QStringLiteral("approvalReason"));
    m_reason->setPlaceholderText(tr("Reason for the audit trail (required)"));
    m_refresh->setText(tr("Refresh"));
    m_approve->setObjectName(QStringLiteral("approveButton"));
    m_approve->setText(tr("Approve"));
    m_close->setText(tr("Close"));
    m_result->setObjectName(QStringLiteral("approvalResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_result->setMinimumHeight(m_result->fontMetrics().lineSpacing() * 3);
    m_result->hide();

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_reason, 1);
    buttons->addWidget(m_refresh);
    buttons->addWidget(m_approve);
    buttons->addWidget(m_close);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_intro);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_changesIntro);
    layout->addWidget(m_changes, 1);
    layout->addWidget(m_result);
    layout->addLayout(buttons);
    resize(960, 560);

    connect(m_refresh, &QPushButton::clicked, this, &ApprovalsDialog::reload);
    connect(m_close, &QPushButton::clicked, this, &QDialog::close);
    connect(m_approve, &QPushButton::clicked, this, &ApprovalsDialog::approve);
    connect(m_reason, &QLineEdit::textChanged, this, &ApprovalsDialog::updateApprove);
    connect(m_table, &QTableWidget::itemSelectionChanged, this, [this] {
        // One selection across the two tables: Approve acts on it.
        if (!m_table->selectionModel()->selectedRows().isEmpty())
            m_changes->clearSelection();
        updateApprove();
    });
    connect(m_changes, &QTableWidget::itemSelectionChanged, this, [this] {
        if (!m_changes->selectionModel()->selectedRows().isEmpty())
            m_table->clearSelection();
        updateApprove();
    });
    updateApprove();
    reload();
}

ApprovalsDialog::~ApprovalsDialog() = default;

void ApprovalsDialog::reload()
{
    if (m_loading)
        return;
    m_loading = true;
    m_refresh->setEnabled(false);
    m_admin->submit(
        [](pqxx::connection& conn, const idem::SchemaName& schema) {
            QVariantList out;
            for (const auto& s : idem::listPendingApprovals(conn, schema)) {
                QVariantMap m;
                m[QStringLiteral("id")] = qint64(s.id);
                m[QStringLiteral("spec")] = q(s.specSha256);
                m[QStringLiteral("action")] = QString(q(s.action)
                    + (s.extraAttempts ? QStringLiteral(" (+%1)").arg(*s.extraAttempts) : QString()));
                m[QStringLiteral("rows")] = qint64(s.pending());
                m[QStringLiteral("matched")] = qint64(s.matched);
                std::string filter;
                try {
                    filter = idem::describeJobFilter(idem::taskFilterFromJobJson(s.filterJson));
                } catch (const std::exception&) {
                    filter = s.filterJson;
                }
                m[QStringLiteral("filter")] = q(filter);
                m[QStringLiteral("moment")] = localTime(s.momentUs);
                m[QStringLiteral("by")] = QString(q(s.dbRole) + QStringLiteral(" (") + q(s.actor) + QLatin1Char(')'));
                m[QStringLiteral("reason")] = q(s.reason);
                m[QStringLiteral("until")]
                    = s.approvalRequestedUntilUs ? localTime(*s.approvalRequestedUntilUs) : QString();
                out << m;
            }
            QVariantList changes;
            for (const auto& c : idem::listOpenChangeRequests(conn, schema)) {
                QVariantMap m;
                m[QStringLiteral("id")] = qint64(c.id);
                m[QStringLiteral("spec")] = q(c.specSha256);
                m[QStringLiteral("what")] = q(c.what());
                m[QStringLiteral("by")]
                    = QString(q(c.requestedLogin) + QStringLiteral(" (") + q(c.requestedActor) + QLatin1Char(')'));
                m[QStringLiteral("reason")] = q(c.requestedReason);
                m[QStringLiteral("state")] = q(c.state);
                m[QStringLiteral("expired")] = c.expired();
                m[QStringLiteral("approvedBy")] = q(c.approvedLogin);
                m[QStringLiteral("until")] = c.state == "approved" && c.approvalExpiresAtUs
                    ? localTime(*c.approvalExpiresAtUs)
                    : localTime(c.approvableUntilUs);
                changes << m;
            }
            QVariantMap both;
            both[QStringLiteral("jobs")] = out;
            both[QStringLiteral("changes")] = changes;
            return QVariant(both);
        },
        this,
        [this](const QVariant& answer) {
            m_loading = false;
            m_refresh->setEnabled(true);
            const auto list = answer.toMap().value(QStringLiteral("jobs")).toList();
            m_jobs.clear();
            m_table->setRowCount(static_cast<int>(list.size()));
            for (int i = 0; i < list.size(); ++i) {
                const auto m = list.at(i).toMap();
                m_jobs << Pending { m.value(QStringLiteral("id")).toLongLong(), m.value(QStringLiteral("spec")).toString() };
                m_table->setItem(i, 0, cell(QString::number(m.value(QStringLiteral("id")).toLongLong())));
                m_table->setItem(i, 1, cell(m.value(QStringLiteral("action")).toString()));
                m_table->setItem(i, 2,
                    cell(tr("%1 of %2 matched")
                             .arg(m.value(QStringLiteral("rows")).toLongLong())
                             .arg(m.value(QStringLiteral("matched")).toLongLong())));
                m_table->setItem(i, 3, cell(m.value(QStringLiteral("filter")).toString()));
                m_table->setItem(i, 4, cell(m.value(QStringLiteral("moment")).toString()));
                m_table->setItem(i, 5, cell(m.value(QStringLiteral("by")).toString()));
                m_table->setItem(i, 6, cell(m.value(QStringLiteral("reason")).toString()));
                m_table->setItem(i, 7, cell(m.value(QStringLiteral("until")).toString()));
                for (int c = 0; c < m_table->columnCount(); ++c)
                    m_table->item(i, c)->setToolTip(tr("Spec sha256 %1").arg(m_jobs.last().spec));
            }
            m_table->resizeColumnsToContents();
            const auto changes = answer.toMap().value(QStringLiteral("changes")).toList();
            m_changeRows.clear();
            m_changes->setRowCount(static_cast<int>(changes.size()));
            for (int i = 0; i < changes.size(); ++i) {
                const auto m = changes.at(i).toMap();
                const bool approved = m.value(QStringLiteral("state")).toString() == QLatin1String("approved");
                const bool expired = m.value(QStringLiteral("expired")).toBool();
                QString whyNot;
                if (approved)
                    whyNot = tr("Approved already by %1: it waits to be used.")
                                 .arg(visibleText(m.value(QStringLiteral("approvedBy")).toString()));
                if (expired)
                    whyNot = approved ? tr("Its approval expired: it can no longer be used.")
                                      : tr("Its time for approval ended: it can no longer be approved.");
                m_changeRows << Pending { m.value(QStringLiteral("id")).toLongLong(),
                    m.value(QStringLiteral("spec")).toString(), whyNot };
                const QString until = m.value(QStringLiteral("until")).toString();
                m_changes->setItem(i, 0, cell(QString::number(m.value(QStringLiteral("id")).toLongLong())));
                m_changes->setItem(i, 1, cell(m.value(QStringLiteral("what")).toString()));
                m_changes->setItem(i, 2, cell(m.value(QStringLiteral("by")).toString()));
                m_changes->setItem(i, 3, cell(m.value(QStringLiteral("reason")).toString()));
                m_changes->setItem(i, 5, cell(m.value(QStringLiteral("spec")).toString()));
                m_changes->setItem(i, 4,
                    cell(expired       ? tr("%1 (expired)").arg(until)
                            : approved ? tr("%1 (approved; to be used by then)").arg(until)
                                       : until));
                for (int c = 0; c < m_changes->columnCount(); ++c) {
                    auto* item = m_changes->item(i, c);
                    if (!whyNot.isEmpty()) {
                        item->setForeground(m_changes->palette().color(QPalette::Disabled, QPalette::Text));
                        item->setToolTip(whyNot);
                    }
                }
            }
            m_changes->resizeColumnsToContents();
            if (list.isEmpty() && changes.isEmpty())
                showResult(tr("Nothing is waiting for approval."), true);
            updateApprove();
            Q_EMIT loaded();
        },
        [this](const Failure& failure) {
            m_loading = false;
            m_refresh->setEnabled(true);
            showResult(tr("Could not read what is waiting for approval: %1").arg(visibleLines(failure.text())), false);
            Q_EMIT loaded();
        });
}

void ApprovalsDialog::updateApprove()
{
    QString why;
    if (m_admin->state() != ConsoleSession::State::Connected)
        why = tr("Not connected.");
    else if (m_admin->readOnly())
        why = tr("The schema is newer than this console, or its migrations do not match: look, change nothing.");
    else
        why = m_admin->serverInfo().rights.refusal(QStringLiteral("approve"));
    const auto changeRows = m_changes->selectionModel()->selectedRows();
    const bool change = !changeRows.isEmpty();
    if (why.isEmpty() && change && changeRows.first().row() < m_changeRows.size())
        why = m_changeRows.at(changeRows.first().row()).whyNot;
    const bool selected = change || !m_table->selectionModel()->selectedRows().isEmpty();
    const bool blank = idem::reasonIsBlank(m_reason->text().toStdString());
    m_approve->setEnabled(why.isEmpty() && selected && !blank && !m_running);
    m_approve->setToolTip(!why.isEmpty() ? why
            : !selected                  ? tr("Select the job or the change to approve.")
            : blank                      ? tr("Give a reason: it goes into the audit trail.")
            : change ? tr("Approve the selected change exactly as listed (its spec sha256 is named).")
                     : tr("Approve the selected job exactly as listed (its spec sha256 is named)."));
}

void ApprovalsDialog::approve()
{
    if (const auto changeRows = m_changes->selectionModel()->selectedRows();
        !changeRows.isEmpty() && changeRows.first().row() < m_changeRows.size()) {
        const Pending p = m_changeRows.at(changeRows.first().row());
        const std::string reason = m_reason->text().toStdString();
        const std::string spec = p.spec.toStdString();
        m_running = true;
        updateApprove();
        m_admin->submit(
            [id = p.id, spec, reason](pqxx::connection& conn, const idem::SchemaName& schema) {
                const auto a = idem::approveChange(conn, schema, id, spec, reason);
                QVariantMap out;
                out[QStringLiteral("id")] = qint64(a.id);
                out[QStringLiteral("until")] = localTime(a.expiresAtUs);
                out[QStringLiteral("auditId")] = qint64(a.auditId);
                return QVariant(out);
            },
            this,
            [this](const QVariant& answer) {
                m_running = false;
                const auto m = answer.toMap();
                showResult(tr("Change request %1 approved: it may be used once until %2. Audit entry #%3.")
                               .arg(m.value(QStringLiteral("id")).toLongLong())
                               .arg(m.value(QStringLiteral("until")).toString())
                               .arg(m.value(QStringLiteral("auditId")).toLongLong()),
                    true);
                m_reason->clear();
                Q_EMIT approved(m.value(QStringLiteral("auditId")).toLongLong());
                reload();
            },
            [this](const Failure& failure) {
                m_running = false;
                showResult(tr("Not approved: %1").arg(visibleLines(failure.text())), false);
                updateApprove();
            });
        return;
    }
    const auto rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty() || rows.first().row() >= m_jobs.size())
        return;
    const Pending p = m_jobs.at(rows.first().row());
    const std::string reason = m_reason->text().toStdString();
    const std::string spec = p.spec.toStdString();
    m_running = true;
    updateApprove();
    m_admin->submit(
        [id = p.id, spec, reason](pqxx::connection& conn, const idem::SchemaName& schema) {
            const auto a = idem::approveJob(conn, schema, id, spec, reason);
            QVariantMap out;
            out[QStringLiteral("id")] = qint64(a.jobId);
            out[QStringLiteral("until")] = localTime(a.expiresAtUs);
            out[QStringLiteral("auditId")] = qint64(a.auditId);
            return QVariant(out);
        },
        this,
        [this](const QVariant& answer) {
            m_running = false;
            const auto m = answer.toMap();
            showResult(tr("Job %1 approved: the console that requested it runs it now if it is still open; else "
                          "anyone with its action's right resumes it (Jobs page > Resume, idemctl job resume %1) until "
                          "%2. Audit entry #%3.")
                           .arg(m.value(QStringLiteral("id")).toLongLong())
                           .arg(m.value(QStringLiteral("until")).toString())
                           .arg(m.value(QStringLiteral("auditId")).toLongLong()),
                true);
            m_reason->clear();
            Q_EMIT approved(m.value(QStringLiteral("auditId")).toLongLong());
            reload();
        },
        [this](const Failure& failure) {
            m_running = false;
            showResult(tr("Not approved: %1").arg(visibleLines(failure.text())), false);
            updateApprove();
        });
}

void ApprovalsDialog::showResult(const QString& text, bool good)
{
    m_result->setText(text);
    m_result->show();
    theme::followTone(m_result, good ? theme::Tone::Good : theme::Tone::Bad, true);
}

ApprovalsDialog* openApprovalsDialog(QWidget* parent, ConsoleSession* admin)
{
    auto* dialog = new ApprovalsDialog(admin, parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    return dialog;
}

} // namespace idem::console
