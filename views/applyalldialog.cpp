#include "views/applyalldialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <memory>

#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/jobcontrol.h"
#include "models/jobrunners.h"
#include "models/jobsmodel.h"
#include "models/redrivewatch.h"
#include "models/taskbrowsermodel.h"
#include "models/visibletext.h"
#include "views/actiondialog.h"
#include "views/refusalnote.h"

namespace idem::console {

namespace {
    QString count(std::int64_t n) { return QLocale().toString(qlonglong(n)); }
} // namespace

ApplyAllDialog::ApplyAllDialog(ConsoleSession* admin, JobRunners* runners, const idem::TaskFilter& filter,
    idem::RecoveryAction initial, QWidget* parent)
    : QDialog(parent)
    , m_admin(admin)
    , m_runners(runners)
    , m_filter(filter)
    , m_action(new QComboBox)
    , m_extra(new QSpinBox)
    , m_cap(new QSpinBox)
    , m_reason(new QPlainTextEdit)
    , m_runHere(new QCheckBox(tr("Run it from this console (on a connection of its own)")))
    , m_reexecute(new QCheckBox(tr("Re-execute now: each requeued key's stored request runs again on a re-driver of "
                                   "its operation, with the same key")))
    , m_offer(new QLabel)
    , m_offerRefusal(new RefusalNote(QStringLiteral("reexecuteRefusal")))
    , m_redrivers(new RedriveStatusWatch(admin, this))
    , m_jobs(new JobControl(admin, this))
    , m_count(new QLabel)
    , m_plan(new QLabel)
    , m_result(new QLabel)
    , m_start(new QPushButton(tr("Start job")))
    , m_close(new QPushButton(tr("Close")))
{
    setObjectName(QStringLiteral("applyAllDialog"));
    setWindowTitle(tr("Apply to all matching"));
    setAttribute(Qt::WA_DeleteOnClose);
    for (auto a : { idem::RecoveryAction::Requeue, idem::RecoveryAction::Release, idem::RecoveryAction::Fail })
        m_action->addItem(actionTitle(a), static_cast<int>(a));
    m_action->setCurrentIndex(m_action->findData(static_cast<int>(initial)));
    m_extra->setRange(1, 1000);
    m_extra->setValue(1);
    m_cap->setRange(1, int(idem::JobLimits::maxCap));
    m_cap->setGroupSeparatorShown(true);
    m_cap->setValue(int(idem::JobLimits::defaultCap));
    m_reason->setPlaceholderText(tr("Why (kept in the audit trail with the job)"));
    m_reason->setMaximumHeight(70);
    m_runHere->setChecked(true);
    for (auto* l : { m_count, m_plan, m_result }) {
        l->setWordWrap(true);
        l->setTextFormat(Qt::PlainText);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    m_count->setObjectName(QStringLiteral("countLabel"));
    m_plan->setObjectName(QStringLiteral("planLabel"));
    m_result->setObjectName(QStringLiteral("resultLabel"));
    m_start->setObjectName(QStringLiteral("startJobButton"));
    m_reexecute->setObjectName(QStringLiteral("reexecuteBox"));
    m_reexecute->setEnabled(false);
    m_offer->setObjectName(QStringLiteral("reexecuteOffer"));
    m_offer->setWordWrap(true);
    m_offer->setTextFormat(Qt::PlainText);

    auto* intro = new QLabel(tr("Every task the Tasks page's filters match, not only the rows loaded. The database "
                                "runs it in small batches; a row that changed since the job's start is refused and "
                                "listed, never changed."));
    intro->setWordWrap(true);
    // --- The filter in words, before anything runs (issue 41, item 2) ---
    auto* filterText = new QLabel(taskFilterText(m_filter));
    filterText->setTextFormat(Qt::PlainText);
    // --- end of the filter in words ---
    filterText->setWordWrap(true);
    filterText->setObjectName(QStringLiteral("filterLabel"));
    auto* runNote = new QLabel(tr("Closing the console stops running it here, not the job: it stays active with "
                                  "every batch done so far, and anyone with idem_operator resumes it (Jobs page > "
                                  "Resume, idemctl job resume ID, or CALL idem_job_run(ID) under pg_cron)."));
    runNote->setWordWrap(true);
    runNote->setObjectName(QStringLiteral("runNote"));

    auto* form = new QFormLayout;
    form->addRow(tr("Action:"), m_action);
    form->addRow(tr("Extra attempts:"), m_extra);
    // Issue 42: a requeue job that re-executes, where a re-driver of the operation is online.
    auto* reexecute = new QVBoxLayout;
    reexecute->addWidget(m_reexecute);
    reexecute->addWidget(m_offer);
    reexecute->addWidget(m_offerRefusal);
    form->addRow(tr("Re-execution:"), reexecute);
    form->addRow(tr("Filter:"), filterText);
    form->addRow(tr("Matching now:"), m_count);
    form->addRow(tr("Cap (rows at most):"), m_cap);
    form->addRow(tr("Reason:"), m_reason);
    auto* buttons = new QDialogButtonBox;
    buttons->addButton(m_start, QDialogButtonBox::AcceptRole);
    buttons->addButton(m_close, QDialogButtonBox::RejectRole);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(m_runHere);
    layout->addWidget(runNote);
    auto* planTitle = new QLabel(tr("What will run:"));
    QFont bold = planTitle->font();
    bold.setBold(true);
    planTitle->setFont(bold);
    layout->addWidget(planTitle);
    layout->addWidget(m_plan);
    layout->addWidget(m_result);
    layout->addWidget(buttons);
    // Wrapped labels grow as the plan changes: the dialog never clips them.
    layout->setSizeConstraint(QLayout::SetMinimumSize);
    resize(760, sizeHint().height());

    connect(m_action, &QComboBox::currentIndexChanged, this, [this] {
        m_extra->setEnabled(action() == idem::RecoveryAction::Requeue);
        updateReexecute();
        previewNow();
    });
    connect(m_extra, &QSpinBox::valueChanged, this, &ApplyAllDialog::updatePlan);
    connect(m_cap, &QSpinBox::valueChanged, this, &ApplyAllDialog::updatePlan);
    connect(m_reason, &QPlainTextEdit::textChanged, this, &ApplyAllDialog::updatePlan);
    connect(m_runHere, &QCheckBox::toggled, this, &ApplyAllDialog::updatePlan);
    connect(m_reexecute, &QCheckBox::toggled, this, &ApplyAllDialog::updatePlan);
    connect(m_redrivers, &RedriveStatusWatch::changed, this, &ApplyAllDialog::updateReexecute);
    connect(m_start, &QPushButton::clicked, this, &ApplyAllDialog::start);
    connect(m_close, &QPushButton::clicked, this, &QDialog::reject);
    connect(m_jobs, &JobControl::previewed, this, &ApplyAllDialog::previewed);
    connect(m_jobs, &JobControl::previewFailed, this, [this](const QString& why) {
        m_previewError = why;
        updatePlan();
    });
    connect(m_jobs, &JobControl::started, this, &ApplyAllDialog::started);
    connect(m_jobs, &JobControl::startFailed, this, [this](const QString& why) {
        m_result->setText(tr("Not started, nothing changed: %1").arg(why));
        updateReexecute();
    });
    m_extra->setEnabled(action() == idem::RecoveryAction::Requeue);
    updateReexecute();
    previewNow();
}

void ApplyAllDialog::updateReexecute()
{
    const bool requeue = action() == idem::RecoveryAction::Requeue;
    const auto offer = m_redrivers->offerFor(m_filter.tenant, m_filter.operation);
    QStringList refusals = offer.refusals;
    if (!requeue)
        refusals = QStringList { tr("Only a requeue re-executes.") };
    else if (const QString no = m_admin->serverInfo().rights.refusal(QStringLiteral("requeue")); !no.isEmpty())
        refusals.prepend(no);
    const bool can = requeue && offer.any && !m_started && !m_jobs->starting();
    if (!offer.any && m_reexecute->isChecked())
        m_reexecute->setChecked(false); // the last re-driver went away before the start
    m_reexecute->setEnabled(can);
    m_offer->setText(requeue ? offer.offers.join(QLatin1Char('\n')) : QString());
    m_offer->setVisible(requeue && !offer.offers.isEmpty());
    m_offerRefusal->setReasons(refusals);
    updatePlan();
}

ApplyAllDialog::~ApplyAllDialog() = default;

idem::RecoveryAction ApplyAllDialog::action() const
{
    return static_cast<idem::RecoveryAction>(m_action->currentData().toInt());
}

bool ApplyAllDialog::previewing() const { return m_jobs->previewing(); }

void ApplyAllDialog::previewNow()
{
    m_preview.reset();
    m_need.reset();
    m_previewError.clear();
    m_jobs->preview(action(), m_filter);
    updatePlan();
}

void ApplyAllDialog::previewed(const idem::JobPreview& preview, const idem::ApprovalNeed& need)
{
    m_preview = preview;
    m_need = need;
    // A cap that takes what matches now, when the default is too small for it.
    if (m_preview->matched > m_cap->value() && m_preview->matched <= idem::JobLimits::maxCap)
        m_cap->setValue(int(m_preview->matched));
    updatePlan();
}

void ApplyAllDialog::updatePlan()
{
    const auto a = action();
    if (m_jobs->previewing())
        m_count->setText(tr("counting…"));
    else if (!m_previewError.isEmpty())
        m_count->setText(tr("Could not count: %1").arg(m_previewError));
    else if (m_preview) {
        const QString at = formatTimeUs(m_preview->momentUs);
        const std::int64_t skipped = m_preview->matched - m_preview->applicable;
        if (m_preview->more)
            m_count->setText(tr("more than %1 tasks match (as of %2): more than one job takes; narrow the filter")
                                 .arg(count(m_preview->matched), at));
        else
            m_count->setText(tr("%1 tasks match (as of %2): the action applies to %3, skips %4")
                                 .arg(count(m_preview->matched), at, count(m_preview->applicable), count(skipped)));
    }
    QStringList problems;
    // The action's own right (schema v21; before, idem_operator): the database refuses it anyway.
    if (const QString refusal = m_admin->serverInfo().rights.refusal(QString::fromLatin1(idem::actionName(action())));
        !refusal.isEmpty())
        problems << refusal;
    if (!m_preview)
        problems << tr("the count is not known yet");
    else if (m_preview->applicable == 0)
        problems << tr("no matching task can be changed by this action");
    else if (m_preview->matched > m_cap->value())
        problems << tr("more tasks match than the cap: the job would be refused");
    if (idem::reasonIsBlank(m_reason->toPlainText().toStdString()))
        problems << tr("a reason is required");
    if (m_started)
        problems.clear();

    const QString what = a == idem::RecoveryAction::Requeue
        ? tr("%1 (attempts +%2)").arg(actionTitle(a)).arg(m_extra->value())
        : actionTitle(a);
    QString plan = tr("Action: %1 — each task %2").arg(what, actionEffect(a, m_extra->value()));
    plan += QLatin1Char('\n') + tr("Filter: %1").arg(taskFilterText(m_filter)); // in words (issue 41, item 2)
    if (m_preview)
        plan += QLatin1Char('\n')
            + tr("Count: %1 match now, %2 to change; the job records the rows that match when it starts (its "
                 "moment), and only those")
                  .arg(count(m_preview->matched), count(m_preview->applicable));
    plan += QLatin1Char('\n') + tr("Cap: %1 rows at most").arg(count(m_cap->value()));
    if (m_need && m_need->needed()) {
        const QString why = m_need->why == "rows"
            ? tr("%1 rows to change, more than the approval policy's %2 for a job without a second person")
                  .arg(count(m_preview ? m_preview->applicable : 0), count(m_need->jobRows.value_or(0)))
            : tr("this login changed %1 rows without approval in the last %2, and the approval policy allows %3 "
                 "without a second person")
                  .arg(count(m_need->used), durationText(double(m_need->windowSeconds) * 1000.0),
                      count(m_need->budgetRows.value_or(0)));
        plan += QLatin1Char('\n')
            + tr("Approval: needed (%1). The job waits for approval by a holder of approve (another login with the "
                 "approve right), then runs; until then nothing changes.")
                  .arg(why);
        plan += QLatin1Char('\n')
            + (m_runHere->isChecked()
                    ? tr("Runs: from this console once approved, while it stays open; resumable by anyone after")
                    : tr("Runs: not here; once approved, start its runner with idemctl job resume ID or pg_cron"));
    } else
        plan += QLatin1Char('\n')
            + (m_runHere->isChecked() ? tr("Runs: from this console now, resumable by anyone if it stops")
                                      : tr("Runs: not here; start its runner with idemctl job resume ID or pg_cron"));
    if (a == idem::RecoveryAction::Requeue && m_reexecute->isChecked())
        plan += QLatin1Char('\n')
            + tr("Re-execution: each requeued key with a stored request gets a re-drive item that its operation's "
                 "re-drivers run with the same key (%1); the Jobs page shows their outcomes. A key without one waits "
                 "for its client.")
                  .arg(m_offer->text().replace(QLatin1Char('\n'), QStringLiteral("; ")));
    if (!problems.isEmpty())
        plan += QLatin1Char('\n') + tr("Not yet: %1").arg(problems.join(QStringLiteral("; ")));
    m_plan->setText(plan);
    m_start->setEnabled(problems.isEmpty() && !m_started && !m_jobs->starting() && !m_admin->readOnly());
}

void ApplyAllDialog::start()
{
    idem::JobRequest request;
    request.action = action();
    request.filter = m_filter;
    request.cap = m_cap->value();
    request.extraAttempts = m_extra->value();
    request.reason = m_reason->toPlainText().toStdString();
    request.reexecute
        = request.action == idem::RecoveryAction::Requeue && m_reexecute->isChecked() && m_reexecute->isEnabled();
    // Run from here: refused before anything is written when the console goes through a pooler.
    request.runsHere = m_runHere->isChecked() && m_runners;
    try {
        idem::validateJobRequest(request);
    } catch (const std::invalid_argument& e) {
        m_result->setText(visibleText(std::string(e.what())));
        return;
    }
    m_result->setText(tr("starting…"));
    m_reexecute->setEnabled(false);
    m_jobs->start(request);
    updatePlan();
}

void ApplyAllDialog::started(const idem::JobStart& start)
{
    m_started = start;
    const bool runHere = m_runHere->isChecked() && m_runners;
    if (runHere)
        m_runners->run(m_admin->settings(), m_started->jobId);
    if (m_started->awaitingApproval)
        m_result->setText(tr("Job %1 is waiting for approval by a holder of approve (another login with the "
                             "approve right): %2 rows to change, nothing changed yet. %3")
                              .arg(m_started->jobId)
                              .arg(count(m_started->pending),
                                  runHere ? tr("This console runs it as soon as it is approved, while it "
                                               "stays open; follow it on the Jobs page.")
                                          : tr("Once approved, resume it from the Jobs page or idemctl.")));
    else
        m_result->setText(tr("Job %1 started as of %2: %3 matched, %4 to change, %5 skipped. %6")
                              .arg(m_started->jobId)
                              .arg(formatTimeUs(m_started->momentUs), count(m_started->matched),
                                  count(m_started->pending), count(m_started->skipped),
                                  runHere ? tr("Running from this console; follow it on the Jobs page.")
                                          : tr("Not running yet: resume it from the Jobs page or idemctl.")));
    m_close->setText(tr("Close"));
    updatePlan();
    Q_EMIT jobStarted(m_started->jobId);
}

} // namespace idem::console
