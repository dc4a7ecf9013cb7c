#include "views/taskbrowserwidget.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTableView>
#include <QAction>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <limits>
#include <utility>

#include "core/key.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "models/jobsmodel.h"
#include "models/olderschema.h"
#include "models/taskbrowserdetail.h"
#include "models/taskbrowsermodel.h"
#include "views/actiondialog.h"
#include "views/applyalldialog.h"
#include "views/elidedelegate.h"
#include "views/pagestatusline.h"
#include "views/pausedialog.h"
#include "views/refusalnote.h"
#include "views/taskdetailpane.h"
#include "views/theme.h"
#include "views/tileconditionsbar.h"

namespace idem::console {

namespace {
    // The sort combo's entries, in pairs (ascending, descending): key, last update, first seen.
    constexpr idem::TaskSortColumn sortColumns[] = { idem::TaskSortColumn::Key, idem::TaskSortColumn::UpdatedAt,
        idem::TaskSortColumn::CreatedAt };

    idem::TaskSort sortAt(int index)
    {
        const int i = std::clamp(index, 0, 5);
        return { sortColumns[i / 2], i % 2 == 1 };
    }

    int sortIndex(const idem::TaskSort& sort)
    {
        const auto* at = std::find(std::begin(sortColumns), std::end(sortColumns), sort.column);
        return static_cast<int>(at - std::begin(sortColumns)) * 2 + (sort.descending ? 1 : 0);
    }

    // Status presets: the combo's data is the status list, joined by commas.
    const char* const statusPresets[][2] = {
        { QT_TRANSLATE_NOOP("idem::console::TaskBrowserWidget", "Any status"), "" },
        { QT_TRANSLATE_NOOP("idem::console::TaskBrowserWidget", "Unfinished"), "processing,retryable_failed,failed" },
        { "processing", "processing" },
        { "retryable_failed", "retryable_failed" },
        { "failed", "failed" },
        { "succeeded", "succeeded" },
    };

    QString joined(const std::vector<std::string>& v)
    {
        QStringList l;
        for (const auto& s : v)
            l << QString::fromStdString(s);
        return l.join(QLatin1Char(','));
    }

    std::optional<std::string> optText(const QLineEdit* e)
    {
        const auto t = e->text();
        return t.isEmpty() ? std::nullopt : std::optional<std::string>(t.toStdString());
    }

