#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "operations/audit.h"

namespace idem::cli {

// `idemctl audit verify --state FILE`: the last head it verified, kept outside the database so
// that a truncation is noticed even when new entries have brought the id back (which
// IdemAuditHeadMovedBackwards, comparing ids only, misses). Text, one field a line:
//   idem-audit-state 1
//   database NAME
//   schema NAME
//   head ID HASH          (head 0 - for an empty trail)
//   verified_at TIME      (for people; not checked)
struct AuditState {
    std::string database;
    std::string schema;
    std::optional<ChainHead> head;
    std::string verifiedAt;
};

// A state file that exists but is not one (edited, truncated, another program's): never used,
// never overwritten.
class AuditStateError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// nullopt when the file does not exist; AuditStateError when it cannot be read or is not valid.
std::optional<AuditState> loadAuditState(const std::string& path);

// Written beside it under a temporary name, flushed to disk and renamed over it: a reader sees the
// old state or the new one, never half of either. Throws std::runtime_error.
void saveAuditState(const std::string& path, const AuditState& state);

} // namespace idem::cli
