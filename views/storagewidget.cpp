#include "views/storagewidget.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QEvent>
#include <QGridLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QLocale>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <vector>

#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/horizonwatch.h"
#include "models/storagemodel.h"
#include "models/tones.h"
#include "models/visibletext.h"
#include "views/chartpanel.h"
#include "views/pagestatusline.h"
#include "views/theme.h"

namespace idem::console {

namespace {
    QTableWidget* makeTable(const QString& objectName)
    {
        auto* t = new QTableWidget;
        t->setObjectName(objectName);
        t->setEditTriggers(QAbstractItemView::NoEditTriggers);
        t->setSelectionBehavior(QAbstractItemView::SelectRows);
        t->setSelectionMode(QAbstractItemView::SingleSelection);
        t->verticalHeader()->hide();
        // Compact rows: the page shows four tables at once.
        t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 8);
        t->setWordWrap(false);
        t->setTextElideMode(Qt::ElideMiddle);
        t->horizontalHeader()->setStretchLastSection(true);
        t->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        return t;
    }

    QTableWidgetItem* cell(const QString& text, bool number = false, const QString& tip = {})
    {
        auto* item = new QTableWidgetItem(text);
        if (number)
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        if (!tip.isEmpty())
            item->setToolTip(tip);
        return item;
    }

    QString statusName(const std::string& status)
    {
        if (status == "processing")
            return StorageWidget::tr("Processing");
        if (status == "retryable_failed")
            return StorageWidget::tr("Waiting to retry");
        if (status == "failed")
            return StorageWidget::tr("Failed");
        if (status == "succeeded")
            return StorageWidget::tr("Succeeded");
        return QString::fromStdString(status);
    }


    void fitColumns(QTableWidget* t)
    {
        for (int c = 0; c + 1 < t->columnCount(); ++c) {
            t->resizeColumnToContents(c);
            // A few pixels over the content: another style's margins must not elide it.
            t->setColumnWidth(c, t->columnWidth(c) + 12);
        }
        // The last column takes what is left (no scroll bar, no blank column on a wide page), so on
        // a narrow page it is elided: its tooltip says it whole.
        const int last = t->columnCount() - 1;
        for (int r = 0; last >= 0 && r < t->rowCount(); ++r)
            if (auto* item = t->item(r, last); item && item->toolTip().isEmpty())
                item->setToolTip(item->text());
    }
} // namespace