    QJsonValue usOrNull(const std::optional<std::int64_t>& us)
    {
        return us ? QJsonValue(QString::fromStdString(idem::formatMicros(*us))) : QJsonValue();
    }
} // namespace

TaskBrowserWidget::TaskBrowserWidget(ConsoleSession* monitor, ConsoleSession* admin, QWidget* parent)
    : QWidget(parent)
    , m_monitor(monitor)
    , m_admin(admin ? admin : monitor)
    , m_model(new TaskBrowserModel(monitor, this))
    , m_counter(new TaskCounter(monitor, this))
    , m_view(new QTableView)
    , m_detail(new TaskDetailPane(new TaskDetailLoader(monitor, this)))
    , m_split(new QSplitter(Qt::Horizontal))
    , m_status(new QComboBox)
    , m_tenant(new QLineEdit)
    , m_operation(new QLineEdit)
    , m_prefix(new QLineEdit)
    , m_minAttempts(new QSpinBox)
    , m_expired(new QCheckBox)
    , m_uncertain(new QCheckBox)
    , m_conflicts(new QCheckBox)
    , m_failedSince(new QLineEdit)
    , m_errorClass(new QComboBox)
    , m_liveLease(new QCheckBox)
    , m_exhausted(new QCheckBox)
    , m_unfinishedFor(new QSpinBox)
    , m_updatedWithin(new QSpinBox)
    , m_errorContains(new QLineEdit)
    , m_sort(new QComboBox)
    , m_apply(new QPushButton)
    , m_countLabel(new QLabel)
    , m_error(new QLabel)
    , m_tileRow(new TileConditionsBar)
    , m_requeue(new QPushButton)
    , m_release(new QPushButton)
    , m_fail(new QPushButton)
    , m_applyAll(new QPushButton)
    , m_refusal(new RefusalNote(QStringLiteral("actionRefusal")))
    , m_copyKey(new QPushButton)
    , m_copyJson(new QPushButton)
    , m_refreshTimer(new QTimer(this))
    , m_statusLine(new PageStatusLine(monitor, QStringLiteral("tasksStatusLine")))
{
    m_statusLine->watch(m_admin);
    setUpControls();
    setUpTable();
    layOut();
    connectFilters();
    connectModel();
    addKeyedActions();
    connectActions();
    connectCountAndRefresh();
}

// The constructor's parts, in their order.

void TaskBrowserWidget::setUpControls()
{
    setObjectName(QStringLiteral("taskBrowser"));
    for (const auto& p : statusPresets)
        m_status->addItem(QString(), QString::fromLatin1(p[1]));
    m_status->setObjectName(QStringLiteral("statusFilter"));
    m_tenant->setObjectName(QStringLiteral("tenantFilter"));
    m_operation->setObjectName(QStringLiteral("operationFilter"));
    m_prefix->setObjectName(QStringLiteral("prefixFilter"));
    m_minAttempts->setObjectName(QStringLiteral("minAttemptsFilter"));
    m_minAttempts->setRange(0, 1000000);
    m_expired->setObjectName(QStringLiteral("expiredFilter"));
    m_uncertain->setObjectName(QStringLiteral("uncertainFilter"));
    m_conflicts->setObjectName(QStringLiteral("conflictFilter"));
    m_failedSince->setObjectName(QStringLiteral("failedSinceFilter"));
    m_errorClass->setObjectName(QStringLiteral("errorClassFilter"));
    for (const char* c : { "", "retryable", "permanent", "unknown" })
        m_errorClass->addItem(QString(), QString::fromLatin1(c));
    m_liveLease->setObjectName(QStringLiteral("liveLeaseFilter"));
    m_exhausted->setObjectName(QStringLiteral("exhaustedFilter"));
    m_unfinishedFor->setObjectName(QStringLiteral("unfinishedForFilter"));
    m_updatedWithin->setObjectName(QStringLiteral("updatedWithinFilter"));
    // The bounds idem_job_filter_check takes (ten years of minutes); 0 reads "any".
    for (auto* minutes : { m_unfinishedFor, m_updatedWithin }) {
        minutes->setRange(0, 5256000);
        minutes->setGroupSeparatorShown(true);
    }
    m_errorContains->setObjectName(QStringLiteral("errorContainsFilter"));
    m_errorContains->setMaxLength(int(idem::maxErrorContainsBytes) / 4); // characters: at most 4 bytes each
    m_errorContains->setClearButtonEnabled(true);
    m_sort->setObjectName(QStringLiteral("sortOrder"));
    for (int i = 0; i < 6; ++i)
        m_sort->addItem(QString());
    m_apply->setObjectName(QStringLiteral("applyFilter"));
    m_countLabel->setObjectName(QStringLiteral("matchCount"));
    // A tile's sentence can be long: it wraps in the room beside the buttons, never widens the window.
    m_countLabel->setWordWrap(true);
    m_countLabel->setMinimumWidth(1);
    m_error->setObjectName(QStringLiteral("browserError"));
    theme::followTone(m_error, theme::Tone::Bad);
    m_error->setWordWrap(true);
    m_error->hide();
    m_requeue->setObjectName(QStringLiteral("requeueButton"));
    m_release->setObjectName(QStringLiteral("releaseButton"));
    m_fail->setObjectName(QStringLiteral("failButton"));
    m_applyAll->setObjectName(QStringLiteral("applyAllButton"));
    m_copyKey->setObjectName(QStringLiteral("copyKeyButton"));
    m_copyJson->setObjectName(QStringLiteral("copyJsonButton"));

}

QGridLayout* TaskBrowserWidget::buildFilters()
{
    auto* filters = new QGridLayout;
    filters->setContentsMargins(0, 0, 0, 0);
    filters->addWidget(m_status, 0, 0);
    filters->addWidget(m_tenant, 0, 1);
    filters->addWidget(m_operation, 0, 2);
    filters->addWidget(m_prefix, 0, 3);
    filters->addWidget(m_minAttempts, 0, 4);
    filters->addWidget(m_sort, 0, 5);
    filters->addWidget(m_errorClass, 1, 0);
    filters->addWidget(m_errorContains, 1, 1, 1, 2);
    filters->addWidget(m_failedSince, 1, 3);
    filters->addWidget(m_unfinishedFor, 1, 4);
    filters->addWidget(m_updatedWithin, 1, 5);
    auto* flags = new QHBoxLayout;
    for (auto* c : { m_expired, m_liveLease, m_uncertain, m_exhausted, m_conflicts })
        flags->addWidget(c);
    flags->addStretch(1);
    filters->addLayout(flags, 2, 0, 1, 5);
    filters->addWidget(m_apply, 2, 5);
    filters->setColumnStretch(1, 1);
    filters->setColumnStretch(2, 1);
    filters->setColumnStretch(3, 1);

    return filters;
}

void TaskBrowserWidget::setUpTable()
{
    m_view->setObjectName(QStringLiteral("taskTable"));
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->verticalHeader()->setVisible(false);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setWordWrap(false);
    // Keys share their beginning (tenant:operation:…) and differ at the end: elide the middle.
    m_view->setTextElideMode(Qt::ElideMiddle);
    // An error message's beginning says what failed: it elides at its end.
    m_view->setItemDelegateForColumn(TaskBrowserModel::ErrorColumn, new ElideDelegate(Qt::ElideRight, m_view));
    m_view->setColumnWidth(TaskBrowserModel::KeyColumn, 215);
    m_view->setColumnWidth(TaskBrowserModel::StatusColumn, 185);
    m_view->setColumnWidth(TaskBrowserModel::AttemptsColumn, 64);
    m_view->setColumnWidth(TaskBrowserModel::UpdatedColumn, 175);
    m_view->setColumnWidth(TaskBrowserModel::LeaseColumn, 110);
    m_view->setColumnWidth(TaskBrowserModel::NextAttemptColumn, 175);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QTableView::customContextMenuRequested, this, [this](const QPoint& at) {
        const QModelIndex index = m_view->indexAt(at);
        if (!index.isValid())
            return;
        QMenu* menu = contextMenuFor(index);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(m_view->viewport()->mapToGlobal(at));
    });
    m_split->addWidget(m_view);
    m_split->addWidget(m_detail);
    m_split->setStretchFactor(0, 3);
    m_split->setStretchFactor(1, 2);
    m_split->setSizes({ 700, 460 });

}

