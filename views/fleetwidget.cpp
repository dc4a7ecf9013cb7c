#include "views/fleetwidget.h"

#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "models/fleetmodel.h"

namespace idem::console {

FleetWidget::FleetWidget(FleetModel* model, QWidget* parent)
    : QWidget(parent)
    , m_model(model)
    , m_summary(new QLabel)
    , m_hint(new QLabel)
    , m_table(new QTableView)
{
    setObjectName(QStringLiteral("fleetPage"));
    m_summary->setObjectName(QStringLiteral("fleetSummary"));
    QFont f = m_summary->font();
    f.setBold(true);
    m_summary->setFont(f);
    m_hint->setForegroundRole(QPalette::PlaceholderText);
    m_hint->setWordWrap(true);
    m_table->setObjectName(QStringLiteral("fleetTable"));
    m_table->setModel(model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(true);
    m_table->setAlternatingRowColors(false);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->horizontalHeader()->setSectionResizeMode(FleetModel::HealthColumn, QHeaderView::Stretch);
    m_table->setColumnWidth(FleetModel::DatabaseColumn, 130);
    m_table->setColumnWidth(FleetModel::EnvironmentColumn, 100);
    m_table->setColumnWidth(FleetModel::NodeColumn, 340);
    m_table->setColumnWidth(FleetModel::CostColumn, 190);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_hint);
    layout->addWidget(m_table, 1);

    connect(m_table, &QTableView::activated, this, [this](const QModelIndex& index) {
        if (index.isValid())
            Q_EMIT openRequested(index.row());
    });
    connect(model, &FleetModel::changed, this, &FleetWidget::refresh);
    connect(model, &QAbstractItemModel::modelReset, this, &FleetWidget::refresh);
    refresh();
}

QString FleetWidget::summaryText() const { return m_summary->text(); }

void FleetWidget::refresh()
{
    m_summary->setText(m_model->rowCount() > 0
            ? m_model->summaryText()
            : tr("No connection profiles yet: save one in the connection dialog (Connection > Connect…), then "
                 "Fleet > Reload profiles."));
    m_hint->setText(tr("Each database is read as one console's dashboard reads it: one connection, one "
                       "statement per tick. Double-click a row to open that database in a window of its own."));
}

void FleetWidget::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        refresh();
    QWidget::changeEvent(event);
}

} // namespace idem::console
