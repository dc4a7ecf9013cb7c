#pragma once

#include <QFrame>

class QLabel;
class QPushButton;

namespace idem::console {

enum class NoticeLevel { Info, Warning, Error };

// One line of "this needs your attention" above the console's content, with at most one
// action: connect again, create the schema, and so on.
class NoticeBanner : public QFrame {
    Q_OBJECT
public:
    explicit NoticeBanner(QWidget* parent = nullptr);

    void showNotice(NoticeLevel level, const QString& text, const QString& actionText = {});
    void setActionEnabled(bool enabled);
    void clear();
    QString text() const;
    QPushButton* actionButton() const { return m_action; }

Q_SIGNALS:
    void actionTriggered();

private:
    QLabel* m_text;
    QPushButton* m_action;
};

} // namespace idem::console