void TaskBrowserWidget::layOut()
{
    auto* actions = new QHBoxLayout;
    actions->addWidget(m_countLabel, 1);
    actions->addWidget(m_copyKey);
    actions->addWidget(m_copyJson);
    actions->addSpacing(12);
    actions->addWidget(m_requeue);
    actions->addWidget(m_release);
    actions->addWidget(m_fail);
    actions->addSpacing(12);
    actions->addWidget(m_applyAll);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_statusLine);
    layout->addLayout(buildFilters());
    layout->addWidget(m_tileRow);
    layout->addWidget(m_error);
    layout->addWidget(m_split, 1);
    layout->addLayout(actions);
    layout->addWidget(m_refusal);

}

void TaskBrowserWidget::connectFilters()
{
    connect(m_apply, &QPushButton::clicked, this, &TaskBrowserWidget::reload);
    connect(m_tileRow, &TileConditionsBar::removeRequested, this, [this] {
        dropTileConditions();
        reload();
    });
    for (auto* e : { m_tenant, m_operation, m_prefix, m_failedSince, m_errorContains })
        connect(e, &QLineEdit::returnPressed, this, &TaskBrowserWidget::reload);
    connect(m_status, &QComboBox::activated, this, [this] {
        // A status chosen after a tile's click: the conditions that name another status (a
        // running lease of the Processing tile) would leave the list empty; they go.
        const auto chosen = m_status->currentData().toString().split(QLatin1Char(','), Qt::SkipEmptyParts);
        if (!chosen.isEmpty()) {
            const QSignalBlocker b1(m_liveLease), b2(m_expired), b3(m_uncertain), b4(m_exhausted);
            if (!chosen.contains(QLatin1String("processing"))) {
                m_liveLease->setChecked(false);
                m_expired->setChecked(false);
            }
            if (!chosen.contains(QLatin1String("retryable_failed")))
                m_uncertain->setChecked(false);
            if (!chosen.contains(QLatin1String("failed"))) {
                m_exhausted->setChecked(false);
                m_failedSince->clear();
            }
        }
        reload();
    });
    connect(m_sort, &QComboBox::activated, this, &TaskBrowserWidget::reload);
    connect(m_errorClass, &QComboBox::activated, this, &TaskBrowserWidget::reload);
    for (auto* c : { m_expired, m_liveLease, m_uncertain, m_exhausted, m_conflicts })
        connect(c, &QCheckBox::toggled, this, &TaskBrowserWidget::reload);
}

void TaskBrowserWidget::connectModel()
{
    connect(
        m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &TaskBrowserWidget::onSelectionChanged);
    connect(m_model, &TaskBrowserModel::failed, this, [this](const QString& message) {
        m_error->setText(message);
        m_error->show();
    });
    connect(m_model, &TaskBrowserModel::pageLoaded, this, [this] {
        m_readAt.start();
        if (std::exchange(m_selectFirst, false) && m_model->rowCount() > 0)
            m_view->selectRow(0);
        fitColumns();
        m_statusLine->markRead();
        m_error->hide();
        updateActions();
    });
    connect(m_model, &TaskBrowserModel::refreshed, this, [this] {
        m_readAt.start();
        m_statusLine->markRead();
        m_error->hide();
        onSelectionChanged(); // the selected record may have changed: re-read its detail
    });
}

void TaskBrowserWidget::addKeyedActions()
{
    // Every action has a key (the shortcuts dialog lists them): on this page only, so a key
    // pressed on another page never opens an action on rows the operator is not looking at.
    const std::tuple<QPushButton*, const char*, QKeySequence> keyed[] = {
        { m_requeue, "requeueAction", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R) },
        { m_release, "releaseAction", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L) },
        { m_fail, "failAction", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F) },
        { m_copyKey, "copyKeyAction", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K) },
        { m_copyJson, "copyJsonAction", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_J) },
    };
    for (const auto& [button, name, keys] : keyed) {
        auto* a = new QAction(this);
        a->setObjectName(QLatin1String(name));
        a->setShortcut(keys);
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        connect(a, &QAction::triggered, button, [b = button] {
            if (b->isEnabled())
                b->click();
        });
        addAction(a);
        m_keyedActions.emplace_back(button, a);
    }
}

