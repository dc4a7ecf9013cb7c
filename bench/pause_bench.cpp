// The "pause" section of idem-bench-claim (bench/README.md, "Session 10" and "Session 11"): what
// the pause check (schema v15, behind a catalog-cache guard since v16, per operation since v18)
// costs the claim path.
// claim() as shipped against the v14 claim(), the shipped body with its two pause blocks taken
// out, each in its own scratch schema, with no pauses and with pauses on operations the bench's
// keys do not use.
#include <cstdio>
#include <stdexcept>

#include <pqxx/pqxx>

#include "bench/bench.h"
#include "schema/migrate.h"

namespace idem::bench {

namespace {

    const FunctionDefinition& shippedClaim()
    {
        for (const auto& f : bundledFunctions())
            if (f.name == "claim")
                return f;
        throw std::runtime_error("no function file defines claim()");
    }

    [[noreturn]] void cannotDerive(const std::string& why)
    {
        throw std::runtime_error("cannot derive the v14 claim() from claim.sql: " + why + "; update pause_bench.cpp");
    }

    std::size_t lineStart(const std::string& text, std::size_t at)
    {
        const auto nl = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
        return nl == std::string::npos ? 0 : nl + 1;
    }

    bool blankLine(const std::string& text, std::size_t start)
    {
        return start < text.size() && text[start] == '\n';
    }

} // namespace

std::string v14ClaimSql(const SchemaName& schema)
{
    std::string body = functionSqlFor(shippedClaim(), schema);

    for (const char* declaration : { "    v_pause idem_pauses%ROWTYPE;\n", "    v_tenant text;\n", "    v_operation text;\n" }) {
        const auto decl = body.find(declaration);
        if (decl == std::string::npos || body.find(declaration, decl + 1) != std::string::npos)
            cannotDerive(std::string("no single declaration '") + declaration + "'");
        body.erase(decl, std::string(declaration).size());
    }
    // Each block: the comment lines right above it, then from IF idem_pause_may_cover(p_key) THEN
    // to the END IF at its indentation (the names split off the key, the probe, and
    // the answer 'paused'); a blank line left doubled by the removal goes too.
    const std::string guard = "IF idem_pause_may_cover(p_key) THEN\n";
    int blocks = 0;
    for (auto at = body.find(guard); at != std::string::npos; at = body.find(guard)) {
        auto start = lineStart(body, at);
        const std::string indent = body.substr(start, at - start);
        if (indent.find_first_not_of(' ') != std::string::npos)
            cannotDerive("the pause guard is not a line of its own");
        while (start > 0) {
            const auto above = lineStart(body, start - 1);
            const auto text = body.substr(above, start - above);
            if (text.find_first_not_of(' ') == std::string::npos || text.compare(text.find_first_not_of(' '), 2, "--"))
                break;
            start = above;
        }
        const auto close = body.find("\n" + indent + "END IF;\n", at);
        if (close == std::string::npos)
            cannotDerive("a pause guard without its END IF");
        auto end = close + 1 + indent.size() + std::string("END IF;\n").size();
        const std::string block = body.substr(start, end - start);
        if (block.find("v_tenant := split_part(p_key, ':', 1);") == std::string::npos
            || block.find("IF idem_pause_named(v_tenant, v_operation) THEN") == std::string::npos
            || block.find("SELECT * INTO v_pause FROM idem_pause_covering(v_tenant, v_operation);") == std::string::npos
            || block.find("'paused'") == std::string::npos || block.find("RETURN;") == std::string::npos)
            cannotDerive("a pause block that is not the guard, the names, IF idem_pause_named, the probe and "
                         "RETURN QUERY 'paused'");
        if (start > 0 && blankLine(body, lineStart(body, start - 1)) && blankLine(body, end))
            ++end;
        body.erase(start, end - start);
        ++blocks;
    }
    if (blocks != 2)
        cannotDerive(std::to_string(blocks) + " pause blocks where claim.sql has 2");
    // The header comment names v15's decision; the definition must not.
    const auto create = body.find("CREATE OR REPLACE FUNCTION");
    if (create == std::string::npos)
        cannotDerive("no CREATE OR REPLACE FUNCTION");
    for (const char* left : { "v_pause", "v_tenant", "v_operation", "idem_pause", "'paused'" })
        if (body.find(left, create) != std::string::npos)
            cannotDerive(std::string("'") + left + "' is still in the body");
    return body;
}

void installV14Claim(pqxx::connection& conn, const SchemaName& schema)
{
    const std::string body = v14ClaimSql(schema);
    pqxx::work w(conn);
    // SET search_path FROM CURRENT in the function captures this.
    w.exec_params("SELECT set_config('search_path', $1, true)", schema.quoted() + ", pg_temp");
    w.exec(body);
    w.commit();
}

void setOtherPauses(pqxx::connection& conn, const SchemaName& schema, int count)
{
    pqxx::work w(conn);
    w.exec("DELETE FROM " + schema.qualify("idem_pauses"));
    // Half for the bench's own tenant, half for every tenant ('*', which the probe of every key
    // reads next to): none covers an operation the bench's keys use (bench:<mode>, bench:loop,
    // bench:new, bench:task). In force, without an end, as the owner writes them (no audit).
    w.exec_params("INSERT INTO " + schema.qualify("idem_pauses")
            + " (tenant, operation, reason, paused_by, paused_at, changed_at, until, audit_id)"
              " SELECT CASE WHEN i % 2 = 0 THEN 'bench' ELSE '*' END, 'other-' || i, 'bench', 'bench (bench)',"
              " now(), now(), NULL, 0 FROM generate_series(1, $1) i",
        count);
    w.commit();
    // Written by hand, so summarised by hand, as the owner must (0015_pauses.sql).
    pqxx::nontransaction(conn).exec("SELECT " + schema.qualify("idem_pause_summarise") + "()");
    // As autovacuum would after that many inserts; the empty tables are analysed too, so both
    // cases are planned from statistics.
    pqxx::nontransaction(conn).exec("ANALYZE " + schema.qualify("idem_pauses") + ", " + schema.qualify("idem_pause_tenants"));
}

} // namespace idem::bench
