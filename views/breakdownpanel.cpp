#include "views/breakdownpanel.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

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
        // Five rows in sight; more scroll. The dashboard's charts keep the rest of the height.
        view->setFixedHeight(view->horizontalHeader()->sizeHint().height() + 5 * view->verticalHeader()->defaultSectionSize() + 4);
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
    m_note->setWordWrap(true);
    m_note->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_byTenant->setObjectName(QStringLiteral("breakdownByTenant"));
    auto* head = new QHBoxLayout;
    head->addWidget(m_title);
    head->addWidget(m_byTenant);
    head->addStretch(1);
    auto* tables = new QHBoxLayout;
    tables->addWidget(m_operationsView, 3);
    tables->addWidget(m_errorsView, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(head);
    layout->addLayout(tables);
    layout->addWidget(m_note);

    m_operationsView->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_errorsView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_errorsView->horizontalHeader()->setSectionResizeMode(BreakdownModel::ErrorMessage, QHeaderView::Stretch);
    m_errorsView->horizontalHeader()->setStretchLastSection(true);

    connect(m_byTenant, &QCheckBox::toggled, m_watch, &BreakdownWatch::setByTenant);
    connect(m_watch, &BreakdownWatch::changed, this, &BreakdownPanel::refresh);
    const auto open = [this](BreakdownModel* model, const QModelIndex& index) {
        if (!index.isValid())
            return;
        Q_EMIT openRows(model->rowFilter(index.row()), model->rowTitle(index.row()), model->rowTitle(index.row()),
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
    m_note->setText(m_operations->noteText());
}

void BreakdownPanel::retranslate()
{
    m_title->setText(tr("Where it is failing"));
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
