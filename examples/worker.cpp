// A worker that embeds the protocol: links idem_core only (docs/workers-guide.md, "Embedding the protocol").
// Usage: idem-example-worker DSN SCHEMA ORDER_ID AMOUNT_CENTS
// DSN logs in as a role granted idem_worker (no other right on the Idem schema) and INSERT on the
// service's own table payments; the schema was migrated beforehand by its owner (idemctl migrate).
#include "core/connection.h"
#include "core/digest.h"
#include "core/runner.h"
#include <cstdio>
#include <string>

int main(int argc, char** argv)
{
    if (argc != 5)
        return std::fprintf(stderr, "usage: %s DSN SCHEMA ORDER_ID AMOUNT_CENTS\n", argv[0]), 2;
    auto conn = idem::connect(argv[1]);
    const idem::SchemaName schema(argv[2]);
    const std::string order = argv[3], amount = argv[4];
    idem::TaskStore store(*conn, { .schema = schema });
    const idem::TaskKey key("shop", "charge", order); // one business intent, never a retry count
    const auto digest = idem::requestDigest({ { "order", order }, { "amount_cents", std::stoll(amount) } });
    // First the call to the other service, with the key and no transaction open (a payment
    // provider, stubbed here: its receipt is the key it deduplicates by); a retry after an unknown
    // outcome reaches it with the same key. Then a short fenced transaction records the success.
    const auto callProvider = [](const idem::TaskContext& ctx) { return ctx.idempotencyKey; };
    const auto outcome = idem::runTask(
        store, key, digest, callProvider, [&](pqxx::work& tx, const idem::TaskContext&, const std::string& receipt) {
            // The service's own table, in the same transaction as the completion.
            tx.exec_params("INSERT INTO shop.payments (order_id, amount_cents) VALUES ($1, $2)", order, std::stoll(amount));
            return std::string(R"({"receipt":")") + receipt + "\"}";
        });
    std::printf("%s %s\n", idem::runOutcomeName(outcome.kind), outcome.resultJson.c_str());
    return outcome.kind == idem::RunOutcome::Kind::Succeeded || outcome.kind == idem::RunOutcome::Kind::Replayed ? 0
                                                                                                                 : 1;
}
