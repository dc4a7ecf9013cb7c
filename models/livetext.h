#pragma once

#include <QMetaType>
#include <QString>

#include <functional>
#include <utility>

namespace idem::console {

// A text that a page keeps and shows again later, kept as how to write it rather than as its
// words, so what the page shows follows a language switch (QEvent::LanguageChange) instead of
// staying in the language it was first written in. From a QString: a text that is the same in
// every language (a name, a test's own words).
class LiveText {
public:
    LiveText() = default;
    LiveText(QString fixed) // NOLINT(google-explicit-constructor): a fixed text is a LiveText
        : m_make(fixed.isEmpty() ? std::function<QString()> {} : [fixed = std::move(fixed)] { return fixed; })
    {
    }
    explicit LiveText(std::function<QString()> make)
        : m_make(std::move(make))
    {
    }

    // The words in the language of the moment; empty for an empty text.
    QString text() const { return m_make ? m_make() : QString(); }
    bool isEmpty() const { return !m_make; }

private:
    std::function<QString()> m_make;
};

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::LiveText)
