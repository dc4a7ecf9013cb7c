#pragma once

#include <QWidget>

#include "operations/taskfilter.h"

class QEvent;
class QLabel;
class QToolButton;

namespace idem::console {

// The line above the Tasks table that says what a dashboard tile's click narrows the list by
// and the page has no control for ("lease still running", "updated in the last 15 min"), with
// × to remove it. Hidden when there is nothing to say: every condition that narrows the list
// is either a control or on this line.
class TileConditionsBar : public QWidget {
    Q_OBJECT
public:
    explicit TileConditionsBar(QWidget* parent = nullptr);

    // The hidden part of a filter (hiddenPart()); an empty one hides the bar.
    void setConditions(const idem::TaskFilter& hidden);
    // What the line says; empty while hidden.
    QString text() const;

Q_SIGNALS:
    void removeRequested();

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslate();

    QLabel* m_text;
    QToolButton* m_clear;
    idem::TaskFilter m_hidden;
};

// The fields of `f` the Tasks page has a control for, and the others (a tile's additions).
idem::TaskFilter visiblePart(const idem::TaskFilter& f);
idem::TaskFilter hiddenPart(const idem::TaskFilter& f);
// `visible` with `hidden`'s hidden fields added.
idem::TaskFilter withHidden(idem::TaskFilter visible, const idem::TaskFilter& hidden);

} // namespace idem::console
