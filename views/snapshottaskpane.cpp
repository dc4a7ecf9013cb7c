#include "views/snapshottaskpane.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "models/snapshottaskmodel.h"

namespace idem::console {

namespace {
    QString text(const std::string& s) { return QString::fromStdString(s); }
    QString text(const std::optional<std::string>& s) { return s ? QString::fromStdString(*s) : QString(); }
    bool isRedacted(const std::optional<std::string>& s) { return s && s->rfind("redacted:sha256:", 0) == 0; }
} // namespace

QLineEdit* SnapshotTaskPane::field(const char* name)
{
    auto* e = new QLineEdit;
    e->setReadOnly(true);
    e->setFrame(false);
    e->setObjectName(QString::fromLatin1(name));
    return e;
}

SnapshotTaskPane::SnapshotTaskPane(QWidget* parent)
    : QWidget(parent)
    , m_title(new QLabel)
    , m_key(field("detailKey"))
    , m_tenant(field("detailTenant"))
    , m_operation(field("detailOperation"))
    , m_business(field("detailBusinessId"))
    , m_digest(field("detailDigest"))
    , m_status(field("detailStatus"))
    , m_attempts(field("detailAttempts"))
    , m_lease(new QLabel)
    , m_token(field("detailToken"))
    , m_next(field("detailNextAttempt"))
    , m_times(field("detailTimes"))
    , m_errorClass(field("detailErrorClass"))
    , m_errorMessage(new QPlainTextEdit)
    , m_tabs(new QTabWidget)
    , m_result(new QPlainTextEdit)
    , m_resultInfo(new QLabel)
    , m_errors(new QPlainTextEdit)
    , m_audit(new QTableWidget(0, 4))
{
    setObjectName(QStringLiteral("snapshotTaskPane"));
    m_title->setObjectName(QStringLiteral("detailTitle"));
    m_title->setWordWrap(true);
    m_lease->setObjectName(QStringLiteral("detailLease"));
    m_lease->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_errorMessage->setReadOnly(true);
    m_errorMessage->setObjectName(QStringLiteral("detailErrorMessage"));
    m_errorMessage->setMaximumHeight(52);
    m_result->setReadOnly(true);
    m_result->setObjectName(QStringLiteral("detailResult"));
    m_result->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_result->setFont(QFont(QStringLiteral("monospace")));
    m_resultInfo->setObjectName(QStringLiteral("detailResultInfo"));
    m_resultInfo->setWordWrap(true);
    m_errors->setReadOnly(true);
    m_errors->setObjectName(QStringLiteral("detailErrors"));
    m_errors->setFont(QFont(QStringLiteral("monospace")));
    m_audit->setObjectName(QStringLiteral("detailAudit"));
    m_audit->setHorizontalHeaderLabels({ tr("At (UTC)"), tr("Action"), tr("Actor"), tr("Reason") });
    m_audit->horizontalHeader()->setStretchLastSection(true);
    m_audit->verticalHeader()->setVisible(false);
    m_audit->setEditTriggers(QAbstractItemView::NoEditTriggers);

    auto* form = new QFormLayout;
    form->setContentsMargins(0, 0, 0, 0);
    form->setVerticalSpacing(2);
    form->addRow(tr("Key"), m_key);
    auto* parts = new QHBoxLayout;
    parts->addWidget(m_tenant);
    parts->addWidget(m_operation);
    parts->addWidget(m_business, 2);
    form->addRow(tr("Tenant / op / id"), parts);
    form->addRow(tr("Digest"), m_digest);
    form->addRow(tr("Status"), m_status);
    form->addRow(tr("Attempts"), m_attempts);
    form->addRow(tr("Lease"), m_lease);
    form->addRow(tr("Owner token"), m_token);
    form->addRow(tr("Next attempt"), m_next);
    form->addRow(tr("Created / updated"), m_times);
    form->addRow(tr("Error class"), m_errorClass);
    form->addRow(tr("Error"), m_errorMessage);

    auto* resultPage = new QWidget;
    auto* rl = new QVBoxLayout(resultPage);
    rl->setContentsMargins(0, 0, 0, 0);
    rl->addWidget(m_resultInfo);
    rl->addWidget(m_result, 1);
    m_tabs->addTab(resultPage, tr("Result"));
    m_tabs->addTab(m_errors, tr("Error history"));
    m_tabs->addTab(m_audit, tr("Audit"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 0, 0, 0);
    layout->addWidget(m_title);
    layout->addLayout(form);
    layout->addWidget(m_tabs, 1);
    clearDetail();
}

SnapshotTaskPane::~SnapshotTaskPane() = default;

QString SnapshotTaskPane::shownKey() const { return m_key->text(); }

void SnapshotTaskPane::clearDetail()
{
    m_title->setText(tr("Select a task to see its record as the snapshot holds it."));
    for (auto* e : { m_key, m_tenant, m_operation, m_business, m_digest, m_status, m_attempts, m_token, m_next, m_times,
             m_errorClass })
        e->clear();
    m_lease->clear();
    m_errorMessage->clear();
    m_result->clear();
    m_resultInfo->clear();
    m_errors->clear();
    m_audit->setRowCount(0);
}

void SnapshotTaskPane::showRow(const idem::SnapshotTaskRow& r, qint64 takenAtMs,
    const std::vector<const idem::SnapshotAuditEntry*>& audit, bool redacted)
{
    const QString key = text(r.key);
    m_title->setText(tr("<b>%1</b> task at the snapshot, updated %2 UTC")
                         .arg(text(r.status).toHtmlEscaped(), snapshotTimeCell(r.updatedAt)));
    m_key->setText(key);
    m_key->setCursorPosition(0);
    const auto parts = key.split(QLatin1Char(':'));
    m_tenant->setText(parts.value(0));
    m_operation->setText(parts.size() > 1 ? parts.value(1) : QString());
    m_business->setText(parts.size() > 2 ? key.section(QLatin1Char(':'), 2) : QString());
    m_digest->setText(text(r.requestHash));
    m_digest->setCursorPosition(0);
    m_status->setText(r.status == "retryable_failed" && r.errorClass == "unknown"
            ? tr("retryable_failed (uncertain outcome: retry only with the same key)")
            : text(r.status));
    m_attempts->setText(tr("%1 of %2").arg(r.attempts).arg(r.maxAttempts));
    const QString lease = snapshotLeaseText(r, takenAtMs);
    m_lease->setText(r.leaseUntil ? tr("%1 (until %2 UTC)").arg(lease, snapshotTimeCell(r.leaseUntil)) : lease);
    m_token->setText(r.ownerToken ? text(r.ownerToken) : tr("(none)"));
    m_next->setText(r.nextAttemptAt ? tr("%1 UTC").arg(snapshotTimeCell(r.nextAttemptAt)) : QString());
    m_times->setText(tr("%1 / %2 UTC").arg(snapshotTimeCell(r.createdAt), snapshotTimeCell(r.updatedAt)));
    m_errorClass->setText(text(r.errorClass));
    m_errorMessage->setPlainText(
        isRedacted(r.errorMessage) ? tr("(redacted) %1").arg(text(r.errorMessage)) : text(r.errorMessage));

    if (!r.resultJson) {
        m_result->clear();
        m_resultInfo->setText(tr("No result stored."));
    } else if (isRedacted(r.resultJson)) {
        m_result->setPlainText(text(r.resultJson));
        m_resultInfo->setText(tr("The result was redacted for sharing: its SHA-256 and length stand in for it."));
    } else {
        const QByteArray raw = QByteArray::fromStdString(*r.resultJson);
        const auto doc = QJsonDocument::fromJson(raw);
        const QString pretty
            = doc.isNull() ? QString::fromUtf8(raw) : QString::fromUtf8(doc.toJson(QJsonDocument::Indented));
        m_result->setPlainText(pretty.left(previewChars));
        m_resultInfo->setText(pretty.size() > previewChars
                ? tr("Result: %1 bytes; showing the first %2 characters.").arg(raw.size()).arg(previewChars)
                : tr("Result: %1 bytes.").arg(raw.size()));
    }
    const auto errors = QJsonDocument::fromJson(QByteArray::fromStdString(r.errorsJson));
    m_errors->setPlainText(
        errors.isNull() ? text(r.errorsJson) : QString::fromUtf8(errors.toJson(QJsonDocument::Indented)));
    m_tabs->setTabText(1, tr("Error history (%1)").arg(errors.isArray() ? errors.array().size() : 0));
    if (redacted)
        m_tabs->setTabToolTip(1, tr("Messages were redacted for sharing."));

    m_audit->setRowCount(static_cast<int>(audit.size()));
    for (int i = 0; i < static_cast<int>(audit.size()); ++i) {
        const auto& e = *audit[static_cast<std::size_t>(i)];
        m_audit->setItem(i, 0, new QTableWidgetItem(snapshotTimeCell(e.at)));
        m_audit->setItem(i, 1, new QTableWidgetItem(text(e.action)));
        m_audit->setItem(i, 2, new QTableWidgetItem(tr("%1 (%2)").arg(text(e.dbRole), text(e.osUser))));
        auto* reason = new QTableWidgetItem(text(e.reason));
        reason->setToolTip(text(e.reason));
        m_audit->setItem(i, 3, reason);
    }
    m_tabs->setTabText(2, tr("Audit in snapshot (%1)").arg(audit.size()));
}

} // namespace idem::console
