#pragma once

#include <QWidget>

#include <optional>

#include "operations/taskfilter.h"
#include "operations/tasklist.h"
#include "models/livetext.h"

class QCheckBox;
class QLabel;
class QTableView;

namespace idem::console {

class BreakdownModel;
class BreakdownWatch;
class ConsoleSession;

// The dashboard's "Where it is failing" (issue 41): per operation (per tenant and operation with
// "By tenant") processing, failed, retrying, conflicts and p95 run time, beside the window's top
// error messages; a double-click on a row opens its rows on the Tasks page.
class BreakdownPanel : public QWidget {
    Q_OBJECT
public:
    explicit BreakdownPanel(ConsoleSession* monitor, QWidget* parent = nullptr);
    ~BreakdownPanel() override;

    BreakdownWatch* watch() const { return m_watch; }
    BreakdownModel* operations() const { return m_operations; }
    BreakdownModel* errors() const { return m_errors; }
    QTableView* operationsView() const { return m_operationsView; }
    QTableView* errorsView() const { return m_errorsView; }
    QCheckBox* byTenant() const { return m_byTenant; }
    QLabel* note() const { return m_note; }

Q_SIGNALS:
    void openRows(const idem::TaskFilter& filter, const QString& title, const idem::console::LiveText& what,
        const std::optional<idem::TaskSort>& sort);

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();
    void refresh();

    BreakdownWatch* m_watch;
    BreakdownModel* m_operations;
    BreakdownModel* m_errors;
    QTableView* m_operationsView;
    QTableView* m_errorsView;
    QCheckBox* m_byTenant;
    QLabel* m_title;
    QLabel* m_note;
    QWidget* m_headBox = nullptr;
};

} // namespace idem::console
