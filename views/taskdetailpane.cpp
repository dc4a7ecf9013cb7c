#include "views/taskdetailpane.h"
#include "models/durationtext.h"
#include "models/fieldtext.h"
#include "views/theme.h"

#include <QCoreApplication>

#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
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
#include <algorithm>

#include "models/redrivewatch.h"
#include "models/taskbrowsermodel.h"
#include "models/visibletext.h"

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
    QString titleOf(const idem::TaskRow& r)
    {
        return TaskDetailPane::tr("<b>%1</b> task, updated %2").arg(text(r.status), formatTimeUs(r.updatedAtUs));
    }
} // namespace

TaskDetailPane::TaskDetailPane(TaskDetailLoader* loader, QWidget* parent)
    : QWidget(parent)
    , m_loader(loader)
    , m_view(new TaskRecordView(false, tr("At"), this))
    , m_save(new QPushButton(tr("Save full result…")))
    , m_cancelSave(new QPushButton(tr("Stop")))
    , m_saveProgress(new QProgressBar)
    , m_conflicts(new QLabel)
    , m_redrivePage(new QWidget)
    , m_requestInfo(new QLabel)
    , m_requestView(new QPlainTextEdit)
    , m_redriveTable(new QTableWidget(0, 7))
    , m_tick(new QTimer(this))
{
    m_save->setObjectName(QStringLiteral("saveResultButton"));
    m_cancelSave->setVisible(false);
    m_saveProgress->setVisible(false);
    m_conflicts->setObjectName(QStringLiteral("detailConflicts"));
    m_conflicts->setWordWrap(true);
    m_view->form()->addRow(m_conflicts);

    auto* saveRow = new QHBoxLayout;
    saveRow->addWidget(m_view->resultInfo(), 1);
    saveRow->addWidget(m_saveProgress);
    saveRow->addWidget(m_cancelSave);
    saveRow->addWidget(m_save);
    m_view->addTabs(saveRow, 0);
    // Issue 42: the key's re-executions, followed live, and its stored request.
    m_requestInfo->setObjectName(QStringLiteral("detailRequestInfo"));
    m_requestInfo->setWordWrap(true);
    m_requestInfo->setTextFormat(Qt::PlainText);
    m_requestInfo->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_requestView->setObjectName(QStringLiteral("detailRequest"));
    m_requestView->setReadOnly(true);
    m_requestView->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_requestView->setFont(QFont(QStringLiteral("monospace")));
    m_requestView->setMaximumHeight(120);
    m_requestView->hide();
    m_redriveTable->setObjectName(QStringLiteral("detailRedrive"));
    m_redriveTable->horizontalHeader()->setStretchLastSection(true);
    m_redriveTable->verticalHeader()->setVisible(false);
    m_redriveTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_redriveTable->setWordWrap(false);
    m_redriveTable->verticalHeader()->setDefaultSectionSize(m_redriveTable->fontMetrics().height() + 6);
    auto* redriveLayout = new QVBoxLayout(m_redrivePage);
    redriveLayout->setContentsMargins(0, 0, 0, 0);
    redriveLayout->addWidget(m_redriveTable, 1);
    redriveLayout->addWidget(m_requestInfo);
    redriveLayout->addWidget(m_requestView);
    m_redriveTab = m_view->tabs()->addTab(m_redrivePage, QString());
    m_view->install(this);
    connect(loader->redrive(), &KeyRedriveWatch::changed, this, &TaskDetailPane::showRedrive);

    m_tick->setInterval(1000);
    connect(m_tick, &QTimer::timeout, this, &TaskDetailPane::updateLease);
    // Rich text with a tone in it: drawn again in the new theme's colours.
    theme::onChange(this, [this] {
        if (const auto& c = m_loader->current(); c && c->key == m_pendingKey && c->detail)
            showConflicts(*c->detail);
        updateLease();
    });
    connect(loader, &TaskDetailLoader::loaded, this, &TaskDetailPane::onLoaded);
    connect(loader, &TaskDetailLoader::failed, this,
        [this](const QString& message) { m_view->title()->setText(tr("Could not read the task: %1").arg(message)); });
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
        m_view->resultInfo()->setText(message);
    });
    clearDetail();
}

