#pragma once

#include <QDateTime>
#include <QLabel>
#include <QPointer>

class QTimer;

namespace idem::console {

class ConsoleSession;

// One line over a page: the state of the connection the page reads through (the same words on
// every page) and how old what the page shows is ("as of 12:00:03, 4 s ago"), ticking by the
// second on the UI thread without asking the database anything. During an outage it says the
// rows are stale and since when.
class PageStatusLine : public QLabel {
    Q_OBJECT
public:
    PageStatusLine(ConsoleSession* reads, const QString& objectName, QWidget* parent = nullptr);
    ~PageStatusLine() override;

    // Another connection whose loss the page should mention too (the admin connection that runs
    // the Tasks page's recovery actions).
    void watch(ConsoleSession* other);
    // What the page shows was read just now.
    void markRead();
    QDateTime readAt() const { return m_readAt; }

protected:
    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void refresh();

    QPointer<ConsoleSession> m_reads;
    QPointer<ConsoleSession> m_other;
    QDateTime m_readAt;
    QTimer* m_tick;
};

// "4 s ago", "3 min ago", "2 h ago": how long ago `at` was, for a person.
QString ageText(const QDateTime& at, const QDateTime& now = QDateTime::currentDateTime());

} // namespace idem::console
