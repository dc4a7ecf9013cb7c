#include "cli/auditstate.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "core/utf8.h"

namespace idem::cli {

namespace {
    constexpr const char* magic = "idem-audit-state 1";

    bool isHash(const std::string& h)
    {
        if (h.size() != 64)
            return false;
        for (char c : h)
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
                return false;
        return true;
    }

    // "NAME VALUE": the value after the first space, which may itself hold spaces.
    std::optional<std::string> field(const std::string& line, const std::string& name)
    {
        if (line.rfind(name + ' ', 0) != 0 || line.size() == name.size() + 1)
            return std::nullopt;
        return line.substr(name.size() + 1);
    }

    [[noreturn]] void corrupt(const std::string& path, const std::string& why)
    {
        throw AuditStateError("the state file " + displaySafe(path, 400) + " is not a valid idemctl audit state (" + why
            + "); refusing to use or overwrite it. Restore it from where you keep a copy, or move it away to"
              " start over from the current head (that forgets what was verified before)");
    }

    void writeAll(int fd, const std::string& text, const std::string& tmp)
    {
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
            done += static_cast<std::size_t>(n);
        }
    }
} // namespace

std::optional<AuditState> loadAuditState(const std::string& path)
{
    std::error_code ec;
    if (std::filesystem::symlink_status(path, ec).type() == std::filesystem::file_type::not_found)
        return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw AuditStateError("cannot read the state file " + displaySafe(path, 400));
    std::ostringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    if (text.size() > 4096)
        corrupt(path, "larger than any state file");
    if (text.empty() || text.back() != '\n')
        corrupt(path, "it does not end with a line break: cut short?");
    std::vector<std::string> lines;
    std::istringstream split(text);
    for (std::string l; std::getline(split, l);)
        lines.push_back(l);
    if (lines.size() != 5 || lines[0] != magic)
        corrupt(path, "expected 5 lines starting with '" + std::string(magic) + "'");
    AuditState s;
    const auto db = field(lines[1], "database");
    const auto schema = field(lines[2], "schema");
    const auto head = field(lines[3], "head");
    const auto at = field(lines[4], "verified_at");
    if (!db || !schema || !head || !at)
        corrupt(path, "a line is missing or out of order");
    s.database = *db;
    s.schema = *schema;
    s.verifiedAt = *at;
    const auto space = head->find(' ');
    const std::string id = head->substr(0, space);
    const std::string hash = space == std::string::npos ? std::string() : head->substr(space + 1);
    if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos)
        corrupt(path, "the head's id is not a number");
    const long long n = std::stoll(id);
    if (n == 0 && hash == "-")
        return s;
    if (n < 1 || !isHash(hash))
        corrupt(path, "the head is not ID and a 64-digit lowercase SHA-256");
    s.head = ChainHead { n, hash };
    return s;
}

void saveAuditState(const std::string& path, const AuditState& s)
{
    std::string text = std::string(magic) + "\ndatabase " + s.database + "\nschema " + s.schema + "\nhead ";
    text += s.head ? std::to_string(s.head->id) + ' ' + s.head->hash : std::string("0 -");
    text += "\nverified_at " + s.verifiedAt + '\n';

    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        throw std::runtime_error("cannot create " + tmp + ": " + std::strerror(errno));
    try {
        writeAll(fd, text, tmp);
        if (::fsync(fd) != 0)
            throw std::runtime_error("cannot flush " + tmp + ": " + std::strerror(errno));
    } catch (...) {
        ::close(fd);
        ::unlink(tmp.c_str());
        throw;
    }
    ::close(fd);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(e));
    }
    // The rename itself reaches the disk with the directory.
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string(".") : slash == 0 ? "/" : path.substr(0, slash);
    if (const int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
        ::fsync(d);
        ::close(d);
    }
}

} // namespace idem::cli
