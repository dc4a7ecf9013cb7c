#include "views/jobswidget.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>
#include <utility>

#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/jobcontrol.h"
#include "models/jobitemsmodel.h"
#include "models/jobrunners.h"
#include "models/jobsmodel.h"
#include "models/olderschema.h"
#include "models/redrivewatch.h"
#include "models/rolerights.h"
#include "models/taskbrowsermodel.h"
#include "models/visibletext.h"
#include "views/refusalnote.h"

namespace idem::console {

namespace {
    QString count(std::int64_t n) { return QLocale().toString(qlonglong(n)); }

    void setUpTable(QTableView* view)
    {
        view->setSelectionBehavior(QAbstractItemView::SelectRows);
        view->setSelectionMode(QAbstractItemView::SingleSelection);
        view->verticalHeader()->hide();
        view->horizontalHeader()->setStretchLastSection(true);
        view->setWordWrap(false);
    }
} // namespace

JobsWidget::JobsWidget(ConsoleSession* monitor, ConsoleSession* admin, JobRunners* runners, QWidget* parent)
    : QWidget(parent)
    , m_monitor(monitor)
    , m_admin(admin ? admin : monitor)
    , m_runners(runners)
    , m_model(new JobsModel(monitor, this))
    , m_refused(new JobItemsModel(monitor, this))
    , m_control(new JobControl(m_admin, this))
    , m_intro(new QLabel)
    , m_state(new QLabel)
    , m_view(new QTableView)
    , m_detail(new QLabel)
    , m_progress(new QProgressBar)
    , m_cancel(new QPushButton)
    , m_resume(new QPushButton)
    , m_export(new QPushButton)
    , m_refusedTitle(new QLabel)
    , m_refusedView(new QTableView)
    , m_message(new QLabel)
    , m_refusal(new RefusalNote(QStringLiteral("jobRefusal")))
{
    setObjectName(QStringLiteral("jobsPage"));
    m_view->setObjectName(QStringLiteral("jobsView"));
    m_refusedView->setObjectName(QStringLiteral("refusedView"));
    m_cancel->setObjectName(QStringLiteral("cancelJobButton"));
    m_resume->setObjectName(QStringLiteral("resumeJobButton"));
    m_export->setObjectName(QStringLiteral("exportRefusedButton"));
    m_detail->setObjectName(QStringLiteral("jobDetail"));
    m_message->setObjectName(QStringLiteral("jobMessage"));
    for (auto* l : { m_intro, m_detail, m_message, m_state }) {
        l->setWordWrap(true);
        l->setTextFormat(Qt::PlainText);
    }
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_view->setModel(m_model);
    m_refusedView->setModel(m_refused);
    setUpTable(m_view);
    setUpTable(m_refusedView);
    m_refusedView->resizeColumnsToContents(); // empty: each column as wide as its header
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(true);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_progress, 1);
    buttons->addWidget(m_cancel);
    buttons->addWidget(m_resume);
    auto* refusedBar = new QHBoxLayout;
    refusedBar->addWidget(m_refusedTitle, 1);
    refusedBar->addWidget(m_export);
    auto* lower = new QWidget;
    auto* lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addWidget(m_detail);
    lowerLayout->addLayout(buttons);
    lowerLayout->addWidget(m_refusal);
    lowerLayout->addWidget(m_message);
    lowerLayout->addLayout(refusedBar);
    lowerLayout->addWidget(m_refusedView, 1);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_view);
    split->addWidget(lower);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_intro);
    layout->addWidget(m_state);
    layout->addWidget(split, 1);

    connect(m_model, &JobsModel::changed, this, [this] {
        // An approval given meanwhile (by another login, anywhere): said once, with who runs it.
        for (int row = 0; row < m_model->rowCount(); ++row) {
            const auto& j = m_model->job(row);
            if (j.state == "awaiting_approval") {
                m_awaiting.insert(j.id);
            } else if (m_awaiting.erase(j.id) && !j.approvedLogin.empty()) {
                const QString by = visibleText(j.approvedLogin);
                if (m_runners && m_runners->running(j.id))
                    say(tr("Job %1 was approved by %2: this console runs it now.").arg(j.id).arg(by));
                else if (j.ended())
                    say(tr("Job %1 was approved by %2 and is %3.").arg(j.id).arg(by, jobStateLabel(j.state)));
                else
                    say(tr("Job %1 was approved by %2: Resume runs it from this console (or idemctl job resume %1).")
                            .arg(j.id)
                            .arg(by));
            }
        }
        if (m_wanted && m_model->rowOfJob(m_wanted) >= 0)
            selectJob(std::exchange(m_wanted, 0));
        // Fitted to the first rows read, then left to the user.
        if (!m_fitted && m_model->rowCount() > 0) {
            m_fitted = true;
            m_view->resizeColumnsToContents();
            // Rate, ETA and the runner are empty until a runner works: room for what comes.
            const int em = m_view->fontMetrics().horizontalAdvance(QLatin1Char('M'));
            // Outcomes come after the first read: room for a figure of an incident's size.
            idem::RedriveOutcomes sample;
            sample.succeeded = 185;
            sample.failed = 4;
            sample.running = 2;
            const int reexecutionWidth = m_view->fontMetrics().horizontalAdvance(redriveOutcomesText(191, sample));
            const std::pair<int, int> least[]
                = { { JobsModel::StateColumn,
                        m_view->fontMetrics().horizontalAdvance(jobStateLabel("awaiting_approval")) + 2 * em },
                      { JobsModel::RateColumn, 8 * em }, { JobsModel::EtaColumn, 5 * em },
                      { JobsModel::RunnerColumn, 14 * em }, { JobsModel::ReexecutionColumn, reexecutionWidth + em } };
            for (const auto& [column, width] : least)
                m_view->setColumnWidth(column, std::max(m_view->columnWidth(column), width));
            // Long filters and reasons are capped; progress and state are read whole, and a state
            // may become the longest one later ("awaiting approval").
            for (int c = 0; c < JobsModel::COLUMN_COUNT; ++c)
                if (c != JobsModel::ProgressColumn && c != JobsModel::StateColumn && c != JobsModel::ReexecutionColumn)
                    m_view->setColumnWidth(c, std::min(m_view->columnWidth(c), 300));
            int state = 0;
            for (const char* s : { "active", "finished", "cancelled", "awaiting_approval" })
                state = std::max(state, m_view->fontMetrics().horizontalAdvance(jobStateLabel(s)) + 2 * em);
            m_view->setColumnWidth(
                JobsModel::StateColumn, std::max(m_view->columnWidth(JobsModel::StateColumn), state));
        }
        updateDetail();
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &JobsWidget::updateDetail);
    connect(m_refused, &JobItemsModel::loaded, this, [this] {
        if (m_refused->rowCount() > 0)
            m_refusedView->resizeColumnsToContents();
        updateDetail();
    });
    connect(m_refused, &JobItemsModel::exported, this, [this](const QString& path, qint64 rows) {
        say(tr("%n refused row(s) written to %1", nullptr, int(rows)).arg(path));
    });
    connect(m_refused, &JobItemsModel::exportFailed, this,
        [this](const QString& why) { say(tr("Export failed: %1").arg(why)); });
    connect(m_cancel, &QPushButton::clicked, this, [this] { askCancel(); });
    connect(m_resume, &QPushButton::clicked, this, &JobsWidget::resumeSelected);
    connect(m_export, &QPushButton::clicked, this, [this] {
        const auto id = selectedJob();
        if (!id)
            return;
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export refused rows"), QStringLiteral("job-%1-refused.csv").arg(id), tr("CSV files (*.csv)"));
        if (!path.isEmpty())
            exportRefused(path);
    });
    if (m_runners) {
        connect(m_runners, &JobRunners::ended, this, [this](qint64 id, const QString& state) {
            say(tr("Job %1: this console stopped running it (%2).").arg(id).arg(jobStateLabel(state.toStdString())));
            m_model->refreshNow();
        });
        connect(m_runners, &JobRunners::failed, this, [this](qint64 id, const QString& why) {
            say(tr("Job %1 could not run from this console: %2").arg(id).arg(why));
            m_model->refreshNow();
        });
        connect(m_runners, &JobRunners::started, this, [this] { m_model->refreshNow(); });
    }
    connect(m_control, &JobControl::cancelled, this, [this](qint64 id, qint64 skipped) {
        say(tr("Job %1 cancelled: %2 row(s) not done, recorded as skipped.").arg(id).arg(skipped));
        m_model->refreshNow();
    });
    connect(m_control, &JobControl::cancelFailed, this, [this](qint64 id, const QString& why) {
        say(tr("Job %1 was not cancelled: %2").arg(id).arg(why));
        updateDetail();
    });
    for (auto* s : { m_monitor, m_admin }) {
        connect(s, &ConsoleSession::stateChanged, this, &JobsWidget::updateDetail);
        connect(s, &ConsoleSession::serverInfoChanged, this, &JobsWidget::updateDetail);
    }
    retranslateUi();
}

