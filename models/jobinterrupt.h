#pragma once

#include <QString>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace pqxx {
class connection_base;
}

namespace idem::console {

// What another thread may do to the job a DatabaseWorker runs when the server does not answer
// it (a stopped server process, a network black hole: the server enforces a statement timeout
// itself, so none fires there): ask the server to cancel the statement, and cut the
// connection's socket. Every call names the request it means; one no longer running is left
// alone. Shared by the worker (which owns the connection) and its session.
class JobInterrupt {
public:
    enum class Cancel {
        None,
        Sending, // the request is on its way to the server (a connection of its own)
        Sent, // the server took it: whether its process acts on it is another matter
        Failed, // the server could not be reached to take it (cancelError says why)
    };
    struct Progress {
        bool running = false; // false: the job is queued behind another, or done
        std::chrono::milliseconds runningFor { 0 };
        Cancel cancel = Cancel::None;
        QString cancelError;
        bool cut = false;
    };

    // Worker thread: the connection jobs run on from now on (nullptr: none). Before a connection
    // is destroyed: detach() waits for a cancel request that still reads it.
    void attach(pqxx::connection_base* conn);
    void detach() { attach(nullptr); }
    // Worker thread, around each job.
    void begin(quint64 requestId);
    // Returns true when the job's connection was cut: it is unusable now.
    bool end();
    // Worker thread: the request whose connection was cut while it ran, 0 when none.
    quint64 cutRequest() const;

    // Any thread. Sends the server a cancel request for requestId's statement if it still runs
    // (libpq's PQcancel through libpqxx: a connection of its own to the server, safe from
    // another thread; it blocks for that round trip, so never on the UI thread). Returns false
    // when the job is not running any more.
    bool cancel(quint64 requestId);
    // Any thread, never blocks: shutdown(2) of the job's socket if it still runs, so that the
    // worker's wait ends at once with a lost connection (the descriptor stays the worker's to
    // close, so it cannot be reused under it). Returns false when the job is not running.
    bool cut(quint64 requestId);
    Progress progress(quint64 requestId) const;

private:
    mutable std::mutex m_mutex;
    std::condition_variable m_idle;
    pqxx::connection_base* m_conn = nullptr;
    int m_socket = -1;
    int m_cancelling = 0; // cancel requests reading m_conn right now
    quint64 m_running = 0;
    std::chrono::steady_clock::time_point m_since;
    Cancel m_cancel = Cancel::None;
    QString m_cancelError;
    bool m_cut = false;
    quint64 m_cutRequest = 0;
};

} // namespace idem::console
