#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>
#include <pqxx/dbtransaction>
#include <pqxx/strconv>

struct pg_conn; // libpq's PGconn

namespace idem {

// A read the console polls, framed as the server needs it (BEGIN READ ONLY, its statement timeout,
// the catalog search path, the statements, COMMIT) and sent in ONE round trip where nothing pools
// between the console and the server: libpq's pipeline mode queues every message and waits once.
// Every value stays a bound parameter; the frame is the same transaction statement for statement
// as when each one waits for its answer, so what a read guarantees (read-only, bounded, one
// snapshot with repeatableRead) does not depend on how it travelled.
//
// Only where a DirectReads scope names the connection (the console's database worker, on a direct
// connection): behind a transaction pooler, and in every other caller, the readers keep their
// statement-by-statement form in a pqxx transaction.

// A value for a statement: text as the server reads it, or NULL.
using FrameValue = std::optional<std::string>;

class FrameField {
public:
    explicit FrameField(const FrameValue* v) : m_v(v) { }
    bool is_null() const { return !*m_v; }
    template <typename T> T as() const
    {
        if (!*m_v)
            throw pqxx::conversion_error("a framed read's field is NULL");
        T out;
        pqxx::from_string(**m_v, out);
        return out;
    }

private:
    const FrameValue* m_v;
};

class FrameRow {
public:
    explicit FrameRow(const std::vector<FrameValue>* cells) : m_cells(cells) { }
    FrameField operator[](std::size_t i) const { return FrameField(&m_cells->at(i)); }
    std::size_t size() const { return m_cells->size(); }

private:
    const std::vector<FrameValue>* m_cells;
};

// A statement's rows, copied out of libpq's answer.
struct FrameResult {
    std::vector<std::vector<FrameValue>> rows;
    std::size_t size() const { return rows.size(); }
    FrameRow operator[](std::size_t i) const { return FrameRow(&rows[i]); }
    FrameRow at(std::size_t i) const { return FrameRow(&rows.at(i)); }
};

struct FrameTransaction {
    bool readOnly = true;
    bool repeatableRead = false; // one snapshot for every statement (a standby allows it read-only)
    bool catalogPath = true; // search_path pg_catalog for the transaction (SET LOCAL)
    int statementTimeoutMs = 5000; // SET LOCAL statement_timeout, bound as a parameter
};

class ReadFrame {
public:
    // Starts a transaction; add() puts statements in the last one begun.
    explicit ReadFrame(const FrameTransaction& tx = {});
    void begin(const FrameTransaction& tx);

    // Queues a statement with its values ($1, $2, ...); returns its index in run()'s answer.
    template <typename... Args> std::size_t add(std::string sql, const Args&... args)
    {
        Statement s { std::move(sql), {} };
        (s.params.push_back(value(args)), ...);
        return push(std::move(s));
    }

    // Sends every transaction, waits once for all the answers, and returns each added statement's
    // rows in order. The connection must be one a DirectReads scope names on this thread. A
    // statement that fails throws as pqxx would (pqxx::sql_error with the server's SQLSTATE,
    // pqxx::broken_connection), the transaction rolled back and the connection left idle.
    std::vector<FrameResult> run(pqxx::connection& conn) const;
    // Round trips run() has made on this thread (one each): tests and the benchmark count them.
    static std::size_t roundTrips();

private:
    struct Statement {
        std::string sql;
        std::vector<FrameValue> params;
    };
    struct Transaction {
        FrameTransaction options;
        std::vector<Statement> statements;
    };
    std::size_t push(Statement s);
    static FrameValue value(const std::string& s) { return s; }
    static FrameValue value(const char* s) { return s ? FrameValue(s) : std::nullopt; }
    static FrameValue value(const std::optional<std::string>& s) { return s; }
    static FrameValue value(bool b) { return std::string(b ? "true" : "false"); }
    template <typename T> static FrameValue value(const T& v) { return pqxx::to_string(v); }

    std::vector<Transaction> m_transactions;
    std::size_t m_count = 0;
};

// libpq's connection under a pqxx one, taken inside a transaction on it (pqxx names it only there).
struct RawConnection {
    pg_conn* pg = nullptr;
    int backendPid = 0; // pqxx's backendpid() when taken: a pqxx reconnect would change it
};
RawConnection rawConnection(const pqxx::dbtransaction& tx);

// While alive, framed reads on `conn` from this thread take one round trip (nothing pools in
// between: the owner knows). Scopes do not nest.
class DirectReads {
public:
    DirectReads(const pqxx::connection& conn, const RawConnection& raw);
    ~DirectReads();
    DirectReads(const DirectReads&) = delete;
    DirectReads& operator=(const DirectReads&) = delete;
};

// The connection framed reads may pipeline on: conn is the scope's and still on the same backend.
bool directReads(const pqxx::connection& conn);

} // namespace idem