StorageWidget::StorageWidget(ConsoleSession* session, QWidget* parent)
    : QWidget(parent)
    , m_session(session)
    , m_model(new StorageModel(session, this))
    , m_statusLine(new PageStatusLine(session, QStringLiteral("storageStatusLine")))
    , m_error(new QLabel)
    , m_statusBox(new QGroupBox)
    , m_status(makeTable(QStringLiteral("storageStatusTable")))
    , m_purgeBox(new QGroupBox)
    , m_purge(new QLabel)
    , m_retentionBox(new QGroupBox)
    , m_retention(makeTable(QStringLiteral("storageRetentionTable")))
    , m_meaning(new QLabel)
    , m_tablesBox(new QGroupBox)
    , m_tables(makeTable(QStringLiteral("storageTablesTable")))
    , m_horizonBox(new QGroupBox)
    , m_horizon(new QLabel)
    , m_holders(makeTable(QStringLiteral("storageHoldersTable")))
    , m_chart(new QChart)
    , m_chartView(new QChartView(m_chart))
    , m_tableBytes(new QLineSeries)
    , m_indexBytes(new QLineSeries)
    , m_rows(new QLineSeries)
    , m_dead(new QLineSeries)
    , m_rowsAxis(new QValueAxis)
    , m_x(new QDateTimeAxis)
    , m_y(new QValueAxis)
    , m_timer(new QTimer(this))
{
    setObjectName(QStringLiteral("storagePage"));
    m_error->setObjectName(QStringLiteral("storageError"));
    m_error->setWordWrap(true);
    theme::followTone(m_error, theme::Tone::Bad);
    m_error->hide();
    m_purge->setObjectName(QStringLiteral("storagePurge"));
    m_purge->setWordWrap(true);
    m_purge->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_purge->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_meaning->setObjectName(QStringLiteral("storageMeaning"));
    m_meaning->setWordWrap(true);
    m_meaning->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_horizon->setObjectName(QStringLiteral("storageHorizon"));
    m_horizon->setWordWrap(true);
    m_horizon->setTextFormat(Qt::PlainText); // role, application and query text come from the database
    m_horizon->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_holders->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_holders->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);

    m_tableBytes->setObjectName(QStringLiteral("tablebytes"));
    m_indexBytes->setObjectName(QStringLiteral("indexbytes"));
    m_chart->addSeries(m_tableBytes);
    m_chart->addSeries(m_indexBytes);
    m_rows->setObjectName(QStringLiteral("rowsestimate"));
    m_chart->addSeries(m_rows);
    m_dead->setObjectName(QStringLiteral("deadrows"));
    m_chart->addSeries(m_dead);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);
    m_chart->addAxis(m_rowsAxis, Qt::AlignRight);
    m_rows->attachAxis(m_x);
    m_rows->attachAxis(m_rowsAxis);
    m_dead->attachAxis(m_x);
    m_dead->attachAxis(m_rowsAxis);
    m_rowsAxis->setLabelFormat(QStringLiteral("%.0f"));
    // One grid, the MB axis's: the rows axis's nice ticks fall elsewhere and doubled the lines.
    m_rowsAxis->setGridLineVisible(false);
    for (auto* s : { m_tableBytes, m_indexBytes }) {
        s->attachAxis(m_x);
        s->attachAxis(m_y);
        // A sample is taken at most every few minutes: each is a point of its own.
        s->setPointsVisible(true);
    }
    m_chart->legend()->setAlignment(Qt::AlignBottom);
    m_chart->setMargins(QMargins(4, 4, 4, 4));
    m_y->setLabelFormat(QStringLiteral("%g"));
    m_y->setMin(0);
    m_chartView->setObjectName(QStringLiteral("storageSizeChart"));
    m_chartView->setRenderHint(QPainter::Antialiasing);
    m_chartView->setMinimumHeight(200);
    // Before the first read the axes would show 1970 and a scale of nothing: an empty state.
    for (QAbstractAxis* axis : { static_cast<QAbstractAxis*>(m_x), static_cast<QAbstractAxis*>(m_y),
             static_cast<QAbstractAxis*>(m_rowsAxis) })
        axis->setVisible(false);
    m_chart->legend()->setVisible(false);

    // The status table is as tall as its four rows; the retention table and the chart take the rest.
    m_status->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    // Fixed: the horizon box below must not squeeze the four rows (the retention table gives way).
    m_status->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    m_status->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* statusLayout = new QVBoxLayout(m_statusBox);
    statusLayout->addWidget(m_status);
    auto* purgeLayout = new QVBoxLayout(m_purgeBox);
    purgeLayout->addWidget(m_purge, 1);
    auto* retentionLayout = new QVBoxLayout(m_retentionBox);
    retentionLayout->addWidget(m_retention, 1);
    retentionLayout->addWidget(m_meaning);
    auto* tablesLayout = new QVBoxLayout(m_tablesBox);
    tablesLayout->addWidget(m_tables);
    auto* horizonLayout = new QVBoxLayout(m_horizonBox);
    horizonLayout->addWidget(m_horizon);
    horizonLayout->addWidget(m_holders);

    auto* grid = new QGridLayout;
    grid->addWidget(m_statusBox, 0, 0);
    grid->addWidget(m_purgeBox, 0, 1);
    grid->addWidget(m_retentionBox, 1, 0);
    grid->addWidget(m_chartView, 1, 1);
    grid->addWidget(m_tablesBox, 2, 0, 1, 2);
    grid->addWidget(m_horizonBox, 3, 0, 1, 2);
    // The tables need the width more than the chart: at 3:2 a policy set by an operator
    // ("when, role (user)") did not fit the default window.
    grid->setColumnStretch(0, 2);
    grid->setColumnStretch(1, 1);
    grid->setRowStretch(1, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_statusLine);
    layout->addWidget(m_error);
    layout->addLayout(grid, 1);

    connect(m_model, &StorageModel::updated, this, [this] {
        m_error->hide();
        m_statusLine->markRead();
        render();
    });
    connect(m_model, &StorageModel::failed, this, [this](const QString& message) {
        m_error->setText(tr("Could not read the storage figures: %1").arg(message));
        m_error->show();
    });
    // Sizes and statistics move slowly; the catalogue reads are cheap but need not be per second.
    m_timer->setInterval(30000);
    connect(m_timer, &QTimer::timeout, this, [this] {
        if (isVisible())
            reload();
    });
    m_timer->start();
    connect(session, &ConsoleSession::stateChanged, this, [this](ConsoleSession::State s) {
        if (s == ConsoleSession::State::Connected && isVisible())
            reload();
    });
    retranslate();
    applyTheme();
}

