#include "views/horizonnotice.h"

#include <QEvent>

#include "models/horizonwatch.h"
#include "views/theme.h"

namespace idem::console {

HorizonNotice::HorizonNotice(ConsoleSession* session, QWidget* parent)
    : QLabel(parent)
    , m_watch(new HorizonWatch(session, this))
{
    setObjectName(QStringLiteral("dashboardHorizon"));
    setWordWrap(true);
    setTextFormat(Qt::PlainText); // role, application and slot names come from the database
    theme::followTone(this, theme::Tone::Caution, true);
    hide();
    connect(m_watch, &HorizonWatch::changed, this, &HorizonNotice::render);
}

void HorizonNotice::render()
{
    const auto& r = m_watch->reading();
    const bool show = r && m_watch->verdict().alert();
    setText(show ? horizontext::alertLine(*r, m_watch->verdict(), m_watch->heldAfterSeconds()) : QString());
    setVisible(show);
}

} // namespace idem::console
