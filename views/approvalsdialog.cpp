#include "views/approvalsdialog.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include "models/approvalsmodel.h"
#include "models/consolesession.h"
#include "models/visibletext.h"
#include "operations/actions.h"
#include "views/theme.h"

namespace idem::console {

ApprovalsDialog::ApprovalsDialog(ConsoleSession* admin, QWidget* parent)
    : QDialog(parent)
    , m_admin(admin)
    , m_model(new ApprovalsModel(admin, this))
    , m_intro(new QLabel)
    , m_table(new QTableView)
    , m_reason(new QLineEdit)
    , m_refresh(new QPushButton)
    , m_approve(new QPushButton)
    , m_decline(new QPushButton)
    , m_close(new QPushButton)
    , m_result(new QLabel)
{
    setObjectName(QStringLiteral("approvalsDialog"));
    setWindowTitle(tr("Approvals – Idem console"));
    m_intro->setWordWrap(true);
    m_intro->setText(tr("Requests waiting for a second person: recovery jobs, retention changes and manual purges, "
                        "when the approval policy holds them. Approving one lets exactly what is listed run (its spec "
                        "sha256 is named); declining one turns it down (a job's: the job is cancelled). You cannot "
                        "approve what your own login requested."));
    m_table->setObjectName(QStringLiteral("approvalsTable"));
    m_table->setModel(m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    m_reason->setObjectName(QStringLiteral("approvalReason"));
    m_reason->setPlaceholderText(tr("Reason for the audit trail (required)"));
    m_refresh->setText(tr("Refresh"));
    m_approve->setObjectName(QStringLiteral("approveButton"));
    m_approve->setText(tr("Approve"));
    m_decline->setObjectName(QStringLiteral("declineButton"));
    m_decline->setText(tr("Decline"));
    m_close->setText(tr("Close"));
    m_result->setObjectName(QStringLiteral("approvalResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_result->setMinimumHeight(m_result->fontMetrics().lineSpacing() * 3);
    m_result->hide();

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_reason, 1);
    buttons->addWidget(m_refresh);
    buttons->addWidget(m_decline);
    buttons->addWidget(m_approve);
    buttons->addWidget(m_close);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_intro);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_result);
    layout->addLayout(buttons);
    resize(1040, 480);

    connect(m_refresh, &QPushButton::clicked, this, &ApprovalsDialog::reload);
    connect(m_close, &QPushButton::clicked, this, &QDialog::close);
    connect(m_approve, &QPushButton::clicked, this, [this] {
        m_approving = true;
        m_model->approve(selectedRow(), m_reason->text());
        updateButtons();
    });
    connect(m_decline, &QPushButton::clicked, this, [this] {
        m_approving = false;
        m_model->decline(selectedRow(), m_reason->text());
        updateButtons();
    });
    connect(m_reason, &QLineEdit::textChanged, this, &ApprovalsDialog::updateButtons);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &ApprovalsDialog::updateButtons);
    connect(m_model, &ApprovalsModel::loaded, this, [this] {
        m_refresh->setEnabled(true);
        if (!m_model->error().isEmpty())
            showResult(tr("Could not read what is waiting for approval: %1").arg(visibleLines(m_model->error())), false);
        else if (m_model->rowCount() == 0)
            showResult(tr("Nothing is waiting for approval."), true);
        m_table->resizeColumnsToContents();
        updateButtons();
        Q_EMIT loaded();
    });
    connect(m_model, &ApprovalsModel::finished, this, [this](bool good, const QString& text, qint64 auditId) {
        showResult(text, good);
        if (good) {
            m_reason->clear();
            if (m_approving)
                Q_EMIT approved(auditId);
        }
        updateButtons();
    });
    updateButtons();
    reload();
}

ApprovalsDialog::~ApprovalsDialog() = default;

bool ApprovalsDialog::loading() const { return m_model->loading(); }

int ApprovalsDialog::pendingCount() const { return m_model->rowCount(); }

void ApprovalsDialog::reload()
{
    m_refresh->setEnabled(false);
    m_model->reload();
}

int ApprovalsDialog::selectedRow() const
{
    const auto rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : rows.first().row();
}

void ApprovalsDialog::updateButtons()
{
    QString why;
    if (m_admin->state() != ConsoleSession::State::Connected)
        why = tr("Not connected.");
    else if (m_admin->readOnly())
        why = tr("The schema is newer than this console, or its migrations do not match: look, change nothing.");
    const int row = selectedRow();
    const bool selected = row >= 0 && row < m_model->rowCount();
    // Declining needs the approve right, unless the request is this login's own (withdrawn).
    const QString approveRight = m_admin->serverInfo().rights.refusal(QStringLiteral("approve"));
    QString whyRow = selected ? m_model->whyNot(row) : QString();
    const bool blank = idem::reasonIsBlank(m_reason->text().toStdString());
    const bool idle = !m_model->busy();
    const QString approveWhy = !why.isEmpty() ? why : !approveRight.isEmpty() ? approveRight : whyRow;
    m_approve->setEnabled(approveWhy.isEmpty() && selected && !blank && idle);
    m_approve->setToolTip(!approveWhy.isEmpty() ? approveWhy
            : !selected                         ? tr("Select the request to approve.")
            : blank                             ? tr("Give a reason: it goes into the audit trail.")
                                                : tr("Approve the selected request exactly as listed (its spec sha256 "
                                                     "is named)."));
    const bool own = selected
        && m_model->request(row).requestedLogin == m_admin->serverInfo().sessionRole.toStdString();
    const QString declineWhy = !why.isEmpty() ? why
        : !approveRight.isEmpty() && !own     ? approveRight
        : selected && m_model->request(row).state != "awaiting_approval"
        ? whyRow
        : QString();
    m_decline->setEnabled(declineWhy.isEmpty() && selected && !blank && idle);
    m_decline->setToolTip(!declineWhy.isEmpty() ? declineWhy
            : !selected                         ? tr("Select the request to decline.")
            : blank                             ? tr("Give a reason: it goes into the audit trail.")
                                                : tr("Turn the selected request down: it can no longer be approved (a "
                                                     "job's request declined cancels the job)."));
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