StorageWidget::~StorageWidget() = default;

void StorageWidget::reload()
{
    if (m_session->state() == ConsoleSession::State::Connected)
        m_model->reload();
}

void StorageWidget::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    reload();
}

bool StorageWidget::event(QEvent* event)
{
    const auto type = event->type();
    const bool result = QWidget::event(event);
    if (type == QEvent::LanguageChange) {
        retranslate();
        render();
    }
    if (type == QEvent::ApplicationPaletteChange || type == QEvent::PaletteChange)
        applyTheme();
    return result;
}

void StorageWidget::retranslate()
{
    m_statusBox->setTitle(tr("Rows by status"));
    m_purgeBox->setTitle(tr("Purge"));
    m_retentionBox->setTitle(tr("Retention of succeeded keys"));
    m_tablesBox->setTitle(tr("Tables"));
    m_horizonBox->setTitle(tr("Transaction horizon: who keeps dead rows from being removed"));
    m_dead->setName(tr("dead rows (samples)"));
    m_holders->setColumnCount(9);
    m_holders->setHorizontalHeaderLabels({ tr("Holder"), tr("PID"), tr("Role"), tr("Application"), tr("Client"),
        tr("State"), tr("Open for"), tr("Transaction ids"), tr("Query") });
    m_chart->setTitle(m_x->isVisible() ? tr("Size of the task table over time")
                                       : tr("Size of the task table over time: not read yet"));
    m_tableBytes->setName(tr("table"));
    m_indexBytes->setName(tr("indexes"));
    m_rows->setName(tr("rows (from the counters)"));
    m_rowsAxis->setTitleText(tr("rows"));
    m_status->setColumnCount(3);
    m_status->setHorizontalHeaderLabels({ tr("Status"), tr("Rows"), tr("What the number is") });
    m_retention->setColumnCount(5);
    m_retention->setHorizontalHeaderLabels(
        { tr("Operation"), tr("Keeps succeeded keys"), tr("Oldest succeeded"), tr("Due for purge"), tr("Policy set") });
    m_tables->setColumnCount(8);
    m_tables->setHorizontalHeaderLabels({ tr("Table"), tr("Data"), tr("Indexes"), tr("Total"), tr("Rows (estimate)"),
        tr("Dead rows"), tr("Last vacuum"), tr("Last autovacuum") });
    if (!m_model->report())
        m_purge->setText(tr("Not read yet."));
}

