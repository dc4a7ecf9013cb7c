// A worker that embeds the protocol: links idem_core only (README, "Embedding the protocol").
// Usage: idem-example-worker DSN SCHEMA ORDER_ID AMOUNT_CENTS
#include <cstdio>
#include <string>
#include <pqxx/nontransaction>
#include "core/connection.h"
#include "core/digest.h"
#include "core/migrate.h"
#include "core/runner.h"

int main(int argc, char** argv)
{
    if (argc != 5)
        return std::fprintf(stderr, "usage: %s DSN SCHEMA ORDER_ID AMOUNT_CENTS\n", argv[0]), 2;
    auto conn = idem::connect(argv[1]);
    const idem::SchemaName schema(argv[2]);
    idem::migrate(*conn, { schema, /*applyRoles=*/false }); // a worker may migrate its own schema
    pqxx::nontransaction(*conn).exec("CREATE TABLE IF NOT EXISTS " + schema.qualify("payments")
                                     + " (order_id text NOT NULL, amount_cents bigint NOT NULL)");
    const std::string order = argv[3], amount = argv[4];
    idem::TaskStore store(*conn, { .schema = schema });
    const idem::TaskKey key("shop", "charge", order); // one business intent, never a retry count
    const auto digest = idem::requestDigest({ { "order", order }, { "amount_cents", std::stoll(amount) } });
    const auto outcome = idem::runTask(store, key, digest, [&](pqxx::work& tx, const idem::TaskContext& ctx) {
        // Runs after the fence, inside the transaction that records the success.
        tx.exec_params("INSERT INTO " + schema.qualify("payments") + " (order_id, amount_cents) VALUES ($1, $2)",
                       order, std::stoll(amount));
        return std::string(R"({"receipt":")") + ctx.idempotencyKey + "\"}";
    });
    std::printf("%s %s\n", idem::runOutcomeName(outcome.kind), outcome.resultJson.c_str());
    return outcome.kind == idem::RunOutcome::Kind::Succeeded || outcome.kind == idem::RunOutcome::Kind::Replayed ? 0 : 1;
}
