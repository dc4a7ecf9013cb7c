#include "views/snapshottaskspage.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include "models/snapshottaskmodel.h"
#include "views/snapshottaskpane.h"

namespace idem::console {

namespace {
    QString text(const std::string& s) { return QString::fromStdString(s); }

    // Bound and count as a sentence: "3 of 3 rows", "1,000 of 48,211 rows (truncated at the limit of 1,000)".
    QString boundText(std::size_t shown, std::int64_t total, int limit, bool truncated)
    {
        const QLocale l;
        QString s
            = SnapshotTasksPage::tr("%1 of %2 rows").arg(l.toString(qlonglong(shown)), l.toString(qlonglong(total)));
        if (truncated)
            s += SnapshotTasksPage::tr(" (truncated at the limit of %1)").arg(l.toString(limit));
        else
            s += SnapshotTasksPage::tr(" (limit %1)").arg(l.toString(limit));
        return s;
    }
} // namespace

QString SnapshotTasksPage::setTitle(const QString& name)
{
    if (name == QLatin1String("expired_leases"))
        return tr("Expired leases");
    if (name == QLatin1String("longest_running"))
        return tr("Longest running");
    if (name == QLatin1String("failed"))
        return tr("Failed");
    if (name == QLatin1String("uncertain"))
        return tr("Uncertain outcomes");
    if (name == QLatin1String("waiting_to_retry"))
        return tr("Waiting to retry");
    if (name == QLatin1String(conflictsSet))
        return tr("Recent digest conflicts");
    return name;
}

SnapshotTasksPage::SnapshotTasksPage(SharedSnapshot snapshot, QWidget* parent)
    : QWidget(parent)
    , m_snapshot(std::move(snapshot))
    , m_sets(new QListWidget)
    , m_info(new QLabel)
    , m_filter(new QLineEdit)
    , m_stack(new QStackedWidget)
    , m_table(new QTableView)
    , m_conflicts(new QTableWidget(0, 4))
    , m_model(new SnapshotTaskModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_detail(new SnapshotTaskPane)
{
    setObjectName(QStringLiteral("snapshotTasksPage"));
    const auto& d = m_snapshot->data;
    const QDateTime at = snapshotTakenAt(d);
    m_takenAtMs = at.isValid() ? at.toMSecsSinceEpoch() : 0;

    m_sets->setObjectName(QStringLiteral("snapshotRowSets"));
    for (const auto& set : d.rowSets) {
        auto* item = new QListWidgetItem(tr("%1\n%2 of %3%4")
                                             .arg(setTitle(text(set.name)))
                                             .arg(set.rows.size())
                                             .arg(set.total)
                                             .arg(set.truncated ? tr(" (truncated)") : QString()));
        item->setData(Qt::UserRole, text(set.name));
        item->setToolTip(text(set.description));
        m_sets->addItem(item);
    }
    auto* conflicts = new QListWidgetItem(
        tr("%1\n%2 counter rows").arg(setTitle(QLatin1String(conflictsSet))).arg(d.conflicts.rows.size()));
    conflicts->setData(Qt::UserRole, QString::fromLatin1(conflictsSet));
    conflicts->setToolTip(text(d.conflicts.description));
    m_sets->addItem(conflicts);
    m_sets->setMaximumWidth(220);
    m_sets->setSpacing(3);

    m_info->setObjectName(QStringLiteral("snapshotSetInfo"));
    m_info->setWordWrap(true);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_filter->setObjectName(QStringLiteral("snapshotKeyFilter"));
    m_filter->setPlaceholderText(tr("filter these rows by key (substring)"));
    m_filter->setClearButtonEnabled(true);

    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(SnapshotTaskModel::SortRole);
    m_proxy->setFilterKeyColumn(SnapshotTaskModel::KeyColumn);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_table->setObjectName(QStringLiteral("snapshotTaskTable"));
    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(-1, Qt::AscendingOrder); // the set's own order until a header is clicked
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setWordWrap(false);
    m_table->setColumnWidth(SnapshotTaskModel::KeyColumn, 190);
    m_table->setColumnWidth(SnapshotTaskModel::StatusColumn, 100);
    m_table->setColumnWidth(SnapshotTaskModel::AttemptsColumn, 65);
    m_table->setColumnWidth(SnapshotTaskModel::LeaseColumn, 170);
    for (const int c :
        { SnapshotTaskModel::NextAttemptColumn, SnapshotTaskModel::CreatedColumn, SnapshotTaskModel::UpdatedColumn })
        m_table->setColumnWidth(c, 140);

    m_conflicts->setObjectName(QStringLiteral("snapshotConflictsTable"));
    m_conflicts->setHorizontalHeaderLabels({ tr("Minute (UTC)"), tr("Tenant"), tr("Operation"), tr("Conflicts") });
    m_conflicts->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_conflicts->verticalHeader()->setVisible(false);
    m_conflicts->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_conflicts->setRowCount(static_cast<int>(d.conflicts.rows.size()));
    for (int i = 0; i < m_conflicts->rowCount(); ++i) {
        const auto& c = d.conflicts.rows[static_cast<std::size_t>(i)];
        m_conflicts->setItem(i, 0, new QTableWidgetItem(snapshotTimeCell(c.bucket)));
        m_conflicts->setItem(i, 1, new QTableWidgetItem(text(c.tenant)));
        m_conflicts->setItem(i, 2, new QTableWidgetItem(text(c.operation)));
        m_conflicts->setItem(i, 3, new QTableWidgetItem(QLocale().toString(qlonglong(c.n))));
    }

    m_stack->addWidget(m_table);
    m_stack->addWidget(m_conflicts);
    auto* middle = new QWidget;
    auto* ml = new QVBoxLayout(middle);
    ml->setContentsMargins(0, 0, 0, 0);
    ml->addWidget(m_info);
    ml->addWidget(m_filter);
    ml->addWidget(m_stack, 1);

    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_sets);
    split->addWidget(middle);
    split->addWidget(m_detail);
    split->setStretchFactor(0, 0);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 2);
    split->setSizes({ 180, 660, 440 });
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    connect(m_sets, &QListWidget::currentRowChanged, this, &SnapshotTasksPage::onSet);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &SnapshotTasksPage::onRow);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    if (m_sets->count() > 0)
        m_sets->setCurrentRow(0);
}