void TaskBrowserWidget::connectActions()
{
    connect(m_requeue, &QPushButton::clicked, this, [this] { startAction(idem::RecoveryAction::Requeue); });
    connect(m_release, &QPushButton::clicked, this, [this] { startAction(idem::RecoveryAction::Release); });
    connect(m_fail, &QPushButton::clicked, this, [this] { startAction(idem::RecoveryAction::Fail); });
    connect(m_applyAll, &QPushButton::clicked, this, [this] { startApplyAll(); });
    connect(m_copyKey, &QPushButton::clicked, this, &TaskBrowserWidget::copyKeys);
    connect(m_copyJson, &QPushButton::clicked, this, &TaskBrowserWidget::copyJson);
    for (auto* s : { m_monitor, m_admin }) {
        connect(s, &ConsoleSession::serverInfoChanged, this, &TaskBrowserWidget::updateActions);
        connect(s, &ConsoleSession::stateChanged, this, &TaskBrowserWidget::updateActions);
    }
}

void TaskBrowserWidget::connectCountAndRefresh()
{
    connect(m_counter, &TaskCounter::counted, this, &TaskBrowserWidget::counted);
    connect(m_counter, &TaskCounter::failed, this, [this] {
        if (m_countMode == CountRefresh::Announce) {
            m_count.reset();
            m_countLabel->clear(); // a refresh that failed leaves the last figure
        }
    });
    // A first connection loads the table; afterwards the timer keeps it fresh while shown.
    connect(m_monitor, &ConsoleSession::stateChanged, this, [this](ConsoleSession::State state) {
        if (state == ConsoleSession::State::Connected && m_model->rowCount() == 0 && !m_model->busy())
            reload();
    });
    m_refreshTimer->setInterval(5000);
    connect(m_refreshTimer, &QTimer::timeout, this, [this] {
        if (isVisible() && m_monitor->state() == ConsoleSession::State::Connected)
            refresh();
    });
    m_refreshTimer->start();
    retranslateUi();
    if (m_monitor->state() == ConsoleSession::State::Connected)
        reload();
    updateActions();
}

TaskBrowserWidget::~TaskBrowserWidget() = default;

void TaskBrowserWidget::retranslateUi()
{
    // The two groupings are words; the statuses themselves stay as the database spells them.
    for (int i = 0; i < int(std::size(statusPresets)); ++i) {
        const auto& p = statusPresets[i];
        m_status->setItemText(i, !*p[1] || QString::fromLatin1(p[1]).contains(QLatin1Char(',')) ? tr(p[0]) : QString::fromLatin1(p[0]));
    }
    if (m_tileStatusIndex >= 0)
        m_status->setItemText(m_tileStatusIndex,
            m_status->itemData(m_tileStatusIndex).toString().split(QLatin1Char(',')).join(tr(" or ")));
    m_tenant->setPlaceholderText(tr("tenant"));
    m_operation->setPlaceholderText(tr("operation"));
    m_prefix->setPlaceholderText(tr("key prefix"));
    m_minAttempts->setSpecialValueText(tr("any"));
    m_minAttempts->setPrefix(tr("attempts ≥ "));
    m_expired->setText(tr("Expired lease"));
    m_uncertain->setText(tr("Uncertain outcome"));
    m_conflicts->setText(tr("Digest conflicts"));
    m_failedSince->setPlaceholderText(tr("failed since (2024-05-01T10:00Z)"));
    m_errorClass->setItemText(0, tr("Any error class"));
    for (int i = 1; i < m_errorClass->count(); ++i) // as the database spells them
        m_errorClass->setItemText(i, tr("class %1").arg(m_errorClass->itemData(i).toString()));
    m_liveLease->setText(tr("Lease running"));
    m_liveLease->setToolTip(tr("Tasks a worker is on now. A task run in one transaction (claim, writes and success "
                               "in one commit) has no row until it commits, and is not listed while it runs."));
    m_exhausted->setText(tr("Retries exhausted"));
    m_exhausted->setToolTip(tr("Failed for a reason other than a permanent error: attempts or age ran out"));
    m_unfinishedFor->setSpecialValueText(tr("unfinished for: any"));
    m_unfinishedFor->setPrefix(tr("unfinished ≥ "));
    m_unfinishedFor->setSuffix(tr(" min"));
    m_unfinishedFor->setToolTip(tr("Not succeeded, first seen at least this many minutes ago"));
    m_updatedWithin->setSpecialValueText(tr("updated: any time"));
    m_updatedWithin->setPrefix(tr("updated within "));
    m_updatedWithin->setSuffix(tr(" min"));
    m_updatedWithin->setToolTip(tr("Updated within the last this many minutes (minute buckets, as the tiles count)"));
    m_errorContains->setPlaceholderText(tr("error message contains…"));
    m_errorContains->setToolTip(tr("Unfinished tasks whose last error message contains this text (literally, any "
                                   "case)"));
    const char* const sorts[] = { QT_TR_NOOP("Key A→Z"), QT_TR_NOOP("Key Z→A"), QT_TR_NOOP("Oldest update first (unfinished)"),
        QT_TR_NOOP("Newest update first (unfinished)"), QT_TR_NOOP("Oldest first seen first (unfinished)"),
        QT_TR_NOOP("Newest first seen first (unfinished)") };
    for (int i = 0; i < 6; ++i)
        m_sort->setItemText(i, tr(sorts[i]));
    m_apply->setText(tr("Apply"));
    m_requeue->setText(tr("Requeue…"));
    m_release->setText(tr("Release lease…"));
    m_fail->setText(tr("Mark failed…"));
    updateApplyAllText();
    m_copyKey->setText(tr("Copy key"));
    m_copyJson->setText(tr("Copy as JSON"));
    for (const auto& [button, action] : m_keyedActions)
        action->setText(button->text());
    updateActions();
    if (m_count)
        writeCount();
    else if (m_counter->pending())
        m_countLabel->setText(tr("Counting…"));
    if (m_model->started())
        updateCount(CountRefresh::Quiet);
}

