#include "models/environment.h"

#include "models/tones.h"

namespace idem::console::environment {

namespace {
    struct Named {
        const char* name;
        const char* rgb;
    };
    // Strong enough for a band and a title swatch in both themes; white or black text on each
    // meets 4.5:1 (textOn picks).
    constexpr Named palette[] = {
        { "red", "#c62828" },
        { "amber", "#f9a825" },
        { "green", "#2e7d32" },
        { "blue", "#1565c0" },
        { "purple", "#6a1b9a" },
        { "grey", "#616161" },
    };

    bool oneOf(const QString& word, std::initializer_list<const char*> names)
    {
        for (const char* n : names)
            if (word == QLatin1String(n))
                return true;
        return false;
    }
} // namespace

QStringList colourNames()
{
    QStringList out;
    for (const auto& p : palette)
        out << QLatin1String(p.name);
    return out;
}

QColor colour(const QString& name)
{
    for (const auto& p : palette)
        if (name == QLatin1String(p.name))
            return QColor(QLatin1String(p.rgb));
    return {};
}

QString suggestedColour(const QString& environment)
{
    const QString e = environment.trimmed().toLower();
    if (e.isEmpty())
        return {};
    if (oneOf(e, { "prod", "production", "live", "prd" }) || e.startsWith(QLatin1String("prod")))
        return QStringLiteral("red");
    if (oneOf(e, { "staging", "stage", "stg", "preprod", "pre-prod", "uat" }))
        return QStringLiteral("amber");
    if (oneOf(e, { "dev", "development", "test", "testing", "qa", "local", "sandbox" }))
        return QStringLiteral("green");
    return QStringLiteral("blue");
}

QColor colourOf(const ConnectionSettings& settings)
{
    if (settings.environment.trimmed().isEmpty())
        return {};
    const QColor own = colour(settings.environmentColour);
    return own.isValid() ? own : colour(suggestedColour(settings.environment));
}

QColor textOn(const QColor& background)
{
    const QColor white(Qt::white);
    const QColor black(Qt::black);
    return tones::contrast(background, white) >= tones::contrast(background, black) ? white : black;
}

QString titlePrefix(const QString& environment)
{
    const QString e = environment.trimmed();
    return e.isEmpty() ? QString() : QStringLiteral("[%1] ").arg(e);
}

} // namespace idem::console::environment
