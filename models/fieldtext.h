#pragma once

#include <QString>

#include "operations/fieldcompare.h"

namespace idem::console {

// Schema v32: which fields of a key's last conflicting request differed, for the Tasks page's
// detail and the snapshot viewer: "amount_cents differs; currency, order_id same". Names only,
// shown as visibleText shows text from the database, each cut to 80 characters ("…"), at most
// 16 a list ("and 3 more"); HTML-escaped, for a rich-text label. Empty when there is nothing to say.
QString fieldComparisonHtml(const idem::FieldComparison& c);

} // namespace idem::console
