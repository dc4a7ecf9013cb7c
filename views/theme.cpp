#include "views/theme.h"

#include <QApplication>
#include <QEvent>
#include <QPainter>
#include <QPalette>
#include <QProxyStyle>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>
#include <QStyleOption>
#include <QWidget>

namespace idem::console::theme {

namespace {
    const QString settingsKey = QStringLiteral("ui/theme");

    struct Platform {
        bool captured = false;
        QString style;
        QPalette palette;
        Theme current = Theme::System;
    };

    Platform& platform()
    {
        static Platform p;
        if (!p.captured && qApp) {
            p.captured = true;
            p.style = QApplication::style()->name();
            p.palette = QApplication::palette();
        }
        return p;
    }

    void setAll(QPalette& p, QPalette::ColorRole role, const QColor& active, const QColor& disabled)
    {
        p.setColor(QPalette::Active, role, active);
        p.setColor(QPalette::Inactive, role, active);
        p.setColor(QPalette::Disabled, role, disabled);
    }
} // namespace

QPalette lightPalette()
{
    QPalette p;
    setAll(p, QPalette::Window, QColor(0xef, 0xf0, 0xf1), QColor(0xef, 0xf0, 0xf1));
    setAll(p, QPalette::WindowText, QColor(0x1f, 0x23, 0x28), QColor(0x8a, 0x8f, 0x94));
    setAll(p, QPalette::Base, Qt::white, QColor(0xf3, 0xf3, 0xf3));
    setAll(p, QPalette::AlternateBase, QColor(0xf5, 0xf7, 0xf9), QColor(0xf5, 0xf7, 0xf9));
    setAll(p, QPalette::Text, QColor(0x1f, 0x23, 0x28), QColor(0x8a, 0x8f, 0x94));
    setAll(p, QPalette::PlaceholderText, QColor(0x70, 0x76, 0x7c), QColor(0xa0, 0xa0, 0xa0));
    setAll(p, QPalette::Button, QColor(0xf6, 0xf7, 0xf8), QColor(0xee, 0xee, 0xee));
    setAll(p, QPalette::ButtonText, QColor(0x1f, 0x23, 0x28), QColor(0x8a, 0x8f, 0x94));
    setAll(p, QPalette::BrightText, Qt::white, Qt::white);
    setAll(p, QPalette::Highlight, QColor(0x2f, 0x6f, 0xc2), QColor(0xb0, 0xb8, 0xc4));
    setAll(p, QPalette::HighlightedText, Qt::white, Qt::white);
    setAll(p, QPalette::ToolTipBase, QColor(0xff, 0xfb, 0xe6), QColor(0xff, 0xfb, 0xe6));
    setAll(p, QPalette::ToolTipText, QColor(0x1f, 0x23, 0x28), QColor(0x1f, 0x23, 0x28));
    setAll(p, QPalette::Link, QColor(0x1a, 0x5f, 0xb4), QColor(0x8a, 0x8f, 0x94));
    setAll(p, QPalette::LinkVisited, QColor(0x6a, 0x3d, 0x9a), QColor(0x8a, 0x8f, 0x94));
    setAll(p, QPalette::Light, Qt::white, Qt::white);
    setAll(p, QPalette::Midlight, QColor(0xe3, 0xe4, 0xe6), QColor(0xe3, 0xe4, 0xe6));
    setAll(p, QPalette::Mid, QColor(0xb8, 0xbb, 0xbf), QColor(0xb8, 0xbb, 0xbf));
    setAll(p, QPalette::Dark, QColor(0x9a, 0x9d, 0xa1), QColor(0x9a, 0x9d, 0xa1));
    setAll(p, QPalette::Shadow, QColor(0x60, 0x60, 0x60), QColor(0x60, 0x60, 0x60));
    return p;
}

QPalette darkPalette()
{
    QPalette p;
    setAll(p, QPalette::Window, QColor(0x2b, 0x2d, 0x31), QColor(0x2b, 0x2d, 0x31));
    setAll(p, QPalette::WindowText, QColor(0xe6, 0xe7, 0xe9), QColor(0x80, 0x84, 0x8a));
    setAll(p, QPalette::Base, QColor(0x1e, 0x1f, 0x22), QColor(0x26, 0x27, 0x2a));
    setAll(p, QPalette::AlternateBase, QColor(0x26, 0x28, 0x2c), QColor(0x26, 0x28, 0x2c));
    setAll(p, QPalette::Text, QColor(0xe6, 0xe7, 0xe9), QColor(0x80, 0x84, 0x8a));
    setAll(p, QPalette::PlaceholderText, QColor(0x95, 0x9a, 0xa0), QColor(0x70, 0x74, 0x78));
    setAll(p, QPalette::Button, QColor(0x35, 0x38, 0x3d), QColor(0x30, 0x32, 0x36));
    setAll(p, QPalette::ButtonText, QColor(0xe6, 0xe7, 0xe9), QColor(0x80, 0x84, 0x8a));
    setAll(p, QPalette::BrightText, QColor(0xff, 0x8a, 0x80), QColor(0xff, 0x8a, 0x80));
    setAll(p, QPalette::Highlight, QColor(0x3d, 0x7e, 0xd6), QColor(0x4a, 0x4e, 0x55));
    setAll(p, QPalette::HighlightedText, Qt::white, QColor(0xc0, 0xc0, 0xc0));
    setAll(p, QPalette::ToolTipBase, QColor(0x3a, 0x3d, 0x42), QColor(0x3a, 0x3d, 0x42));
    setAll(p, QPalette::ToolTipText, QColor(0xe6, 0xe7, 0xe9), QColor(0xe6, 0xe7, 0xe9));
    setAll(p, QPalette::Link, QColor(0x8a, 0xb4, 0xf8), QColor(0x80, 0x84, 0x8a));
    setAll(p, QPalette::LinkVisited, QColor(0xc5, 0x8a, 0xf9), QColor(0x80, 0x84, 0x8a));
    setAll(p, QPalette::Light, QColor(0x4a, 0x4d, 0x53), QColor(0x4a, 0x4d, 0x53));
    setAll(p, QPalette::Midlight, QColor(0x3e, 0x41, 0x46), QColor(0x3e, 0x41, 0x46));
    setAll(p, QPalette::Mid, QColor(0x24, 0x26, 0x29), QColor(0x24, 0x26, 0x29));
    setAll(p, QPalette::Dark, QColor(0x1a, 0x1b, 0x1e), QColor(0x1a, 0x1b, 0x1e));
    setAll(p, QPalette::Shadow, QColor(0x0c, 0x0c, 0x0d), QColor(0x0c, 0x0c, 0x0d));
    return p;
}

QPalette platformPalette() { return platform().palette; }

ThemeNotifier* notifier()
{
    static auto* n = new ThemeNotifier(qApp);
    return n;
}

void onChange(QObject* owner, const std::function<void()>& render)
{
    QObject::connect(notifier(), &ThemeNotifier::changed, owner, render);
}

namespace {
    // Fusion draws a check box's frame in the window colour darkened by 40 %: on the dark
    // palette that is 1.2:1 against the box's own fill, an unchecked box is all but invisible
    // (WCAG 1.4.11 asks 3:1 for what a control's state is read from). The frame is drawn again
    // in a colour between the text and the base, readable on both of each palette's grounds.
    class ContrastStyle : public QProxyStyle {
    public:
        using QProxyStyle::QProxyStyle;
        void drawPrimitive(
            PrimitiveElement element, const QStyleOption* option, QPainter* painter, const QWidget* widget) const override
        {
            QProxyStyle::drawPrimitive(element, option, painter, widget);
            if (element != PE_IndicatorCheckBox && element != PE_IndicatorItemViewItemCheck)
                return;
            painter->save();
            painter->setRenderHint(QPainter::Antialiasing, false);
            painter->setBrush(Qt::NoBrush);
            painter->setPen(indicatorFrame(option->palette));
            painter->drawRect(option->rect.adjusted(0, 0, -1, -1));
            painter->restore();
        }
    };
} // namespace

QColor indicatorFrame(const QPalette& palette)
{
    const QColor text = palette.color(QPalette::Text), base = palette.color(QPalette::Base);
    const auto mix = [](int a, int b) { return (a * 3 + b * 2) / 5; };
    return QColor(mix(text.red(), base.red()), mix(text.green(), base.green()), mix(text.blue(), base.blue()));
}

void apply(Theme theme)
{
    Platform& p = platform();
    p.current = theme;
    if (theme == Theme::System) {
        QApplication::setStyle(p.style);
        // A palette with nothing set resolves to the platform theme's (or the style's) palette.
        QApplication::setPalette(QPalette());
        Q_EMIT notifier()->changed();
        return;
    }
    QApplication::setStyle(new ContrastStyle(QStyleFactory::create(QStringLiteral("Fusion"))));
    QApplication::setPalette(theme == Theme::Dark ? darkPalette() : lightPalette());
    Q_EMIT notifier()->changed();
}

Theme current() { return platform().current; }

bool isDark(const QPalette& palette) { return tones::isDark(palette); }

bool isDark() { return isDark(QApplication::palette()); }

QColor toneColor(Tone tone) { return tones::color(tone, isDark()); }

QString toneCss(Tone tone) { return tones::css(tone); }

namespace {
    class ToneFollower : public QObject {
    public:
        ToneFollower(QWidget* widget, Tone tone, bool bold)
            : QObject(widget)
            , m_tone(tone)
            , m_bold(bold)
        {
            setObjectName(QStringLiteral("idemToneFollower"));
            widget->installEventFilter(this);
            restyle(widget);
            QObject::connect(notifier(), &ThemeNotifier::changed, this, [this, widget] { restyle(widget); });
        }
        void setTone(QWidget* widget, Tone tone, bool bold)
        {
            if (tone == m_tone && bold == m_bold)
                return; // a page's status line re-tones every second: no re-polish for nothing
            m_tone = tone;
            m_bold = bold;
            restyle(widget);
        }