void TaskBrowserWidget::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QWidget::changeEvent(event);
}

void TaskBrowserWidget::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_model->rowCount() > 0)
        fitColumns(); // the width the page really has, now that it is laid out
    // Hidden, the page does not poll: shown again, it must not show data older than one poll.
    if (m_monitor->state() == ConsoleSession::State::Connected && m_readAt.isValid()
        && m_readAt.elapsed() >= m_refreshTimer->interval())
        refresh();
}

// Status, attempts and times as wide as what they hold (no wider: a fixed 185 px Status
// column took the room the keys needed); the key as wide as its longest, up to what is left
// beside a readable error column or 70 % of the table (the table then scrolls sideways to the
// error). Only a key longer than that is elided (in the middle); its tooltip is whole.
void TaskBrowserWidget::fitColumns()
{
    using M = TaskBrowserModel;
    int others = 0;
    for (const int c : { M::StatusColumn, M::AttemptsColumn, M::UpdatedColumn, M::LeaseColumn, M::NextAttemptColumn }) {
        m_view->resizeColumnToContents(c);
        others += m_view->columnWidth(c);
    }
    const QFontMetrics fm(m_view->font());
    int longest = fm.horizontalAdvance(m_model->headerData(M::KeyColumn, Qt::Horizontal).toString());
    for (int r = 0, n = std::min(m_model->rowCount(), 1000); r < n; ++r)
        longest = std::max(longest, fm.horizontalAdvance(m_model->index(r, M::KeyColumn).data().toString()));
    // The cell's margins on both sides, as the style draws them, and a little for another style's.
    const int margins = 2 * (m_view->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, m_view) + 1) + 8;
    const int room = m_view->viewport()->width() - others - fm.horizontalAdvance(QStringLiteral("[retryable] timeout"));
    const int cap = std::max({ room, m_view->viewport()->width() * 7 / 10, 215 });
    m_view->setColumnWidth(M::KeyColumn, std::max(160, std::min(longest + margins, cap)));
}

void TaskBrowserWidget::setPollInterval(int ms) { m_refreshTimer->setInterval(ms); }

QString TaskBrowserWidget::tileConditionsText() const { return m_tileRow->text(); }

void TaskBrowserWidget::dropTileConditions()
{
    m_extra = idem::TaskFilter {};
    m_tileRow->setConditions(m_extra);
}

// What the controls show, and nothing else.
idem::TaskFilter TaskBrowserWidget::visibleFilter() const
{
    idem::TaskFilter f;
    const auto statuses = m_status->currentData().toString();
    f.statuses.clear();
    if (!statuses.isEmpty())
        for (const auto& s : statuses.split(QLatin1Char(',')))
            f.statuses.push_back(s.toStdString());
    f.tenant = optText(m_tenant);
    f.operation = optText(m_operation);
    f.keyPrefix = optText(m_prefix);
    f.minAttempts = m_minAttempts->value() > 0 ? std::optional<int>(m_minAttempts->value()) : std::nullopt;
    f.expiredLease = m_expired->isChecked();
    f.uncertain = m_uncertain->isChecked();
    f.digestConflicts = m_conflicts->isChecked();
    f.failedSince = optText(m_failedSince);
    if (const auto c = m_errorClass->currentData().toString(); !c.isEmpty())
        f.errorClass = c.toStdString();
    f.liveLease = m_liveLease->isChecked();
    f.exhausted = m_exhausted->isChecked();
    if (m_unfinishedFor->value() > 0)
        f.unfinishedForMinutes = m_unfinishedFor->value();
    if (m_updatedWithin->value() > 0)
        f.updatedWithinMinutes = m_updatedWithin->value();
    f.errorContains = optText(m_errorContains);
    return f;
}

