#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <pqxx/connection>

#include "core/identifier.h"

namespace idem {

// The recovery actions' audit trail, task_idempotency_audit (resources/sql/migrations/0001_initial.sql
// and 0003_actions.sql).
//
// Entries form a hash chain: ids are dense (1, 2, 3, ...; allocated under a lock, so a missing
// id is a deleted entry, never a rolled-back one), the first entry's prev_hash is
// auditGenesisHash, every other entry's prev_hash is the entry_hash of the entry before it, and
//   entry_hash = lowercase hex SHA-256 of auditCanonicalBytes(entry)
// where the canonical bytes are the ASCII tag "idem-audit-v1" as a netstring followed by each
// field as a netstring ("<decimal byte length>:<UTF-8 bytes>,"), in this order:
//   id (decimal), at (microseconds since the Unix epoch, decimal), idempotency_key, action,
//   reason, db_role, os_user, client_host, application, before_image, after_image, prev_hash
// The images are jsonb and enter as their text output, which PostgreSQL prints canonically for a
// given jsonb value (keys sorted, fixed spacing), so hashing the stored value's text is stable.
// The SQL function audit_entry_hash() in 0003 computes the same with the built-in sha256().
inline constexpr const char* auditGenesisHash = "0000000000000000000000000000000000000000000000000000000000000000";

struct AuditEntry {
    std::int64_t id = 0;
    std::int64_t atUs = 0; // microseconds since the Unix epoch
    std::string key;
    std::string action; // requeue, release, fail; retention, purge (schema v9: key empty, images describe the change); job (v19)
    std::string reason;
    std::string dbRole; // session_user of the acting connection
    std::string osUser; // as the client reported it (ActionOptions::actor)
    std::string clientHost; // inet_client_addr() as the server saw it, or "[local]"
    std::string application; // application_name of the acting connection
    std::string beforeImage; // jsonb text: the row before (result_json replaced by result_json_sha256)
    std::string afterImage; // jsonb text: the row after
    std::string prevHash;
    std::string entryHash;
};

// The chain encoding and hash, in C++ (OpenSSL), independent of the database.
std::string auditCanonicalBytes(const AuditEntry& e);
std::string auditEntryHash(const AuditEntry& e);

// Every action the audit trail records, as its action column spells them (the table's CHECK):
// one of auditActionNames(), pause, resume.
const std::vector<std::string>& auditActionNames();
bool isAuditAction(const std::string& name);
std::string auditActionList(); // "requeue, release, ..., resume", for messages

struct AuditFilter {
    std::optional<std::string> key; // exact key
    std::optional<std::string> actor; // exact db_role or os_user
    std::optional<std::string> action; // requeue, release, fail, retention, purge
    std::optional<std::int64_t> sinceUs; // at >= since
    std::optional<std::int64_t> untilUs; // at < until
    // Keyset paging by id. Newest first by default: pass the last page's smallest id as beforeId.
    // oldestFirst: pass the last page's largest id as afterId.
    std::optional<std::int64_t> beforeId;
    std::optional<std::int64_t> afterId;
    bool oldestFirst = false;
    int limit = 100; // 1..10000
    // The read's statement timeout (the console's pages set one); 0: the session's own.
    int statementTimeoutMs = 0;
};

// One page of entries, read-only. Every filter value is a bound parameter.
std::vector<AuditEntry> listAudit(pqxx::connection& conn, const SchemaName& schema, const AuditFilter& filter);

enum class ChainBreak {
    None,
    HashMismatch, // the entry's fields do not hash to its entry_hash: the entry was edited
    PrevLinkBroken, // prev_hash is not the previous entry's entry_hash: reordered, or an entry was replaced
    MissingEntry, // an id is missing (ids are dense): the entry was deleted
    Truncated, // the expected head is beyond the last entry, or its hash differs: the tail was removed or rewritten
};

const char* chainBreakName(ChainBreak b); // none, hash_mismatch, prev_link_broken, missing_entry, truncated

// A head recorded earlier (from a previous ChainReport), to detect removal of the newest
// entries, which no hash chain can detect from the inside.
struct ChainHead {
    std::int64_t id = 0;
    std::string hash;
};

struct ChainReport {
    std::int64_t checked = 0; // entries whose hash and link were verified before the first break
    ChainBreak brokenBy = ChainBreak::None;
    std::optional<std::int64_t> firstBrokenId; // the first entry that fails (for MissingEntry: the missing id)
    std::string detail; // one line for people
    std::optional<ChainHead> head; // the last entry read (unset for an empty trail)

    bool ok() const { return brokenBy == ChainBreak::None; }
};

// Reads the whole trail in id order, in pages, inside one read-only REPEATABLE READ snapshot, and
// recomputes every hash and link in C++ from the raw column values. Stops at the first break.
ChainReport verifyChain(
    pqxx::connection& conn, const SchemaName& schema, const std::optional<ChainHead>& expectedHead = std::nullopt);

// The newest entry (one probe of the primary key), unset for an empty trail.
std::optional<ChainHead> readAuditHead(pqxx::connection& conn, const SchemaName& schema);

// The incremental check (the console's witness runs it whenever the head moves): `from` is a head
// verified earlier, by verifyChain or by this. In one read-only REPEATABLE READ snapshot, the entry
// at from.id must still be there, still hash to its entry_hash, and that must be from.hash; then
// every later entry must follow on from it with verifyChain's checks, up to the newest. It reads
// the new entries only, so an edit of an entry before from.id is verifyChain's to find.
//   Truncated, head unset or before from.id: the trail is shorter (head says where it ends now)
//   Truncated, head at from.id: that entry was replaced (its hash is not from.hash)
//   MissingEntry at from.id: it was deleted, later entries are still there
// `checked` counts the entries after from.id; `head` is the newest entry read.
ChainReport verifyChainFrom(pqxx::connection& conn, const SchemaName& schema, const ChainHead& from);

} // namespace idem
