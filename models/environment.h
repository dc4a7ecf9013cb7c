#pragma once

#include <QColor>
#include <QString>
#include <QStringList>

#include "models/connectionsettings.h"

namespace idem::console {

// A connection's environment as people see it: a short name ("prod", "staging") and one of a few
// colours by name, so that every window and dialog of that connection says which database it acts
// on (the title's "[prod]" and a band in the colour). Qt Gui only: the item models use it too.
namespace environment {
    // The colour names a profile may hold, in the order the connection dialog offers them.
    QStringList colourNames();
    // The colour of a name ("red", "amber", "green", "blue", "purple", "grey"); invalid for "" or
    // an unknown name.
    QColor colour(const QString& name);
    // The colour name a new environment gets by its name: "prod"/"production"/"live" red,
    // "staging"/"stage"/"preprod"/"uat" amber, "dev"/"test"/"qa" green, anything else blue.
    QString suggestedColour(const QString& environment);
    // The colour the settings show: theirs, else the suggestion for their name; invalid when they
    // name no environment.
    QColor colourOf(const ConnectionSettings& settings);
    // Black or white, whichever reads better on `background`.
    QColor textOn(const QColor& background);
    // "[prod] " for a title, empty without an environment.
    QString titlePrefix(const QString& environment);
} // namespace environment

} // namespace idem::console
