// The compared ways of serving one request. Each sends exactly the statements it names,
// one exec_params round trip each; all share the key, digest, lease, business row and result.
#include "bench/bench.h"

#include <stdexcept>

#include <pqxx/pqxx>

#include "core/counters.h"
#include "core/key.h"
#include "schema/migrate.h"
#include "core/runner.h"
#include "core/taskstore.h"

namespace idem::bench {

namespace {

    constexpr long long leaseMs = 30'000;
    constexpr int maxAttempts = 5;
    const std::string resultJson = R"({"charged":100,"currency":"EUR"})";

    std::string keyOf(Mode mode, const std::string& businessId)
    {
        return std::string("bench:") + modeTag(mode) + ':' + businessId;
    }

    // (a) The article, step by step: claim in one transaction (INSERT ... ON CONFLICT DO
    // NOTHING; when nothing was inserted, SELECT ... FOR UPDATE, decide in the application,
    // UPDATE to take over), then a second transaction that locks and checks the token, writes
    // the business row and marks the task succeeded.
    class ArticleClient final : public Client {
    public:
        ArticleClient(pqxx::connection& conn, const ClientSetup& s)
            : m_conn(conn)
            , m_digest(s.digest)
            , m_insert("INSERT INTO " + s.schema.qualify("task_idempotency")
                  + " (idempotency_key, request_hash, status, owner_token, lease_until, attempts)"
                    " VALUES ($1, $2, 'processing', $3::uuid, now() + $4 * interval '1 millisecond', 1)"
                    " ON CONFLICT (idempotency_key) DO NOTHING")
            , m_lockRow("SELECT request_hash, status, result_json, owner_token, lease_until > now(), attempts FROM "
                  + s.schema.qualify("task_idempotency") + " WHERE idempotency_key = $1 FOR UPDATE")
            , m_takeOver("UPDATE " + s.schema.qualify("task_idempotency")
                  + " SET status = 'processing', owner_token = $2::uuid,"
                    " lease_until = now() + $3 * interval '1 millisecond', attempts = attempts + 1,"
                    " updated_at = now() WHERE idempotency_key = $1")
            , m_checkToken("SELECT status, owner_token FROM " + s.schema.qualify("task_idempotency")
                  + " WHERE idempotency_key = $1 FOR UPDATE")
            , m_business(
                  "INSERT INTO " + s.schema.qualify("bench_effects") + " (idempotency_key, amount) VALUES ($1, $2)")
            , m_succeed("UPDATE " + s.schema.qualify("task_idempotency")
                  + " SET status = 'succeeded', result_json = $3::jsonb, owner_token = NULL,"
                    " lease_until = NULL, updated_at = now()"
                    " WHERE idempotency_key = $1 AND owner_token = $2::uuid")
        {
        }

        Outcome request(const std::string& businessId) override
        {
            const std::string key = keyOf(Mode::Article, businessId);
            const std::string token = TaskStore::newToken();
            {
                pqxx::work w(m_conn);
                const auto inserted = w.exec_params(m_insert, key, m_digest, token, leaseMs);
                if (inserted.affected_rows() == 0) {
                    const auto r = w.exec_params(m_lockRow, key);
                    if (r.empty())
                        return Outcome::Other; // destructor rolls back
                    const auto row = r[0];
                    if (row[0].as<std::string>() != m_digest)
                        return Outcome::Other; // conflict
                    const std::string status = row[1].as<std::string>();
                    if (status == "succeeded") {
                        m_lastResult = row[2].is_null() ? "null" : row[2].as<std::string>();
                        w.abort(); // the article: read the result, roll back, replay
                        return Outcome::Replayed;
                    }
                    if (status == "failed" || (status == "processing" && row[4].as<bool>())) {
                        w.abort();
                        return Outcome::Other;
                    }
                    w.exec_params(m_takeOver, key, token, leaseMs);
                }
                w.commit();
            }
            pqxx::work w(m_conn);
            const auto r = w.exec_params(m_checkToken, key);
            if (r.empty() || r[0][0].as<std::string>() != "processing" || r[0][1].is_null()
                || r[0][1].as<std::string>() != token) {
                w.abort();
                return Outcome::Other;
            }
            w.exec_params(m_business, key, 100);
            if (w.exec_params(m_succeed, key, token, resultJson).affected_rows() != 1) {
                w.abort();
                return Outcome::Other;
            }
            w.commit();
            return Outcome::Executed;
        }

