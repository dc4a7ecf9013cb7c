#include "models/jobsmodel.h"

#include <QBrush>
#include <QCoreApplication>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/redrivewatch.h"
#include "models/taskbrowsermodel.h"
#include "models/tones.h"
#include "models/visibletext.h"
#include "operations/wording.h"

namespace idem::console {

namespace {
    std::int64_t doneOf(const idem::JobStatus& j) { return j.changed + j.refused() + j.skipped(); }
} // namespace

QString jobStateLabel(const std::string& state)
{
    if (state == "active")
        return QCoreApplication::translate("idem::console::JobsModel", "active");
    if (state == "finished")
        return QCoreApplication::translate("idem::console::JobsModel", "finished");
    if (state == "cancelled")
        return QCoreApplication::translate("idem::console::JobsModel", "cancelled");
    if (state == "awaiting_approval")
        return QCoreApplication::translate("idem::console::JobsModel", "awaiting approval");
    // A later schema's state (an approval's, say): its name, so nothing is hidden.
    return visibleText(state);
}

QString jobActionLabel(const idem::JobStatus& job)
{
    if (job.action == "requeue" && job.redrive)
        return job.extraAttempts
            ? QCoreApplication::translate("idem::console::JobsModel", "requeue and re-execute (attempts +%1)")
                  .arg(*job.extraAttempts)
            : QCoreApplication::translate("idem::console::JobsModel", "requeue and re-execute");
    if (job.action == "requeue")
        return job.extraAttempts
            ? QCoreApplication::translate("idem::console::JobsModel", "requeue (attempts +%1)").arg(*job.extraAttempts)
            : QCoreApplication::translate("idem::console::JobsModel", "requeue");
    if (job.action == "release")
        return QCoreApplication::translate("idem::console::JobsModel", "release lease");
    if (job.action == "fail")
        return QCoreApplication::translate("idem::console::JobsModel", "mark failed");
    return visibleText(job.action);
}

QString taskFilterText(const idem::TaskFilter& filter)
{
    const auto words = [](const char* english) { return QCoreApplication::translate(idem::wordingContext, english); };
    QStringList terms;
    for (const auto& term : idem::filterTerms(filter)) {
        QStringList values;
        for (const auto& v : term.values)
            values << visibleText(v);
        terms << (values.isEmpty() ? words(term.words) : words(term.words).arg(values.join(words(idem::orWords))));
    }
    return terms.isEmpty() ? words(idem::everyTaskWords) : terms.join(words(idem::termSeparatorWords));
}

QString jobFilterText(const std::string& filterJson)
{
    try {
        return taskFilterText(idem::taskFilterFromJobJson(filterJson));
    } catch (const std::invalid_argument&) {
        return visibleText(filterJson);
    }
}

QString jobProgressText(const idem::JobStatus& j)
{
    return QCoreApplication::translate(
        "idem::console::JobsModel", "%1 changed, %2 refused, %3 skipped of %4 (%5 to do)")
        .arg(j.changed)
        .arg(j.refused())
        .arg(j.skipped())
        .arg(j.matched)
        .arg(j.pending());
}

JobsModel::JobsModel(ConsoleSession* monitor, QObject* parent)
    : RowTableModel(parent)
    , m_poll(monitor, [this] {
        // The outcomes of the re-executions that may still change, in the same read: one round
        // trip for every job that re-executes (idem_redrive_outcomes_of, an indexed count per
        // job; none for one whose figures are final).
        const auto settled = finalOutcomes();
        return [settled](pqxx::connection& conn, const idem::SchemaName& schema) {
            JobsReading reading;
            // One indexed read of at most listLimit rows: its cost does not grow with the jobs' rows.
            reading.jobs = idem::listJobs(conn, schema, listLimit);
            std::vector<std::int64_t> open;
            for (const auto& j : reading.jobs)
                if (j.redrive && !settled.count(j.id))
                    open.push_back(j.id);
            reading.outcomes = idem::readRedriveOutcomesOf(conn, schema, open);
            return QVariant::fromValue(reading);
        };
    })
{
    qRegisterMetaType<std::vector<idem::JobStatus>>();
    qRegisterMetaType<JobsReading>();
    connect(&m_poll, &SessionPoll::answered, this, [this](const QVariant& answer, bool) {
        auto reading = answer.value<JobsReading>();
        for (auto& [id, o] : reading.outcomes)
            m_outcomes[id] = std::move(o);
        merge(std::move(reading.jobs));
        Q_EMIT changed();
    });
    connect(&m_poll, &SessionPoll::failed, this, &JobsModel::changed);
    connect(&m_poll, &SessionPoll::stopped, this, [this] {
        // Kept as the last picture; rate samples restart with the next read.
        m_samples.clear();
        Q_EMIT changed();
    });
    m_poll.setInterval(2000);
    m_poll.setBound(5000);
    setColumns(columns());
    m_poll.start();
}

JobsModel::~JobsModel() = default;

int JobsModel::rowOfJob(std::int64_t id) const
{
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].id == id)
            return static_cast<int>(i);
    return -1;
}