void StorageWidget::applyTheme()
{
    const bool dark = theme::isDark();
    const auto chartTheme = dark ? QChart::ChartThemeDark : QChart::ChartThemeLight;
    if (m_chart->theme() != chartTheme)
        m_chart->setTheme(chartTheme);
    m_chart->setBackgroundBrush(QApplication::palette().color(QPalette::Base));
    for (auto* s : { m_tableBytes, m_indexBytes, m_rows, m_dead })
        s->setColor(tones::series(s->objectName()));
}

void StorageWidget::render()
{
    const auto& maybe = m_model->report();
    if (!maybe)
        return;
    const auto& r = *maybe;

    m_status->setRowCount(static_cast<int>(r.rowsByStatus.size()));
    for (int i = 0; i < static_cast<int>(r.rowsByStatus.size()); ++i) {
        const auto& s = r.rowsByStatus[std::size_t(i)];
        m_status->setItem(i, 0, cell(statusName(s.status)));
        m_status->setItem(i, 1, cell(storagetext::figure(s.rows, s.label), true));
        m_status->setItem(i, 2, cell(storagetext::quality(s.label, idem::boundedCountCap)));
    }
    fitColumns(m_status);

    m_retention->setRowCount(static_cast<int>(r.operations.size()));
    for (int i = 0; i < static_cast<int>(r.operations.size()); ++i) {
        const auto& o = r.operations[std::size_t(i)];
        const QString horizon = storagetext::horizon(o.horizonSeconds);
        m_retention->setItem(i, 0, cell(QString::fromStdString(o.operation)));
        m_retention->setItem(i, 1,
            cell(o.policyOperation == "*" ? tr("%1 (default)").arg(horizon) : horizon, false,
                storagetext::meaning(o.operation, o.horizonSeconds)));
        QString oldest = tr("none");
        if (!o.oldestCompletedAt.empty())
            oldest = o.oldestAgeSeconds ? tr("%1 ago").arg(durationText(std::max(0.0, *o.oldestAgeSeconds) * 1000.0))
                                        : storagetext::when(o.oldestCompletedAt);
        m_retention->setItem(i, 2,
            cell(oldest, false,
                o.oldestCompletedAt.empty() ? QString()
                                            : tr("completed %1").arg(storagetext::when(o.oldestCompletedAt))));
        auto* due = cell(storagetext::figure(o.due, o.dueLabel), true,
            tr("Succeeded rows completed before %1 (%2)")
                .arg(storagetext::when(o.cutoff), storagetext::quality(o.dueLabel, r.dueCap)));
        if (o.due > 0)
            due->setForeground(theme::toneColor(theme::Tone::Caution));
        m_retention->setItem(i, 3, due);
        m_retention->setItem(i, 4,
            cell(o.policyChangedBy.empty() ? QString()
                                           : tr("%1, %2").arg(storagetext::when(o.policyChangedAt),
                                               QString::fromStdString(o.policyChangedBy))));
    }
    fitColumns(m_retention);

    QStringList meaning;
    for (const auto& p : r.policies)
        meaning << storagetext::meaning(p.operation, p.horizonSeconds);
    meaning << tr("Only succeeded keys are removed; processing, waiting and failed rows are kept whatever their age. "
                  "The audit trail is never purged.");
    if (r.retentionChangesNeedApproval)
        meaning << tr("A retention change waits for a second person's approval: `idemctl retention set` files a "
                      "request, another login with the approve right approves it (Approvals), then `idemctl retention "
                      "apply --request N --spec SHA256` applies it once.");
    m_meaning->setText(meaning.join(QLatin1Char('\n')));

    QStringList purge;
    if (r.running)
        purge << tr("Now: %1").arg(storagetext::purgeRun(*r.running));
    purge << (r.lastRun ? tr("Last run: %1").arg(storagetext::purgeRun(*r.lastRun)) : tr("Last run: never"));
    const QString dueTotal = (r.dueTotalLowerBound ? QStringLiteral("≥ ") : QString())
        + QLocale().toString(static_cast<qlonglong>(r.dueTotal));
    purge << tr("Due for purge now: %1 succeeded rows past their horizon.").arg(dueTotal);
    purge << tr("`idemctl purge --dry-run` lists what a run would remove; `idemctl purge` removes it in small "
                "batches that skip any row a worker is touching.");
    if (r.manualPurgesNeedApproval)
        purge << tr("A manual purge waits for a second person's approval: `idemctl purge` files a request, another "
                    "login with the approve right approves it (Approvals), then `idemctl purge --request N --spec "
                    "SHA256` runs it once. Scheduled purges (pg_cron) keep running.");
    m_purge->setText(purge.join(QLatin1Char('\n')));

    m_tables->setRowCount(static_cast<int>(r.tables.size()));
    for (int i = 0; i < static_cast<int>(r.tables.size()); ++i) {
        const auto& t = r.tables[std::size_t(i)];
        m_tables->setItem(i, 0, cell(QString::fromStdString(t.name)));
        m_tables->setItem(i, 1, cell(storagetext::bytes(t.tableBytes), true));
        m_tables->setItem(i, 2, cell(storagetext::bytes(t.indexBytes), true));
        m_tables->setItem(i, 3, cell(storagetext::bytes(t.totalBytes), true));
        // Before the first ANALYZE the statistics collector's live rows stand in.
        m_tables->setItem(i, 4,
            cell(QStringLiteral("≈ ")
                    + QLocale().toString(static_cast<qlonglong>(t.rowsEstimate.value_or(t.liveTuples))),
                true,
                t.rowsEstimate ? tr("planner statistics (pg_class.reltuples)")
                               : tr("not analysed yet: the statistics collector's live rows (n_live_tup)")));
        m_tables->setItem(i, 5, cell(QLocale().toString(static_cast<qlonglong>(t.deadTuples)), true));
        m_tables->setItem(i, 6, cell(storagetext::when(t.lastVacuum)));
        m_tables->setItem(i, 7, cell(storagetext::when(t.lastAutovacuum)));
    }
    fitColumns(m_tables);
    renderHorizon();
    renderChart();
}

