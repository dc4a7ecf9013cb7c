#pragma once

#include <QMetaType>
#include <QString>

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "models/rowtablemodel.h"
#include "models/sessionpoll.h"
#include "models/workermessages.h"
#include "operations/jobs.h"
#include "operations/redrive.h"

namespace idem::console {

class ConsoleSession;

// The Jobs page's rows: every recovery job (operations/jobs listJobs: the open ones, then the
// newest ended), whoever started it (this console, another one, idemctl, pg_cron), read through
// the monitor session one bounded read at a time, the next armed only when the last answered.
// Rows merge by job id (selection and scroll stay). Rate and ETA come from the counts of this
// console's successive reads, by the server's clock. A state this console does not know (a later
// schema's) is shown by its name.
class JobsModel : public RowTableModel<idem::JobStatus> {
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        StateColumn,
        ActionColumn,
        FilterColumn,
        ProgressColumn,
        ReexecutionColumn,
        RateColumn,
        EtaColumn,
        RunnerColumn,
        StartedByColumn,
        ReasonColumn,
        COLUMN_COUNT
    };
    enum Role { JobIdRole = Qt::UserRole, StateRole };
    // Jobs read per poll: the open ones first, so a bounded read never hides one.
    static constexpr int listLimit = 100;
    // Rate over this much of the recent past.
    static constexpr qint64 rateWindowUs = 30'000'000;

    explicit JobsModel(ConsoleSession* monitor, QObject* parent = nullptr);
    ~JobsModel() override;

    void setInterval(int ms) { m_poll.setInterval(ms); }
    int interval() const { return m_poll.interval(); }
    void refreshNow() { m_poll.refreshNow(); }
    int reads() const { return m_poll.reads(); }
    QString error() const { return m_poll.error(); }

    const idem::JobStatus& job(int row) const { return m_rows[static_cast<std::size_t>(row)]; }
    int rowOfJob(std::int64_t id) const;
    std::optional<idem::JobStatus> jobById(std::int64_t id) const;
    // Rows done per second over the recent reads; nullopt until two reads saw it run.
    std::optional<double> rate(std::int64_t id) const;
    // Seconds left at that rate; nullopt when unknown (not running, no rate yet).
    std::optional<double> etaSeconds(std::int64_t id) const;
    // Schema v25: the re-executions a requeue job started to re-execute queued, by state (read with
    // the jobs, again while any is open); nullopt for a job that queued none (or not read yet).
    std::optional<idem::RedriveOutcomes> outcomes(std::int64_t id) const;

Q_SIGNALS:
    void changed();

protected:
    QVariant rowData(const idem::JobStatus& j, int column, int role) const override;

private:
    std::vector<TableColumn<idem::JobStatus>> columns();
    void merge(std::vector<idem::JobStatus> fresh);
    // The jobs whose re-executions' outcomes are final: ended, none queued or running.
    std::set<std::int64_t> finalOutcomes() const;
    void sample(const idem::JobStatus& job);

    SessionPoll m_poll;
    struct Sample {
        std::int64_t atUs;
        std::int64_t done;
    };
    std::map<std::int64_t, std::deque<Sample>> m_samples;
    std::map<std::int64_t, idem::RedriveOutcomes> m_outcomes;
};

// "active", "finished", … for people; a state this console does not know, by its name.
QString jobStateLabel(const std::string& state);
// "requeue (+1 attempt)", "release", "mark failed".
QString jobActionLabel(const idem::JobStatus& job);
// The job's filter in words ("status failed, tenant t1"), display-safe; the raw JSON when it
// does not read as a filter.
QString jobFilterText(const std::string& filterJson);
// A task filter in words, in the console's language (idem::filterTerms: what idemctl says in
// English), values display-safe: "status failed, operation charge, retries exhausted".
QString taskFilterText(const idem::TaskFilter& filter);
// "120 changed, 3 refused, 7 skipped of 130 (0 to do)".
QString jobProgressText(const idem::JobStatus& job);
// "1 h 2 min", "3 min 10 s", "12 s".

// A read of the Jobs page: the jobs, and the outcomes of the re-executions of those asked for.
struct JobsReading {
    std::vector<idem::JobStatus> jobs;
    std::map<std::int64_t, idem::RedriveOutcomes> outcomes;
};

} // namespace idem::console

Q_DECLARE_METATYPE(std::vector<idem::JobStatus>)
Q_DECLARE_METATYPE(idem::console::JobsReading)