std::optional<idem::JobStatus> JobsModel::jobById(std::int64_t id) const
{
    const int row = rowOfJob(id);
    return row < 0 ? std::nullopt : std::optional<idem::JobStatus>(job(row));
}

void JobsModel::sample(const idem::JobStatus& j)
{
    auto& samples = m_samples[j.id];
    const std::int64_t done = doneOf(j);
    // A job that is not running makes no progress: its old samples would only lower the rate.
    if (!j.runnerAlive || j.ended()) {
        samples.clear();
        return;
    }
    if (!samples.empty() && samples.back().atUs >= j.serverNowUs)
        return;
    samples.push_back({ j.serverNowUs, done });
    while (samples.size() > 2 && j.serverNowUs - samples[1].atUs >= rateWindowUs)
        samples.pop_front();
}

std::optional<double> JobsModel::rate(std::int64_t id) const
{
    const auto it = m_samples.find(id);
    if (it == m_samples.end() || it->second.size() < 2)
        return std::nullopt;
    const auto& first = it->second.front();
    const auto& last = it->second.back();
    const double seconds = double(last.atUs - first.atUs) / 1e6;
    if (seconds <= 0)
        return std::nullopt;
    return double(last.done - first.done) / seconds;
}

std::optional<double> JobsModel::etaSeconds(std::int64_t id) const
{
    const auto j = jobById(id);
    const auto r = rate(id);
    if (!j || j->ended() || !r || *r <= 0)
        return std::nullopt;
    return double(j->pending()) / *r;
}

std::optional<idem::RedriveOutcomes> JobsModel::outcomes(std::int64_t id) const
{
    const auto it = m_outcomes.find(id);
    if (it == m_outcomes.end() || it->second.total() == 0)
        return std::nullopt;
    return it->second;
}

std::set<std::int64_t> JobsModel::finalOutcomes() const
{
    std::set<std::int64_t> ids;
    for (const auto& j : m_rows) {
        const auto it = m_outcomes.find(j.id);
        // An ended job queues no more items: once none is open its figures are final.
        if (j.ended() && it != m_outcomes.end() && it->second.queued + it->second.running == 0)
            ids.insert(j.id);
    }
    return ids;
}

void JobsModel::merge(std::vector<idem::JobStatus> fresh)
{
    for (const auto& j : fresh)
        sample(j);
    for (auto it = m_samples.begin(); it != m_samples.end();)
        it = std::any_of(fresh.begin(), fresh.end(), [&](const auto& j) { return j.id == it->first; })
            ? std::next(it)
            : m_samples.erase(it);
    // Rows no longer listed go, new ones come in at their place, the rest change in place.
    for (auto it = m_outcomes.begin(); it != m_outcomes.end();)
        it = std::any_of(fresh.begin(), fresh.end(), [&](const auto& j) { return j.id == it->first; })
            ? std::next(it)
            : m_outcomes.erase(it);
    for (int row = rowCount() - 1; row >= 0; --row) {
        const auto id = m_rows[std::size_t(row)].id;
        if (std::none_of(fresh.begin(), fresh.end(), [id](const auto& j) { return j.id == id; })) {
            beginRemoveRows({}, row, row);
            m_rows.erase(m_rows.begin() + row);
            endRemoveRows();
        }
    }
    for (std::size_t i = 0; i < fresh.size(); ++i) {
        const int at = rowOfJob(fresh[i].id);
        const int want = int(i);
        if (at < 0) {
            beginInsertRows({}, want, want);
            m_rows.insert(m_rows.begin() + want, fresh[i]);
            endInsertRows();
            continue;
        }
        if (at != want) {
            // A job that ended moves below the open ones.
            beginMoveRows({}, at, at, {}, at < want ? want + 1 : want);
            auto moved = std::move(m_rows[std::size_t(at)]);
            m_rows.erase(m_rows.begin() + at);
            m_rows.insert(m_rows.begin() + want, std::move(moved));
            endMoveRows();
        }
        m_rows[i] = fresh[i];
        Q_EMIT dataChanged(index(want, 0), index(want, COLUMN_COUNT - 1));
    }
}

