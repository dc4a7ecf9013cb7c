#pragma once

#include <QFrame>
#include <QTimer>

class QLabel;
class QPushButton;

namespace idem::console {

class PauseWatch;

// Above every page while intake is paused (issue #26): which scope, why, by whom, until when
// (time left by the server's clock) and how many claims it turned away over the watch's window;
// a pause that matched no traffic yet says so. Several pauses: the first and "and N more", all of
// them in the tooltip and under Details…. Hidden while nothing is paused.
class PauseBanner : public QFrame {
    Q_OBJECT
public:
    explicit PauseBanner(PauseWatch* watch, QWidget* parent = nullptr);

    QString text() const;
    QPushButton* detailsButton() const { return m_details; }
    // All pauses, in force and expired, as the Details… window lists them (plain text, one a line).
    QString detailsText() const;
    void showDetails();

protected:
    void changeEvent(QEvent* event) override;

private:
    void render();
    void applyColours();

    PauseWatch* m_watch;
    QLabel* m_text;
    QPushButton* m_details;
    QTimer m_clock; // the time left moves on between reads
};

} // namespace idem::console