    private:
        pqxx::connection& m_conn;
        std::string m_digest, m_insert, m_lockRow, m_takeOver, m_checkToken, m_business, m_succeed;
        std::string m_lastResult;
    };

    // (b) The schema's functions, called the way a worker in any language would: claim alone
    // (one statement, so its own transaction), then fence, business write and complete in one.
    class BareClient final : public Client {
    public:
        BareClient(pqxx::connection& conn, const ClientSetup& s)
            : m_conn(conn)
            , m_digest(s.digest)
            , m_claim("SELECT decision, owner_token, result_json FROM " + s.schema.qualify("claim")
                  + "($1, $2, $3::uuid, $4, $5, $6)")
            , m_fence("SELECT 1 FROM " + s.schema.qualify("fence") + "($1, $2::uuid)")
            , m_business(
                  "INSERT INTO " + s.schema.qualify("bench_effects") + " (idempotency_key, amount) VALUES ($1, $2)")
            , m_complete("SELECT " + s.schema.qualify("complete") + "($1, $2::uuid, $3::jsonb, $4)")
        {
        }

        Outcome request(const std::string& businessId) override
        {
            const std::string key = keyOf(Mode::Bare, businessId);
            std::string decision, token;
            {
                pqxx::nontransaction n(m_conn);
                const auto r = n.exec_params(m_claim, key, m_digest, TaskStore::newToken(), leaseMs, maxAttempts,
                    static_cast<const char*>(nullptr));
                decision = r[0][0].as<std::string>();
                if (decision == "replay") {
                    m_lastResult = r[0][2].is_null() ? "null" : r[0][2].as<std::string>();
                    return Outcome::Replayed;
                }
                if (decision != "acquired" && decision != "reacquired")
                    return Outcome::Other;
                token = r[0][1].as<std::string>();
            }
            pqxx::work w(m_conn);
            w.exec_params(m_fence, key, token);
            w.exec_params(m_business, key, 100);
            w.exec_params(m_complete, key, token, resultJson, 1 << 20);
            w.commit();
            return Outcome::Executed;
        }

    private:
        pqxx::connection& m_conn;
        std::string m_digest, m_claim, m_fence, m_business, m_complete;
        std::string m_lastResult;
    };

    // (c), (d) The library: runTask does claim, fence, the task's write, complete, commit.
    // (e) The library in one transaction: BEGIN, claim, the task's write, complete, COMMIT.
    // (f) The library, two steps, complete checking the token: claim; BEGIN, the write, complete, COMMIT.
    // (g) Record at commit: idem_peek_local; BEGIN, the write, idem_record_local, COMMIT.
    // (h) The same without the read: BEGIN, the write, idem_record_local, COMMIT.
    class LibraryClient final : public Client {
    public:
        LibraryClient(pqxx::connection& conn, const ClientSetup& s)
            : m_mode(s.mode)
            , m_digest(s.digest)
            , m_store(conn, StoreOptions { s.schema }, countsOutcomes(s.mode) ? s.counters : nullptr)
            , m_task([business = "INSERT INTO " + s.schema.qualify("bench_effects")
                             + " (idempotency_key, amount) VALUES ($1, $2)"](pqxx::work& tx, const TaskContext& ctx) {
                tx.exec_params(business, ctx.idempotencyKey, 100);
                return resultJson;
            })
        {
            if (countsOutcomes(s.mode) && !s.counters)
                throw std::invalid_argument("the counters-on modes need an OutcomeCounters");
            m_options.oneTransaction = s.mode == Mode::LibraryOneTransaction;
            m_options.fenceInComplete = s.mode == Mode::LibraryFenceInComplete;
            m_options.recordAtCommit = s.mode == Mode::LibraryRecordAtCommit || s.mode == Mode::LibraryRecordNoCheck;
            m_options.checkFirst = s.mode == Mode::LibraryRecordAtCommit;
        }

