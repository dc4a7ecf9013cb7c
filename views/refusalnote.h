#pragma once

#include <QLabel>
#include <QStringList>

namespace idem::console {

// The line beside greyed-out actions that says why they are greyed out (a missing right, no
// connection, a read-only schema), visible without hovering: the tooltip alone hides the reason
// from whoever does not think of hovering. Wraps, never widens its window; hidden when there is
// no reason to give. Each reason once, in the order given.
class RefusalNote : public QLabel {
    Q_OBJECT
public:
    explicit RefusalNote(const QString& objectName, QWidget* parent = nullptr);
    void setReasons(const QStringList& reasons);
};

} // namespace idem::console