    protected:
        bool eventFilter(QObject* watched, QEvent* event) override
        {
            // Which of these a widget gets depends on its style sheet and on whether it is shown.
            const auto t = event->type();
            if (t == QEvent::ApplicationPaletteChange || t == QEvent::PaletteChange || t == QEvent::StyleChange)
                restyle(static_cast<QWidget*>(watched));
            return false;
        }

    private:
        void restyle(QWidget* w)
        {
            const QString css = toneCss(m_tone) + (m_bold ? QStringLiteral("; font-weight:bold") : QString());
            if (w->styleSheet() != css) // setting it sends the events above again
                w->setStyleSheet(css);
        }
        Tone m_tone;
        bool m_bold;
    };
} // namespace

void followTone(QWidget* label, Tone tone, bool bold)
{
    // Found by name: without Q_OBJECT a qobject_cast would match any child.
    if (auto* f = label->findChild<QObject*>(QStringLiteral("idemToneFollower"), Qt::FindDirectChildrenOnly))
        static_cast<ToneFollower*>(f)->setTone(label, tone, bold);
    else
        new ToneFollower(label, tone, bold);
}

void clearTone(QWidget* label)
{
    delete label->findChild<QObject*>(QStringLiteral("idemToneFollower"), Qt::FindDirectChildrenOnly);
    label->setStyleSheet(QString());
}

Theme load(QSettings& settings)
{
    const QString v = settings.value(settingsKey).toString();
    if (v == QLatin1String("light"))
        return Theme::Light;
    if (v == QLatin1String("dark"))
        return Theme::Dark;
    return Theme::System;
}

void save(QSettings& settings, Theme theme)
{
    settings.setValue(settingsKey,
        theme == Theme::Light      ? QStringLiteral("light")
            : theme == Theme::Dark ? QStringLiteral("dark")
                                   : QStringLiteral("system"));
    settings.sync();
}

} // namespace idem::console::theme
