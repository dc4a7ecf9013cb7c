#pragma once

#include <QWidget>

class QLabel;
class QTableView;

namespace idem::console {

class FleetModel;

// The Fleet page (issue #29): one row per database with its environment in its colour, its health
// in a few words on a red, amber or green cell, the server it is on and what watching it costs; a
// line above says how many are red, amber and green. A double click (or Enter) on a row asks for
// that database in a console window of its own.
class FleetWidget : public QWidget {
    Q_OBJECT
public:
    explicit FleetWidget(FleetModel* model, QWidget* parent = nullptr);

    FleetModel* model() const { return m_model; }
    QTableView* table() const { return m_table; }
    QString summaryText() const;

Q_SIGNALS:
    void openRequested(int row);

protected:
    void changeEvent(QEvent* event) override;

private:
    void refresh();

    FleetModel* m_model;
    QLabel* m_summary;
    QLabel* m_hint;
    QTableView* m_table;
};

} // namespace idem::console
