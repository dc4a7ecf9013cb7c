#include "views/breakdownpanel.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "models/breakdownmodel.h"

namespace idem::console {

namespace {
    QTableView* makeView(BreakdownModel* model, const char* name)
    {
        auto* view = new QTableView;
        view->setObjectName(QString::fromLatin1(name));
        view->setModel(model);
        view->setSelectionBehavior(QAbstractItemView::SelectRows);
        view->setSelectionMode(QAbstractItemView::SingleSelection);
        view->setEditTriggers(QAbstractItemView::NoEditTriggers);
        view->verticalHeader()->hide();
        view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
        view->setWordWrap(false);
        view->setTextElideMode(Qt::ElideRight);
        view->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);

        return view;
    }
} // namespace

BreakdownPanel::BreakdownPanel(ConsoleSession* monitor, QWidget* parent)
    : QWidget(parent)
    , m_watch(new BreakdownWatch(monitor, this))
    , m_operations(new BreakdownModel(m_watch, BreakdownModel::Kind::Operations, this))
    , m_errors(new BreakdownModel(m_watch, BreakdownModel::Kind::Errors, this))
    , m_operationsView(makeView(m_operations, "breakdownOperations"))
    , m_errorsView(makeView(m_errors, "breakdownErrors"))
    , m_byTenant(new QCheckBox)
    , m_title(new QLabel)
    , m_note(new QLabel)
{
    setObjectName(QStringLiteral("breakdownPanel"));
    m_title->setObjectName(QStringLiteral("breakdownTitle"));
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_note->setObjectName(QStringLiteral("breakdownNote"));
    // A short legend under the title (the window, what "≥" means), the whole note in its tooltip.
    m_note->setWordWrap(true);
    m_note->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_byTenant->setObjectName(QStringLiteral("breakdownByTenant"));
    // The title, the split and the legend in a column left of the tables: no line of their own,
    // so the panel adds only the tables' height to the dashboard.
    auto* head = new QVBoxLayout;
    head->setSpacing(2);
    head->addWidget(m_title);
    head->addWidget(m_byTenant);
    head->addWidget(m_note);
    head->addStretch(1);
    auto* headBox = new QWidget;
    headBox->setLayout(head);
    head->setContentsMargins(0, 0, 0, 0);
    headBox->setFixedWidth(std::max(140, m_title->sizeHint().width() + 8));
    m_headBox = headBox;
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(headBox);
    layout->addWidget(m_operationsView, 3);
    layout->addWidget(m_errorsView, 2);

    m_operationsView->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_errorsView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_errorsView->horizontalHeader()->setSectionResizeMode(BreakdownModel::ErrorMessage, QHeaderView::Stretch);
    m_errorsView->horizontalHeader()->setStretchLastSection(true);

    connect(m_byTenant, &QCheckBox::toggled, m_watch, &BreakdownWatch::setByTenant);
    connect(m_watch, &BreakdownWatch::changed, this, &BreakdownPanel::refresh);
    const auto open = [this](BreakdownModel* model, const QModelIndex& index) {
        if (!index.isValid())
            return;
        Q_EMIT openRows(model->rowFilter(index.row()), model->rowTitle(index.row()), model->rowWords(index.row()),
            idem::TaskSort { idem::TaskSortColumn::UpdatedAt, true });
    };
    connect(m_operationsView, &QTableView::doubleClicked, this,
        [this, open](const QModelIndex& index) { open(m_operations, index); });
    connect(m_errorsView, &QTableView::doubleClicked, this,
        [this, open](const QModelIndex& index) { open(m_errors, index); });
    retranslate();
    refresh();
}

BreakdownPanel::~BreakdownPanel() = default;

void BreakdownPanel::refresh()
{
    const bool tenants = m_watch->byTenant();
    m_operationsView->setColumnHidden(BreakdownModel::Tenant, !tenants);
    m_errorsView->setColumnHidden(BreakdownModel::ErrorTenant, !tenants);
    // As tall as the rows there are, two to four, more scroll: the panel takes from the charts
    // only what it shows, and never makes the window taller than the dashboard was without it.
    const int rows = std::clamp(std::max(m_operations->rowCount(), m_errors->rowCount()), 2, 4);
    for (QTableView* view : { m_operationsView, m_errorsView })
        view->setFixedHeight(
            view->horizontalHeader()->sizeHint().height() + 4 + rows * view->verticalHeader()->defaultSectionSize());
    m_note->setToolTip(m_operations->noteText());
    m_note->setText(m_operations->legendText());
}

void BreakdownPanel::retranslate()
{
    m_title->setText(tr("Where it is failing"));
    m_headBox->setFixedWidth(std::max(140, m_title->sizeHint().width() + 8));
    m_byTenant->setText(tr("By tenant"));
    m_byTenant->setToolTip(tr("One row per tenant and operation instead of one per operation."));
    m_operationsView->setToolTip(tr("Double-click a row to open its tasks."));
    m_errorsView->setToolTip(tr("Double-click an error to open the tasks that failed with it."));
    refresh();
}

void BreakdownPanel::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

} // namespace idem::console