std::vector<TableColumn<idem::JobStatus>> JobsModel::columns()
{
    using J = idem::JobStatus;
    return {
        { QT_TR_NOOP("Job"), [](const J& j) { return qlonglong(j.id); } },
        { .header = QT_TR_NOOP("State"),
            .display =
                [](const J& j) {
                    if (j.state == "active" && !j.runnerAlive)
                        return tr("active, not running");
                    return jobStateLabel(j.state);
                },
            .foreground = [](const J& j) -> QVariant {
                if (j.state == "finished")
                    return QBrush(tones::color(j.refused() > 0 ? Tone::Caution : Tone::Good));
                if (j.state == "cancelled")
                    return QBrush(tones::color(Tone::Muted));
                if (j.state == "active" && !j.runnerAlive)
                    return QBrush(tones::color(Tone::Caution));
                return {};
            } },
        { QT_TR_NOOP("Action"), [](const J& j) { return jobActionLabel(j); } },
        { QT_TR_NOOP("Filter"), [](const J& j) { return jobFilterText(j.filterJson); },
            [](const J& j) { return visibleText(j.filterJson); } },
        { QT_TR_NOOP("Progress"), [](const J& j) { return jobProgressText(j); },
            [](const J& j) {
                return tr("refused: %1 moved on, %2 busy, %3 gone; skipped: %4 not applicable, %5 cancelled")
                    .arg(j.refusedMovedOn)
                    .arg(j.refusedBusy)
                    .arg(j.refusedGone)
                    .arg(j.skippedNotApplicable)
                    .arg(j.skippedCancelled);
            } },
        { QT_TR_NOOP("Re-execution"),
            [this](const J& j) {
                const auto o = outcomes(j.id);
                return o ? redriveOutcomesText(j.changed, *o) : QString();
            } },
        { QT_TR_NOOP("Rate"),
            [this](const J& j) {
                const auto r = rate(j.id);
                return r ? tr("%1 rows/s").arg(*r, 0, 'f', *r < 10 ? 1 : 0) : QStringLiteral("—");
            } },
        { QT_TR_NOOP("ETA"),
            [this](const J& j) {
                if (j.ended())
                    return QString(); // when it ended: the page's detail says
                const auto eta = etaSeconds(j.id);
                return eta ? durationText(std::max(0.0, *eta) * 1000.0) : QStringLiteral("—");
            } },
        { QT_TR_NOOP("Runner"),
            [](const J& j) {
                if (j.runnerAlive)
                    return tr("%1 (pid %2)").arg(visibleText(j.runnerActor)).arg(j.runnerPid.value_or(0));
                if (j.ended())
                    return QString();
                return j.runnerRole.empty() ? tr("none yet") : tr("gone (last: %1)").arg(visibleText(j.runnerActor));
            } },
        { QT_TR_NOOP("Started by"),
            [](const J& j) {
                return tr("%1 (%2), %3")
                    .arg(visibleText(j.dbRole), visibleText(j.actor), formatCellTimeUs(j.momentUs, j.serverNowUs));
            } },
        { QT_TR_NOOP("Reason"), [](const J& j) { return visibleText(j.reason); },
            [](const J& j) { return visibleText(j.reason); } },
    };
}

QVariant JobsModel::rowData(const idem::JobStatus& j, int, int role) const
{
    if (role == JobIdRole)
        return qlonglong(j.id);
    if (role == StateRole)
        return QString::fromStdString(j.state);
    return {};
}

} // namespace idem::console
