#pragma once

#include <QString>
#include <QStringList>

class QSettings;

namespace idem::console {

// The console's UI language: English (the source strings) or Simplified Chinese. The choice is
// "" (follow the system locale: LANGUAGE, LC_ALL, LANG), "en" or "zh_CN"; it is kept in the
// console's settings file as ui/language. Applying one swaps the application's translators
// (ours from the embedded :/i18n/*.qm, Qt's own qtbase_*.qm when installed), which sends every
// widget a QEvent::LanguageChange.
namespace language {
    // The languages the console ships, as codes ("en", "zh_CN").
    QStringList available();
    // "" (system) → the shipped language the system locale asks for; anything else as is, or
    // "en" when it is not shipped.
    QString resolve(const QString& choice);
    // Installs the translators for `code` ("en", "zh_CN"; "" means the system's). Returns false
    // when the console's own translation could not be loaded (the UI stays in English).
    bool apply(const QString& choice);
    // The language applied last ("en" before any apply).
    QString current();
    // What was asked for last: "" (the system's), "en" or "zh_CN" (what View > Language ticks).
    QString choice();
    // The resource holding a language's compiled translation.
    QString resourcePath(const QString& code);

    QString loadChoice(QSettings& settings);
    void saveChoice(QSettings& settings, const QString& choice);
} // namespace language

} // namespace idem::console
