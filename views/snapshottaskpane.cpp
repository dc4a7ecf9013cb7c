#include "views/snapshottaskpane.h"

#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTabWidget>

#include "models/snapshottaskmodel.h"

namespace idem::console {

namespace {
    QString text(const std::string& s) { return QString::fromStdString(s); }
    QString text(const std::optional<std::string>& s) { return s ? QString::fromStdString(*s) : QString(); }
    bool isRedacted(const std::optional<std::string>& s) { return s && s->rfind("redacted:sha256:", 0) == 0; }
} // namespace

SnapshotTaskPane::SnapshotTaskPane(QWidget* parent)
    : QWidget(parent)
    , m_view(new TaskRecordView(true, tr("At (UTC)"), this))
{
    setObjectName(QStringLiteral("snapshotTaskPane"));
    m_view->addTabs(nullptr, 1);
    m_view->install(this);
    clearDetail();
}

SnapshotTaskPane::~SnapshotTaskPane() = default;

QString SnapshotTaskPane::shownKey() const { return m_view->key()->text(); }

void SnapshotTaskPane::clearDetail()
{
    m_view->title()->setText(tr("Select a task to see its record as the snapshot holds it."));
    m_view->clear();
}

void SnapshotTaskPane::showRow(const idem::SnapshotTaskRow& r, qint64 takenAtMs,
    const std::vector<const idem::SnapshotAuditEntry*>& audit, bool redacted)
{
    m_view->title()->setText(tr("<b>%1</b> task at the snapshot, updated %2 UTC")
                                 .arg(text(r.status).toHtmlEscaped(), snapshotTimeCell(r.updatedAt)));
    m_view->showKey(text(r.key));
    m_view->showDigest(text(r.requestHash));
    m_view->showStatus(r.status, r.errorClass == "unknown");
    m_view->showAttempts(r.attempts, r.maxAttempts);
    const QString lease = snapshotLeaseText(r, takenAtMs);
    m_view->lease()->setText(r.leaseUntil ? tr("%1 (until %2 UTC)").arg(lease, snapshotTimeCell(r.leaseUntil)) : lease);
    m_view->token()->setText(r.ownerToken ? text(r.ownerToken) : tr("(none)"));
    m_view->next()->setText(r.nextAttemptAt ? tr("%1 UTC").arg(snapshotTimeCell(r.nextAttemptAt)) : QString());
    m_view->times()->setText(tr("%1 / %2 UTC").arg(snapshotTimeCell(r.createdAt), snapshotTimeCell(r.updatedAt)));
    m_view->errorClass()->setText(text(r.errorClass));
    m_view->errorMessage()->setPlainText(
        isRedacted(r.errorMessage) ? tr("(redacted) %1").arg(text(r.errorMessage)) : text(r.errorMessage));

    if (!r.resultJson) {
        m_view->showNoResult();
    } else if (isRedacted(r.resultJson)) {
        m_view->result()->setPlainText(text(r.resultJson));
        m_view->resultInfo()->setText(
            tr("The result was redacted for sharing: its SHA-256 and length stand in for it."));
    } else {
        const QByteArray raw = QByteArray::fromStdString(*r.resultJson);
        const auto doc = QJsonDocument::fromJson(raw);
        const QString pretty
            = doc.isNull() ? QString::fromUtf8(raw) : QString::fromUtf8(doc.toJson(QJsonDocument::Indented));
        m_view->result()->setPlainText(pretty.left(previewChars));
        m_view->resultInfo()->setText(pretty.size() > previewChars
                ? tr("Result: %1 bytes; showing the first %2 characters.").arg(raw.size()).arg(previewChars)
                : tr("Result: %1 bytes.").arg(raw.size()));
    }
    m_view->showErrorHistory(r.errorsJson);
    if (redacted)
        m_view->tabs()->setTabToolTip(1, tr("Messages were redacted for sharing."));

    m_view->setAuditRowCount(static_cast<int>(audit.size()));
    for (int i = 0; i < static_cast<int>(audit.size()); ++i) {
        const auto& e = *audit[static_cast<std::size_t>(i)];
        m_view->setAuditRow(i, snapshotTimeCell(e.at), text(e.action),
            tr("%1 (%2)").arg(text(e.dbRole), text(e.osUser)), text(e.reason));
    }
    m_view->tabs()->setTabText(2, tr("Audit in snapshot (%1)").arg(audit.size()));
}

} // namespace idem::console
