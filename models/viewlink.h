#pragma once

#include <QString>
#include <QStringList>

#include <optional>

#include "operations/taskfilter.h"

namespace idem::console {

// A view to share (issue 41): "Copy link" writes an idem:// link that opens the same page, filter
// and window in a colleague's console, which connects with its own saved profile of that name.
// A link names a profile, never a conninfo, a host or a password:
//   idem://view?profile=NAME&page=PAGE[&window=MINUTES][&tenant=T][&operation=O][&filter=JSON]
// page: dashboard, tasks, audit, jobs, storage or connection; window: the dashboard's minutes;
// tenant and operation: the dashboard's filter; filter: the Tasks page's TaskFilter, whole, as
// the JSON a recovery job keeps it in (idem::jobFilterJson: a field added to the filter and to
// that JSON travels in links too).
struct ViewLink {
    QString profile;
    QString page = QStringLiteral("dashboard");
    std::optional<int> windowMinutes;
    QString tenant;
    QString operation;
    std::optional<idem::TaskFilter> filter;
    bool operator==(const ViewLink&) const = default;
};

// A link longer than this is refused unread.
constexpr int maxViewLinkLength = 4096;
// The pages a link may name, as MainWindow::showPage spells them.
QStringList viewLinkPages();

// The link; throws std::invalid_argument when the filter is one the Tasks page would refuse.
QString buildViewLink(const ViewLink& link);

// What a link asks for, or why it cannot be opened (a sentence for people; nothing of the link
// in it unescaped). Defensive: any byte of a hostile link is refused or kept as data.
struct ViewLinkParse {
    std::optional<ViewLink> link;
    QString error;
};
ViewLinkParse parseViewLink(const QString& text);

// Whether an argument looks like a link (so the command line takes it as one).
bool isViewLink(const QString& text);

} // namespace idem::console