idem::TaskFilter TaskBrowserWidget::filterFromControls() const
{
    return withHidden(visibleFilter(), m_extra);
}

idem::TaskFilter TaskBrowserWidget::filter() const { return m_model->filter(); }

QString TaskBrowserWidget::countText() const { return m_countLabel->text(); }

void TaskBrowserWidget::applyFilter(
    const idem::TaskFilter& filter, const LiveText& what, const std::optional<idem::TaskSort>& sort)
{
    m_extra = hiddenPart(filter);
    m_tileRow->setConditions(m_extra);
    m_applied = filter;
    m_what = what;
    const auto statuses = joined(filter.statuses);
    int index = m_status->findData(statuses);
    if (index < 0) {
        // A tile's own set of statuses, in words; one such entry at most, not one per click.
        if (m_tileStatusIndex >= 0)
            m_status->removeItem(m_tileStatusIndex);
        m_status->addItem(statuses.split(QLatin1Char(',')).join(tr(" or ")), statuses);
        m_tileStatusIndex = m_status->count() - 1;
        index = m_tileStatusIndex;
    }
    const QSignalBlocker b1(m_expired), b2(m_uncertain), b3(m_conflicts), b4(m_liveLease), b5(m_exhausted);
    m_status->setCurrentIndex(index);
    m_tenant->setText(filter.tenant ? QString::fromStdString(*filter.tenant) : QString());
    m_operation->setText(filter.operation ? QString::fromStdString(*filter.operation) : QString());
    m_prefix->setText(filter.keyPrefix ? QString::fromStdString(*filter.keyPrefix) : QString());
    m_minAttempts->setValue(filter.minAttempts.value_or(0));
    m_expired->setChecked(filter.expiredLease);
    m_uncertain->setChecked(filter.uncertain);
    m_conflicts->setChecked(filter.digestConflicts);
    m_failedSince->setText(filter.failedSince ? QString::fromStdString(*filter.failedSince) : QString());
    m_errorClass->setCurrentIndex(
        std::max(0, m_errorClass->findData(QString::fromStdString(filter.errorClass.value_or("")))));
    m_liveLease->setChecked(filter.liveLease);
    m_exhausted->setChecked(filter.exhausted);
    m_unfinishedFor->setValue(filter.unfinishedForMinutes.value_or(0));
    m_updatedWithin->setValue(filter.updatedWithinMinutes.value_or(0));
    m_errorContains->setText(filter.errorContains ? QString::fromStdString(*filter.errorContains) : QString());
    // A time order needs an unfinished set; a tile over everything sorts by key.
    if (sort)
        m_sort->setCurrentIndex(sortIndex(*sort));
    try {
        idem::validateTaskQuery(filter, sortAt(m_sort->currentIndex()));
    } catch (const std::invalid_argument&) {
        m_sort->setCurrentIndex(0);
    }
    reload();
    m_selectFirst = sort.has_value();
}

void TaskBrowserWidget::setSort(const idem::TaskSort& sort)
{
    m_sort->setCurrentIndex(sortIndex(sort));
    reload();
}

void TaskBrowserWidget::reload()
{
    // A filter the operator changed means what the controls show: a tile's hidden conditions
    // (a live lease, a time window) do not outlive the tile's own filter.
    if (m_extra != idem::TaskFilter {} && visibleFilter() != visiblePart(m_applied))
        dropTileConditions();
    const auto sort = sortAt(m_sort->currentIndex());
    m_selectFirst = false;
    m_detail->clearDetail();
    m_error->hide();
    m_model->setQuery(filterFromControls(), sort);
    updateCount();
    updateActions();
}

// The rows merge in and the match count follows them: a count frozen at the query's start
// would contradict the rows below it after a few refreshes.
void TaskBrowserWidget::refresh()
{
    m_model->refresh();
    if (!m_counter->pending()) // one count at a time: a slow one is not stacked up by the timer
        updateCount(CountRefresh::Quiet);
}

void TaskBrowserWidget::updateCount(CountRefresh mode)
{
    m_counter->drop();
    m_countMode = mode;
    if (mode == CountRefresh::Announce) { // a new query: the old figure is wrong, say it is coming
        m_count.reset();
        m_countLabel->setText(tr("Counting…"));
        m_matching = -1;
        updateApplyAllText();
    }
    const auto filter = m_model->filter();
    try {
        idem::validateTaskQuery(filter, {});
    } catch (const std::invalid_argument&) {
        m_countLabel->clear();
        return;
    }
    m_counter->count(filter);
}

