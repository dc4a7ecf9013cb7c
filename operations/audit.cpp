#include "operations/audit.h"

#include <algorithm>
#include <limits>
#include <pqxx/pqxx>
#include <stdexcept>

#include "core/sha256.h"

namespace idem {

namespace {

    constexpr int pageSize = 2000;

    void netstring(std::string& out, const std::string& field)
    {
        out += std::to_string(field.size());
        out += ':';
        out += field;
        out += ',';
    }

    // Raw column values, no conversion but the timestamp's: the images come as the server's
    // jsonb text output, which is what the SQL hashed (p_before::text).
    std::string columns()
    {
        return "a.id, (extract(epoch FROM a.at) OPERATOR(pg_catalog.*) 1000000::numeric)::bigint, a.idempotency_key, a.action, a.reason, a.db_role,"
               " a.os_user, a.client_host, a.application, a.before_image, a.after_image, a.prev_hash, a.entry_hash";
    }

    AuditEntry entryFrom(const pqxx::row& row)
    {
        AuditEntry e;
        e.id = row[0].as<std::int64_t>();
        e.atUs = row[1].as<std::int64_t>();
        e.key = row[2].as<std::string>();
        e.action = row[3].as<std::string>();
        e.reason = row[4].as<std::string>();
        e.dbRole = row[5].as<std::string>();
        e.osUser = row[6].as<std::string>();
        e.clientHost = row[7].as<std::string>();
        e.application = row[8].as<std::string>();
        e.beforeImage = row[9].as<std::string>();
        e.afterImage = row[10].as<std::string>();
        e.prevHash = row[11].as<std::string>();
        e.entryHash = row[12].as<std::string>();
        return e;
    }

    const char* nullOr(const std::optional<std::string>& v) { return v ? v->c_str() : nullptr; }

