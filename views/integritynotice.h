#pragma once

#include <QLabel>

namespace idem {
struct StatsReading;
}

namespace idem::console {

// One line on the dashboard when a low role has tried to blind it (issue #31): counter flushes
// refused as implausible (who sent the last one) and a session holding the shared exact
// refresh. Hidden when there is nothing to say.
class IntegrityNotice : public QLabel {
    Q_OBJECT
public:
    explicit IntegrityNotice(QWidget* parent = nullptr);
    void showFor(const idem::StatsReading& s);
};

} // namespace idem::console
