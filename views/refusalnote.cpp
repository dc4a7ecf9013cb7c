#include "views/refusalnote.h"

#include "views/theme.h"

namespace idem::console {

RefusalNote::RefusalNote(const QString& objectName, QWidget* parent)
    : QLabel(parent)
{
    setObjectName(objectName);
    setWordWrap(true);
    setTextFormat(Qt::PlainText);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    theme::followTone(this, theme::Tone::Caution);
    hide();
}

void RefusalNote::setReasons(const QStringList& reasons)
{
    QStringList once;
    for (const auto& r : reasons)
        if (!r.isEmpty() && !once.contains(r))
            once << r;
    setText(once.join(QLatin1Char('\n')));
    setVisible(!once.isEmpty());
}

} // namespace idem::console
