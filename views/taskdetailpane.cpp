#include "views/taskdetailpane.h"

#include <QCoreApplication>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include "models/taskbrowsermodel.h"

namespace idem::console {

namespace {
    QString text(const std::string& s) { return QString::fromStdString(s); }

    QString sizeText(std::int64_t bytes)
    {
        if (bytes >= 1024 * 1024)
            return QCoreApplication::translate("idem::console::TaskDetailPane", "%1 MB")
                .arg(static_cast<double>(bytes) / (1024.0 * 1024.0), 0, 'f', 1);
        if (bytes >= 1024)
            return QCoreApplication::translate("idem::console::TaskDetailPane", "%1 kB")
                .arg(static_cast<double>(bytes) / 1024.0, 0, 'f', 1);
        return QCoreApplication::translate("idem::console::TaskDetailPane", "%1 bytes").arg(bytes);
    }
} // namespace

QLineEdit* TaskDetailPane::field(const char* name)
{
    auto* e = new QLineEdit;
    e->setReadOnly(true);
    e->setFrame(false);
    e->setObjectName(QString::fromLatin1(name));
    return e;
}

TaskDetailPane::TaskDetailPane(TaskDetailLoader* loader, QWidget* parent)
    : QWidget(parent)
    , m_loader(loader)
    , m_title(new QLabel(tr("Select a task to see its record.")))
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
    , m_errorClass(field("detailErrorClass"))
    , m_errorMessage(new QPlainTextEdit)
    , m_tabs(new QTabWidget)
    , m_result(new QPlainTextEdit)
    , m_resultInfo(new QLabel)
    , m_save(new QPushButton(tr("Save full result…")))
    , m_cancelSave(new QPushButton(tr("Stop")))
    , m_saveProgress(new QProgressBar)
    , m_errors(new QPlainTextEdit)
    , m_audit(new QTableWidget(0, 4))
    , m_conflicts(new QLabel)
    , m_tick(new QTimer(this))
{
    m_lease->setObjectName(QStringLiteral("detailLease"));
    m_lease->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_title->setObjectName(QStringLiteral("detailTitle"));
    m_title->setWordWrap(true);
    m_errorMessage->setReadOnly(true);
    m_errorMessage->setObjectName(QStringLiteral("detailErrorMessage"));
    m_errorMessage->setMaximumHeight(52);
    m_result->setReadOnly(true);
    m_result->setObjectName(QStringLiteral("detailResult"));
    m_result->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_result->setFont(QFont(QStringLiteral("monospace")));
    m_resultInfo->setObjectName(QStringLiteral("detailResultInfo"));
    m_resultInfo->setWordWrap(true);
    m_save->setObjectName(QStringLiteral("saveResultButton"));
    m_cancelSave->setVisible(false);
    m_saveProgress->setVisible(false);
    m_errors->setReadOnly(true);
    m_errors->setObjectName(QStringLiteral("detailErrors"));
    m_errors->setFont(QFont(QStringLiteral("monospace")));
    m_audit->setObjectName(QStringLiteral("detailAudit"));
    m_audit->setHorizontalHeaderLabels({ tr("At"), tr("Action"), tr("Actor"), tr("Reason") });
    m_audit->horizontalHeader()->setStretchLastSection(true);
    m_audit->verticalHeader()->setVisible(false);
    m_audit->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_conflicts->setObjectName(QStringLiteral("detailConflicts"));
    m_conflicts->setWordWrap(true);

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
    form->addRow(tr("Error class"), m_errorClass);
    form->addRow(tr("Error"), m_errorMessage);
    form->addRow(m_conflicts);

    auto* resultPage = new QWidget;
    auto* rl = new QVBoxLayout(resultPage);
    rl->setContentsMargins(0, 0, 0, 0);
    auto* saveRow = new QHBoxLayout;
    saveRow->addWidget(m_resultInfo, 1);
    saveRow->addWidget(m_saveProgress);
    saveRow->addWidget(m_cancelSave);
    saveRow->addWidget(m_save);
    rl->addLayout(saveRow);
    rl->addWidget(m_result);
    m_tabs->addTab(resultPage, tr("Result"));
    m_tabs->addTab(m_errors, tr("Error history"));
    m_tabs->addTab(m_audit, tr("Audit"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 0, 0, 0);
    layout->addWidget(m_title);
    layout->addLayout(form);
    layout->addWidget(m_tabs, 1);

    m_tick->setInterval(1000);
    connect(m_tick, &QTimer::timeout, this, &TaskDetailPane::updateLease);
    connect(loader, &TaskDetailLoader::loaded, this, &TaskDetailPane::onLoaded);
    connect(loader, &TaskDetailLoader::failed, this,
        [this](const QString& message) { m_title->setText(tr("Could not read the task: %1").arg(message)); });
    connect(m_save, &QPushButton::clicked, this, [this] {
        const auto path = QFileDialog::getSaveFileName(
            this, tr("Save full result"), QStringLiteral("result.json"), tr("JSON (*.json);;All files (*)"));
        if (!path.isEmpty())
            saveResultTo(path);
    });
    connect(m_cancelSave, &QPushButton::clicked, loader, &TaskDetailLoader::cancelSave);
    connect(loader, &TaskDetailLoader::saveProgress, this, [this](qint64 done, qint64 total) {
        m_saveProgress->setRange(0, 1000);
        m_saveProgress->setValue(total > 0 ? static_cast<int>(done * 1000 / total) : 0);
    });
    connect(loader, &TaskDetailLoader::saveFinished, this, [this](bool, const QString& message) {
        m_saveProgress->setVisible(false);
        m_cancelSave->setVisible(false);
        m_save->setEnabled(true);
        m_resultInfo->setText(message);
    });
    clearDetail();
}

TaskDetailPane::~TaskDetailPane() = default;

QString TaskDetailPane::shownKey() const
{
    return m_loader->current() && m_loader->current()->detail ? m_loader->current()->key : QString();
}

void TaskDetailPane::clearDetail()
{
    m_pendingKey.clear();
    m_loader->clear();
    m_title->setText(tr("Select a task to see its record."));
    for (auto* e :
        { m_key, m_tenant, m_operation, m_business, m_digest, m_status, m_attempts, m_token, m_next, m_errorClass })
        e->clear();
    m_lease->clear();
    m_errorMessage->clear();
    m_result->clear();
    m_resultInfo->clear();
    m_errors->clear();
    m_audit->setRowCount(0);
    m_conflicts->clear();
    m_save->setEnabled(false);
    m_leaseLeftMs.reset();
    m_tick->stop();
}

void TaskDetailPane::showKey(const QString& key)
{
    m_pendingKey = key;
    m_title->setText(tr("Loading…"));
    m_loader->load(key);
}

void TaskDetailPane::saveResultTo(const QString& path)
{
    const auto key = shownKey();
    if (key.isEmpty() || m_loader->saving())
        return;
    m_save->setEnabled(false);
    m_saveProgress->setVisible(true);
    m_saveProgress->setValue(0);
    m_cancelSave->setVisible(true);
    m_resultInfo->setText(tr("Saving to %1…").arg(path));
    m_loader->saveResult(key, path);
}

void TaskDetailPane::onLoaded(const TaskDetailAnswer& a)
{
    if (a.key != m_pendingKey)
        return;
    if (!a.detail) {
        clearDetail();
        m_title->setText(tr("The task is no longer in the table."));
        return;
    }
    const auto& d = *a.detail;
    const auto& r = d.row;
    m_title->setText(tr("<b>%1</b> task, updated %2").arg(text(r.status), formatTimeUs(r.updatedAtUs)));
    m_key->setText(a.key);
    m_key->setCursorPosition(0);
    const auto parts = a.key.split(QLatin1Char(':'));
    m_tenant->setText(parts.value(0));
    m_operation->setText(parts.size() > 1 ? parts.value(1) : QString());
    m_business->setText(parts.size() > 2 ? a.key.section(QLatin1Char(':'), 2) : QString());
    m_digest->setText(text(r.requestHash));
    m_status->setText(r.status == "retryable_failed" && r.errorClass == "unknown"
            ? tr("retryable_failed (uncertain outcome: retry only with the same key)")
            : text(r.status));
    m_attempts->setText(tr("%1 of %2").arg(r.attempts).arg(r.maxAttempts));
    m_token->setText(d.ownerToken.empty() ? tr("(none)") : text(d.ownerToken));
    m_next->setText(r.nextAttemptAtUs ? formatTimeUs(*r.nextAttemptAtUs) : QString());
    m_errorClass->setText(text(r.errorClass));
    m_errorMessage->setPlainText(text(r.errorMessage));
    if (r.leaseUntilUs)
        m_leaseLeftMs = (*r.leaseUntilUs - d.serverNowUs) / 1000;
    else
        m_leaseLeftMs.reset();
    m_sinceLoad.start();
    updateLease();
    if (r.status == "processing")
        m_tick->start();
    else
        m_tick->stop();
    if (!d.hasResult) {
        m_result->clear();
        m_resultInfo->setText(tr("No result stored."));
        m_save->setEnabled(false);
    } else {
        m_result->setPlainText(text(d.resultPreview));
        m_resultInfo->setText(d.resultTruncated ? tr("Result: %1; showing the first %2 characters.")
                                                      .arg(sizeText(d.resultBytes))
                                                      .arg(d.resultPreview.size())
                                                : tr("Result: %1.").arg(sizeText(d.resultBytes)));
        m_save->setEnabled(!m_loader->saving());
    }
    const auto errors = QJsonDocument::fromJson(QByteArray::fromStdString(d.errorsJson));
    m_errors->setPlainText(
        errors.isNull() ? text(d.errorsJson) : QString::fromUtf8(errors.toJson(QJsonDocument::Indented)));
    m_tabs->setTabText(1, tr("Error history (%1)").arg(errors.isArray() ? errors.array().size() : 0));
    m_audit->setRowCount(static_cast<int>(a.audit.size()));
    for (int i = 0; i < static_cast<int>(a.audit.size()); ++i) {
        const auto& e = a.audit[static_cast<std::size_t>(i)];
        m_audit->setItem(i, 0, new QTableWidgetItem(formatTimeUs(e.atUs)));
        m_audit->setItem(i, 1, new QTableWidgetItem(text(e.action)));
        m_audit->setItem(i, 2, new QTableWidgetItem(QStringLiteral("%1 (%2)").arg(text(e.dbRole), text(e.osUser))));
        auto* reason = new QTableWidgetItem(text(e.reason));
        reason->setToolTip(text(e.reason));
        m_audit->setItem(i, 3, reason);
    }
    m_tabs->setTabText(2, a.auditError.isEmpty() ? tr("Audit (%1)").arg(a.audit.size()) : tr("Audit (unreadable)"));
    m_conflicts->setText(d.conflicts
            ? tr("<span style='color:#b01c1c'>%1 digest conflict(s)</span>, last %2 with %3")
                  .arg(d.conflicts->count)
                  .arg(formatTimeUs(d.conflicts->lastAtUs), text(d.conflicts->lastDigest).toHtmlEscaped())
            : QString());
    m_conflicts->setVisible(d.conflicts.has_value());
}

void TaskDetailPane::updateLease()
{
    if (!m_leaseLeftMs) {
        m_lease->setText(m_status->text().startsWith(QLatin1String("processing")) ? tr("none (expired)") : QString());
        return;
    }
    const auto left = *m_leaseLeftMs - m_sinceLoad.elapsed();
    m_lease->setText(left > 0 ? tr("%1 left").arg(formatDurationMs(left))
                              : tr("<span style='color:#b01c1c'>expired %1 ago</span>").arg(formatDurationMs(-left)));
}

} // namespace idem::console