void TaskBrowserWidget::counted(const idem::TaskCount& count)
{
    m_count = count;
    m_matching = count.exact ? count.n : -1;
    updateApplyAllText();
    writeCount();
}

// The last count in words, in the language of the moment (written again on a language switch).
void TaskBrowserWidget::writeCount()
{
    if (!m_count)
        return;
    const qint64 n = m_count->n;
    const auto source = QString::fromStdString(m_count->source);
    QString text = m_count->exact
        ? tr("%Ln record(s) match", nullptr, int(std::min<qint64>(n, std::numeric_limits<int>::max())))
        : source.isEmpty() ? tr("about %L1 records match (planner estimate)").arg(n)
                           // every row: the Total rows tile's figure and label
                           : tr("about %1 records match: %2")
                                 .arg(QLocale().toString(n), totalRowsSourceText(source.toStdString()));
    // A tile's rows, said in words while the filter is still the tile's.
    if (!m_what.isEmpty() && m_model->filter() == m_applied)
        text = tr("%1: %2").arg(text, m_what.text());
    m_countLabel->setText(text);
}

QMenu* TaskBrowserWidget::contextMenuFor(const QModelIndex& index)
{
    // A right click on a row outside the selection selects it first, as file managers do.
    if (!m_view->selectionModel()->isRowSelected(index.row(), QModelIndex()))
        m_view->selectRow(index.row());
    auto* menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("taskContextMenu"));
    for (auto* button : { m_copyKey, m_copyJson, m_requeue, m_release, m_fail }) {
        if (button == m_requeue)
            menu->addSeparator();
        auto* a = menu->addAction(button->text());
        a->setObjectName(button->objectName() + QStringLiteral("Menu"));
        a->setEnabled(button->isEnabled());
        a->setToolTip(button->toolTip());
        connect(a, &QAction::triggered, button, [button] {
            if (button->isEnabled())
                button->click();
        });
    }
    menu->setToolTipsVisible(true);
    menu->addSeparator();
    const std::string key = m_model->data(m_model->index(index.row(), 0), TaskBrowserModel::KeyRole).toString().toStdString();
    try {
        const auto parsed = idem::TaskKey::parse(key);
        addPauseActions(menu, this, m_admin, m_pauses, QString::fromStdString(parsed.tenant()),
            QString::fromStdString(parsed.operation()));
    } catch (const std::exception&) {
        // A key not of the form tenant:operation:business_id (an adopted table's) names no scope.
        auto* none = menu->addAction(tr("Pause intake… (this key names no tenant and operation)"));
        none->setObjectName(QStringLiteral("pauseIntakeAction"));
        none->setEnabled(false);
    }
    return menu;
}

void TaskBrowserWidget::onSelectionChanged()
{
    const auto rows = m_view->selectionModel()->selectedRows();
    if (rows.size() == 1)
        m_detail->showKey(m_model->data(rows.first(), TaskBrowserModel::KeyRole).toString());
    else
        m_detail->clearDetail();
    updateActions();
}

void TaskBrowserWidget::updateActions()
{
    const auto rows = m_view->selectionModel()->selectedRows();
    const bool connected = m_admin->state() == ConsoleSession::State::Connected;
    const bool mayAct = connected && !m_admin->readOnly();
    const auto any = [&](idem::RecoveryAction a) {
        for (const auto& i : rows)
            if (idem::actionAppliesTo(a, m_model->task(i.row()).status))
                return true;
        return false;
    };
    QString why;
    if (!connected)
        why = tr("Not connected.");
    else if (m_admin->readOnly())
        why = tr("The schema is newer than this console, or its migrations do not match: look, change "
                 "nothing.");
    const std::pair<QPushButton*, idem::RecoveryAction> buttons[] = { { m_requeue, idem::RecoveryAction::Requeue },
        { m_release, idem::RecoveryAction::Release }, { m_fail, idem::RecoveryAction::Fail } };
    QStringList reasons; // said beside the buttons, not only in their tooltips
    for (const auto& [button, action] : buttons) {
        // Each action its own right (schema v21): a role may requeue and not mark failed.
        const QString refusal = why.isEmpty()
            ? m_admin->serverInfo().rights.refusal(QString::fromLatin1(idem::actionName(action)))
            : why;
        button->setEnabled(mayAct && refusal.isEmpty() && any(action));
        button->setToolTip(refusal.isEmpty() ? actionEffect(action, 1) : refusal);
        reasons << refusal;
    }
    for (const auto& [button, action] : m_keyedActions) {
        action->setEnabled(button->isEnabled());
        button->setToolTip(button->toolTip() + QStringLiteral(" (") + action->shortcut().toString(QKeySequence::NativeText)
            + QLatin1Char(')'));
    }
    // Over every row the applied filters match, loaded or not: needs jobs in the schema.
    const QString older = olderSchemaRefusal(*m_admin);
    const bool jobs = older.isEmpty();
    // Some action's right: the dialog offers the three and refuses the ones the role may not do.
    const auto& rights = m_admin->serverInfo().rights;
    const bool someRight = rights.may(QStringLiteral("requeue")) || rights.may(QStringLiteral("release"))
        || rights.may(QStringLiteral("fail"));
    m_applyAll->setEnabled(mayAct && jobs && someRight && m_model->started());
    if (why.isEmpty() && someRight && !jobs)
        reasons << tr("Apply to all matching: %1").arg(older);
    m_refusal->setReasons(reasons);
    m_applyAll->setToolTip(!why.isEmpty() ? why
            : !someRight ? rights.refusal(QStringLiteral("requeue"))
            : !jobs ? older
                    : tr("Requeue, release or mark failed every task these filters match (not only the loaded rows), "
                         "as a recovery job the database runs."));
    m_copyKey->setEnabled(!rows.isEmpty());
    m_copyJson->setEnabled(!rows.isEmpty());
    for (const auto& [button, action] : m_keyedActions)
        if (button == m_copyKey || button == m_copyJson)
            action->setEnabled(button->isEnabled());
}

