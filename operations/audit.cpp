#include "operations/audit.h"

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
        return "a.id, (extract(epoch FROM a.at) * 1000000)::bigint, a.idempotency_key, a.action, a.reason, a.db_role,"
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

std::vector<AuditEntry> listAudit(pqxx::connection& conn, const SchemaName& schema, const AuditFilter& f)
{
    if (f.limit < 1 || f.limit > 10000)
        throw std::invalid_argument("the audit page size must be 1 to 10000");
    if (f.action && *f.action != "requeue" && *f.action != "release" && *f.action != "fail")
        throw std::invalid_argument("the action must be requeue, release or fail, not '" + *f.action + "'");
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
    pqxx::read_transaction t(conn);
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

ChainReport verifyChain(pqxx::connection& conn, const SchemaName& schema, const std::optional<ChainHead>& expectedHead)
{
    ChainReport rep;
    const auto broken = [&](ChainBreak kind, std::int64_t id, std::string detail) {
        rep.brokenBy = kind;
        rep.firstBrokenId = id;
        rep.detail = std::move(detail);
        return rep;
    };

    // One snapshot for the whole walk: entries appended meanwhile are simply not part of it.
    pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> t(conn);
    const std::string sql = "SELECT " + columns() + " FROM " + schema.qualify("task_idempotency_audit")
        + " a WHERE a.id > $1 ORDER BY a.id LIMIT $2";
    std::int64_t expectedId = 1;
    std::string prevHash = auditGenesisHash;
    std::optional<std::string> hashAtExpectedHead;
    for (std::int64_t last = std::numeric_limits<std::int64_t>::min();;) {
        const pqxx::result r = t.exec_params(sql, static_cast<long long>(last), pageSize);
        for (const auto& row : r) {
            const AuditEntry e = entryFrom(row);
            last = e.id;
            if (e.id != expectedId) {
                if (e.id > expectedId)
                    return broken(ChainBreak::MissingEntry, expectedId,
                        "entry " + std::to_string(expectedId)
                            + (e.id - 1 > expectedId ? " to " + std::to_string(e.id - 1) : std::string())
                            + " missing (deleted): entry " + std::to_string(e.id) + " follows entry "
                            + std::to_string(expectedId - 1));
                return broken(ChainBreak::MissingEntry, e.id,
                    "entry " + std::to_string(e.id) + " is out of sequence (expected " + std::to_string(expectedId)
                        + " first): ids start at 1 and are dense");
            }
            if (e.prevHash != prevHash)
                return broken(ChainBreak::PrevLinkBroken, e.id,
                    "entry " + std::to_string(e.id) + "'s prev_hash " + e.prevHash + " is not "
                        + (e.id == 1 ? std::string("the genesis hash")
                                     : "entry " + std::to_string(e.id - 1) + "'s hash " + prevHash)
                        + ": entries were reordered or replaced");
            const std::string computed = auditEntryHash(e);
            if (computed != e.entryHash)
                return broken(ChainBreak::HashMismatch, e.id,
                    "entry " + std::to_string(e.id) + " hashes to " + computed + ", not its entry_hash " + e.entryHash
                        + ": the entry was changed after it was written");
            if (expectedHead && e.id == expectedHead->id)
                hashAtExpectedHead = e.entryHash;
            ++rep.checked;
            prevHash = e.entryHash;
            ++expectedId;
            rep.head = ChainHead { e.id, e.entryHash };
        }
        if (r.size() < static_cast<std::size_t>(pageSize))
            break;
    }
    t.commit();

    if (expectedHead) {
        if (!hashAtExpectedHead)
            return broken(ChainBreak::Truncated, expectedId,
                "the trail ends at entry " + std::to_string(expectedId - 1) + " but entry "
                    + std::to_string(expectedHead->id) + " was recorded as its head: the newest entries were removed");
        if (*hashAtExpectedHead != expectedHead->hash)
            return broken(ChainBreak::Truncated, expectedHead->id,
                "entry " + std::to_string(expectedHead->id) + " now hashes to " + *hashAtExpectedHead
                    + ", not the recorded head hash " + expectedHead->hash + ": the tail was removed and rewritten");
    }
    rep.detail = rep.checked == 0 ? "the audit trail is empty"
                                  : std::to_string(rep.checked) + " entries verified; head is entry "
            + std::to_string(rep.head->id) + " " + rep.head->hash;
    return rep;
}

} // namespace idem
