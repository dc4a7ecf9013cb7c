#pragma once

#include <set>

#include <QWidget>

#include <cstdint>

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTableView;
class QDialog;

namespace idem::console {

class ConsoleSession;
class JobControl;
class JobItemsModel;
class JobRunners;
class RefusalNote;
class JobsModel;

// The Jobs page: every recovery job (started here, by another console, by idemctl or pg_cron),
// read through the monitor session like the other pages; the selected job's progress, rate and
// ETA, its refused rows (readable, exportable to CSV), Cancel (audited, with a reason) and Resume
// (run it from this console when no runner holds it) through the admin session.
class JobsWidget : public QWidget {
    Q_OBJECT
public:
    JobsWidget(ConsoleSession* monitor, ConsoleSession* admin, JobRunners* runners, QWidget* parent = nullptr);
    ~JobsWidget() override;

    JobsModel* model() const { return m_model; }
    JobItemsModel* refused() const { return m_refused; }
    QTableView* view() const { return m_view; }
    QTableView* refusedView() const { return m_refusedView; }
    QLabel* detailLabel() const { return m_detail; }
    QProgressBar* progressBar() const { return m_progress; }
    QPushButton* cancelButton() const { return m_cancel; }
    QPushButton* resumeButton() const { return m_resume; }
    QPushButton* exportButton() const { return m_export; }
    QLabel* messageLabel() const { return m_message; }
    RefusalNote* refusalNote() const { return m_refusal; }

    // Selects job `id` (once listed).
    void selectJob(std::int64_t id);
    std::int64_t selectedJob() const;
    // The Cancel… button: a dialog asking for the reason (objectName "cancelJobDialog").
    QDialog* askCancel();
    // Cancels the selected job with `reason` through the admin session (what the dialog does).
    void cancelSelected(const QString& reason);
    // Resume: runs the selected job from this console.
    void resumeSelected();
    // Writes the selected job's refused rows to `path` (the Export button asks where).
    void exportRefused(const QString& path);
    void reload();
    void setPollInterval(int ms);

protected:
    void changeEvent(QEvent* event) override;

private:
    void updateDetail();
    void retranslateUi();
    void say(const QString& text);

    ConsoleSession* m_monitor;
    ConsoleSession* m_admin;
    JobRunners* m_runners;
    JobsModel* m_model;
    JobItemsModel* m_refused;
    JobControl* m_control;
    QLabel* m_intro;
    QLabel* m_state;
    QTableView* m_view;
    QLabel* m_detail;
    QProgressBar* m_progress;
    QPushButton* m_cancel;
    QPushButton* m_resume;
    QPushButton* m_export;
    QLabel* m_refusedTitle;
    QTableView* m_refusedView;
    QLabel* m_message;
    RefusalNote* m_refusal; // why Cancel / Resume are greyed out by a missing right, beside them
    std::int64_t m_wanted = 0; // selectJob() before the job was listed
    std::set<std::int64_t> m_awaiting; // jobs last read waiting for approval: their approval is said here
    bool m_fitted = false;
};

} // namespace idem::console