    std::string numberOrNull(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string(); }

} // namespace

std::string auditCanonicalBytes(const AuditEntry& e)
{
    std::string out;
    out.reserve(256 + e.reason.size() + e.beforeImage.size() + e.afterImage.size() + e.key.size());
    netstring(out, "idem-audit-v1");
    netstring(out, std::to_string(e.id));
    netstring(out, std::to_string(e.atUs));
    netstring(out, e.key);
    netstring(out, e.action);
    netstring(out, e.reason);
    netstring(out, e.dbRole);
    netstring(out, e.osUser);
    netstring(out, e.clientHost);
    netstring(out, e.application);
    netstring(out, e.beforeImage);
    netstring(out, e.afterImage);
    netstring(out, e.prevHash);
    return out;
}

std::string auditEntryHash(const AuditEntry& e) { return sha256Hex(auditCanonicalBytes(e)); }

const std::vector<std::string>& auditActionNames()
{
    static const std::vector<std::string> names { "requeue", "release", "fail", "retention", "purge", "pause", "resume",
        "annotate", "job", "approve", "approval_policy", "change_request", "change_approve", "change_use", "decline", "reconcile_probe" };
    return names;
}

bool isAuditAction(const std::string& name)
{
    const auto& names = auditActionNames();
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::string auditActionList()
{
    std::string out;
    for (const auto& n : auditActionNames())
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

std::vector<AuditEntry> listAudit(pqxx::connection& conn, const SchemaName& schema, const AuditFilter& f)
{
    if (f.limit < 1 || f.limit > 10000)
        throw std::invalid_argument("the audit page size must be 1 to 10000");
    if (f.action && !isAuditAction(*f.action))
        throw std::invalid_argument("the action must be one of " + auditActionList() + ", not '" + *f.action + "'");
    for (const auto* v : { &f.key, &f.actor })
        if (*v && (*v)->find('\0') != std::string::npos)
            throw std::invalid_argument("a filter value contains a NUL byte");
    const std::string sql = "SELECT " + columns() + " FROM " + schema.qualify("task_idempotency_audit")
        + " a WHERE ($1::text IS NULL OR a.idempotency_key = $1)"
          " AND ($2::text IS NULL OR a.db_role = $2 OR a.os_user = $2)"
          " AND ($3::text IS NULL OR a.action = $3)"
          " AND ($4::bigint IS NULL OR a.at >= to_timestamp(0) + $4::bigint * interval '1 microsecond')"
          " AND ($5::bigint IS NULL OR a.at < to_timestamp(0) + $5::bigint * interval '1 microsecond')"
          " AND ($6::bigint IS NULL OR a.id < $6)"
          " AND ($7::bigint IS NULL OR a.id > $7)"
          " ORDER BY a.id "
        + std::string(f.oldestFirst ? "ASC" : "DESC") + " LIMIT $8";
    const std::string since = numberOrNull(f.sinceUs), until = numberOrNull(f.untilUs);
    const std::string before = numberOrNull(f.beforeId), after = numberOrNull(f.afterId);
    const auto orNull = [](const std::string& s) { return s.empty() ? nullptr : s.c_str(); };
    if (f.statementTimeoutMs < 0)
        throw std::invalid_argument("the audit read's statement timeout must be 0 (none) or more milliseconds");
    pqxx::read_transaction t(conn);
    if (f.statementTimeoutMs > 0)
        t.exec_params("SELECT set_config('statement_timeout', $1, true)", std::to_string(f.statementTimeoutMs));
    const pqxx::result r = t.exec_params(sql, nullOr(f.key), nullOr(f.actor), nullOr(f.action), orNull(since),
        orNull(until), orNull(before), orNull(after), f.limit);
    std::vector<AuditEntry> out;
    out.reserve(r.size());
    for (const auto& row : r)
        out.push_back(entryFrom(row));
    return out;
}

const char* chainBreakName(ChainBreak b)
{
    switch (b) {
    case ChainBreak::None:
        return "none";
    case ChainBreak::HashMismatch:
        return "hash_mismatch";
    case ChainBreak::PrevLinkBroken:
        return "prev_link_broken";
    case ChainBreak::MissingEntry:
        return "missing_entry";
    case ChainBreak::Truncated:
        return "truncated";
    }
    return "none";
}

namespace {

    void setBreak(ChainReport& rep, ChainBreak kind, std::int64_t id, std::string detail)
    {
        rep.brokenBy = kind;
        rep.firstBrokenId = id;
        rep.detail = std::move(detail);
    }

    // The per-entry checks every walk makes, in this order: the id is the next one (ids are
    // dense), prev_hash is the hash before it, and the fields hash to entry_hash.
    bool checkEntry(const AuditEntry& e, std::int64_t expectedId, const std::string& prevHash, ChainReport& rep)
    {
        if (e.id != expectedId) {
            if (e.id > expectedId)
                setBreak(rep, ChainBreak::MissingEntry, expectedId,
                    "entry " + std::to_string(expectedId)
                        + (e.id - 1 > expectedId ? " to " + std::to_string(e.id - 1) : std::string())
                        + " missing (deleted): entry " + std::to_string(e.id) + " follows entry "
                        + std::to_string(expectedId - 1));
            else
                setBreak(rep, ChainBreak::MissingEntry, e.id,
                    "entry " + std::to_string(e.id) + " is out of sequence (expected " + std::to_string(expectedId)
                        + " first): ids start at 1 and are dense");
            return false;
        }
        if (e.prevHash != prevHash) {
            setBreak(rep, ChainBreak::PrevLinkBroken, e.id,
                "entry " + std::to_string(e.id) + "'s prev_hash " + e.prevHash + " is not "
                    + (e.id == 1 ? std::string("the genesis hash")
                                 : "entry " + std::to_string(e.id - 1) + "'s hash " + prevHash)
                    + ": entries were reordered or replaced");
            return false;
        }
        const std::string computed = auditEntryHash(e);
        if (computed != e.entryHash) {
            setBreak(rep, ChainBreak::HashMismatch, e.id,
                "entry " + std::to_string(e.id) + " hashes to " + computed + ", not its entry_hash " + e.entryHash
                    + ": the entry was changed after it was written");
            return false;
        }
        return true;
    }

    // Reads the entries with id > after in id order, in pages, and checks each: the first must
    // be expectedId and link to prevHash. Counts and records each good entry in rep (checked,
    // head); false at the first break. `seen` is told of every good entry.
    template <typename Seen>
    bool walk(pqxx::transaction_base& t, const SchemaName& schema, std::int64_t after, std::int64_t expectedId,
        std::string prevHash, ChainReport& rep, Seen&& seen)
    {
        const std::string sql = "SELECT " + columns() + " FROM " + schema.qualify("task_idempotency_audit")
            + " a WHERE a.id > $1 ORDER BY a.id LIMIT $2";
        for (std::int64_t last = after;;) {
            const pqxx::result r = t.exec_params(sql, static_cast<long long>(last), pageSize);
            for (const auto& row : r) {
                const AuditEntry e = entryFrom(row);
                last = e.id;
                if (!checkEntry(e, expectedId, prevHash, rep))
                    return false;
                seen(e);
                ++rep.checked;
                prevHash = e.entryHash;
                ++expectedId;
                rep.head = ChainHead { e.id, e.entryHash };
            }
            if (r.size() < static_cast<std::size_t>(pageSize))
                return true;
        }
    }

    // By the primary key: one index probe, however long the trail.
    std::optional<ChainHead> newestEntry(pqxx::transaction_base& t, const SchemaName& schema)
    {
        const pqxx::result r = t.exec("SELECT a.id, a.entry_hash FROM " + schema.qualify("task_idempotency_audit")
            + " a ORDER BY a.id DESC LIMIT 1");
        if (r.empty())
            return std::nullopt;
        return ChainHead { r[0][0].as<std::int64_t>(), r[0][1].as<std::string>() };
    }

} // namespace

ChainReport verifyChain(pqxx::connection& conn, const SchemaName& schema, const std::optional<ChainHead>& expectedHead)
{
    ChainReport rep;
    // One snapshot for the whole walk: entries appended meanwhile are simply not part of it.
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> t(conn);
    std::optional<std::string> hashAtExpectedHead;
    const bool intact
        = walk(t, schema, std::numeric_limits<std::int64_t>::min(), 1, auditGenesisHash, rep, [&](const AuditEntry& e) {
              if (expectedHead && e.id == expectedHead->id)
                  hashAtExpectedHead = e.entryHash;
          });
    t.commit();
    if (!intact)
        return rep;

    const std::int64_t lastId = rep.head ? rep.head->id : 0;
    if (expectedHead) {
        if (!hashAtExpectedHead) {
            setBreak(rep, ChainBreak::Truncated, lastId + 1,
                "the trail ends at entry " + std::to_string(lastId) + " but entry " + std::to_string(expectedHead->id)
                    + " was recorded as its head: the newest entries were removed");
            return rep;
        }
        if (*hashAtExpectedHead != expectedHead->hash) {
            setBreak(rep, ChainBreak::Truncated, expectedHead->id,
                "entry " + std::to_string(expectedHead->id) + " now hashes to " + *hashAtExpectedHead
                    + ", not the recorded head hash " + expectedHead->hash + ": the tail was removed and rewritten");
            return rep;
        }
    }
    rep.detail = rep.checked == 0 ? "the audit trail is empty"
                                  : std::to_string(rep.checked) + " entries verified; head is entry "
            + std::to_string(rep.head->id) + " " + rep.head->hash;
    return rep;
}

std::optional<ChainHead> readAuditHead(pqxx::connection& conn, const SchemaName& schema)
{
    pqxx::read_transaction t(conn);
    auto head = newestEntry(t, schema);
    t.commit();
    return head;
}

ChainReport verifyChainFrom(pqxx::connection& conn, const SchemaName& schema, const ChainHead& from)
{
    ChainReport rep;
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> t(conn);
    const pqxx::result at = t.exec_params(
        "SELECT " + columns() + " FROM " + schema.qualify("task_idempotency_audit") + " a WHERE a.id = $1",
        static_cast<long long>(from.id));
    if (at.empty()) {
        rep.head = newestEntry(t, schema);
        t.commit();
        const std::string n = std::to_string(from.id);
        if (rep.head && rep.head->id > from.id)
            setBreak(rep, ChainBreak::MissingEntry, from.id,
                "entry " + n + ", verified earlier, is missing (deleted); the trail goes on to entry "
                    + std::to_string(rep.head->id));
        else
            setBreak(rep, ChainBreak::Truncated, from.id,
                (rep.head ? "the trail ends at entry " + std::to_string(rep.head->id)
                          : std::string("the trail is empty"))
                    + " but entry " + n + " was verified earlier: the newest entries were removed");
        return rep;
    }
    const AuditEntry e = entryFrom(at[0]);
    rep.head = ChainHead { e.id, e.entryHash };
    // Its own link was verified with it; what is left to check is its fields against its hash.
    if (!checkEntry(e, e.id, e.prevHash, rep))
        return rep;
    if (e.entryHash != from.hash) {
        setBreak(rep, ChainBreak::Truncated, e.id,
            "entry " + std::to_string(e.id) + " now has the hash " + e.entryHash + ", not " + from.hash
                + " as verified earlier: the entry was replaced (the tail removed and written again)");
        return rep;
    }
    const bool intact = walk(t, schema, e.id, e.id + 1, e.entryHash, rep, [](const AuditEntry&) {});
    t.commit();
    if (!intact)
        return rep;
    rep.detail = (rep.checked == 0
                         ? "no entries after entry " + std::to_string(e.id)
                         : std::to_string(rep.checked) + " entries after entry " + std::to_string(e.id) + " verified")
        + "; head is entry " + std::to_string(rep.head->id) + " " + rep.head->hash;
    return rep;
}

} // namespace idem