JobsWidget::~JobsWidget() = default;

void JobsWidget::setPollInterval(int ms) { m_model->setInterval(ms); }

void JobsWidget::reload() { m_model->refreshNow(); }

void JobsWidget::say(const QString& text) { m_message->setText(text); }

void JobsWidget::selectJob(std::int64_t id)
{
    const int row = m_model->rowOfJob(id);
    if (row < 0) {
        m_wanted = id;
        m_model->refreshNow();
        return;
    }
    m_view->selectRow(row);
    m_view->scrollTo(m_model->index(row, 0));
}

std::int64_t JobsWidget::selectedJob() const
{
    const auto rows = m_view->selectionModel()->selectedRows();
    return rows.isEmpty() ? 0 : rows.first().data(JobsModel::JobIdRole).toLongLong();
}

void JobsWidget::updateDetail()
{
    if (const QString older = olderSchemaRefusal(*m_monitor); !older.isEmpty())
        m_state->setText(older);
    else if (!m_model->error().isEmpty())
        m_state->setText(tr("Could not read the jobs: %1").arg(m_model->error()));
    else if (m_monitor->state() != ConsoleSession::State::Connected)
        m_state->setText(tr("Not connected: the list is as last read."));
    else
        m_state->setText(
            tr("%n job(s), read every %1 s.", nullptr, m_model->rowCount()).arg(m_model->interval() / 1000.0));

    const auto id = selectedJob();
    const auto job = id ? m_model->jobById(id) : std::nullopt;
    const bool connected = m_admin->state() == ConsoleSession::State::Connected;
    const RoleRights& rights = m_admin->serverInfo().rights;
    // Running or resuming a job needs its action's right; cancelling it, that right or the
    // approve right (an approver turns a request down by cancelling it). The database decides
    // the same (schema v21); before, idem_operator did.
    const auto refusal = [&](const QString& right) {
        if (!connected)
            return tr("Not connected.");
        if (m_admin->readOnly())
            return tr("The schema is newer than this console: read-only.");
        return rights.refusal(right);
    };
    if (!job) {
        m_detail->setText(tr("Select a job to see its progress and refused rows."));
        m_progress->setValue(0);
        m_progress->setFormat(QString());
        m_cancel->setEnabled(false);
        m_resume->setEnabled(false);
        m_refusal->setReasons({});
        m_export->setEnabled(false);
        m_refused->setJob(0, 0);
        m_refusedTitle->setText(tr("Refused rows"));
        return;
    }
    const auto& j = *job;
    QStringList lines;
    lines << tr("Job %1: %2, %3 over %4")
                 .arg(j.id)
                 .arg(jobStateLabel(j.state), jobActionLabel(j), jobFilterText(j.filterJson));
    lines << tr("As of %1, cap %2; started by %3 (%4, %5): %6")
                 .arg(formatTimeUs(j.momentUs), count(j.cap), visibleText(j.dbRole), visibleText(j.actor),
                     visibleText(j.application), visibleText(j.reason));
    lines << QString(jobProgressText(j) + QStringLiteral(" — "))
            + tr("refused: %1 moved on, %2 busy, %3 gone; skipped: %4 not applicable, %5 cancelled")
                  .arg(j.refusedMovedOn)
                  .arg(j.refusedBusy)
                  .arg(j.refusedGone)
                  .arg(j.skippedNotApplicable)
                  .arg(j.skippedCancelled);
    // Issue 42: what the re-executions a requeue job queued came to, live.
    if (const auto outcomes = m_model->outcomes(j.id))
        lines << tr("Re-executed: %1").arg(redriveOutcomesText(j.changed, *outcomes));
    const auto rate = m_model->rate(j.id);
    const auto eta = m_model->etaSeconds(j.id);
    if (j.ended()) {
        QString ended = tr("Ended %1.").arg(j.finishedAtUs ? formatTimeUs(*j.finishedAtUs) : QString());
        if (j.state == "cancelled")
            ended += QLatin1Char(' ')
                + tr("Cancelled by %1: %2").arg(visibleText(j.cancelledBy), visibleText(j.cancelReason));
        lines << ended;
    } else if (j.runnerAlive)
        lines << tr("Running: %1 (%2, pid %3)%4")
                     .arg(visibleText(j.runnerActor), visibleText(j.runnerRole))
                     .arg(j.runnerPid.value_or(0))
                     .arg(rate ? tr(", %1 rows/s, about %2 left")
                                     .arg(*rate, 0, 'f', 1)
                                     .arg(eta ? durationText(std::max(0.0, *eta) * 1000.0) : QStringLiteral("—"))
                               : QString());
    else if (j.state == "active")
        lines << tr("No runner holds it: it waits, with every batch done so far kept. Resume runs it from this "
                    "console; idemctl job resume %1 or CALL idem_job_run(%1) anywhere else.")
                     .arg(j.id);
    else if (j.state == "awaiting_approval")
        lines << tr("Waiting for approval by a holder of approve (another login with the approve right: the Approvals "
                    "dialog, or idemctl approvals approve %1); nothing changes until then. %2")
                     .arg(j.approvalRequestId.value_or(0))
                     .arg(m_runners && m_runners->running(j.id)
                             ? tr("This console runs it as soon as it is approved.")
                             : tr("Once approved, Resume runs it from this console."));
    else
        lines << tr("State %1: nothing to run until it becomes active.").arg(jobStateLabel(j.state));
    m_detail->setText(lines.join(QLatin1Char('\n')));
    const std::int64_t done = j.changed + j.refused() + j.skipped();
    m_progress->setValue(j.matched > 0 ? int(done * 1000 / j.matched) : 0);
    m_progress->setFormat(tr("%1 of %2 done").arg(count(done), count(j.matched)));

    const bool runningHere = m_runners && m_runners->running(j.id);
    const QString actionRight = QString::fromStdString(j.action);
    const QString cannotRun = refusal(actionRight);
    const QString cannotCancel = refusal(actionRight).isEmpty() || refusal(QStringLiteral("approve")).isEmpty()
        ? QString()
        : cannotRun;
    m_cancel->setEnabled(cannotCancel.isEmpty() && !j.ended() && !m_control->cancelling());
    m_cancel->setToolTip(cannotCancel.isEmpty()
            ? tr("Stops it at the next batch; the rows not done are recorded as skipped.")
            : cannotCancel);
    m_resume->setEnabled(cannotRun.isEmpty() && m_runners && j.state == "active" && !j.runnerAlive && !runningHere);
    m_resume->setToolTip(cannotRun.isEmpty() ? (j.runnerAlive ? tr("A runner holds it already.")
                                                              : tr("Runs it from this console on a connection of its own."))
                                             : cannotRun);
    // Issue 41 item 6: a missing right said beside the greyed-out buttons, not only in their tooltips.
    m_refusal->setReasons({ cannotRun.isEmpty() || j.ended() ? QString() : tr("Resume: %1").arg(cannotRun),
        cannotCancel.isEmpty() || j.ended() ? QString() : tr("Cancel: %1").arg(cannotCancel) });
    m_export->setEnabled(j.refused() > 0 && !m_refused->exporting());
    m_refused->setJob(j.id, j.refused());
    m_refusedTitle->setText(m_refused->more() ? tr("Refused rows: the first %1 of %2 (Export writes them all)")
                                                    .arg(JobItemsModel::shownLimit)
                                                    .arg(count(j.refused()))
                                              : tr("Refused rows: %1").arg(count(j.refused())));
}

