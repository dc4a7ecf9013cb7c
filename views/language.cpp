#include "views/language.h"

#include <QCoreApplication>
#include <QGuiApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QSettings>
#include <QTranslator>

namespace idem::console::language {

namespace {
    const QString settingsKey = QStringLiteral("ui/language");

    QString& chosen()
    {
        static QString code;
        return code;
    }

    QString& currentCode()
    {
        static QString code = QStringLiteral("en");
        return code;
    }

    // Owned by the application object, so they live as long as the translations are in use.
    QTranslator* translator(const char* name)
    {
        auto* t = QCoreApplication::instance()->findChild<QTranslator*>(QLatin1String(name));
        if (!t) {
            t = new QTranslator(QCoreApplication::instance());
            t->setObjectName(QLatin1String(name));
        }
        return t;
    }
} // namespace

QStringList available() { return { QStringLiteral("en"), QStringLiteral("zh_CN") }; }

QString resourcePath(const QString& code) { return QStringLiteral(":/i18n/idem_console_%1.qm").arg(code); }

QString resolve(const QString& choice)
{
    if (available().contains(choice))
        return choice;
    if (!choice.isEmpty())
        return QStringLiteral("en");
    // uiLanguages() honours LANGUAGE (a list, in order) before LC_ALL / LC_MESSAGES / LANG.
    // Any Chinese goes to Simplified Chinese (the only Chinese we ship); the first language we
    // ship wins.
    const QStringList wanted = QLocale::system().uiLanguages();
    for (const QString& lang : wanted) {
        if (lang.startsWith(QLatin1String("zh")))
            return QStringLiteral("zh_CN");
        if (lang.startsWith(QLatin1String("en")) || lang == QLatin1String("C"))
            return QStringLiteral("en");
    }
    return QStringLiteral("en");
}

bool apply(const QString& choice)
{
    const QString code = resolve(choice);
    auto* app = QCoreApplication::instance();
    QTranslator* own = translator("idemTranslator");
    QTranslator* qt = translator("qtbaseTranslator");
    app->removeTranslator(own);
    app->removeTranslator(qt);
    // English is the source language: its .qm only carries plural forms.
    const bool ok = own->load(resourcePath(code));
    if (ok)
        app->installTranslator(own);
    // Qt's own strings (button boxes, file dialogs): Debian's qt6-translations-l10n.
    if (qt->load(QStringLiteral("qtbase_") + code, QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        app->installTranslator(qt);
    // Numbers and dates follow the language too, unless the system already speaks it.
    const QLocale locale = code == QLatin1String("en") && !QLocale::system().name().startsWith(QLatin1String("zh"))
        ? QLocale::system()
        : QLocale(code);
    QLocale::setDefault(locale);
    // Qt appends the display name to a window title that does not end with it already: in the
    // title's language, "… – Idem 控制台" gets no "– Idem console" after it.
    if (qobject_cast<QGuiApplication*>(app))
        QGuiApplication::setApplicationDisplayName(QCoreApplication::translate("idem::console::MainWindow", "Idem console"));
    currentCode() = ok ? code : QStringLiteral("en");
    chosen() = available().contains(choice) ? choice : QString();
    return ok;
}

QString current() { return currentCode(); }

QString choice() { return chosen(); }

QString loadChoice(QSettings& settings)
{
    const QString v = settings.value(settingsKey).toString();
    return available().contains(v) ? v : QString();
}

void saveChoice(QSettings& settings, const QString& choice)
{
    settings.setValue(settingsKey, available().contains(choice) ? choice : QString());
    settings.sync();
}

} // namespace idem::console::language
