// A worker for tst_latency_clock: a real process, linked with idem_core alone, that tst_latency_clock
// starts under faketime so that its wall clock is wrong and jumps while it holds a lease. It runs
// KEYS keys of tenant "clock", operation "charge", business ids RUN-0.. in turn:
//   key i % 3 == 0: the first attempt fails retryably, the second completes (two run times);
//   key i % 3 == 1: completes;
//   key i % 3 == 2: fails permanently.
// After each claim it prints "claimed KEY ATTEMPT CLIENT_US" and waits for a line on stdin (the
// test moves this process's clock meanwhile), prints "resumed CLIENT_US", works SLEEP_MS (a
// monotonic sleep: the real time an attempt takes), then completes or fails and prints
// "done KEY OUTCOME". CLIENT_US is this process's wall clock (system_clock), in microseconds since
// the epoch: the test checks that faketime moved it. It connects with $IDEM_CLOCK_DSN (the password
// stays out of argv) and reports its version first, as a worker does at start.
// Usage: idem-t-clockworker RUN KEYS SLEEP_MS. Exit 0 when every step went as planned.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include <pqxx/pqxx>

#include "core/connection.h"
#include "core/taskstore.h"
#include "core/workerversion.h"

namespace {

long long clientNowUs()
{
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

[[noreturn]] void die(const std::string& what)
{
    std::cerr << "idem-t-clockworker: " << what << std::endl;
    std::exit(1);
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 4)
        die("usage: idem-t-clockworker RUN KEYS SLEEP_MS");
    const char* dsn = std::getenv("IDEM_CLOCK_DSN");
    if (!dsn)
        die("IDEM_CLOCK_DSN is not set");
    const std::string run = argv[1];
    const int keys = std::atoi(argv[2]);
    const auto work = std::chrono::milliseconds(std::atoi(argv[3]));
    try {
        auto conn = idem::connect(dsn, { "idem-t-clockworker" });
        idem::reportVersion(*conn, idem::SchemaName(), "clockworker/" + run, "clock-1");
        idem::StoreOptions options;
        options.lease = std::chrono::minutes(5);
        options.retry.maxAttempts = 5;
        options.retry.baseDelay = std::chrono::milliseconds(0); // the retry is due at once
        options.retry.maxDelay = std::chrono::milliseconds(0);
        idem::TaskStore store(*conn, options);
        for (int i = 0; i < keys; ++i) {
            const idem::TaskKey key("clock", "charge", run + "-" + std::to_string(i));
            const std::string digest = "v1:" + std::string(64, 'c');
            for (int attempt = 1;; ++attempt) {
                const auto claim = store.claim(key, digest);
                if (!claim.mayExecute())
                    die(key.str() + ": claim answered " + idem::decisionName(claim.decision));
                std::cout << "claimed " << key.str() << ' ' << claim.attempts << ' ' << clientNowUs() << std::endl;
                std::string line;
                if (!std::getline(std::cin, line))
                    die("stdin closed");
                std::cout << "resumed " << clientNowUs() << std::endl;
                std::this_thread::sleep_for(work);
                if (i % 3 == 0 && attempt == 1) {
                    const auto f = store.fail(key, claim.token, claim.attempts, idem::FailureClass::Retryable, "503");
                    std::cout << "done " << key.str() << ' ' << f.status << std::endl;
                    continue;
                }
                if (i % 3 == 2) {
                    const auto f
                        = store.fail(key, claim.token, claim.attempts, idem::FailureClass::Permanent, "declined");
                    std::cout << "done " << key.str() << ' ' << f.status << std::endl;
                    break;
                }
                pqxx::work tx(*conn);
                store.fence(tx, key, claim.token);
                store.complete(tx, key, claim.token, "{\"receipt\": \"r\"}");
                tx.commit();
                std::cout << "done " << key.str() << " succeeded" << std::endl;
                break;
            }
        }
    } catch (const std::exception& e) {
        die(e.what());
    }
    return 0;
}
