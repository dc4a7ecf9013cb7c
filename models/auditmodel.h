#pragma once

#include <functional>

#include <QList>
#include <QMetaType>
#include <QPointer>
#include <QString>

#include <optional>
#include <vector>

#include "models/rowtablemodel.h"
#include "operations/audit.h"

namespace idem::console {

class ConsoleSession;
struct Failure;

// One field of a row image in an audit entry's before/after diff.
struct AuditFieldChange {
    QString field;
    QString before; // JSON text of the value; empty when the field is absent
    QString after;
    bool changed = false;
};

// Fields of both images, sorted by name, each marked changed or not. Images that are not JSON
// objects come back as one pseudo-field "(image)".
QList<AuditFieldChange> auditDiff(const std::string& beforeImage, const std::string& afterImage);

// The audit trail, newest first, paged by id (keyset) on the session's worker thread; and the
// chain verification (operations/audit verifyChain), also off the UI thread.
class AuditModel : public RowTableModel<idem::AuditEntry> {
    Q_OBJECT
public:
    enum Column { IdColumn, AtColumn, KeyColumn, ActionColumn, ActorColumn, ReasonColumn, COLUMN_COUNT };
    enum Role { IdRole = Qt::UserRole };

    explicit AuditModel(ConsoleSession* session, QObject* parent = nullptr);
    ~AuditModel() override;

    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;

    // Key, actor, action and time bounds of `filter` apply; paging fields are the model's.
    void setFilter(const idem::AuditFilter& filter);
    const idem::AuditFilter& filter() const { return m_filter; }
    void setPageSize(int n) { m_pageSize = n; }
    // Each page's statement timeout (default 10 s); the console cuts a read the server does not
    // answer at all past ConsoleSession::boundFor of it.
    void setStatementTimeoutMs(int ms) { m_statementTimeoutMs = ms; }
    void reload() { setFilter(m_filter); }
    const idem::AuditEntry& entry(int row) const { return m_rows[static_cast<std::size_t>(row)]; }
    bool busy() const { return m_pending != 0; }
    bool started() const { return m_started; }
    // Reads the entries newer than the newest shown (one statement on the worker thread; none
    // while another read of this model is pending) and puts them on top; more than a page of them
    // reloads from the first page.
    void pollNewer();

    // expectedHead: a head recorded earlier (the witness's mark), so that removed newest entries
    // show as a break too.
    void verifyChain(const std::optional<idem::ChainHead>& expectedHead = std::nullopt);
    bool verifying() const { return m_verifyJob != 0; }

Q_SIGNALS:
    void pageLoaded(int rows);
    // pollNewer() answered: `added` entries went on top (0: nothing new, still a fresh read).
    void polled(int added);
    void failed(const QString& message);
    void chainVerified(const idem::ChainReport& report);
    void verifyFailed(const QString& message);

protected:
    QVariant rowData(const idem::AuditEntry& e, int column, int role) const override;

private:
    // Lists `filter` on the worker thread; `rows` gets the answer unless the filter changed since.
    void fetch(idem::AuditFilter filter, std::function<void(std::vector<idem::AuditEntry>)> rows);
    void requestPage();

    QPointer<ConsoleSession> m_session;
    idem::AuditFilter m_filter;
    bool m_more = false;
    std::optional<std::int64_t> m_cursor; // smallest id loaded
    bool m_started = false;
    quint64 m_pending = 0;
    quint64 m_generation = 0;
    quint64 m_verifyJob = 0;
    int m_pageSize = 200;
    int m_statementTimeoutMs = 10000;
};

} // namespace idem::console

Q_DECLARE_METATYPE(std::vector<idem::AuditEntry>)
Q_DECLARE_METATYPE(idem::ChainReport)
