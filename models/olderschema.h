#pragma once

#include <QCoreApplication>
#include <QString>

#include "models/consolesession.h"

namespace idem::console {

// The console reads the schema it ships, or a newer one (docs/deployment.md, "Migrations and their
// lock"): on an older one nothing is read and no action runs. Why, in the words every refusal
// uses; empty when the session's schema is not older.
inline QString olderSchemaRefusal(const ConsoleSession& session)
{
    const auto& si = session.serverInfo();
    if (!si.schemaOlder())
        return {};
    return QCoreApplication::translate("idem::console::ConsoleSession",
        "Schema %1 has version %2, older than this console (%3): upgrade the schema first.")
        .arg(si.schema)
        .arg(si.schemaVersion)
        .arg(si.schemaLatest);
}

} // namespace idem::console
