#pragma once

#include <QColor>
#include <QLabel>
#include <QString>

class QWidget;

namespace idem::console {

// Which database a window acts on, where nobody can miss it (issue #29): a window marked with an
// environment ("prod", red) gets "[prod] " before its title, and so does every dialog, message box
// and file dialog opened over it, which also get a band of the colour along their top edge. One
// application-wide event filter does it for every dialog, present and future, so no dialog can
// forget to.
namespace environmentmark {
    // Marks `window` (a top-level widget) as acting on this environment; an empty name unmarks it.
    // Its open dialogs follow when they are next shown or retitled.
    void mark(QWidget* window, const QString& environment, const QColor& colour);
    // The environment the window of `widget` (or the nearest marked window it was opened over)
    // acts on; empty when none.
    QString environmentOf(const QWidget* widget);
    QColor colourOf(const QWidget* widget);
} // namespace environmentmark

// The band across the top of a marked main window: the environment's name, large, on its colour.
class EnvironmentBand : public QLabel {
    Q_OBJECT
public:
    explicit EnvironmentBand(QWidget* parent = nullptr);
    // Hidden when `environment` is empty; `where` (the database, "alice@db1:5432/app") follows the name.
    void setEnvironment(const QString& environment, const QColor& colour, const QString& where = {});
    QString environment() const { return m_environment; }
    QColor colour() const { return m_colour; }

private:
    QString m_environment;
    QColor m_colour;
};

} // namespace idem::console
