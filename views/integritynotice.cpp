#include "views/integritynotice.h"

#include "operations/stats.h"
#include "views/theme.h"

namespace idem::console {

IntegrityNotice::IntegrityNotice(QWidget* parent)
    : QLabel(parent)
{
    setObjectName(QStringLiteral("dashboardIntegrity"));
    setWordWrap(true);
    setTextFormat(Qt::PlainText); // role and application names come from the database
    theme::followTone(this, theme::Tone::Caution, true);
    hide();
}

void IntegrityNotice::showFor(const idem::StatsReading& s)
{
    QStringList lines;
    if (const auto& r = s.refusedFlushes; r.last24h > 0)
        lines << tr("⚠ %n counter flush(es) refused as implausible in the last 24 h; the last at %1 by role %2 "
                    "(application %3, from %4): %5",
                    nullptr, static_cast<int>(r.last24h))
                     .arg(QString::fromStdString(r.lastAt), QString::fromStdString(r.lastRole),
                         QString::fromStdString(r.lastApplication),
                         r.lastClientAddr.empty() ? tr("a local socket") : QString::fromStdString(r.lastClientAddr),
                         QString::fromStdString(r.lastReason));
    if (const auto& h = s.exactHolder)
        lines << tr("⚠ The shared exact refresh is held by pid %1 (role %2, application %3) since %4: this console "
                    "counts the exact figures itself")
                     .arg(h->pid)
                     .arg(QString::fromStdString(h->role), QString::fromStdString(h->application),
                         h->since.empty() ? tr("(not visible to this role)") : QString::fromStdString(h->since));
    setText(lines.join(QLatin1Char('\n')));
    setVisible(!lines.isEmpty());
}

} // namespace idem::console
