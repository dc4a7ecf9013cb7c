#pragma once

#include <QLabel>

namespace idem::console {

class ConsoleSession;
class HorizonWatch;

// One line on the dashboard while the transaction horizon is held past a threshold and the Idem
// tables' dead rows grow (issue 46 item 1): who holds it (pid, role, application, state, age),
// and by how much the dead rows grew. Hidden otherwise.
class HorizonNotice : public QLabel {
    Q_OBJECT
public:
    explicit HorizonNotice(ConsoleSession* session, QWidget* parent = nullptr);
    HorizonWatch* watch() const { return m_watch; }

private:
    void render();
    HorizonWatch* m_watch;
};

} // namespace idem::console
