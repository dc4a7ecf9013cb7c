#pragma once

#include <QWidget>

#include "models/snapshotopener.h"

class QLabel;
class QTableWidget;

namespace idem::console {

// A snapshot's pauses of intake and recovery jobs (issue 41): what operators were doing about the
// incident at its instant. Read-only tables; every text from the bundle shown escaped.
class SnapshotWorkPage : public QWidget {
    Q_OBJECT
public:
    explicit SnapshotWorkPage(SharedSnapshot snapshot, QWidget* parent = nullptr);

    enum PauseColumn { PauseScope, PauseState, PauseReason, PauseBy, PauseSince, PauseUntil, PauseEnded, PauseEndedBy,
        PauseEndReason, PAUSE_COLUMN_COUNT };
    enum JobColumn { JobId, JobState, JobAction, JobStarted, JobStartedBy, JobReason, JobApprovedBy, JobMatched,
        JobChanged, JobRefused, JobSkipped, JobEnded, JOB_COLUMN_COUNT };

    QLabel* pausesLabel() const { return m_pausesLabel; }
    QTableWidget* pauses() const { return m_pauses; }
    QLabel* jobsLabel() const { return m_jobsLabel; }
    QTableWidget* jobs() const { return m_jobs; }

private:
    void fill();

    SharedSnapshot m_snapshot;
    QLabel* m_pausesLabel;
    QTableWidget* m_pauses;
    QLabel* m_jobsLabel;
    QTableWidget* m_jobs;
};

} // namespace idem::console
