#include "operations/readframe.h"

#include <stdexcept>

#include <libpq-fe.h>
#include <pqxx/except>
#include <pqxx/largeobject>

namespace idem {

namespace {
    // pqxx hands libpq's connection to its large-object classes only; a subclass may ask too.
    struct RawAccess : pqxx::largeobject {
        static PGconn* of(const pqxx::dbtransaction& tx) { return pqxx::largeobject::raw_connection(tx); }
    };

    struct Scope {
        const pqxx::connection* conn = nullptr;
        RawConnection raw;
    };
    thread_local Scope scope;
    thread_local std::size_t trips = 0;

    struct Queued {
        std::string sql;
        std::vector<FrameValue> params;
        bool answer = false; // one of the caller's statements (else framing)
    };

    std::string firstLine(const char* text)
    {
        std::string s = text ? text : "";
        while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
            s.pop_back();
        return s;
    }

    [[noreturn]] void throwBroken(PGconn* pg)
    {
        throw pqxx::broken_connection(firstLine(PQerrorMessage(pg)));
    }

    void send(PGconn* pg, const Queued& q)
    {
        std::vector<const char*> values;
        values.reserve(q.params.size());
        for (const auto& p : q.params)
            values.push_back(p ? p->c_str() : nullptr);
        if (PQsendQueryParams(pg, q.sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                nullptr, 0)
            != 1)
            throwBroken(pg);
    }

    FrameResult copy(const PGresult* r)
    {
        FrameResult out;
        const int rows = PQntuples(r);
        const int cols = PQnfields(r);
        out.rows.reserve(static_cast<std::size_t>(rows));
        for (int i = 0; i < rows; ++i) {
            std::vector<FrameValue> cells;
            cells.reserve(static_cast<std::size_t>(cols));
            for (int j = 0; j < cols; ++j)
                cells.push_back(PQgetisnull(r, i, j) ? FrameValue() : FrameValue(std::string(PQgetvalue(r, i, j),
                                                           static_cast<std::size_t>(PQgetlength(r, i, j)))));
            out.rows.push_back(std::move(cells));
        }
        return out;
    }

    // The first error of a pipeline, thrown once the pipeline is drained.
    struct Error {
        bool set = false;
        std::string message;
        std::string sqlstate;
        std::string query;
    };
} // namespace

ReadFrame::ReadFrame(const FrameTransaction& tx) { begin(tx); }

void ReadFrame::begin(const FrameTransaction& tx) { m_transactions.push_back({ tx, {} }); }

std::size_t ReadFrame::push(Statement s)
{
    m_transactions.back().statements.push_back(std::move(s));
    return m_count++;
}

std::size_t ReadFrame::roundTrips() { return trips; }

std::vector<FrameResult> ReadFrame::run(pqxx::connection& conn) const
{
    if (!directReads(conn))
        throw std::logic_error("a framed read runs on the connection its DirectReads scope names");
    if (!conn.is_open())
        throw pqxx::broken_connection("the connection is closed");
    PGconn* pg = scope.raw.pg;
    if (PQtransactionStatus(pg) != PQTRANS_IDLE)
        throw std::logic_error("a framed read starts outside any transaction");

    std::vector<Queued> queue;
    for (const auto& t : m_transactions) {
        const auto& o = t.options;
        std::string begin = "BEGIN";
        if (o.repeatableRead)
            begin += " ISOLATION LEVEL REPEATABLE READ";
        begin += o.readOnly ? " READ ONLY" : " READ WRITE";
        queue.push_back({ begin, {}, false });
        // The same bound as SET LOCAL statement_timeout, its value a parameter.
        std::string settings = "SELECT pg_catalog.set_config('statement_timeout', $1, true)";
        if (o.catalogPath)
            settings += ", pg_catalog.set_config('search_path', 'pg_catalog', true)";
        queue.push_back({ settings, { std::to_string(o.statementTimeoutMs) }, false });
        for (const auto& s : t.statements)
            queue.push_back({ s.sql, s.params, true });
        queue.push_back({ "COMMIT", {}, false });
    }

    if (PQenterPipelineMode(pg) != 1)
        throwBroken(pg);
    ++trips;
    Error error;
    std::vector<FrameResult> out;
    out.reserve(m_count);
    try {
        for (const auto& q : queue)
            send(pg, q);
        if (PQpipelineSync(pg) != 1)
            throwBroken(pg);
        for (const auto& q : queue) {
            PGresult* r = PQgetResult(pg);
            if (!r) {
                throwBroken(pg);
            }
            const auto status = PQresultStatus(r);
            if (status == PGRES_FATAL_ERROR && !error.set) {
                error.set = true;
                error.message = firstLine(PQresultErrorMessage(r));
                const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
                error.sqlstate = state ? state : "";
                error.query = q.sql;
            }
            if (q.answer)
                out.push_back(status == PGRES_TUPLES_OK ? copy(r) : FrameResult());
            PQclear(r);
            // Each statement's answer ends with a null result.
            while ((r = PQgetResult(pg)) != nullptr) {
                if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
                    PQclear(r);
                    throwBroken(pg);
                }
                PQclear(r);
            }
        }
        PGresult* sync = PQgetResult(pg);
        const bool synced = sync && PQresultStatus(sync) == PGRES_PIPELINE_SYNC;
        PQclear(sync);
        if (!synced) {
            throwBroken(pg);
        }
    } catch (const pqxx::broken_connection&) {
        throw;
    } catch (...) {
        // Answers left unread (an allocation failed): the connection is out of step with the
        // server. It is not used again: the caller drops it, as it does any broken connection.
        throw pqxx::broken_connection("a read was interrupted between its answers");
    }
    if (PQexitPipelineMode(pg) != 1)
        throwBroken(pg);
    if (PQtransactionStatus(pg) == PQTRANS_INERROR) {
        // A statement failed: the server skipped the rest up to the sync, COMMIT included.
        PGresult* r = PQexec(pg, "ROLLBACK");
        PQclear(r);
    }
    if (PQstatus(pg) == CONNECTION_BAD)
        throw pqxx::broken_connection(firstLine(PQerrorMessage(pg)));
    if (error.set)
        throw pqxx::sql_error(error.message, error.query, error.sqlstate.c_str());
    return out;
}

RawConnection rawConnection(const pqxx::dbtransaction& tx)
{
    RawConnection out;
    out.pg = RawAccess::of(tx);
    out.backendPid = tx.conn().backendpid();
    return out;
}

DirectReads::DirectReads(const pqxx::connection& conn, const RawConnection& raw)
{
    scope.conn = &conn;
    scope.raw = raw;
}

DirectReads::~DirectReads() { scope = Scope(); }

bool directReads(const pqxx::connection& conn)
{
    return scope.conn == &conn && scope.raw.pg && conn.is_open() && conn.backendpid() == scope.raw.backendPid;
}

} // namespace idem