void StorageWidget::renderHorizon()
{
    const auto& h = m_model->report()->horizon;
    const auto& v = m_model->horizonVerdict();
    QStringList lines;
    m_holders->setRowCount(0);
    if (!h.available) {
        lines << tr("Who holds back the transaction horizon shows from schema v26 on (idemctl migrate).");
        m_horizon->setText(lines.join(QLatin1Char('\n')));
        m_holders->hide();
        return;
    }
    const auto* oldest = h.oldest();
    if (!oldest)
        lines << tr("Nothing holds back the horizon: no other open transaction, prepared transaction, replication "
                    "slot or standby feedback. VACUUM can remove every dead row.");
    else if (v.alert())
        lines << tr("⚠ Held past %1 by %2, while the Idem tables' dead rows grew by %3 since %4: VACUUM cannot remove "
                    "rows that died after it began, until it ends.")
                     .arg(durationText(double(m_model->heldAfterSeconds()) * 1000.0), horizontext::holder(*oldest),
                         QLocale().toString(static_cast<qlonglong>(v.grewBy)), storagetext::when(v.since));
    else
        lines << tr("Oldest: %1. VACUUM cannot remove rows that died after it began.").arg(horizontext::holder(*oldest));
    lines << tr("Dead rows in the Idem tables: ≈ %1 (statistics estimate, n_dead_tup). The horizon keeps at least %2 "
                "of them (tables vacuumed since it began: that vacuum removed what it could) and at most all %1.")
                 .arg(QLocale().toString(static_cast<qlonglong>(h.deadTotal)),
                     QLocale().toString(static_cast<qlonglong>(h.keptAtLeast)));
    if (h.samples.size() < 2)
        lines << tr("Autovacuum: too few size samples yet to tell whether it keeps up (one every %1 while anyone "
                    "reads).")
                     .arg(durationText(double(m_model->report()->samplePeriodSeconds) * 1000.0));
    else if (h.fruitlessIntervals > 0)
        lines << tr("Autovacuum does not keep up: %1 vacuums of the task table since %2; after %3 of the sample "
                    "intervals with a vacuum its dead rows did not fall.")
                     .arg(h.vacuumsInSamples)
                     .arg(storagetext::when(h.samples.front().takenAt))
                     .arg(h.fruitlessIntervals);
    else
        lines << tr("Autovacuum keeps up: %1 vacuums of the task table since %2, each followed by fewer dead rows.")
                     .arg(h.vacuumsInSamples)
                     .arg(storagetext::when(h.samples.front().takenAt));
    if (!h.ownerSeesAll)
        lines << tr("The owner of idem_horizon_holders lacks pg_read_all_stats: other roles' sessions are missing "
                    "here. Grant it to the role that ran idemctl migrate.");
    if (!h.loginSeesAll)
        lines << tr("This login lacks pg_read_all_stats: it sees every holder's pid, role, application, state and "
                    "age, but not another role's client address or query text; pg_read_all_stats adds them.");
    m_horizon->setText(lines.join(QLatin1Char('\n')));

    m_holders->setVisible(!h.holders.empty());
    m_holders->setRowCount(static_cast<int>(h.holders.size()));
    for (int i = 0; i < static_cast<int>(h.holders.size()); ++i) {
        const auto& x = h.holders[std::size_t(i)];
        const QString holder = x.name.empty() ? horizontext::kind(x.kind)
                                              : QString(horizontext::kind(x.kind) + QLatin1Char(' ') + visibleText(x.name));
        m_holders->setItem(i, 0, cell(holder));
        m_holders->setItem(i, 1, cell(x.pid ? QString::number(*x.pid) : QString(), true));
        m_holders->setItem(i, 2, cell(visibleText(x.role)));
        m_holders->setItem(i, 3, cell(visibleText(x.application)));
        m_holders->setItem(i, 4, cell(x.client.empty() && x.queryHidden ? tr("hidden") : visibleText(x.client)));
        m_holders->setItem(i, 5, cell(visibleText(x.state)));
        m_holders->setItem(i, 6,
            cell(x.ageSeconds ? durationText(double(*x.ageSeconds) * 1000.0) : QString(), true,
                x.xactStart.empty() ? QString() : tr("transaction began %1; query began %2")
                                                      .arg(storagetext::when(x.xactStart), storagetext::when(x.queryStart))));
        m_holders->setItem(i, 7, cell(QLocale().toString(static_cast<qlonglong>(x.xidAge)), true));
        m_holders->setItem(i, 8,
            cell(x.queryHidden ? tr("hidden: another role's (pg_read_all_stats shows it)") : visibleText(x.query)));
    }
    fitColumns(m_holders);
}

