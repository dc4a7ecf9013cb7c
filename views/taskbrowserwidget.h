#pragma once

#include <QElapsedTimer>
#include <QVariant>
#include <QWidget>

#include <optional>
#include <utility>
#include <vector>

#include "operations/actions.h"
#include "operations/taskfilter.h"
#include "operations/tasklist.h"
#include "models/livetext.h"

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QAction;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTableView;
class QMenu;
class QModelIndex;
class QTimer;

namespace idem::console {

class ApplyAllDialog;
class ConsoleSession;
class JobRunners;
class TaskBrowserModel;
class TaskCounter;
class TaskDetailPane;
class PageStatusLine;
class PauseWatch;
class RefusalNote;
class TileConditionsBar;

// The Tasks page: server-side filters and sort over task_idempotency, a keyset-paged table
// (TaskBrowserModel), the selected record's detail (TaskDetailPane), and the audited recovery
// actions on the selection. Reads go through the monitor session, actions through the admin
// session (the same one when there is no separate monitor connection).
class TaskBrowserWidget : public QWidget {
    Q_OBJECT
public:
    TaskBrowserWidget(ConsoleSession* monitor, ConsoleSession* admin, QWidget* parent = nullptr);
    ~TaskBrowserWidget() override;

    // Shows exactly the records `filter` means (a dashboard tile's click): the filter controls
    // take its values, the table reloads from the first page. `what` says which rows they are in
    // words; the match count says it while the filter is unchanged. With `sort`, the table
    // takes that order and selects its first row (the row a tile's figure is about).
    void applyFilter(const idem::TaskFilter& filter, const LiveText& what = {},
        const std::optional<idem::TaskSort>& sort = std::nullopt);
    QString countText() const;
    idem::TaskFilter filter() const;
    void setSort(const idem::TaskSort& sort);

    TaskBrowserModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    TaskDetailPane* detail() const { return m_detail; }
    // Opens the action dialog for the selected rows (what the toolbar buttons do).
    void startAction(idem::RecoveryAction action);
    // "Apply to all matching…": a recovery job over every task the applied filters match (not
    // only the loaded rows), started through the admin session; run here by `runners` if set.
    ApplyAllDialog* startApplyAll(idem::RecoveryAction action = idem::RecoveryAction::Requeue);
    void setJobRunners(JobRunners* runners) { m_runners = runners; }
    QPushButton* applyAllButton() const { return m_applyAll; }
    // Re-reads what the table holds, merging in place.
    void refresh();
    PageStatusLine* statusLine() const { return m_statusLine; }
    // The conditions a tile's click added that have no control of their own, in words (shown
    // above the table with a button that removes them); empty when there are none.
    QString tileConditionsText() const;
    // Pauses of intake (issue #26): the table's context menu offers to pause the row's
    // tenant:operation and to lift the pauses that cover it.
    void setPauseWatch(PauseWatch* watch) { m_pauses = watch; }
    // The context menu of the row at `index` (the selection's actions, then the row's pause
    // actions), parented to this page; the caller shows it.
    QMenu* contextMenuFor(const QModelIndex& index);
    // How often the shown page re-reads (and how old its data may be when the page is shown).
    void setPollInterval(int ms);

protected:
    void changeEvent(QEvent* event) override;
    void showEvent(QShowEvent* event) override;

Q_SIGNALS:
    // The action dialog finished a run (applied or not); the table has been asked to refresh.
    void actionFinished();
    // Apply to all matching started job `id`.
    void jobStarted(qint64 id);

private:
    // The constructor's parts, in their order.
    void setUpControls();
    QGridLayout* buildFilters();
    void setUpTable();
    void layOut();
    void connectFilters();
    void connectModel();
    void addKeyedActions();
    void connectActions();
    // The count's answers, the first load and the refresh timer; the first reload when connected.
    void connectCountAndRefresh();

    void reload();
    void onSelectionChanged();
    void updateActions();
    enum class CountRefresh { Announce, Quiet };
    void updateCount(CountRefresh mode = CountRefresh::Announce);
    void counted(const idem::TaskCount& count);
    void writeCount();
    void copyKeys();
    void copyJson();
    idem::TaskFilter filterFromControls() const;
    idem::TaskFilter visibleFilter() const;
    void dropTileConditions();
    void retranslateUi();
    void fitColumns();

    ConsoleSession* m_monitor;
    ConsoleSession* m_admin;
    TaskBrowserModel* m_model;
    TaskCounter* m_counter;
    QTableView* m_view;
    TaskDetailPane* m_detail;
    QSplitter* m_split;

    QComboBox* m_status;
    QLineEdit* m_tenant;
    QLineEdit* m_operation;
    QLineEdit* m_prefix;
    QSpinBox* m_minAttempts;
    QCheckBox* m_expired;
    QCheckBox* m_uncertain;
    QCheckBox* m_conflicts;
    QLineEdit* m_failedSince;
    // The rest of idemctl job start's filters, and the error message's text.
    QComboBox* m_errorClass;
    QCheckBox* m_liveLease;
    QCheckBox* m_exhausted;
    QSpinBox* m_unfinishedFor;
    QSpinBox* m_updatedWithin;
    QLineEdit* m_errorContains;
    QComboBox* m_sort;
    QPushButton* m_apply;
    QLabel* m_countLabel;
    QLabel* m_error;
    TileConditionsBar* m_tileRow;
    QPushButton* m_requeue;
    QPushButton* m_release;
    QPushButton* m_fail;
    QPushButton* m_applyAll;
    RefusalNote* m_refusal; // why the greyed-out actions are greyed out, beside them
    JobRunners* m_runners = nullptr;
    qint64 m_matching = -1; // the exact match count, -1 when not known exactly
    void updateApplyAllText();
    QPushButton* m_copyKey;
    QPushButton* m_copyJson;
    QTimer* m_refreshTimer;
    std::vector<std::pair<QPushButton*, QAction*>> m_keyedActions; // button, its keyboard action
    idem::TaskFilter m_extra; // filter fields without a control (kept from applyFilter, shown in m_tileRow)
    int m_tileStatusIndex = -1; // the status entry a tile added (one at most), -1 when none
    QElapsedTimer m_readAt; // since the table was last read
    idem::TaskFilter m_applied; // the last applyFilter()'s filter, which m_what describes
    LiveText m_what; // written again at each count, in the language of the moment
    bool m_selectFirst = false; // the next first page selects its first row (a tile asked for it)
    CountRefresh m_countMode = CountRefresh::Announce; // the count under way's
    std::optional<idem::TaskCount> m_count; // the last count, unset while none stands
    PageStatusLine* m_statusLine;
    PauseWatch* m_pauses = nullptr;
};

} // namespace idem::console
