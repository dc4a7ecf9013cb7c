#include "views/snapshotauditpage.h"
#include "views/theme.h"

#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "models/snapshotauditmodel.h"
#include "models/snapshottaskmodel.h"
#include "views/auditentryview.h"

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
    , m_entry(new AuditEntryView(QStringLiteral("snapshotAudit")))
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
    theme::followTone(m_check, check.ok ? theme::Tone::Good : theme::Tone::Bad, !check.ok);

    m_model->setSnapshot(m_snapshot);
    m_view->setObjectName(QStringLiteral("snapshotAuditTable"));
    AuditEntryView::setUpTable(m_view, m_model,
        { { SnapshotAuditModel::IdColumn, 50 }, { SnapshotAuditModel::AtColumn, 150 },
            { SnapshotAuditModel::KeyColumn, 220 }, { SnapshotAuditModel::ActionColumn, 70 },
            { SnapshotAuditModel::ActorColumn, 200 } });
    auto* split = AuditEntryView::split(m_view, m_entry);

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
    m_entry->showEntry(
        tr("<b>#%1 %2</b> on <tt>%3</tt> at %4 UTC by %5 (OS user %6, host %7, %8)")
            .arg(e.id)
            .arg(text(e.action).toHtmlEscaped(), text(e.key).toHtmlEscaped(), snapshotTimeCell(e.at),
                text(e.dbRole).toHtmlEscaped(), text(e.osUser).toHtmlEscaped(), text(e.clientHost).toHtmlEscaped(),
                QString::fromStdString(e.application.value_or(std::string())).toHtmlEscaped()),
        text(e.reason), e.beforeImage, e.afterImage);
}

} // namespace idem::console
