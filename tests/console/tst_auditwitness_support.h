#pragma once

// Shared by the audit witness tests: a scratch database whose trail is made by real recovery
// actions, a session connected to it and a dashboard ticking on that session.

#include <QtTest>

#include <memory>
#include <string>

#include "models/dashboardmodel.h"
#include "operations/actions.h"
#include "tests/console/tst_taskbrowser_support.h"

namespace idem::test {

// One database with a trail of real actions, a connected session and a dashboard ticking on it.
struct Trail {
    explicit Trail(const std::string& tag)
        : db(tag, migrated)
        , conn(db.connect())
    {
        idem::migrate(*conn, { idem::SchemaName(), false });
    }

    // Appends n applied requeues (one per new failed row), as an operator would.
    void act(int n)
    {
        for (int i = 0; i < n; ++i) {
            const auto key = "witness:charge:k" + std::to_string(++keys);
            plantTask(*conn, key, "failed", 3, 3, "permanent");
            const auto v = idem::readRowVersions(*conn, idem::SchemaName(), { key });
            idem::ActionOptions o;
            o.reason = "requeue " + key;
            o.actor = "alice@host1";
            QCOMPARE(idem::applyAction(*conn, idem::SchemaName(), idem::RecoveryAction::Requeue, *v[0], o).outcome,
                idem::ActionOutcome::Applied);
        }
    }

    std::string hashOf(std::int64_t id)
    {
        return querySql(
            *conn, "SELECT entry_hash FROM idem.task_idempotency_audit WHERE id = $1", static_cast<long long>(id))[0][0]
            .as<std::string>();
    }

    bool connect()
    {
        dashboard.setInterval(1000);
        return connectSession(session, db.dsn());
    }

    ScratchDatabase db;
    std::unique_ptr<pqxx::connection> conn;
    console::ConsoleSession session;
    console::DashboardModel dashboard { &session };
    int keys = 0;
};

} // namespace idem::test
