#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "operations/snapshot.h"

namespace idem {

// snapshot.json, format version 1 (docs/snapshot-format.md). A reader accepts exactly the
// versions it knows; fields it does not know are ignored (a version adds fields, never changes
// the meaning of one; a change of meaning is a new version).
inline constexpr const char* snapshotFormatName = "idem-snapshot";
inline constexpr int snapshotFormatVersion = 1;

// A snapshot.json that cannot be read: not JSON, another format, an unsupported version, or a
// field missing or of the wrong type. The message says which and where (a JSON pointer).
class SnapshotFormatError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Pretty-printed (2 spaces), keys in a fixed order, ending in a newline.
std::string snapshotToJson(const SnapshotData& data);

// Throws SnapshotFormatError. formatVersion of the result is the file's.
SnapshotData snapshotFromJson(std::string_view text);

} // namespace idem
