#include "views/environmentmark.h"

#include <QApplication>
#include <QEvent>
#include <QPointer>
#include <QWidget>

#include "models/environment.h"

namespace idem::console {

namespace {
    const char* const environmentProperty = "idemEnvironment";
    const char* const colourProperty = "idemEnvironmentColour";
    // The prefix this filter put before a window's title, so that it can take it off again.
    const char* const prefixProperty = "idemEnvironmentTitlePrefix";
    const QString bandName = QStringLiteral("environmentDialogBand");
    constexpr int dialogBandHeight = 8;

    const QWidget* markedWindow(const QWidget* widget)
    {
        for (const QWidget* w = widget; w; w = w->parentWidget()) {
            const QWidget* top = w->window();
            if (top->property(environmentProperty).isValid())
                return top;
            w = top;
        }
        return nullptr;
    }

    bool titled(const QWidget* w)
    {
        const auto type = w->windowType();
        return w->isWindow() && (type == Qt::Window || type == Qt::Dialog || type == Qt::Sheet);
    }

    class TitleFilter : public QObject {
    public:
        using QObject::QObject;

    protected:
        bool eventFilter(QObject* object, QEvent* event) override
        {
            const auto type = event->type();
            if (type != QEvent::Show && type != QEvent::WindowTitleChange && type != QEvent::Resize)
                return false;
            auto* w = qobject_cast<QWidget*>(object);
            if (!w || !titled(w) || m_busy)
                return false;
            m_busy = true;
            apply(w, type);
            m_busy = false;
            return false;
        }

    private:
        static void apply(QWidget* w, QEvent::Type type)
        {
            const QString env = environmentmark::environmentOf(w);
            const QColor colour = environmentmark::colourOf(w);
            if (type != QEvent::Resize) {
                const QString wanted = environment::titlePrefix(env);
                const QString had = w->property(prefixProperty).toString();
                QString title = w->windowTitle();
                if (!had.isEmpty() && title.startsWith(had))
                    title.remove(0, had.size());
                if (!wanted.isEmpty() && title.startsWith(wanted))
                    title.remove(0, wanted.size()); // a title set with the prefix already
                w->setProperty(prefixProperty, wanted);
                if (w->windowTitle() != wanted + title)
                    w->setWindowTitle(wanted + title);
            }
            // A marked window draws its own band in its layout; a dialog over it gets one here.
            if (w->property(environmentProperty).isValid())
                return;
            auto* band = w->findChild<QWidget*>(bandName, Qt::FindDirectChildrenOnly);
            if (env.isEmpty()) {
                if (band)
                    band->hide();
                return;
            }
            if (!band) {
                band = new QWidget(w);
                band->setObjectName(bandName);
                band->setAutoFillBackground(true);
                band->setAttribute(Qt::WA_TransparentForMouseEvents);
            }
            QPalette p = band->palette();
            p.setColor(QPalette::Window, colour);
            band->setPalette(p);
            band->setToolTip(env);
            band->setGeometry(0, 0, w->width(), dialogBandHeight);
            band->raise();
            band->show();
        }

        bool m_busy = false;
    };

    void installOnce()
    {
        static QPointer<TitleFilter> filter;
        if (filter || !qApp)
            return;
        filter = new TitleFilter(qApp);
        qApp->installEventFilter(filter);
    }
} // namespace

namespace environmentmark {
    void mark(QWidget* window, const QString& environment, const QColor& colour)
    {
        installOnce();
        const QString env = environment.trimmed();
        if (env.isEmpty()) {
            window->setProperty(environmentProperty, QVariant());
            window->setProperty(colourProperty, QVariant());
        } else {
            window->setProperty(environmentProperty, env);
            window->setProperty(colourProperty, colour);
        }
        // Its title now, and its dialogs that are open.
        QEvent retitle(QEvent::WindowTitleChange);
        QApplication::sendEvent(window, &retitle);
        for (QWidget* top : QApplication::topLevelWidgets())
            if (top != window && top->isVisible() && markedWindow(top->parentWidget()) == window)
                QApplication::sendEvent(top, &retitle);
    }

    QString environmentOf(const QWidget* widget)
    {
        const QWidget* w = widget ? markedWindow(widget) : nullptr;
        return w ? w->property(environmentProperty).toString() : QString();
    }

    QColor colourOf(const QWidget* widget)
    {
        const QWidget* w = widget ? markedWindow(widget) : nullptr;
        return w ? w->property(colourProperty).value<QColor>() : QColor();
    }
} // namespace environmentmark

EnvironmentBand::EnvironmentBand(QWidget* parent)
    : QLabel(parent)
{
    setObjectName(QStringLiteral("environmentBand"));
    setAutoFillBackground(true);
    setAlignment(Qt::AlignCenter);
    setMargin(3);
    QFont f = font();
    f.setBold(true);
    f.setPointSizeF(f.pointSizeF() * 1.15);
    setFont(f);
    hide();
}

void EnvironmentBand::setEnvironment(const QString& environment, const QColor& colour, const QString& where)
{
    m_environment = environment.trimmed();
    m_colour = colour;
    if (m_environment.isEmpty()) {
        clear();
        hide();
        return;
    }
    QPalette p = palette();
    p.setColor(QPalette::Window, colour);
    p.setColor(QPalette::WindowText, environment::textOn(colour));
    setPalette(p);
    setText(where.isEmpty() ? m_environment.toUpper() : tr("%1 — %2").arg(m_environment.toUpper(), where));
    show();
}

} // namespace idem::console
