#include <cerrno>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <system_error>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/canonicaljson.h"
#include "core/digest.h"
#include "core/sha256.h"

namespace idem::cli {

namespace {
    constexpr const char* digestHelp = R"(Usage: idemctl digest [--canonical] [--ignore FIELD]... [FILE]

Prints the request digest of a JSON request, as a worker stores it in request_hash:
"v1:" followed by the lowercase hex SHA-256 of the request's RFC 8785 canonical JSON,
then a newline. Key order, whitespace and number spelling (1.0 vs 1) do not change it;
any value does. Reads FILE, or standard input when FILE is absent or '-'.

  --canonical     print the canonical JSON that is hashed instead of the digest: exactly
                  those bytes, with NO newline added, so that
                  `idemctl digest --canonical req.json | sha256sum` matches the digest
  --ignore FIELD  leave FIELD out before canonicalising (repeatable): a top-level key, or
                  a dotted path such as meta.trace_id into nested objects; a top-level
                  key spelled exactly FIELD is preferred over the dotted reading

The input must be one JSON value in UTF-8 with no duplicate keys, no lone surrogates
and no numbers beyond the double range; anything else is refused with the reason.
Exit codes: 0 ok, 1 unreadable input or invalid JSON, 2 usage error.
)";

    std::string readAll(const std::string& path)
    {
        if (path == "-") {
            std::ostringstream buffer;
            buffer << std::cin.rdbuf();
            if (std::cin.bad())
                throw std::runtime_error("cannot read standard input");
            return buffer.str();
        }
        std::ifstream in(path, std::ios::binary);
        if (!in)
            throw std::runtime_error("cannot open " + path + ": " + std::generic_category().message(errno));
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (in.bad())
            throw std::runtime_error("cannot read " + path + ": " + std::generic_category().message(errno));
        return text;
    }
} // namespace

int runDigest(const std::vector<std::string>& argv)
{
    Args args(argv, { "ignore" }, { "canonical", "help" });
    if (args.flag("help")) {
        std::cout << digestHelp;
        return ExitOk;
    }
    if (args.positional().size() > 1)
        throw UsageError("digest takes at most one FILE");
    const auto ignore = args.values("ignore");
    // Checked before reading, so a bad --ignore is a usage error even on bad input.
    withoutFields(nlohmann::json::object(), ignore);

    const std::string path = args.positional().empty() ? std::string("-") : args.positional().front();
    const std::string text = readAll(path);
    const std::string canonical = canonicalJson(withoutFields(parseJsonStrict(text), ignore));
    if (args.flag("canonical"))
        std::cout << canonical;
    else
        std::cout << requestDigestPrefix << sha256Hex(canonical) << '\n';
    std::cout.flush();
    return std::cout ? ExitOk : ExitFailure;
}

} // namespace idem::cli
