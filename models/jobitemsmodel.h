#pragma once

#include <QMetaType>
#include <QPointer>
#include <QString>

#include <vector>

#include "models/rowtablemodel.h"
#include "operations/jobs.h"

namespace idem::console {

class ConsoleSession;
struct Failure;

// A recovery job's refused rows (key, why, what the row was at the job's moment and what the job
// found), read on a session's worker thread a bounded page at a time; and the whole list
// written as CSV (the columns of `idemctl job refused --csv`) off the UI thread.
class JobItemsModel : public RowTableModel<idem::JobItem> {
    Q_OBJECT
public:
    enum Column { KeyColumn, WhyColumn, SeenColumn, FoundColumn, TriesColumn, DoneColumn, COLUMN_COUNT };
    enum Role { KeyRole = Qt::UserRole, WhyRole };
    // Rows shown at most; the export writes them all.
    static constexpr int shownLimit = 1000;

    explicit JobItemsModel(ConsoleSession* session, QObject* parent = nullptr);
    ~JobItemsModel() override;

    // Shows job `id`'s refused rows (0: none). Re-reads when the same job's refused count grew.
    void setJob(std::int64_t id, std::int64_t refusedCount);
    std::int64_t jobId() const { return m_jobId; }
    const idem::JobItem& item(int row) const { return m_rows[static_cast<std::size_t>(row)]; }
    bool more() const { return m_more; } // more refused rows than shown
    bool busy() const { return m_pending != 0; }
    int loads() const { return m_loads; }
    QString error() const { return m_error; }

    // Writes every refused row of job `id` to `path` (replaced whole, or not at all): exported()
    // or exportFailed(). The file is written on the worker thread.
    void exportCsv(std::int64_t id, const QString& path);
    bool exporting() const { return m_exporting != 0; }

Q_SIGNALS:
    void loaded();
    void exported(const QString& path, qint64 rows);
    void exportFailed(const QString& message);

protected:
    QVariant rowData(const idem::JobItem& it, int column, int role) const override;

private:
    void load();

    QPointer<ConsoleSession> m_session;
    std::int64_t m_jobId = 0;
    std::int64_t m_loadedFor = -1; // the refused count the shown list was read at
    bool m_more = false;
    quint64 m_pending = 0;
    quint64 m_exporting = 0;
    int m_loads = 0;
    QString m_error;
};

// "moved on", "busy", "gone", …; an unknown reason by its name.
QString jobWhyLabel(const std::string& why);

} // namespace idem::console

Q_DECLARE_METATYPE(std::vector<idem::JobItem>)
