#include "cli/demoworker.h"

#include <memory>
#include <pqxx/pqxx>
#include <thread>

#include "cli/demo.h"
#include "core/connection.h"
#include "core/digest.h"
#include "core/redrive.h"
#include "core/runner.h"
#include "core/servergone.h"
#include "core/taskstore.h"
#include "core/timeline.h"
#include "core/workerversion.h"

namespace idem::cli::demo {

namespace {

    using Clock = std::chrono::steady_clock;
    using std::chrono::milliseconds;

    // A client that has sent the same request this often stops asking.
    constexpr int maxClientTries = 30;
    // The lease of a stale executor: short enough that it lapses while the executor stalls.
    constexpr milliseconds staleLease { 40 };

    void sleepUnlessStopped(const std::atomic<bool>& stop, milliseconds total)
    {
        const auto until = Clock::now() + total;
        while (!stop.load() && Clock::now() < until)
            std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), milliseconds(50)));
    }

    class Worker {
    public:
        Worker(Shared& shared, int index)
            : m_shared(shared)
            , m_options(shared.options)
            , m_index(index)
            , m_rng(shared.options.seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(index + 1))
        {
        }

        ~Worker() { disconnect(); }
        Worker(const Worker&) = delete;
        Worker& operator=(const Worker&) = delete;

        void run();

    private:
        enum class Fault { None, Transient, Permanent, Unknown };
        struct Plan {
            bool slow = false;
            Fault fault = Fault::None;
        };

        bool ensureConnected();
        bool noteTimelineOnConnect();
        pqxx::connection& reconnectForRetry(const DatabaseUnavailable& why);
        void disconnect();
        void dropDownstream();
        void lostConnection(const Request& req, const std::string& what, bool notPrimary);
        Request nextRequest();
        void send(Request& req);
        // `canonical`: the request's canonical text, stored by claims of re-drivable operations.
        void execute(Request& req, const std::string& digest, const std::string& canonical);
        void die(Request& req, const std::string& digest, const std::string& canonical);
        void stale(Request& req, const std::string& digest, const std::string& canonical);
        void settle(const Request& req, const RunOutcome& out);
        void settleClaim(const Request& req, const ClaimResult& claim);
        void retryLater(const Request& req, milliseconds after);
        void pay(const std::string& key, const nlohmann::json& body);
        void writeEffect(pqxx::work& tx, const std::string& key, const nlohmann::json& body, int attempt);
        std::string result(const std::string& key, const nlohmann::json& body, int attempt, bool recovered,
            const std::string& token) const;

        bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(m_rng) < p; }
        long long below(long long n) { return std::uniform_int_distribution<long long>(0, n - 1)(m_rng); }

        Shared& m_shared;
        const Options& m_options;
        int m_index;
        std::mt19937_64 m_rng;
        // Declared before the stores, which hold a reference to it.
        std::unique_ptr<pqxx::connection> m_conn;
        std::unique_ptr<pqxx::connection> m_downstream;
        std::unique_ptr<TaskStore> m_store;
        std::unique_ptr<TaskStore> m_staleStore;
    };

    void Worker::run()
    {
        while (!m_shared.stop.load()) {
            if (!ensureConnected()) {
                sleepUnlessStopped(m_shared.stop, milliseconds(1000));
                continue;
            }
            if (!m_shared.limiter.acquire(m_shared.stop))
                break;
            Request req = nextRequest();
            try {
                send(req);
            } catch (const NotPrimary& e) {
                lostConnection(req, e.what(), true);
            } catch (const DatabaseUnavailable& e) {
                lostConnection(req, e.what(), false);
            } catch (const pqxx::broken_connection& e) {
                lostConnection(req, describeLostConnection(e.what()), false);
            } catch (const pqxx::sql_error& e) {
                // A statement of the demo's own (a stale executor's write before its fence)
                // refused by a read-only server: not the primary, as the library's calls say.
                if (isReadOnlyRefusal(e)) {
                    lostConnection(req, describeReadOnly(e.what()), true);
                    continue;
                }
                if (isServerGone(e)) {
                    lostConnection(req, describeLostConnection(e.what()), false);
                    continue;
                }
                m_shared.stats.add(Tally::Errors);
                m_shared.reportError(
                    "worker " + std::to_string(m_index) + ": SQLSTATE " + e.sqlstate() + ": " + e.what());
            } catch (const std::exception& e) {
                m_shared.stats.add(Tally::Errors);
                m_shared.reportError("worker " + std::to_string(m_index) + ": " + e.what());
            }
        }
    }

    void Worker::lostConnection(const Request& req, const std::string& what, bool notPrimary)
    {
        disconnect();
        if (m_shared.stop.load()) {
            // Cut at the stop (SocketRegistry): the client has no answer, as with a dead executor,
            // and would ask again: the request counts as queued at exit.
            m_shared.stats.add(Tally::CutAtStop);
            m_shared.retries.push(req, Clock::now());
            return;
        }
        m_shared.stats.add(notPrimary ? Tally::NotPrimary : Tally::DatabaseErrors);
        m_shared.reportError("worker " + std::to_string(m_index) + ": " + what + "; reconnecting");
        retryLater(req, milliseconds(notPrimary ? 100 : 500));
    }

    bool Worker::ensureConnected()
    {
        if (m_conn && m_conn->is_open())
            return true;
        disconnect();
        try {
            // A read-only server (a standby, a primary being demoted) is refused here, so the
            // worker keeps looking for the primary instead of sending it claims.
            m_conn = connectPrimary(m_options.dsn, { "idemctl demo worker " + std::to_string(m_index) });
            m_shared.sockets.set(2 * m_index, m_conn->sock());
            if (m_store) {
                m_store->rebind(*m_conn);
                m_staleStore->rebind(*m_conn);
            } else {
                StoreOptions options;
                options.schema = m_options.schema;
                options.lease = m_options.lease;
                // Backoffs long enough to be seen in the console, short enough to come back while
                // someone is watching.
                options.retry.baseDelay = milliseconds(500);
                options.retry.maxDelay = std::chrono::seconds(5);
                if (m_shared.redrivable)
                    options.storeRequestsOf = { m_options.operations.begin(), m_options.operations.end() };
                m_store = std::make_unique<TaskStore>(*m_conn, options, &m_shared.counters);
                options.lease = staleLease;
                m_staleStore = std::make_unique<TaskStore>(*m_conn, options, &m_shared.counters);
            }
        } catch (const ConnectError& e) {
            const bool readOnly = e.kind() == ConnectErrorKind::ReadOnly;
            m_shared.stats.add(readOnly ? Tally::NotPrimary : Tally::DatabaseErrors);
            m_shared.reportError("worker " + std::to_string(m_index) + ": "
                + (readOnly ? std::string(e.what()) + "; reconnecting" : std::string("cannot connect: ") + e.what()));
            disconnect();
            return false;
        } catch (const std::exception& e) {
            m_shared.stats.add(Tally::DatabaseErrors);
            m_shared.reportError("worker " + std::to_string(m_index) + ": cannot connect: " + e.what());
            disconnect();
            return false;
        }
        // At every start and reconnect, as a service would: nothing is written unless this worker's
        // version changed, and a version the fleet never ran is a deploy mark (schema v18). A refusal
        // is reported and the work goes on.
        try {
            reportVersion(*m_conn, m_options.schema, hostWorkerName("idemctl-demo-" + std::to_string(m_index)),
                m_options.workerVersion);
        } catch (const DatabaseUnavailable& e) {
            const bool readOnly = dynamic_cast<const NotPrimary*>(&e) != nullptr;
            m_shared.stats.add(readOnly ? Tally::NotPrimary : Tally::DatabaseErrors);
            m_shared.reportError("worker " + std::to_string(m_index) + ": " + e.what() + "; reconnecting");
            disconnect();
            return false;
        } catch (const std::exception& e) {
            m_shared.stats.add(Tally::Errors);
            m_shared.reportError("worker " + std::to_string(m_index) + ": reporting its version: " + e.what());
        }
        return noteTimelineOnConnect();
    }

    // Also at every start and reconnect: the first worker on a promoted primary records the new
    // timeline (schema v20), so the failover is marked when it happened even with no console or
    // exporter running. Nothing is written when the timeline is known.
    bool Worker::noteTimelineOnConnect()
    {
        try {
            noteTimeline(*m_conn, m_options.schema);
        } catch (const pqxx::broken_connection& e) {
            m_shared.stats.add(Tally::DatabaseErrors);
            m_shared.reportError("worker " + std::to_string(m_index) + ": " + e.what() + "; reconnecting");
            disconnect();
            return false;
        } catch (const pqxx::sql_error& e) {
            if (isReadOnlyRefusal(e)) {
                m_shared.stats.add(Tally::NotPrimary);
                m_shared.reportError(
                    "worker " + std::to_string(m_index) + ": the server is read-only (not the primary); reconnecting");
                disconnect();
                return false;
            }
            m_shared.stats.add(Tally::Errors);
            m_shared.reportError(
                "worker " + std::to_string(m_index) + ": recording the primary's timeline: " + e.what());
        }
        return true;
    }

    // RunOptions::reconnect: the connection broke or the server turned out read-only after the
    // claim or in the fenced transaction. A new connection to the primary, waited for while it is
    // not there (a switchover takes seconds); runTask then claims again or fences again with the
    // same token. The stores stay (runTask holds one), moved to the new connection.
    pqxx::connection& Worker::reconnectForRetry(const DatabaseUnavailable& why)
    {
        const bool readOnly = dynamic_cast<const NotPrimary*>(&why) != nullptr;
        m_shared.stats.add(readOnly ? Tally::NotPrimary : Tally::DatabaseErrors);
        m_shared.reportError("worker " + std::to_string(m_index) + ": " + why.what() + "; reconnecting");
        disconnect();
        while (!m_shared.stop.load()) {
            if (ensureConnected())
                return *m_conn;
            sleepUnlessStopped(m_shared.stop, milliseconds(500));
        }
        throw DatabaseUnavailable("stopped while reconnecting");
    }

    // Closes the connections. The stores stay, to be moved to the next connection: nothing uses
    // them before ensureConnected gives them one.
    void Worker::disconnect()
    {
        m_shared.sockets.set(2 * m_index, -1);
        m_shared.sockets.set(2 * m_index + 1, -1);
        m_conn.reset();
        m_downstream.reset();
    }

    void Worker::dropDownstream()
    {
        m_shared.sockets.set(2 * m_index + 1, -1);
        m_downstream.reset();
    }

    Request Worker::nextRequest()
    {
        if (auto due = m_shared.retries.takeDue(Clock::now()))
            return std::move(*due);
        const double u = std::uniform_real_distribution<double>(0, 1)(m_rng);
        if (u < m_options.conflictRate + m_options.duplicateRate) {
            if (auto recent = m_shared.recent.pick(m_rng)) {
                recent->tries = 0;
                // Same key, another amount: a client bug the protocol must refuse, not execute.
                if (u < m_options.conflictRate)
                    recent->body["amount_cents"] = recent->body["amount_cents"].get<long long>() + 1 + below(500);
                return std::move(*recent);
            }
        }
        const auto& ops = m_options.operations;
        const long long n = m_options.keys > 0 ? below(m_options.keys) : m_shared.nextBusinessId.fetch_add(1);
        TaskKey key("tenant-" + std::to_string(1 + below(m_options.tenants)),
            ops[static_cast<std::size_t>(below(static_cast<long long>(ops.size())))],
            m_options.businessIdPrefix() + std::to_string(n));
        Request req { key, bodyFor(key), 0 };
        m_shared.recent.remember(req);
        return req;
    }

    void Worker::send(Request& req)
    {
        ++req.tries;
        m_shared.stats.add(Tally::Requests);
        // Metadata that differs on every send; the digest ignores it, so a retry is the same request.
        nlohmann::json sent = req.body;
        sent["meta"] = {
            { "trace_id", std::to_string(m_rng()) },
            { "sent_at",
                std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count() }
        };
        const std::string digest = requestDigest(sent, ignoredFields());
        const std::string canonical = m_shared.redrivable ? canonicalRequest(sent, ignoredFields()) : std::string();
        const double u = std::uniform_real_distribution<double>(0, 1)(m_rng);
        if (u < m_options.dieRate)
            die(req, digest, canonical);
        else if (u < m_options.dieRate + m_options.staleRate)
            stale(req, digest, canonical);
        else
            execute(req, digest, canonical);
    }

    void Worker::execute(Request& req, const std::string& digest, const std::string& canonical)
    {
        Plan plan;
        plan.slow = chance(m_options.slowRate);
        const double u = std::uniform_real_distribution<double>(0, 1)(m_rng);
        if (u < m_options.transientRate)
            plan.fault = Fault::Transient;
        else if (u < m_options.transientRate + m_options.permanentRate)
            plan.fault = Fault::Permanent;
        else if (u < m_options.transientRate + m_options.permanentRate + m_options.unknownRate)
            plan.fault = Fault::Unknown;

        const nlohmann::json& body = req.body;
        // The article's order: the payment service is called with the key and no transaction
        // open; only then a short fenced transaction writes the effect and the success. (Inside
        // the business transaction, a call waiting for a pooled connection of its own held one
        // already: 8 workers deadlocked a pool of 5.)
        const DownstreamCall call = [&](const TaskContext& ctx) {
            if (plan.slow)
                std::this_thread::sleep_for(m_options.slow);
            if (plan.fault == Fault::Transient)
                throw TaskFailure(FailureClass::Retryable, "injected: payment service answered 503, nothing taken");
            if (plan.fault == Fault::Permanent)
                throw TaskFailure(FailureClass::Permanent, "injected: card declined");
            pay(ctx.idempotencyKey, body);
            if (plan.fault == Fault::Unknown)
                throw TaskFailure(FailureClass::Unknown, "injected: payment service timed out after the request left");
            return std::string();
        };
        const RecordFunction record = [&](pqxx::work& tx, const TaskContext& ctx, const std::string&) {
            writeEffect(tx, ctx.idempotencyKey, body, ctx.attempt);
            return result(ctx.idempotencyKey, body, ctx.attempt, ctx.previousOutcomeUnknown, ctx.token);
        };
        RunOptions run;
        run.reconnect = [this](const DatabaseUnavailable& why) -> pqxx::connection& { return reconnectForRetry(why); };
        run.request = canonical;
        settle(req, runTask(*m_store, req.key, digest, call, record, run));
    }

    // An executor that claims and vanishes mid-task (the process is killed): no completion, no
    // failure recorded. Its lease runs out and the client's retry reclaims the key.
    void Worker::die(Request& req, const std::string& digest, const std::string& canonical)
    {
        const ClaimResult claim = m_store->claim(req.key, digest, canonical);
        if (!claim.mayExecute()) {
            settleClaim(req, claim);
            return;
        }
        const std::string key = req.key.str();
        // Sometimes the payment already left when it died; the retry's payment must not repeat it.
        if (chance(0.5)) {
            try {
                pay(key, req.body);
            } catch (const TaskFailure&) {
            }
        }
        {
            pqxx::work tx(*m_conn);
            m_store->fence(tx, req.key, claim.token);
            writeEffect(tx, key, req.body, claim.attempts);
            // Dies here: the transaction is never committed, as when the server sees the
            // connection drop.
        }
        m_shared.stats.add(Tally::Died);
        retryLater(req, m_options.lease + milliseconds(below(m_options.lease.count() + 1)));
    }

    // An executor that stalls past its lease (a long GC pause, a frozen VM), is taken over, and
    // then wakes up and tries to finish. Its token must no longer commit anything.
    void Worker::stale(Request& req, const std::string& digest, const std::string& canonical)
    {
        const ClaimResult claim = m_staleStore->claim(req.key, digest, canonical);
        if (!claim.mayExecute()) {
            settleClaim(req, claim);
            return;
        }
        m_shared.stats.add(Tally::StaleAttempts);
        std::this_thread::sleep_for(staleLease + milliseconds(40));
        // Meanwhile the client's retry reaches an executor that takes the expired lease over.
        execute(req, digest, canonical);

        const std::string key = req.key.str();
        try {
            pay(key, req.body);
        } catch (const TaskFailure&) {
        }
        try {
            pqxx::work tx(*m_conn);
            // Half of them follow the protocol and fence first; the other half write before
            // completing, which complete's own token check must still roll back.
            const bool fenceFirst = chance(0.5);
            if (fenceFirst)
                m_staleStore->fence(tx, req.key, claim.token);
            writeEffect(tx, key, req.body, claim.attempts);
            const std::string told = result(key, req.body, claim.attempts, false, claim.token);
            m_staleStore->complete(tx, req.key, claim.token, told);
            tx.commit();
            // Still the owner after all (the takeover found the lease live): a plain success.
            m_shared.stats.add(Tally::Succeeded);
            m_shared.ledger.acknowledge(key, told);
        } catch (const LostOwnership&) {
            m_shared.stats.add(Tally::LostOwnership);
        }
    }

    void Worker::settle(const Request& req, const RunOutcome& out)
    {
        m_shared.stats.add(tallyOf(out.kind));
        if (out.kind == RunOutcome::Kind::Succeeded || out.kind == RunOutcome::Kind::Replayed)
            m_shared.ledger.acknowledge(req.key.str(), out.resultJson);
        switch (out.kind) {
        case RunOutcome::Kind::InProgress:
        case RunOutcome::Kind::RetryLater:
            retryLater(req, out.claim.retryAfter);
            break;
        case RunOutcome::Kind::WillRetry:
            retryLater(req, out.failure.retryDelay);
            break;
        case RunOutcome::Kind::LostOwnership:
            retryLater(req, milliseconds(100));
            break;
        case RunOutcome::Kind::Paused: {
            // Back off as told (at most 5 s, never past the pause's end) and keep the request:
            // a pause is an operator's lever, not a failure, so waiting it out is not a try.
            Request waiting = req;
            waiting.tries = std::max(0, waiting.tries - 1);
            retryLater(waiting, out.claim.retryAfter);
            break;
        }
        case RunOutcome::Kind::Succeeded:
        case RunOutcome::Kind::Replayed:
        case RunOutcome::Kind::Conflict:
        case RunOutcome::Kind::Failed:
            break;
        }
    }

    void Worker::settleClaim(const Request& req, const ClaimResult& claim)
    {
        if (claim.mayExecute())
            return; // not called for these
        settle(req, outcomeOfClaim(claim));
    }

    void Worker::retryLater(const Request& req, milliseconds after)
    {
        if (req.tries >= maxClientTries) {
            m_shared.stats.add(Tally::RetriesAbandoned);
            return;
        }
        // A little jitter so that clients told the same time do not return together.
        const auto due = Clock::now() + std::max(after, milliseconds(10)) + milliseconds(below(50));
        if (!m_shared.retries.push(req, due)) {
            m_shared.stats.add(Tally::RetriesAbandoned);
        }
    }

    // The downstream payment service: idempotent by the key it is given, on its own connection
    // and committed at once, like any external side effect.
    void Worker::pay(const std::string& key, const nlohmann::json& body)
    {
        try {
            if (!m_downstream || !m_downstream->is_open()) {
                dropDownstream();
                m_downstream = connectPrimary(m_options.dsn, { "idemctl demo payment service" });
                m_shared.sockets.set(2 * m_index + 1, m_downstream->sock());
            }
        } catch (const std::exception& e) {
            throw TaskFailure(FailureClass::Retryable, std::string("payment service unreachable: ") + e.what());
        }
        try {
            pqxx::work w(*m_downstream);
            const auto r = w.exec_params("INSERT INTO " + m_options.schema.qualify("demo_payments")
                    + " (idempotency_key, amount_cents, currency, target)"
                      " VALUES ($1, $2, $3, $4) ON CONFLICT (idempotency_key) DO NOTHING",
                key, body.at("amount_cents").get<long long>(), body.at("currency").get<std::string>(),
                body.at("target").get<std::string>());
            w.commit();
            m_shared.stats.add(r.affected_rows() == 1 ? Tally::DownstreamPaid : Tally::DownstreamDeduped);
        } catch (const pqxx::broken_connection& e) {
            dropDownstream();
            throw TaskFailure(FailureClass::Unknown, std::string("payment service connection lost: ") + e.what());
        } catch (const pqxx::in_doubt_error& e) {
            dropDownstream();
            throw TaskFailure(FailureClass::Unknown, std::string("payment service commit in doubt: ") + e.what());
        } catch (const pqxx::sql_error& e) {
            if (isReadOnlyRefusal(e)) {
                // Refused before anything was taken: a plain retryable failure, on a new connection.
                dropDownstream();
                throw TaskFailure(FailureClass::Retryable, "payment service: " + describeReadOnly(e.what()));
            }
            if (isServerGone(e)) {
                dropDownstream();
                throw TaskFailure(
                    FailureClass::Unknown, "payment service connection lost: " + describeLostConnection(e.what()));
            }
            throw TaskFailure(FailureClass::Unknown, std::string("payment service error: ") + e.what());
        }
    }

    void Worker::writeEffect(pqxx::work& tx, const std::string& key, const nlohmann::json& body, int attempt)
    {
        tx.exec_params("INSERT INTO " + m_options.schema.qualify("demo_orders_effects")
                + " (idempotency_key, run_id, worker, attempt, amount_cents, currency, target)"
                  " VALUES ($1, $2, $3, $4, $5, $6, $7)",
            key, m_options.runId, m_index, attempt, body.at("amount_cents").get<long long>(),
            body.at("currency").get<std::string>(), body.at("target").get<std::string>());
    }

    std::string Worker::result(
        const std::string& key, const nlohmann::json& body, int attempt, bool recovered, const std::string& token) const
    {
        // The execution (a prefix of its claim token) tells a re-execution after a forgotten
        // success from the one the client was told about, even at the same worker and attempt.
        nlohmann::json r
            = { { "payment", key }, { "amount_cents", body.at("amount_cents") }, { "currency", body.at("currency") },
                  { "worker", m_index }, { "attempt", attempt }, { "execution", token.substr(0, 12) } };
        if (recovered)
            r["after_unknown_outcome"] = true;
        return r.dump();
    }

    // The payment service and the effect, as a worker's record does, for a re-execution: paid
    // (idempotent by key) on its own connection, the effect in the fenced transaction.
    class DemoRedriver {
    public:
        DemoRedriver(Shared& shared, std::string operation, int slot)
            : m_shared(shared)
            , m_options(shared.options)
            , m_operation(std::move(operation))
            , m_slot(slot)
        {
        }
        ~DemoRedriver()
        {
            m_shared.sockets.set(2 * m_slot, -1);
            m_shared.sockets.set(2 * m_slot + 1, -1);
        }

        void run()
        {
            while (!m_shared.stop.load()) {
                try {
                    if (!m_conn || !m_conn->is_open()) {
                        m_shared.sockets.set(2 * m_slot, -1);
                        m_redriver.reset();
                        m_conn = connectPrimary(m_options.dsn, { "idemctl demo re-driver " + m_operation });
                        m_shared.sockets.set(2 * m_slot, m_conn->sock());
                        StoreOptions store;
                        store.schema = m_options.schema;
                        store.lease = m_options.lease;
                        store.storeRequestsOf = { m_operation };
                        RedriveOptions options;
                        options.version = m_options.workerVersion;
                        options.listen = false;
                        options.poll = milliseconds(500);
                        m_redriver = std::make_unique<Redriver>(
                            *m_conn, store, "*", m_operation, hostWorkerName("idemctl-demo-redrive-" + m_operation),
                            [this](pqxx::work& tx, const TaskContext& ctx, const nlohmann::json& request) {
                                return execute(tx, ctx, request);
                            },
                            options, &m_shared.counters);
                    }
                    const auto before = m_redriver->stats().succeeded;
                    const int taken = m_redriver->runOnce();
                    m_shared.reexecuted.fetch_add(m_redriver->stats().succeeded - before);
                    if (taken == 0)
                        sleepUnlessStopped(m_shared.stop, milliseconds(500));
                }
                // A lost primary (a failover, a switchover, a restart) is what the workers meet
                // too: counted and said as theirs are, then the loop connects to the primary
                // again and carries on (issue 42). Anything else is an error of the demo's.
                catch (const ConnectError& e) {
                    lost(e.kind() == ConnectErrorKind::ReadOnly ? Tally::NotPrimary : Tally::DatabaseErrors,
                        std::string("cannot connect: ") + e.what());
                } catch (const NotPrimary& e) {
                    lost(Tally::NotPrimary, e.what());
                } catch (const DatabaseUnavailable& e) {
                    lost(Tally::DatabaseErrors, e.what());
                } catch (const pqxx::broken_connection& e) {
                    lost(Tally::DatabaseErrors, describeLostConnection(e.what()));
                } catch (const pqxx::sql_error& e) {
                    if (isReadOnlyRefusal(e))
                        lost(Tally::NotPrimary, describeReadOnly(e.what()));
                    else if (isServerGone(e))
                        lost(Tally::DatabaseErrors, describeLostConnection(e.what()));
                    else
                        lost(Tally::Errors, std::string("SQLSTATE ") + e.sqlstate() + ": " + e.what());
                } catch (const std::exception& e) {
                    lost(Tally::Errors, e.what());
                }
            }
        }

    private:
        // The connections dropped (the payment service's too: it was on the same server), then a
        // pause before connecting again; nothing counted once the run is stopping.
        void lost(Tally tally, const std::string& what)
        {
            m_shared.sockets.set(2 * m_slot, -1);
            m_shared.sockets.set(2 * m_slot + 1, -1);
            m_redriver.reset();
            m_conn.reset();
            m_downstream.reset();
            if (m_shared.stop.load())
                return;
            m_shared.stats.add(tally);
            m_shared.reportError("re-driver " + m_operation + ": " + what + "; reconnecting");
            sleepUnlessStopped(m_shared.stop, milliseconds(tally == Tally::NotPrimary ? 100 : 500));
        }

        std::string execute(pqxx::work& tx, const TaskContext& ctx, const nlohmann::json& body)
        {
            const std::string key = ctx.idempotencyKey;
            if (!m_downstream || !m_downstream->is_open()) {
                m_shared.sockets.set(2 * m_slot + 1, -1);
                m_downstream = connectPrimary(m_options.dsn, { "idemctl demo payment service" });
                m_shared.sockets.set(2 * m_slot + 1, m_downstream->sock());
            }
            {
                pqxx::work w(*m_downstream);
                w.exec_params("INSERT INTO " + m_options.schema.qualify("demo_payments")
                        + " (idempotency_key, amount_cents, currency, target)"
                          " VALUES ($1, $2, $3, $4) ON CONFLICT (idempotency_key) DO NOTHING",
                    key, body.at("amount_cents").get<long long>(), body.at("currency").get<std::string>(),
                    body.at("target").get<std::string>());
                w.commit();
            }
            tx.exec_params("INSERT INTO " + m_options.schema.qualify("demo_orders_effects")
                    + " (idempotency_key, run_id, worker, attempt, amount_cents, currency, target)"
                      " VALUES ($1, $2, $3, $4, $5, $6, $7)",
                key, m_options.runId, m_slot, ctx.attempt, body.at("amount_cents").get<long long>(),
                body.at("currency").get<std::string>(), body.at("target").get<std::string>());
            return nlohmann::json(
                { { "payment", key }, { "amount_cents", body.at("amount_cents") }, { "currency", body.at("currency") },
                    { "re_executed", true }, { "attempt", ctx.attempt }, { "execution", ctx.token.substr(0, 12) } })
                .dump();
        }

        Shared& m_shared;
        const Options& m_options;
        std::string m_operation;
        int m_slot;
        // Declared before the re-driver, which holds a reference to it.
        std::unique_ptr<pqxx::connection> m_conn;
        std::unique_ptr<pqxx::connection> m_downstream;
        std::unique_ptr<Redriver> m_redriver;
    };

} // namespace

void registerOperations(pqxx::connection& conn, Shared& shared)
{
    try {
        for (const auto& op : shared.options.operations)
            registerRedrivable(conn, shared.options.schema, { "*", op, 65536, {} });
        shared.redrivable = true;
    } catch (const std::exception& e) {
        shared.redrivable = false;
        shared.reportError(
            std::string("re-execution off: registering the operations as re-drivable was refused: ") + e.what());
    }
}

void runRedriver(Shared& shared, const std::string& operation, int slot)
{
    try {
        DemoRedriver(shared, operation, slot).run();
    } catch (const std::exception& e) {
        shared.stats.add(Tally::Errors);
        shared.reportError("re-driver " + operation + " stopped: " + e.what());
    }
    shared.running.fetch_sub(1);
}

void runWorker(Shared& shared, int index)
{
    try {
        Worker(shared, index).run();
    } catch (const std::exception& e) {
        shared.stats.add(Tally::Errors);
        shared.reportError("worker " + std::to_string(index) + " stopped: " + e.what());
    }
    shared.running.fetch_sub(1);
}

} // namespace idem::cli::demo