TaskDetailPane::~TaskDetailPane() = default;

QString TaskDetailPane::shownKey() const
{
    return m_loader->current() && m_loader->current()->detail ? m_loader->current()->key : QString();
}

void TaskDetailPane::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        m_save->setText(tr("Save full result…"));
        m_cancelSave->setText(tr("Stop"));
        showRedrive();
        if (m_pendingKey.isEmpty())
            m_view->title()->setText(tr("Select a task to see its record."));
        else if (const auto& c = m_loader->current(); c && c->key == m_pendingKey && c->detail)
            m_view->title()->setText(titleOf(c->detail->row));
        updateLease();
    }
    QWidget::changeEvent(event);
}

void TaskDetailPane::clearDetail()
{
    m_pendingKey.clear();
    m_loader->clear();
    m_view->title()->setText(tr("Select a task to see its record."));
    m_view->clear();
    m_conflicts->clear();
    showRedrive();
    m_save->setEnabled(false);
    m_leaseLeftMs.reset();
    m_tick->stop();
}

void TaskDetailPane::showKey(const QString& key)
{
    m_pendingKey = key;
    m_view->title()->setText(tr("Loading…"));
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
    m_view->resultInfo()->setText(tr("Saving to %1…").arg(path));
    m_loader->saveResult(key, path);
}

void TaskDetailPane::onLoaded(const TaskDetailAnswer& a)
{
    if (a.key != m_pendingKey)
        return;
    if (!a.detail) {
        clearDetail();
        m_view->title()->setText(tr("The task is no longer in the table."));
        return;
    }
    const auto& d = *a.detail;
    const auto& r = d.row;
    m_view->title()->setText(titleOf(r));
    m_view->showKey(a.key);
    m_view->showDigest(text(r.requestHash));
    m_view->showStatus(r.status, r.errorClass == "unknown");
    m_view->showAttempts(r.attempts, r.maxAttempts);
    m_view->token()->setText(d.ownerToken.empty() ? tr("(none)") : text(d.ownerToken));
    m_view->next()->setText(r.nextAttemptAtUs ? formatTimeUs(*r.nextAttemptAtUs) : QString());
    m_view->errorClass()->setText(text(r.errorClass));
    m_view->errorMessage()->setPlainText(text(r.errorMessage));
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
        m_view->showNoResult();
        m_save->setEnabled(false);
    } else {
        m_view->result()->setPlainText(text(d.resultPreview));
        m_view->resultInfo()->setText(d.resultTruncated ? tr("Result: %1; showing the first %2 characters.")
                                                              .arg(sizeText(d.resultBytes))
                                                              .arg(d.resultPreview.size())
                                                        : tr("Result: %1.").arg(sizeText(d.resultBytes)));
        m_save->setEnabled(!m_loader->saving());
    }
    m_view->showErrorHistory(d.errorsJson);
    m_view->setAuditRowCount(static_cast<int>(a.audit.size()));
    for (int i = 0; i < static_cast<int>(a.audit.size()); ++i) {
        const auto& e = a.audit[static_cast<std::size_t>(i)];
        m_view->setAuditRow(i, formatTimeUs(e.atUs), text(e.action),
            QStringLiteral("%1 (%2)").arg(text(e.dbRole), text(e.osUser)), text(e.reason));
    }
    m_view->setAuditCount(a.auditError.isEmpty() ? int(a.audit.size()) : TaskRecordView::unreadable);
    showConflicts(d);
}

