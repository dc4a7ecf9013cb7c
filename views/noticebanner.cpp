#include "views/noticebanner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

namespace idem::console {

NoticeBanner::NoticeBanner(QWidget* parent)
    : QFrame(parent)
{
    setObjectName(QStringLiteral("noticeBanner"));
    m_text = new QLabel;
    m_text->setObjectName(QStringLiteral("noticeText"));
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_action = new QPushButton;
    m_action->setObjectName(QStringLiteral("noticeAction"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 8, 10, 8);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_action, 0, Qt::AlignVCenter);
    connect(m_action, &QPushButton::clicked, this, &NoticeBanner::actionTriggered);
    hide();
}

void NoticeBanner::showNotice(NoticeLevel level, const QString& text, const QString& actionText)
{
    // Light backgrounds with dark text read well in both light and dark desktop themes,
    // since the text colour is set alongside.
    QString colours;
    switch (level) {
    case NoticeLevel::Info:
        colours = QStringLiteral("background: #e8f1fb; color: #0b3a66; border: 1px solid #b6d4f2;");
        break;
    case NoticeLevel::Warning:
        colours = QStringLiteral("background: #fff4e0; color: #5c3b00; border: 1px solid #f0cf8c;");
        break;
    case NoticeLevel::Error:
        colours = QStringLiteral("background: #fdecea; color: #611a15; border: 1px solid #f5c2c0;");
        break;
    }
    setStyleSheet(
        QStringLiteral("QFrame#noticeBanner { %1 border-radius: 4px; } QLabel { color: inherit; }").arg(colours));
    m_text->setStyleSheet(QStringLiteral("QLabel { %1 border: none; }").arg(colours));
    m_text->setText(text);
    m_action->setText(actionText);
    m_action->setVisible(!actionText.isEmpty());
    m_action->setEnabled(true);
    show();
}

void NoticeBanner::setActionEnabled(bool enabled) { m_action->setEnabled(enabled); }

void NoticeBanner::clear()
{
    m_text->clear();
    hide();
}

QString NoticeBanner::text() const { return isHidden() ? QString() : m_text->text(); }

} // namespace idem::console
