#include "views/snapshotauditpage.h"

#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include "models/auditmodel.h"
#include "models/snapshotauditmodel.h"
#include "models/snapshottaskmodel.h"

namespace idem::console {

namespace {
    QString text(const std::string& s) { return QString::fromStdString(s); }
} // namespace

SnapshotAuditPage::SnapshotAuditPage(SharedSnapshot snapshot, QWidget* parent)
    : QWidget(parent)
    , m_snapshot(std::move(snapshot))
    , m_model(new SnapshotAuditModel(this))
    , m_head(new QLabel)
    , m_check(new QLabel)
    , m_view(new QTableView)
    , m_entryTitle(new QLabel(tr("Select an entry to see what it changed.")))
    , m_reason(new QPlainTextEdit)
    , m_diff(new QTableWidget(0, 3))
{
    setObjectName(QStringLiteral("snapshotAuditPage"));
    const auto& a = m_snapshot->data.audit;
    m_head->setObjectName(QStringLiteral("snapshotAuditHead"));
    m_head->setWordWrap(true);
    m_head->setTextInteractionFlags(Qt::TextSelectableByMouse);
    const QString bound = a.truncated
        ? tr("the newest %1 of %2 entries (truncated at the limit of %3)").arg(a.tail.size()).arg(a.total).arg(a.limit)
        : tr("all %1 of %2 entries (limit %3)").arg(a.tail.size()).arg(a.total).arg(a.limit);
    m_head->setText(a.headHash
            ? tr("Audit tail: %1. Chain head at the snapshot: entry #%2, hash <tt>%3</tt>. Compare it with the live "
                 "table's to show that nothing was appended or rewritten since.")
                  .arg(bound)
                  .arg(a.headId.value_or(0))
                  .arg(text(*a.headHash))
            : tr("Audit tail: %1. The audit was empty: no chain head.").arg(bound));
    const TailCheck check = checkAuditTail(m_snapshot->data);
    m_check->setObjectName(QStringLiteral("snapshotAuditCheck"));
    m_check->setWordWrap(true);
    m_check->setText(check.text);
    m_check->setStyleSheet(
        check.ok ? QStringLiteral("color:#1d7a2e") : QStringLiteral("color:#b01c1c; font-weight:bold"));

    m_model->setSnapshot(m_snapshot);
    m_view->setObjectName(QStringLiteral("snapshotAuditTable"));
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->setVisible(false);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setWordWrap(false);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->setColumnWidth(SnapshotAuditModel::IdColumn, 50);
    m_view->setColumnWidth(SnapshotAuditModel::AtColumn, 150);
    m_view->setColumnWidth(SnapshotAuditModel::KeyColumn, 220);
    m_view->setColumnWidth(SnapshotAuditModel::ActionColumn, 70);
    m_view->setColumnWidth(SnapshotAuditModel::ActorColumn, 200);
    m_entryTitle->setObjectName(QStringLiteral("snapshotAuditEntryTitle"));
    m_entryTitle->setWordWrap(true);
    m_entryTitle->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_reason->setObjectName(QStringLiteral("snapshotAuditReason"));
    m_reason->setReadOnly(true);
    m_reason->setMaximumHeight(60);
    m_diff->setObjectName(QStringLiteral("snapshotAuditDiff"));
    m_diff->setHorizontalHeaderLabels({ tr("Field"), tr("Before"), tr("After") });
    m_diff->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_diff->verticalHeader()->setVisible(false);
    m_diff->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_diff->setWordWrap(false);
    m_diff->verticalHeader()->setDefaultSectionSize(m_diff->fontMetrics().height() + 6);

    auto* entry = new QWidget;
    auto* el = new QVBoxLayout(entry);
    el->setContentsMargins(0, 0, 0, 0);
    el->addWidget(m_entryTitle);
    el->addWidget(m_reason);
    el->addWidget(m_diff, 1);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_view);
    split->addWidget(entry);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_head);
    layout->addWidget(m_check);
    layout->addWidget(split, 1);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &SnapshotAuditPage::onSelection);
}

SnapshotAuditPage::~SnapshotAuditPage() = default;

void SnapshotAuditPage::onSelection()
{
    const auto rows = m_view->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return;
    const auto& e = m_model->entry(rows.first().row());
    m_entryTitle->setText(
        tr("<b>#%1 %2</b> on <tt>%3</tt> at %4 UTC by %5 (OS user %6, host %7, %8)")
            .arg(e.id)
            .arg(text(e.action).toHtmlEscaped(), text(e.key).toHtmlEscaped(), snapshotTimeCell(e.at),
                text(e.dbRole).toHtmlEscaped(), text(e.osUser).toHtmlEscaped(), text(e.clientHost).toHtmlEscaped(),
                QString::fromStdString(e.application.value_or(std::string())).toHtmlEscaped()));
    m_reason->setPlainText(text(e.reason));
    const auto diff = auditDiff(e.beforeImage, e.afterImage);
    m_diff->setRowCount(static_cast<int>(diff.size()));
    QFont bold = m_diff->font();
    bold.setBold(true);
    for (int i = 0; i < diff.size(); ++i) {
        const auto& d = diff[i];
        QTableWidgetItem* items[]
            = { new QTableWidgetItem(d.field), new QTableWidgetItem(d.before), new QTableWidgetItem(d.after) };
        for (int c = 0; c < 3; ++c) {
            items[c]->setToolTip(items[c]->text());
            if (d.changed) {
                items[c]->setBackground(QColor(0xff, 0xf0, 0xb3));
                items[c]->setFont(bold);
            }
            items[c]->setData(Qt::UserRole, d.changed);
            m_diff->setItem(i, c, items[c]);
        }
    }
}

} // namespace idem::console