void TaskDetailPane::showConflicts(const idem::TaskDetail& d)
{
    m_conflicts->setText(d.conflicts
            ? tr("<span style='%4'>%1 digest conflict(s)</span>, last %2 with %3")
                  .arg(QString::number(d.conflicts->count), formatTimeUs(d.conflicts->lastAtUs),
                      text(d.conflicts->lastDigest).toHtmlEscaped(), theme::toneCss(theme::Tone::Bad))
            : QString());
    // Schema v32: which fields of the last conflicting request differed (names only).
    if (d.fields) {
        const QString fields = fieldComparisonHtml(*d.fields);
        if (!fields.isEmpty())
            m_conflicts->setText(m_conflicts->text().isEmpty() ? fields
                                                               : m_conflicts->text() + QStringLiteral("<br>") + fields);
    }
    m_conflicts->setVisible(!m_conflicts->text().isEmpty());
}

void TaskDetailPane::showRedrive()
{
    auto* watch = m_loader->redrive();
    const auto& r = watch->current();
    m_redriveTable->setHorizontalHeaderLabels(
        { tr("Requested"), tr("State"), tr("Worker"), tr("Tries"), tr("Finished"), tr("Requested by"), tr("Detail") });
    const bool shown = !m_pendingKey.isEmpty() && watch->key() == m_pendingKey;
    if (!shown || !r) {
        m_redriveTable->setRowCount(0);
        m_requestView->hide();
        m_requestView->clear();
        m_requestInfo->setText(!shown ? QString()
                : !watch->error().isEmpty() ? tr("Could not read its re-executions: %1").arg(watch->error())
                                            : tr("Reading its re-executions…"));
        m_view->tabs()->setTabText(m_redriveTab, tr("Re-execution"));
        return;
    }
    m_redriveTable->setRowCount(int(r->items.size()));
    for (int row = 0; row < int(r->items.size()); ++row) {
        const auto& i = r->items[std::size_t(row)];
        const QString cells[] = { isoTimeText(i.requestedAt), redriveStateLabel(i.state), visibleText(i.worker),
            QString::number(i.tries), isoTimeText(i.finishedAt),
            i.jobId ? tr("%1, job %2").arg(visibleText(i.requestedBy)).arg(*i.jobId) : visibleText(i.requestedBy),
            visibleText(i.detail) };
        for (int c = 0; c < 7; ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c == 6)
                item->setToolTip(visibleLines(QString::fromStdString(i.detail)));
            m_redriveTable->setItem(row, c, item);
        }
    }
    if (!r->items.empty())
        m_redriveTable->resizeColumnsToContents();
    m_requestInfo->setText(storedRequestText(r->request));
    if (r->request.readable) {
        // As the database returns it (redacted fields already "[redacted]"), indented, escaped.
        const auto doc = QJsonDocument::fromJson(QByteArray::fromStdString(r->request.request));
        const QString text = doc.isNull() ? QString::fromStdString(r->request.request)
                                          : QString::fromUtf8(doc.toJson(QJsonDocument::Indented));
        if (m_requestView->toPlainText() != visibleLines(text))
            m_requestView->setPlainText(visibleLines(text));
        m_requestView->show();
    } else {
        m_requestView->hide();
        m_requestView->clear();
    }
    const int open = int(std::count_if(r->items.begin(), r->items.end(), redriveItemOpen));
    m_view->tabs()->setTabText(m_redriveTab,
        r->items.empty() ? tr("Re-execution")
            : open > 0   ? tr("Re-execution (%1, %2 open)").arg(r->items.size()).arg(open)
                         : tr("Re-execution (%1)").arg(r->items.size()));
}

void TaskDetailPane::updateLease()
{
    if (!m_leaseLeftMs) {
        // Only a processing row holds a lease; the row says so rather than stay blank.
        m_view->lease()->setText(m_view->status()->text().startsWith(QLatin1String("processing")) ? tr("none (expired)")
                : m_view->status()->text().isEmpty()                                              ? QString()
                                                                                                  : tr("none (not processing)"));
        return;
    }
    const auto left = *m_leaseLeftMs - m_sinceLoad.elapsed();
    m_view->lease()->setText(left > 0
            ? tr("%1 left").arg(durationText(double(left)))
            : tr("<span style='%2'>expired %1 ago</span>").arg(durationText(double(-left)), theme::toneCss(theme::Tone::Bad)));
}

} // namespace idem::console
