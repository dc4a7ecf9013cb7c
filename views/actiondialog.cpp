#include "views/actiondialog.h"
#include "views/theme.h"

#include <QCheckBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStyle>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

#include "core/key.h"
#include "models/bulkaction.h"
#include "models/consolesession.h"
#include "models/redrivewatch.h"
#include "models/taskbrowsermodel.h"
#include "models/visibletext.h"
#include "views/refusalnote.h"

namespace idem::console {

namespace {
    constexpr int keysListedPerStatus = 50;

    // Keys as they are, byte for byte: a newline or an RTL override shown as an escape.
    QString html(const std::string& s) { return visibleHtml(s); }
} // namespace

QString actionTitle(idem::RecoveryAction action)
{
    switch (action) {
    case idem::RecoveryAction::Requeue:
        return QCoreApplication::translate("idem::console::ActionDialog", "Requeue");
    case idem::RecoveryAction::Release:
        return QCoreApplication::translate("idem::console::ActionDialog", "Release lease");
    case idem::RecoveryAction::Fail:
        return QCoreApplication::translate("idem::console::ActionDialog", "Mark failed");
    }
    return {};
}

QString actionEffect(idem::RecoveryAction action, int extraAttempts)
{
    switch (action) {
    case idem::RecoveryAction::Requeue:
        return QCoreApplication::translate("idem::console::ActionDialog",
            "becomes retryable_failed and due now, with %1 more attempt(s) than it has used "
            "(max_attempts = attempts + %1); an uncertain outcome stays flagged.")
            .arg(extraAttempts);
    case idem::RecoveryAction::Release:
        return QCoreApplication::translate("idem::console::ActionDialog",
            "keeps status processing with its lease expired now; the owner token is revoked, so "
            "the old executor can no longer commit, and the next claim takes over (attempts + 1).");
    case idem::RecoveryAction::Fail:
        return QCoreApplication::translate("idem::console::ActionDialog",
            "becomes failed (class permanent) with no further retries; the token is revoked. "
            "Only a requeue reopens it.");
    }
    return {};
}

ActionDialog::ActionDialog(
    ConsoleSession* admin, idem::RecoveryAction action, const std::vector<idem::TaskRow>& rows, QWidget* parent)
    : QDialog(parent)
    , m_admin(admin)
    , m_action(action)
    , m_plan(new QTextBrowser)
    , m_reason(new QPlainTextEdit)
    , m_reasonHint(new QLabel(tr("A reason is required; it is kept in the audit trail with your role, "
                                 "user and host.")))
    , m_progress(new QProgressBar)
    , m_resultView(new QTableView)
    , m_summary(new QLabel)
    , m_run(new QPushButton)
    , m_stop(new QPushButton(tr("Stop")))
    , m_close(new QPushButton(tr("Cancel")))
    , m_results(new BulkActionModel(this))
{
    setWindowTitle(tr("%1 – Idem console").arg(actionTitle(action)));
    setObjectName(QStringLiteral("actionDialog"));
    // Per status, in the order the operator saw them; what the action does not apply to is left out.
    std::map<std::string, std::vector<idem::TaskRow>> byStatus; // copies: the plan is rebuilt later
    std::vector<idem::TaskRow> excluded;
    for (const auto& r : rows) {
        if (idem::actionAppliesTo(action, r.status)) {
            byStatus[r.status].push_back(r);
            m_targets.push_back(idem::RowVersion { r.key, r.status, r.updatedAtUs });
            try {
                const auto k = idem::TaskKey::parse(r.key);
                m_scopes.emplace_back(k.tenant(), k.operation());
            } catch (const std::exception&) {
                m_scopes.emplace_back(); // an adopted table's key names no operation: never re-executed
            }
        } else {
            excluded.push_back(r);
        }
    }
    m_leftOut = static_cast<int>(excluded.size());
    // Grouped by status, a row's status is its heading; left out, each row says its own (the
    // reason it is left out).
    const auto listRows = [](const std::vector<idem::TaskRow>& list, bool withStatus = false) -> QString {
        QString out = QStringLiteral("<ul style='margin-top:0'>");
        // One arg() call per line: a key holding "%2" must not become the next placeholder.
        for (std::size_t i = 0; i < list.size() && i < keysListedPerStatus; ++i) {
            const auto& r = list[i];
            const QString attempts = QString::number(r.attempts), max = QString::number(r.maxAttempts);
            out += withStatus ? tr("<li><tt>%1</tt> – %5, attempts %2 of %3, updated %4</li>")
                                    .arg(html(r.key), attempts, max, formatTimeUs(r.updatedAtUs), html(r.status))
                              : tr("<li><tt>%1</tt> – attempts %2 of %3, updated %4</li>")
                                    .arg(html(r.key), attempts, max, formatTimeUs(r.updatedAtUs));
        }
        if (list.size() > keysListedPerStatus)
            out += tr("<li>… and %1 more</li>").arg(list.size() - keysListedPerStatus);
        return out + QStringLiteral("</ul>");
    };
    auto* extraRow = new QWidget;
    auto* extraLayout = new QHBoxLayout(extraRow);
    extraLayout->setContentsMargins(0, 0, 0, 0);
    auto* reexecuteRow = new QWidget;
    auto* reexecuteLayout = new QVBoxLayout(reexecuteRow);
    reexecuteLayout->setContentsMargins(0, 0, 0, 0);
    reexecuteRow->hide();
    if (action == idem::RecoveryAction::Requeue) {
        // Issue 42: a requeue that runs again, where a re-driver of the key's operation is online.
        m_reexecute = new QCheckBox(tr("Re-execute now (a re-driver of the operation runs the stored request again, "
                                       "with the same key)"));
        m_reexecute->setObjectName(QStringLiteral("reexecuteBox"));
        m_reexecute->setEnabled(false);
        m_offer = new QLabel;
        m_offer->setObjectName(QStringLiteral("reexecuteOffer"));
        m_offer->setWordWrap(true);
        m_offer->setTextFormat(Qt::PlainText);
        m_offerRefusal = new RefusalNote(QStringLiteral("reexecuteRefusal"));
        auto* offerLines = new QVBoxLayout;
        offerLines->setContentsMargins(24, 0, 0, 0);
        offerLines->addWidget(m_offer);
        offerLines->addWidget(m_offerRefusal);
        reexecuteLayout->addWidget(m_reexecute);
        reexecuteLayout->addLayout(offerLines);
        reexecuteRow->show();
        if (m_admin) {
            m_redrivers = new RedriveStatusWatch(m_admin, this);
            connect(m_redrivers, &RedriveStatusWatch::changed, this, &ActionDialog::updateReexecute);
        }
        m_extra = new QSpinBox;
        m_extra->setObjectName(QStringLiteral("extraAttempts"));
        m_extra->setRange(1, idem::ActionOptions::maxExtraAttempts);
        m_extra->setValue(1);
        extraLayout->addWidget(new QLabel(tr("More attempts to grant:")));
        extraLayout->addWidget(m_extra);
        extraLayout->addStretch();
    } else {
        extraRow->hide();
    }
    const auto buildPlan = [this, byStatus, excluded, listRows] {
        QString p = tr("<p><b>%1 %n record(s).</b> Each %2</p>", nullptr, int(m_targets.size()))
                        .arg(actionTitle(m_action), actionEffect(m_action, m_extra ? m_extra->value() : 1).toHtmlEscaped());
        if (m_reexecute && m_reexecute->isChecked()) {
            int now = 0;
            for (std::size_t i = 0; i < m_targets.size(); ++i)
                now += reexecutes(i) ? 1 : 0;
            const int only = int(m_targets.size()) - now;
            p += tr("<p><b>Re-executed now: %n record(s).</b> Each gets a re-drive item that a re-driver of its "
                    "operation takes, running the stored request through the ordinary claim with the same key (one "
                    "effect, even if its client retries too).",
                nullptr, now);
            if (only > 0)
                p += QLatin1Char(' ')
                    + tr("%n record(s) requeued only: no re-driver of their operation is online, they wait for their "
                         "clients.",
                        nullptr, only);
            p += QStringLiteral("</p>");
        }
        for (const auto& [status, list] : byStatus)
            p += tr("<p style='margin-bottom:0'><b>%1</b>: %n record(s)</p>", nullptr, int(list.size()))
                     .arg(html(status))
                + listRows(list);
        if (!excluded.empty())
            p += tr("<p style='margin-bottom:0;%3'><b>Left out</b> (%1 does not apply to "
                    "their status; nothing is sent for them): %2</p>")
                     .arg(actionTitle(m_action).toLower(), QString::number(excluded.size()),
                         theme::toneCss(theme::Tone::Caution))
                + listRows(excluded, true);
        p += tr("<p>Each record is changed only if it still has the status and "
                "update time listed here; otherwise it is refused and left as it is.</p>");
        m_plan->setHtml(p);
    };
    m_buildPlan = buildPlan;
    buildPlan();
    theme::onChange(this, buildPlan); // the left-out heading's tone follows the theme
    if (m_extra)
        connect(m_extra, &QSpinBox::valueChanged, this, buildPlan);
    if (m_reexecute)
        connect(m_reexecute, &QCheckBox::toggled, this, buildPlan);

    m_plan->setObjectName(QStringLiteral("actionPlan"));
    m_plan->setOpenLinks(false);
    m_reason->setObjectName(QStringLiteral("reasonEdit"));
    m_reason->setPlaceholderText(tr("Why (ticket, incident, what you checked)…"));
    m_reason->setMaximumHeight(70);
    m_reasonHint->setObjectName(QStringLiteral("reasonHint"));
    m_reasonHint->setWordWrap(true);
    m_progress->setObjectName(QStringLiteral("actionProgress"));
    m_progress->setRange(0, std::max<int>(1, static_cast<int>(m_targets.size())));
    m_progress->setValue(0);
    m_progress->hide();
    m_resultView->setObjectName(QStringLiteral("actionResults"));
    m_resultView->setModel(m_results);
    m_resultView->horizontalHeader()->setStretchLastSection(true);
    // Left: a Details column wider than the view still shows its heading.
    m_resultView->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_resultView->verticalHeader()->setVisible(false);
    m_resultView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_resultView->setWordWrap(false);
    m_resultView->verticalHeader()->setDefaultSectionSize(m_resultView->fontMetrics().height() + 6);
    m_resultView->setColumnWidth(BulkActionModel::KeyColumn, 230);
    m_resultView->setColumnWidth(BulkActionModel::OutcomeColumn, 110);
    m_resultView->setColumnWidth(BulkActionModel::StatusColumn, 120);
    m_resultView->setColumnWidth(BulkActionModel::UpdatedColumn, 170);
    m_resultView->hide();
    m_summary->setObjectName(QStringLiteral("actionSummary"));
    m_summary->setWordWrap(true);
    m_run->setObjectName(QStringLiteral("runButton"));
    m_run->setText(tr("%1 %n record(s)", nullptr, int(m_targets.size())).arg(actionTitle(action)));
    m_run->setDefault(true);
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_stop->hide();
    m_close->setObjectName(QStringLiteral("closeButton"));

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_progress, 1);
    buttons->addStretch();
    buttons->addWidget(m_stop);
    buttons->addWidget(m_close);
    buttons->addWidget(m_run);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_plan, 2);
    layout->addWidget(extraRow);
    layout->addWidget(reexecuteRow);
    layout->addWidget(new QLabel(tr("Reason:")));
    layout->addWidget(m_reason);
    layout->addWidget(m_reasonHint);
    layout->addWidget(m_resultView, 3);
    layout->addWidget(m_summary);
    layout->addLayout(buttons);
    resize(860, 560);

    connect(m_reason, &QPlainTextEdit::textChanged, this, &ActionDialog::updateRun);
    connect(m_run, &QPushButton::clicked, this, &ActionDialog::run);
    connect(m_close, &QPushButton::clicked, this, [this] {
        if (m_results->running())
            return;
        m_finished ? accept() : reject();
    });
    connect(m_stop, &QPushButton::clicked, m_results, &BulkActionModel::cancel);
    connect(m_results, &BulkActionModel::progress, this, [this](int done, int) {
        m_progress->setValue(done);
        m_summary->setText(m_results->summary());
    });
    connect(m_results, &BulkActionModel::finished, this, [this] {
        m_finished = true;
        m_stop->hide();
        m_close->setEnabled(true);
        m_close->setText(tr("Close"));
        m_summary->setText(m_results->summary());
        // Details as long as the longest message: the view scrolls sideways rather than cut it.
        // (A stretched last section ignores resizeColumnToContents(), and that measures only
        // the rows in view: every row is measured here.)
        const QFontMetrics fm(m_resultView->font());
        int longest = 0;
        for (int r = 0; r < m_results->rowCount(); ++r)
            longest = std::max(longest,
                fm.horizontalAdvance(m_results->index(r, BulkActionModel::MessageColumn).data().toString()));
        int before = 0;
        for (int c = 0; c < BulkActionModel::MessageColumn; ++c)
            before += m_resultView->columnWidth(c);
        const int needed = longest + 2 * m_resultView->style()->pixelMetric(QStyle::PM_FocusFrameHMargin) + 16;
        if (before + needed > m_resultView->viewport()->width()) {
            m_resultView->horizontalHeader()->setStretchLastSection(false);
            m_resultView->setColumnWidth(BulkActionModel::MessageColumn, needed);
        }
        Q_EMIT runFinished();
    });
    updateReexecute();
    updateRun();
}

