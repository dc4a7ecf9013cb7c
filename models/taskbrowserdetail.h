#pragma once

#include <QMetaType>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QTimer>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "operations/audit.h"
#include "operations/tasklist.h"

namespace idem::console {

class ConsoleSession;
class KeyRedriveWatch;
struct Failure;

// What the detail pane shows for one key: the record (result preview only) and its audit.
struct TaskDetailAnswer {
    QString key;
    std::optional<idem::TaskDetail> detail; // unset: no such key (any more)
    std::vector<idem::AuditEntry> audit; // newest first
    QString auditError; // the audit could not be read (older schema, no privilege)
};

// Loads the detail of the selected task on the session's worker thread (a newer selection
// drops the older answer), and saves a task's full result to a file there, in chunks, with
// progress and cancel: a 10 MB result never crosses the UI thread.
class TaskDetailLoader : public QObject {
    Q_OBJECT
public:
    explicit TaskDetailLoader(ConsoleSession* session, QObject* parent = nullptr);
    ~TaskDetailLoader() override;

    void setPreviewChars(int chars) { m_previewChars = chars; }
    // Each of a load's two reads (the row, its audit) under this statement timeout (default 10 s);
    // past ConsoleSession::boundFor of both the console cancels, then cuts, a load the server
    // does not answer at all.
    void setStatementTimeoutMs(int ms) { m_readOptions.statementTimeoutMs = ms; }
    int previewChars() const { return m_previewChars; }
    void load(const QString& key);
    void clear();
    const std::optional<TaskDetailAnswer>& current() const { return m_current; }
    // The loaded key's re-executions and stored request (schema v25), followed live while it is shown.
    KeyRedriveWatch* redrive() const { return m_redrive; }

    // Streams the key's result_json text to `path` (written to path.part, renamed when complete).
    void saveResult(const QString& key, const QString& path);
    void cancelSave();
    bool saving() const { return m_saveJob != 0; }

Q_SIGNALS:
    void loaded(const idem::console::TaskDetailAnswer& answer);
    void failed(const QString& message);
    void saveProgress(qint64 done, qint64 total);
    void saveFinished(bool ok, const QString& message);

private:
    QPointer<ConsoleSession> m_session;
    int m_previewChars = 64 * 1024;
    idem::TaskReadOptions m_readOptions;
    quint64 m_loadJob = 0;
    quint64 m_saveJob = 0;
    std::optional<TaskDetailAnswer> m_current;
    KeyRedriveWatch* m_redrive;
    struct SaveState {
        std::atomic<qint64> done { 0 };
        std::atomic<qint64> total { 0 };
        std::atomic_bool stop { false };
    };
    std::shared_ptr<SaveState> m_save;
    QTimer m_progressTimer;
};

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::TaskDetailAnswer)
