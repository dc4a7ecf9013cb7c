#pragma once

#include <QMetaType>
#include <QPointer>

#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "models/rowtablemodel.h"
#include "operations/actions.h"

namespace idem::console {

class ConsoleSession;
struct Failure;

// One recovery action over many keys, run per key on the admin session's worker thread
// (operations/actions applyBulk, in small chunks so cancel is prompt and other work on the
// connection interleaves), with one result row per key: applied / refused-stale /
// refused-state / refused-not-found / denied / error / skipped.
// One key of a bulk action: the row version the operator saw, and its result once done.
struct BulkActionItem {
    idem::RowVersion expected;
    idem::ActionResult result;
    bool done = false;
    bool reexecute = false;
};

class BulkActionModel : public RowTableModel<BulkActionItem> {
    Q_OBJECT
public:
    enum Column { KeyColumn, OutcomeColumn, StatusColumn, UpdatedColumn, MessageColumn, COLUMN_COUNT };
    enum Role { OutcomeRole = Qt::UserRole, KeyRole };
    static constexpr int chunkSize = 25;

    explicit BulkActionModel(QObject* parent = nullptr);
    ~BulkActionModel() override;

    // Lists the keys (all "pending") and starts. Bad options are reported by finished() with
    // every key skipped and nothing sent. `reexecute` (a requeue's, one flag per key; empty: none)
    // names the keys requeued to be re-executed (ActionOptions::reexecute); the others are
    // requeued only.
    void start(ConsoleSession* admin, idem::RecoveryAction action, std::vector<idem::RowVersion> keys,
        idem::ActionOptions options, const std::vector<bool>& reexecute = {});
    // Stops after the key in progress; the rest are reported skipped.
    void cancel();

    bool running() const { return m_running; }
    int total() const { return static_cast<int>(m_rows.size()); }
    int done() const { return m_done; }
    int count(idem::ActionOutcome outcome) const { return m_counts[static_cast<std::size_t>(outcome)]; }
    const idem::ActionResult& result(int row) const { return m_rows[static_cast<std::size_t>(row)].result; }
    bool isDone(int row) const { return m_rows[static_cast<std::size_t>(row)].done; }
    QString summary() const;

Q_SIGNALS:
    void progress(int done, int total);
    void finished();

protected:
    QVariant rowData(const BulkActionItem& item, int column, int role) const override;

private:
    void submitNext();
    void onChunk(std::size_t first, const std::vector<idem::ActionResult>& results);
    void finishRemaining(const QString& why);
    void store(std::size_t row, const idem::ActionResult& r);

    QPointer<ConsoleSession> m_session;
    idem::RecoveryAction m_action = idem::RecoveryAction::Requeue;
    idem::ActionOptions m_options;
    std::size_t m_nextChunk = 0;
    std::vector<quint64> m_inFlight;
    std::shared_ptr<std::atomic_bool> m_stop;
    bool m_running = false;
    int m_done = 0;
    std::array<int, idem::actionOutcomeCount> m_counts {};
};

// applied, refused-stale, refused-state, refused-not-found, denied, error, skipped
QString outcomeLabel(idem::ActionOutcome outcome);

} // namespace idem::console

Q_DECLARE_METATYPE(std::vector<idem::ActionResult>)