ActionDialog::~ActionDialog() = default;

void ActionDialog::updateRun()
{
    // The library's rule, which the SQL functions share: white space and invisible characters
    // (U+00A0, U+200B, ...) alone are no reason.
    const bool blank = idem::reasonIsBlank(m_reason->toPlainText().toStdString());
    const bool operatorRole
        = m_admin && m_admin->serverInfo().rights.may(QString::fromLatin1(idem::actionName(m_action)));
    m_run->setEnabled(!blank && !m_targets.empty() && !m_results->running() && !m_finished && operatorRole);
    if (blank)
        theme::followTone(m_reasonHint, theme::Tone::Caution);
    else
        theme::clearTone(m_reasonHint);
}

bool ActionDialog::reexecutes(std::size_t target) const
{
    if (!m_reexecute || !m_reexecute->isChecked() || !m_redrivers || target >= m_scopes.size())
        return false;
    const auto& [tenant, operation] = m_scopes[target];
    return !operation.empty() && m_redrivers->canReexecute(tenant, operation);
}

void ActionDialog::updateReexecute()
{
    if (!m_reexecute)
        return;
    // Each operation of the keys once, in the order first seen.
    std::vector<std::pair<std::string, std::string>> scopes;
    bool unnamed = false;
    for (const auto& scope : m_scopes) {
        if (scope.second.empty())
            unnamed = true;
        else if (std::find(scopes.begin(), scopes.end(), scope) == scopes.end())
            scopes.push_back(scope);
    }
    QStringList offers, refusals;
    bool any = false;
    for (const auto& [tenant, operation] : scopes) {
        const bool can = m_redrivers && m_redrivers->canReexecute(tenant, operation);
        any = any || can;
        if (m_redrivers)
            (can ? offers : refusals) << m_redrivers->offerText(tenant, operation);
    }
    if (unnamed)
        refusals << tr(
            "A key not of the form tenant:operation:business_id names no operation: it waits for its client");
    const bool mayRequeue = !m_admin || m_admin->serverInfo().rights.may(QStringLiteral("requeue"));
    if (!any && m_reexecute->isChecked())
        m_reexecute->setChecked(false); // the last re-driver went away before Run
    m_reexecute->setEnabled(any && mayRequeue && !m_results->running() && !m_finished);
    m_offer->setText(offers.join(QLatin1Char('\n')));
    m_offer->setVisible(!offers.isEmpty());
    m_offerRefusal->setReasons(refusals);
    m_reexecute->setToolTip((any ? offers : refusals).join(QLatin1Char('\n')));
    if (m_buildPlan)
        m_buildPlan();
}

void ActionDialog::run()
{
    if (!m_run->isEnabled())
        return;
    idem::ActionOptions options;
    options.reason = m_reason->toPlainText().toStdString();
    options.extraAttempts = m_extra ? m_extra->value() : 1;
    std::vector<bool> reexecute;
    for (std::size_t i = 0; i < m_targets.size(); ++i)
        reexecute.push_back(reexecutes(i));
    m_reason->setReadOnly(true);
    if (m_extra)
        m_extra->setEnabled(false);
    if (m_reexecute)
        m_reexecute->setEnabled(false);
    m_run->setEnabled(false);
    m_run->hide();
    m_close->setEnabled(false);
    m_stop->show();
    m_progress->show();
    m_resultView->show();
    m_reasonHint->hide();
    m_plan->setMaximumHeight(m_plan->height() / 2); // the results need the room now
    m_results->start(m_admin, m_action, m_targets, options, reexecute);
}

} // namespace idem::console
