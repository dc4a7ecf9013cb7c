#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

#include <string>

#include "models/sessionrequest.h"
#include "operations/jobs.h"

namespace idem::console {

class ConsoleSession;

// A recovery job from the console's side, on the admin session: its preview (what a filter
// matches now and whether the job would wait for approval; nothing written), its start and its
// cancel, each run on the session's worker thread and answered by signal. A new preview drops
// the one under way. Nothing here waits on the database.
class JobControl : public QObject {
    Q_OBJECT
public:
    explicit JobControl(ConsoleSession* admin, QObject* parent = nullptr);

    void preview(idem::RecoveryAction action, const idem::TaskFilter& filter);
    bool previewing() const { return m_preview.pending(); }
    void start(const idem::JobRequest& request);
    bool starting() const { return m_start.pending(); }
    void cancel(std::int64_t id, const std::string& reason);
    bool cancelling() const { return m_cancel.pending(); }

Q_SIGNALS:
    void previewed(const idem::JobPreview& preview, const idem::ApprovalNeed& need);
    void previewFailed(const QString& why);
    void started(const idem::JobStart& start);
    void startFailed(const QString& why);
    // skipped: the rows not done, recorded as skipped.
    void cancelled(qint64 id, qint64 skipped);
    void cancelFailed(qint64 id, const QString& why);

private:
    SessionRequest m_preview;
    SessionRequest m_start;
    SessionRequest m_cancel;
    std::int64_t m_cancelling = 0;
};

} // namespace idem::console

Q_DECLARE_METATYPE(idem::JobPreview)
Q_DECLARE_METATYPE(idem::JobStart)
Q_DECLARE_METATYPE(idem::ApprovalNeed)
