#pragma once

#include <QWidget>

class QChart;
class QChartView;
class QDateTimeAxis;
class QGroupBox;
class QLabel;
class QLineSeries;
class QTableWidget;
class QTimer;
class QValueAxis;

namespace idem::console {

class ConsoleSession;
class PageStatusLine;
class StorageModel;

// The Storage page: why the table is as large as it is and what a purge would do, before anyone
// runs one. Rows by status (each number says whether it is exact, cached or an estimate), the
// retention horizon of every operation with its oldest succeeded key and the rows due, what
// purging means in plain words, the last purge run, table and index sizes with dead tuples and
// the last vacuum, the size of the task table over time, and who holds back the transaction
// horizon with the dead rows it keeps and whether autovacuum keeps up. Read when shown and every 30 s
// while it stays shown (no table scan: operations/storage.h).
class StorageWidget : public QWidget {
    Q_OBJECT
public:
    explicit StorageWidget(ConsoleSession* session, QWidget* parent = nullptr);
    ~StorageWidget() override;

    StorageModel* model() const { return m_model; }
    void reload();
    PageStatusLine* statusLine() const { return m_statusLine; }
    QTableWidget* statusTable() const { return m_status; }
    QTableWidget* retentionTable() const { return m_retention; }
    QTableWidget* tablesTable() const { return m_tables; }
    QLabel* meaningLabel() const { return m_meaning; }
    QLabel* purgeLabel() const { return m_purge; }
    QLineSeries* tableSeries() const { return m_tableBytes; }
    QLineSeries* indexSeries() const { return m_indexBytes; }
    QLineSeries* rowsSeries() const { return m_rows; }
    QLineSeries* deadSeries() const { return m_dead; }
    QLabel* horizonLabel() const { return m_horizon; }
    QTableWidget* holdersTable() const { return m_holders; }

protected:
    void showEvent(QShowEvent* event) override;
    bool event(QEvent* event) override;

private:
    void render();
    void renderChart();
    void renderHorizon();
    void retranslate();
    void applyTheme();

    ConsoleSession* m_session;
    StorageModel* m_model;
    PageStatusLine* m_statusLine;
    QLabel* m_error;
    QGroupBox* m_statusBox;
    QTableWidget* m_status;
    QGroupBox* m_purgeBox;
    QLabel* m_purge;
    QGroupBox* m_retentionBox;
    QTableWidget* m_retention;
    QLabel* m_meaning;
    QGroupBox* m_tablesBox;
    QTableWidget* m_tables;
    QGroupBox* m_horizonBox;
    QLabel* m_horizon;
    QTableWidget* m_holders;
    QChart* m_chart;
    QChartView* m_chartView;
    QLineSeries* m_tableBytes;
    QLineSeries* m_indexBytes;
    QLineSeries* m_rows; // from the counters, on its own axis
    QLineSeries* m_dead; // task_idempotency's dead rows in the size samples (schema v26), on the rows axis
    QValueAxis* m_rowsAxis;
    QDateTimeAxis* m_x;
    QValueAxis* m_y;
    QTimer* m_timer;
};

} // namespace idem::console
