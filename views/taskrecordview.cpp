#include "views/taskrecordview.h"

#include <QEvent>

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

#include "models/visibletext.h"

namespace idem::console {

namespace {
    QLineEdit* field(const char* name)
    {
        auto* e = new QLineEdit;
        e->setReadOnly(true);
        e->setFrame(false);
        e->setObjectName(QString::fromLatin1(name));
        return e;
    }
} // namespace

TaskRecordView::TaskRecordView(bool withTimes, const QString& auditAtHeader, QObject* parent)
    : QObject(parent)
    , m_title(new QLabel)
    , m_key(field("detailKey"))
    , m_tenant(field("detailTenant"))
    , m_operation(field("detailOperation"))
    , m_business(field("detailBusinessId"))
    , m_digest(new QPlainTextEdit)
    , m_status(field("detailStatus"))
    , m_attempts(field("detailAttempts"))
    , m_lease(new QLabel)
    , m_token(field("detailToken"))
    , m_next(field("detailNextAttempt"))
    , m_times(withTimes ? field("detailTimes") : nullptr)
    , m_errorClass(field("detailErrorClass"))
    , m_errorMessage(new QPlainTextEdit)
    , m_tabs(new QTabWidget)
    , m_result(new QPlainTextEdit)
    , m_resultInfo(new QLabel)
    , m_errors(new QPlainTextEdit)
    , m_audit(new QTableWidget(0, 4))
    , m_form(new QFormLayout)
{
    m_title->setObjectName(QStringLiteral("detailTitle"));
    m_digest->setObjectName(QStringLiteral("detailDigest"));
    m_digest->setReadOnly(true);
    m_digest->setFrameShape(QFrame::NoFrame);
    m_digest->setWordWrapMode(QTextOption::WrapAnywhere);
    m_digest->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_digest->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_digest->document()->setDocumentMargin(1);
    m_digest->setFixedHeight(2 * m_digest->fontMetrics().lineSpacing() + 6);
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
    m_audit->setHorizontalHeaderLabels({ auditAtHeader, tr("Action"), tr("Actor"), tr("Reason") });
    m_audit->horizontalHeader()->setStretchLastSection(true);
    m_audit->verticalHeader()->setVisible(false);
    m_audit->setEditTriggers(QAbstractItemView::NoEditTriggers);

    m_form->setContentsMargins(0, 0, 0, 0);
    m_form->setVerticalSpacing(2);
    addRow(QT_TR_NOOP("Key"), m_key);
    auto* parts = new QHBoxLayout;
    parts->addWidget(m_tenant);
    parts->addWidget(m_operation);
    parts->addWidget(m_business, 2);
    addRow(QT_TR_NOOP("Tenant / op / id"), parts);
    addRow(QT_TR_NOOP("Digest"), m_digest);
    addRow(QT_TR_NOOP("Status"), m_status);
    addRow(QT_TR_NOOP("Attempts"), m_attempts);
    addRow(QT_TR_NOOP("Lease"), m_lease);
    addRow(QT_TR_NOOP("Owner token"), m_token);
    addRow(QT_TR_NOOP("Next attempt"), m_next);
    if (m_times)
        addRow(QT_TR_NOOP("Created / updated"), m_times);
    addRow(QT_TR_NOOP("Error class"), m_errorClass);
    addRow(QT_TR_NOOP("Error"), m_errorMessage);
}

void TaskRecordView::addRow(const char* title, QWidget* field)
{
    auto* label = new QLabel(tr(title));
    m_form->addRow(label, field);
    m_rowTitles.emplace_back(label, title);
}

void TaskRecordView::addRow(const char* title, QLayout* field)
{
    auto* label = new QLabel(tr(title));
    m_form->addRow(label, field);
    m_rowTitles.emplace_back(label, title);
}

TaskRecordView::~TaskRecordView() = default;

void TaskRecordView::addTabs(QLayout* resultHeader, int resultStretch)
{
    auto* resultPage = new QWidget;
    auto* rl = new QVBoxLayout(resultPage);
    rl->setContentsMargins(0, 0, 0, 0);
    if (resultHeader)
        rl->addLayout(resultHeader);
    else
        rl->addWidget(m_resultInfo);
    rl->addWidget(m_result, resultStretch);
    m_tabs->addTab(resultPage, QString());
    m_tabs->addTab(m_errors, QString());
    m_tabs->addTab(m_audit, QString());
    m_tabs->installEventFilter(this);
    retranslateTabs();
}

bool TaskRecordView::eventFilter(QObject* watched, QEvent* event)
{
    // The tab texts carry counts: they are rebuilt from the counts, in the language now in force.
    if (watched == m_tabs && event->type() == QEvent::LanguageChange)
        retranslateTabs();
    return QObject::eventFilter(watched, event);
}

void TaskRecordView::retranslateTabs()
{
    for (const auto& [label, source] : m_rowTitles)
        label->setText(tr(source));
    if (m_tabs->count() < 3)
        return;
    m_tabs->setTabText(0, tr("Result"));
    m_tabs->setTabText(1, m_errorCount < 0 ? tr("Error history") : tr("Error history (%1)").arg(m_errorCount));
    m_tabs->setTabText(2,
        m_auditCount == unreadable ? tr("Audit (unreadable)")
            : m_auditCount < 0     ? tr("Audit")
                                   : tr("Audit (%1)").arg(m_auditCount));
}

void TaskRecordView::setAuditCount(int count)
{
    m_auditCount = count;
    retranslateTabs();
}

void TaskRecordView::install(QWidget* pane)
{
    auto* layout = new QVBoxLayout(pane);
    layout->setContentsMargins(4, 0, 0, 0);
    layout->addWidget(m_title);
    layout->addLayout(m_form);
    layout->addWidget(m_tabs, 1);
}

void TaskRecordView::clear()
{
    for (auto* e :
        { m_key, m_tenant, m_operation, m_business, m_status, m_attempts, m_token, m_next, m_errorClass })
        e->clear();
    m_digest->clear();
    if (m_times)
        m_times->clear();
    m_lease->clear();
    m_errorMessage->clear();
    m_result->clear();
    m_resultInfo->clear();
    m_errors->clear();
    m_audit->setRowCount(0);
    // The counts belonged to the record that was shown: with none shown, none is right.
    m_errorCount = -1;
    m_auditCount = -1;
    retranslateTabs();
}

void TaskRecordView::showKey(const QString& key)
{
    // Byte for byte, with what would hide or reorder it shown as escapes (\n, \u202E).
    m_key->setText(visibleText(key));
    m_key->setCursorPosition(0);
    m_key->setToolTip(m_key->text());
    const auto parts = key.split(QLatin1Char(':'));
    m_tenant->setText(visibleText(parts.value(0)));
    m_operation->setText(parts.size() > 1 ? visibleText(parts.value(1)) : QString());
    m_business->setText(parts.size() > 2 ? visibleText(key.section(QLatin1Char(':'), 2)) : QString());
    m_business->setCursorPosition(0);
}

void TaskRecordView::showDigest(const QString& digest) { m_digest->setPlainText(digest); }

void TaskRecordView::showStatus(const std::string& status, bool errorClassUnknown)
{
    m_status->setText(status == "retryable_failed" && errorClassUnknown
            ? tr("retryable_failed (uncertain outcome: retry only with the same key)")
            : QString::fromStdString(status));
}

void TaskRecordView::showAttempts(qint64 attempts, qint64 maxAttempts)
{
    m_attempts->setText(tr("%1 of %2").arg(attempts).arg(maxAttempts));
}

void TaskRecordView::showNoResult()
{
    m_result->clear();
    m_resultInfo->setText(tr("No result stored."));
}

void TaskRecordView::showErrorHistory(const std::string& errorsJson)
{
    const auto errors = QJsonDocument::fromJson(QByteArray::fromStdString(errorsJson));
    m_errors->setPlainText(errors.isNull() ? QString::fromStdString(errorsJson)
                                           : QString::fromUtf8(errors.toJson(QJsonDocument::Indented)));
    m_errorCount = errors.isArray() ? int(errors.array().size()) : 0;
    retranslateTabs();
}

void TaskRecordView::setAuditRowCount(int rows) { m_audit->setRowCount(rows); }

void TaskRecordView::setAuditRow(
    int row, const QString& at, const QString& action, const QString& actor, const QString& reason)
{
    m_audit->setItem(row, 0, new QTableWidgetItem(at));
    m_audit->setItem(row, 1, new QTableWidgetItem(action));
    m_audit->setItem(row, 2, new QTableWidgetItem(visibleText(actor)));
    auto* item = new QTableWidgetItem(visibleText(reason));
    item->setToolTip(visibleLines(reason));
    m_audit->setItem(row, 3, item);
}

} // namespace idem::console