void StorageWidget::renderChart()
{
    const auto& r = *m_model->report();
    // The samples, then the size read now: the lines end where the Tables list stands.
    std::vector<idem::StorageSample> samples = r.samples;
    for (const auto& t : r.tables)
        if (t.name == "task_idempotency")
            samples.push_back({ r.asOf, t.tableBytes, t.indexBytes, t.rowsEstimate });
    std::int64_t top = 0;
    for (const auto& s : samples)
        top = std::max({ top, s.tableBytes, s.indexBytes });
    // One unit for the axis, the largest that keeps the top above 1.
    double unit = 1;
    QString unitName = tr("bytes");
    for (const auto& [scale, name] : { std::pair { 1024.0 * 1024 * 1024, tr("GB") },
             std::pair { 1024.0 * 1024, tr("MB") }, std::pair { 1024.0, tr("KB") } })
        if (static_cast<double>(top) >= scale) {
            unit = scale;
            unitName = name;
            break;
        }
    QList<QPointF> table;
    QList<QPointF> index;
    QDateTime first;
    QDateTime last;
    for (const auto& s : samples) {
        const QDateTime at = storagetext::parseTime(s.takenAt);
        if (!at.isValid())
            continue;
        if (!first.isValid())
            first = at;
        last = at;
        const auto x = static_cast<qreal>(at.toMSecsSinceEpoch());
        table << QPointF(x, static_cast<double>(s.tableBytes) / unit);
        index << QPointF(x, static_cast<double>(s.indexBytes) / unit);
    }
    m_tableBytes->replace(table);
    m_indexBytes->replace(index);
    // The rows from the counters and the dead rows from the samples share the rows axis.
    double topRows = 0;
    const auto rowsPoint = [&](const std::string& iso, std::int64_t value, QList<QPointF>& into) {
        const QDateTime at = storagetext::parseTime(iso);
        if (!at.isValid())
            return;
        if (!first.isValid() || at < first)
            first = at;
        if (!last.isValid() || at > last)
            last = at;
        into << QPointF(static_cast<qreal>(at.toMSecsSinceEpoch()), static_cast<double>(value));
        topRows = std::max(topRows, static_cast<double>(value));
    };
    QList<QPointF> rows;
    for (const auto& p : m_model->rowsHistory().points)
        rowsPoint(p.at, p.rows, rows);
    m_rows->replace(rows);
    QList<QPointF> dead;
    for (const auto& d : r.horizon.samples)
        rowsPoint(d.takenAt, d.deadTuples, dead);
    m_dead->replace(dead);
    m_rowsAxis->setRange(0, std::max(10.0, topRows * 1.1));
    m_rowsAxis->applyNiceNumbers();
    if (!first.isValid()) {
        first = QDateTime::currentDateTime().addSecs(-3600);
        last = QDateTime::currentDateTime();
    } else if (first == last) {
        first = first.addSecs(-1800);
        last = last.addSecs(1800);
    }
    for (QAbstractAxis* axis : { static_cast<QAbstractAxis*>(m_x), static_cast<QAbstractAxis*>(m_y),
             static_cast<QAbstractAxis*>(m_rowsAxis) })
        axis->setVisible(true);
    m_chart->legend()->setVisible(true);
    m_chart->setTitle(tr("Size of the task table over time"));
    // Round ticks, as on the dashboard: whole hours or days of local time, not wherever the
    // first sample happened to fall.
    const RoundTimeAxis axis = roundTimeAxis(first.toMSecsSinceEpoch(), last.toMSecsSinceEpoch());
    m_x->setRange(QDateTime::fromMSecsSinceEpoch(axis.fromMs), QDateTime::fromMSecsSinceEpoch(axis.toMs));
    m_x->setTickCount(axis.ticks);
    constexpr qint64 dayMs = 86400000;
    m_x->setFormat(axis.stepMs >= dayMs                  ? QStringLiteral("MM-dd")
            : axis.toMs - axis.fromMs >= dayMs ? QStringLiteral("MM-dd HH:mm")
                                               : QStringLiteral("HH:mm"));
    m_y->setRange(0, std::max(1.0, static_cast<double>(top) / unit * 1.1));
    m_y->applyNiceNumbers();
    m_y->setTitleText(unitName);
    m_chartView->setToolTip(tr("Rows: counted back from now by the keys the claims created and the rows the purges "
                               "removed, per hour (per ten minutes over the last two days; an estimate). ")
        + (r.samples.empty() ? tr("No size sample yet: one is taken at most every %1 while a console or idemctl reads.")
                                   .arg(durationText(double(r.samplePeriodSeconds) * 1000.0))
                             : tr("%n sample(s), at most one every %1", nullptr, static_cast<int>(r.samples.size()))
                                   .arg(durationText(double(r.samplePeriodSeconds) * 1000.0))));
}

} // namespace idem::console