        Outcome request(const std::string& businessId) override
        {
            const TaskKey key("bench", modeTag(m_mode), businessId);
            const RunOutcome out = runTask(m_store, key, m_digest, m_task, m_options);
            switch (out.kind) {
            case RunOutcome::Kind::Succeeded:
                return Outcome::Executed;
            case RunOutcome::Kind::Replayed:
                return Outcome::Replayed;
            default:
                return Outcome::Other;
            }
        }

    private:
        Mode m_mode;
        std::string m_digest;
        TaskStore m_store;
        TaskFunction m_task;
        RunOptions m_options;
    };

} // namespace

const char* modeLabel(Mode mode)
{
    switch (mode) {
    case Mode::Article:
        return "(a) article, by hand";
    case Mode::Bare:
        return "(b) bare SQL functions";
    case Mode::Library:
        return "(c) library, counters on";
    case Mode::LibraryNoCounters:
        return "(d) library, counters off";
    case Mode::LibraryOneTransaction:
        return "(e) library, one transaction";
    case Mode::LibraryFenceInComplete:
        return "(f) library, fence in complete";
    case Mode::LibraryRecordAtCommit:
        return "(g) library, record at commit";
    case Mode::LibraryRecordNoCheck:
        return "(h) record at commit, no read first";
    }
    return "?";
}

const char* modeTag(Mode mode)
{
    switch (mode) {
    case Mode::Article:
        return "article";
    case Mode::Bare:
        return "bare";
    case Mode::Library:
        return "lib";
    case Mode::LibraryNoCounters:
        return "libnc";
    case Mode::LibraryOneTransaction:
        return "lib1tx";
    case Mode::LibraryFenceInComplete:
        return "libfc";
    case Mode::LibraryRecordAtCommit:
        return "librec";
    case Mode::LibraryRecordNoCheck:
        return "librecnc";
    }
    return "x";
}

std::unique_ptr<Client> makeClient(pqxx::connection& conn, const ClientSetup& setup)
{
    switch (setup.mode) {
    case Mode::Article:
        return std::make_unique<ArticleClient>(conn, setup);
    case Mode::Bare:
        return std::make_unique<BareClient>(conn, setup);
    case Mode::Library:
    case Mode::LibraryNoCounters:
    case Mode::LibraryOneTransaction:
    case Mode::LibraryFenceInComplete:
    case Mode::LibraryRecordAtCommit:
    case Mode::LibraryRecordNoCheck:
        return std::make_unique<LibraryClient>(conn, setup);
    }
    throw std::logic_error("unknown mode");
}

void createBenchTable(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::work w(conn);
    w.exec("CREATE TABLE " + schema.qualify("bench_effects")
        + " (idempotency_key TEXT PRIMARY KEY, amount INTEGER NOT NULL,"
          " created_at TIMESTAMPTZ NOT NULL DEFAULT now())");
    w.commit();
}

void resetTables(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::work w(conn);
    w.exec("TRUNCATE " + schema.qualify("task_idempotency") + ", " + schema.qualify("bench_effects") + ", "
        + schema.qualify("idem_counters") + " CASCADE"); // v25: stored requests reference the tasks
    w.commit();
}

void installLockingClaim(pqxx::connection& conn, const SchemaName& schema)
{
    // The shipped body (resources/sql/functions/claim.sql).
    const FunctionDefinition* protocol = nullptr;
    for (const auto& f : bundledFunctions())
        if (f.name == "claim")
            protocol = &f;
    if (!protocol)
        throw std::runtime_error("no function file defines claim()");
    std::string body = functionSqlFor(*protocol, schema);

    // The first read of the row decides every answer an existing row gets (replays included);
    // a second, identical read only follows an insert that lost a race.
    const std::string lockFree = "SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key;";
    const auto at = body.find(lockFree);
    if (at == std::string::npos)
        throw std::runtime_error(
            "claim.sql has no lock-free read of the row; update installLockingClaim");
    body.replace(
        at, lockFree.size(), "SELECT * INTO r FROM task_idempotency t WHERE t.idempotency_key = p_key FOR UPDATE;");
    pqxx::work w(conn);
    // SET search_path FROM CURRENT in the function captures this.
    w.exec_params("SELECT set_config('search_path', $1, true)", schema.quoted() + ", pg_temp");
    w.exec(body);
    w.commit();
}

} // namespace idem::bench
