#include "views/snapshotworkpage.h"

#include <QDateTime>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "models/visibletext.h"
#include "operations/tasklist.h"

namespace idem::console {

namespace {
    QString shown(const std::string& s) { return visibleText(s); }
    QString shown(const std::optional<std::string>& s) { return s ? visibleText(*s) : QStringLiteral("–"); }

    // "2024-05-01 10:00:00" (UTC), or the text as it is when it is not a time.
    QString time(const std::optional<std::string>& iso)
    {
        if (!iso)
            return QStringLiteral("–");
        const auto us = idem::parseIsoMicros(*iso);
        return us ? QDateTime::fromMSecsSinceEpoch(*us / 1000, Qt::UTC).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"))
                  : visibleText(*iso);
    }

    QTableWidget* table(const QStringList& headers, const char* name)
    {
        auto* t = new QTableWidget(0, int(headers.size()));
        t->setObjectName(QString::fromLatin1(name));
        t->setHorizontalHeaderLabels(headers);
        t->setEditTriggers(QAbstractItemView::NoEditTriggers);
        t->setSelectionBehavior(QAbstractItemView::SelectRows);
        t->verticalHeader()->hide();
        t->horizontalHeader()->setStretchLastSection(true);
        t->setWordWrap(false);
        return t;
    }

    void put(QTableWidget* t, int row, int column, const QString& text, bool number = false)
    {
        auto* item = new QTableWidgetItem(text);
        item->setToolTip(text);
        if (number)
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        t->setItem(row, column, item);
    }
} // namespace

SnapshotWorkPage::SnapshotWorkPage(SharedSnapshot snapshot, QWidget* parent)
    : QWidget(parent)
    , m_snapshot(std::move(snapshot))
    , m_pausesLabel(new QLabel)
    , m_pauses(table({ tr("Scope"), tr("State"), tr("Why"), tr("Paused by"), tr("Since (UTC)"), tr("Until (UTC)"),
                         tr("Ended (UTC)"), tr("Ended by"), tr("Why ended") },
          "snapshotPauses"))
    , m_jobsLabel(new QLabel)
    , m_jobs(table({ tr("Job"), tr("State"), tr("Action"), tr("Started (UTC)"), tr("Started by"), tr("Why"),
                       tr("Approved by"), tr("Matched"), tr("Changed"), tr("Refused"), tr("Skipped"), tr("Ended (UTC)") },
          "snapshotJobs"))
{
    setObjectName(QStringLiteral("snapshotWorkPage"));
    m_pausesLabel->setObjectName(QStringLiteral("snapshotPausesLabel"));
    m_jobsLabel->setObjectName(QStringLiteral("snapshotJobsLabel"));
    for (auto* l : { m_pausesLabel, m_jobsLabel }) {
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_pausesLabel);
    layout->addWidget(m_pauses, 1);
    layout->addWidget(m_jobsLabel);
    layout->addWidget(m_jobs, 2);
    fill();
}

void SnapshotWorkPage::fill()
{
    const auto& d = m_snapshot->data;
    const QLocale l;
    if (!d.pauses) {
        m_pausesLabel->setText(tr("<b>Pauses</b>: not in this snapshot (written before snapshots carried them, or "
                                  "from a schema without pauses)."));
    } else {
        const auto& p = *d.pauses;
        const auto active = std::count_if(p.rows.begin(), p.rows.end(), [](const auto& x) { return x.active; });
        m_pausesLabel->setText(tr("<b>Pauses</b>: %1 in force at the snapshot's instant, %2 listed (in force, past "
                                  "their end, or lifted within its %3 min of history)%4.")
                                   .arg(l.toString(qlonglong(active)), l.toString(qlonglong(p.total)))
                                   .arg(d.historyMinutes)
                                   .arg(p.truncated ? tr("; only the first %1 are in the snapshot").arg(p.limit)
                                                    : QString()));
        m_pauses->setRowCount(int(p.rows.size()));
        for (int r = 0; r < int(p.rows.size()); ++r) {
            const auto& x = p.rows[std::size_t(r)];
            put(m_pauses, r, PauseScope, shown(x.tenant + ":" + x.operation));
            put(m_pauses, r, PauseState, x.active ? tr("in force") : tr("ended"));
            put(m_pauses, r, PauseReason, shown(x.reason));
            put(m_pauses, r, PauseBy, shown(x.pausedBy));
            put(m_pauses, r, PauseSince, time(x.pausedAt));
            put(m_pauses, r, PauseUntil, x.until ? time(x.until) : tr("until resumed"));
            put(m_pauses, r, PauseEnded, time(x.endedAt));
            put(m_pauses, r, PauseEndedBy, x.endedAt && !x.endedBy ? tr("ran out") : shown(x.endedBy));
            put(m_pauses, r, PauseEndReason, shown(x.endReason));
        }
        m_pauses->resizeColumnsToContents();
    }
    if (!d.jobs) {
        m_jobsLabel->setText(tr("<b>Recovery jobs</b>: not in this snapshot (written before snapshots carried them, or "
                                "from a schema without jobs)."));
    } else {
        const auto& j = *d.jobs;
        m_jobsLabel->setText(tr("<b>Recovery jobs</b>: %1 open at the snapshot's instant or ended within its %2 min of "
                                "history%3.")
                                 .arg(l.toString(qlonglong(j.total)))
                                 .arg(d.historyMinutes)
                                 .arg(j.truncated ? tr("; only the newest %1 are in the snapshot").arg(j.limit)
                                                  : QString()));
        m_jobs->setRowCount(int(j.rows.size()));
        for (int r = 0; r < int(j.rows.size()); ++r) {
            const auto& x = j.rows[std::size_t(r)];
            put(m_jobs, r, JobId, QString::number(x.id), true);
            put(m_jobs, r, JobState,
                x.state == "awaiting_approval" ? tr("waiting for approval") : shown(x.state));
            put(m_jobs, r, JobAction, shown(x.action));
            put(m_jobs, r, JobStarted, time(x.startedAt));
            put(m_jobs, r, JobStartedBy, shown(x.startedBy));
            put(m_jobs, r, JobReason, shown(x.reason));
            put(m_jobs, r, JobApprovedBy,
                x.approvedBy ? shown(x.approvedBy) : (x.needsApproval ? tr("not yet") : tr("not needed")));
            put(m_jobs, r, JobMatched, l.toString(qlonglong(x.matched)), true);
            put(m_jobs, r, JobChanged, l.toString(qlonglong(x.changed)), true);
            put(m_jobs, r, JobRefused, l.toString(qlonglong(x.refusedMovedOn + x.refusedBusy + x.refusedGone)), true);
            put(m_jobs, r, JobSkipped, l.toString(qlonglong(x.skipped)), true);
            put(m_jobs, r, JobEnded, time(x.finishedAt));
        }
        m_jobs->resizeColumnsToContents();
    }
}

} // namespace idem::console