SnapshotTasksPage::~SnapshotTasksPage() = default;

bool SnapshotTasksPage::selectSet(const QString& name)
{
    for (int i = 0; i < m_sets->count(); ++i) {
        if (m_sets->item(i)->data(Qt::UserRole).toString() == name) {
            m_sets->setCurrentRow(i);
            return true;
        }
    }
    return false;
}

QString SnapshotTasksPage::currentSet() const
{
    const auto* item = m_sets->currentItem();
    return item ? item->data(Qt::UserRole).toString() : QString();
}

void SnapshotTasksPage::onSet()
{
    const QString name = currentSet();
    m_detail->clearDetail();
    m_filter->clear();
    const auto& d = m_snapshot->data;
    if (name == QLatin1String(conflictsSet)) {
        m_model->setRowSet(nullptr, {});
        m_stack->setCurrentWidget(m_conflicts);
        m_filter->setVisible(false);
        std::int64_t sum = 0;
        for (const auto& c : d.conflicts.rows)
            sum += c.n;
        m_info->setText(tr("<b>%1</b>: %2. A conflict changes no row, so these per-minute counters are its only "
                           "trace: %3 conflicts in %4 counter rows (of %5%6).")
                            .arg(setTitle(name), text(d.conflicts.description).toHtmlEscaped(), QString::number(sum),
                                QString::number(d.conflicts.rows.size()), QString::number(d.conflicts.total),
                                d.conflicts.truncated ? tr(", truncated") : QString()));
        return;
    }
    m_stack->setCurrentWidget(m_table);
    m_filter->setVisible(true);
    m_model->setRowSet(m_snapshot, name);
    const auto* set = m_model->rowSet();
    if (!set) {
        m_info->clear();
        return;
    }
    m_info->setText(tr("<b>%1</b>: %2.<br>Order: %3. %4.")
                        .arg(setTitle(name), text(set->description).toHtmlEscaped(), text(set->order).toHtmlEscaped(),
                            boundText(set->rows.size(), set->total, set->limit, set->truncated)));
}

void SnapshotTasksPage::onRow()
{
    const auto rows = m_table->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return;
    const int row = m_proxy->mapToSource(rows.first()).row();
    const auto& task = m_model->task(row);
    std::vector<const idem::SnapshotAuditEntry*> audit;
    for (const auto& e : m_snapshot->data.audit.tail)
        if (e.key == task.key)
            audit.push_back(&e);
    m_detail->showRow(task, m_takenAtMs, audit, m_snapshot->data.redacted);
}

} // namespace idem::console