void TaskBrowserWidget::startAction(idem::RecoveryAction action)
{
    std::vector<idem::TaskRow> rows;
    auto selected = m_view->selectionModel()->selectedRows();
    std::sort(selected.begin(), selected.end());
    for (const auto& i : selected)
        rows.push_back(m_model->task(i.row()));
    if (rows.empty())
        return;
    auto* dialog = new ActionDialog(m_admin, action, rows, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &ActionDialog::runFinished, this, [this] {
        // The rows acted on stay in view: a released lease or a requeued key no longer matches
        // a tile's hidden conditions (a live lease, "updated in the window" for a purge), and a
        // row vanishing under the operator's hands reads as lost. The list becomes what the
        // controls show, without those two (controls of their own since issue 41).
        const auto f = m_model->filter();
        if (m_extra != idem::TaskFilter {} || f.liveLease || f.updatedWithinMinutes) {
            dropTileConditions();
            const QSignalBlocker b(m_liveLease);
            m_liveLease->setChecked(false);
            m_updatedWithin->setValue(0);
            reload();
        } else {
            refresh();
        }
        Q_EMIT actionFinished();
    });
    dialog->open();
}

void TaskBrowserWidget::updateApplyAllText()
{
    // The figure is the page's own count; the dialog counts again, as of its own moment.
    m_applyAll->setText(m_matching >= 0
            ? tr("Apply to all %Ln matching…", nullptr, int(std::min<qint64>(m_matching, std::numeric_limits<int>::max())))
            : tr("Apply to all matching…"));
}

ApplyAllDialog* TaskBrowserWidget::startApplyAll(idem::RecoveryAction action)
{
    // The rows the table shows: the applied filter (edits not yet applied are not the table's).
    auto* dialog = new ApplyAllDialog(m_admin, m_runners, m_model->filter(), action, this);
    connect(dialog, &ApplyAllDialog::jobStarted, this, &TaskBrowserWidget::jobStarted);
    dialog->open();
    return dialog;
}

void TaskBrowserWidget::copyKeys()
{
    QStringList keys;
    auto selected = m_view->selectionModel()->selectedRows();
    std::sort(selected.begin(), selected.end());
    for (const auto& i : selected)
        keys << QString::fromStdString(m_model->task(i.row()).key);
    QApplication::clipboard()->setText(keys.join(QLatin1Char('\n')));
}

void TaskBrowserWidget::copyJson()
{
    QJsonArray out;
    auto selected = m_view->selectionModel()->selectedRows();
    std::sort(selected.begin(), selected.end());
    for (const auto& i : selected) {
        const auto& t = m_model->task(i.row());
        out.append(QJsonObject {
            { QStringLiteral("idempotency_key"), QString::fromStdString(t.key) },
            { QStringLiteral("status"), QString::fromStdString(t.status) },
            { QStringLiteral("attempts"), t.attempts },
            { QStringLiteral("max_attempts"), t.maxAttempts },
            { QStringLiteral("request_hash"), QString::fromStdString(t.requestHash) },
            { QStringLiteral("created_at"), usOrNull(t.createdAtUs) },
            { QStringLiteral("updated_at"), usOrNull(t.updatedAtUs) },
            { QStringLiteral("lease_until"), usOrNull(t.leaseUntilUs) },
            { QStringLiteral("next_attempt_at"), usOrNull(t.nextAttemptAtUs) },
            { QStringLiteral("error_class"),
                t.errorClass.empty() ? QJsonValue() : QJsonValue(QString::fromStdString(t.errorClass)) },
            { QStringLiteral("error_message"), QString::fromStdString(t.errorMessage) },
        });
    }
    QApplication::clipboard()->setText(QString::fromUtf8(QJsonDocument(out).toJson(QJsonDocument::Indented)));
}

} // namespace idem::console