QDialog* JobsWidget::askCancel()
{
    const auto id = selectedJob();
    if (!id)
        return nullptr;
    auto* dialog = new QDialog(this);
    dialog->setObjectName(QStringLiteral("cancelJobDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Cancel job %1").arg(id));
    auto* text = new QLabel(tr("Job %1 stops at its next batch. What it changed stays changed; the rows not done "
                               "are recorded as skipped (cancelled). The cancel is audited with this reason.")
                                .arg(id));
    text->setWordWrap(true);
    auto* reason = new QPlainTextEdit;
    reason->setObjectName(QStringLiteral("reasonEdit"));
    reason->setPlaceholderText(tr("Why (kept in the audit trail)"));
    auto* box = new QDialogButtonBox;
    auto* ok = box->addButton(tr("Cancel job"), QDialogButtonBox::AcceptRole);
    ok->setObjectName(QStringLiteral("confirmCancelButton"));
    box->addButton(tr("Keep running"), QDialogButtonBox::RejectRole);
    ok->setEnabled(false);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(text);
    layout->addWidget(reason);
    layout->addWidget(box);
    connect(reason, &QPlainTextEdit::textChanged, ok,
        [ok, reason] { ok->setEnabled(!idem::reasonIsBlank(reason->toPlainText().toStdString())); });
    connect(box, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    connect(ok, &QPushButton::clicked, dialog, [this, dialog, reason, id] {
        if (selectedJob() == id)
            cancelSelected(reason->toPlainText());
        dialog->accept();
    });
    dialog->open();
    return dialog;
}

void JobsWidget::cancelSelected(const QString& reason)
{
    const auto id = selectedJob();
    if (!id || m_control->cancelling())
        return;
    say(tr("Cancelling job %1…").arg(id));
    m_control->cancel(id, reason.toStdString());
    updateDetail();
}

void JobsWidget::resumeSelected()
{
    const auto id = selectedJob();
    if (!id || !m_runners)
        return;
    if (m_runners->run(m_admin->settings(), id))
        say(tr("Job %1: running from this console. Closing the console stops running it here; the job stays "
               "resumable.")
                .arg(id));
    updateDetail();
}

void JobsWidget::exportRefused(const QString& path)
{
    const auto id = selectedJob();
    if (!id)
        return;
    say(tr("Writing job %1's refused rows…").arg(id));
    m_refused->exportCsv(id, path);
}

void JobsWidget::retranslateUi()
{
    m_intro->setText(tr("Recovery jobs apply one action to every task a filter matched, in the database, in "
                        "batches. Start one from the Tasks page (Apply to all matching…) or with idemctl job start; "
                        "jobs started anywhere show here."));
    m_cancel->setText(tr("Cancel job…"));
    m_resume->setText(tr("Resume here"));
    m_export->setText(tr("Export CSV…"));
    updateDetail();
}

void JobsWidget::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QWidget::changeEvent(event);
}

} // namespace idem::console
