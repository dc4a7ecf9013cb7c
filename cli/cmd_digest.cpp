#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <system_error>

#include "cli/args.h"
#include "cli/commands.h"
#include "core/canonicaljson.h"
#include "core/digest.h"
#include "core/sha256.h"
#include "operations/signing.h"

namespace idem::cli {

namespace {
    constexpr const char* digestHelp = R"(Usage: idemctl digest [--canonical] [--ignore FIELD]... [FILE]
       idemctl digest --batch [--ignore FIELD]... [FILE]

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
  --batch         many documents, one per input line, each the base64 (standard, padded)
                  of the document's bytes; prints one line per document, in order:
                  "ok BASE64-OF-CANONICAL-JSON DIGEST" or "err KIND", KIND one of syntax,
                  duplicate_key, invalid_utf8, lone_surrogate, number_range, depth,
                  trailing_data, empty (the first fault met reading left to right). The
                  Python and TypeScript clients answer the same protocol, byte for byte
                  (clients/crosscheck.sh). A line that is not base64 is a failure (exit 1)

The input must be one JSON value in UTF-8 with no duplicate keys, no lone surrogates
and no numbers beyond the double range, followed by nothing but spaces, tabs and line
breaks: any other byte after the value (a NUL included) is refused with its offset.
Numbers are hashed as the doubles RFC 8785 writes, so a number a double cannot tell
from another is refused (number_range): an integer whose double is written as another
integer (9007199254740993 would be 9007199254740992: send such integers as strings),
and a number that is not zero but rounds to 0 (1e-400). -0 is 0, as RFC 8785 has it.
Input larger than 64 MiB is refused before it is parsed. Anything else is refused with
the reason.
Exit codes: 0 ok, 1 unreadable, oversized or invalid input, 2 usage error.
)";

    // A request is a few kilobytes; the cap keeps `idemctl digest /dev/zero` or a wrong file
    // from reading until memory runs out. The whole input is needed before hashing (the
    // canonical form sorts keys), so it cannot be streamed instead.
    constexpr std::size_t maxInputBytes = std::size_t { 64 } << 20;
    constexpr const char* maxInputText = "64 MiB";

    // At most maxInputBytes + 1 bytes, so that one byte too many is seen without reading on.
    std::string readCapped(std::FILE* in, const std::string& name)
    {
        std::string text;
        std::size_t size = 0;
        while (size <= maxInputBytes) {
            text.resize(std::min(maxInputBytes + 1, std::max<std::size_t>(size * 2, 64 * 1024)));
            const auto n = std::fread(text.data() + size, 1, text.size() - size, in);
            size += n;
            if (n == 0 || std::feof(in) || std::ferror(in))
                break;
        }
        if (std::ferror(in))
            throw std::runtime_error("cannot read " + name + ": " + std::generic_category().message(errno));
        if (size > maxInputBytes)
            throw std::runtime_error(name + " is larger than " + maxInputText
                + ", the most idemctl digest reads (a request is normally a few kilobytes)");
        text.resize(size);
        return text;
    }

    std::string readAll(const std::string& path)
    {
        if (path == "-")
            return readCapped(stdin, "standard input");
        struct Close {
            void operator()(std::FILE* f) const { std::fclose(f); }
        };
        const std::unique_ptr<std::FILE, Close> in(std::fopen(path.c_str(), "rb"));
        if (!in)
            throw std::runtime_error("cannot open " + path + ": " + std::generic_category().message(errno));
        return readCapped(in.get(), path);
    }
    // One document per line; a refused document is an answer ("err KIND"), not a failure.
    int runBatch(std::istream& in, const std::vector<std::string>& ignore)
    {
        std::string line;
        std::size_t number = 0;
        while (std::getline(in, line)) {
            ++number;
            std::string document;
            try {
                document = base64Decode(line);
            } catch (const SigningError&) {
                throw std::runtime_error("line " + std::to_string(number) + " is not base64");
            }
            try {
                const std::string canonical = canonicalJson(withoutFields(parseJsonStrict(document), ignore));
                std::cout << "ok " << base64Encode(canonical) << ' ' << requestDigestPrefix << sha256Hex(canonical)
                          << '\n';
            } catch (const JsonError& e) {
                std::cout << "err " << jsonErrorKindName(e.kind()) << '\n';
            }
        }
        if (in.bad())
            throw std::runtime_error("cannot read the batch input");
        std::cout.flush();
        return std::cout ? ExitOk : ExitFailure;
    }
} // namespace

int runDigest(const std::vector<std::string>& argv)
{
    Args args(argv, {}, { "canonical", "batch", "help" }, { "ignore" });
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
    if (args.flag("batch")) {
        if (args.flag("canonical"))
            throw UsageError("--batch prints the canonical JSON already; it takes no --canonical");
        if (path == "-")
            return runBatch(std::cin, ignore);
        std::ifstream file(path, std::ios::binary);
        if (!file)
            throw std::runtime_error("cannot open " + path + ": " + std::generic_category().message(errno));
        return runBatch(file, ignore);
    }
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
