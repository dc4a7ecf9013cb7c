#include "core/digest.h"

#include <stdexcept>

#include "core/canonicaljson.h"
#include "core/sha256.h"

namespace idem {

namespace {
    std::vector<std::string> splitPath(const std::string& field)
    {
        if (field.empty())
            throw std::invalid_argument("an ignored field name is empty");
        std::vector<std::string> segments;
        std::size_t start = 0;
        while (true) {
            const auto dot = field.find('.', start);
            segments.push_back(field.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
            if (segments.back().empty())
                throw std::invalid_argument(
                    "ignored field '" + field + "' has an empty path segment (a leading, trailing or doubled '.')");
            if (dot == std::string::npos)
                return segments;
            start = dot + 1;
        }
    }

    void dropPath(nlohmann::json& object, const std::vector<std::string>& segments)
    {
        nlohmann::json* at = &object;
        for (std::size_t i = 0; i + 1 < segments.size(); ++i) {
            const auto it = at->find(segments[i]);
            if (it == at->end() || !it->is_object())
                return; // the path runs into nothing or into a non-object: nothing to drop
            at = &*it;
        }
        at->erase(segments.back());
    }
} // namespace

nlohmann::json withoutFields(nlohmann::json request, const std::vector<std::string>& ignoreFields)
{
    // Every name is checked even when the request is not an object, so a typo in a worker's
    // configuration fails on the first request rather than on the first object.
    std::vector<std::vector<std::string>> paths;
    paths.reserve(ignoreFields.size());
    for (const auto& field : ignoreFields)
        paths.push_back(splitPath(field));
    if (!request.is_object())
        return request;
    for (std::size_t i = 0; i < ignoreFields.size(); ++i) {
        if (request.contains(ignoreFields[i]))
            request.erase(ignoreFields[i]);
        else if (paths[i].size() > 1)
            dropPath(request, paths[i]);
    }
    return request;
}

std::string requestDigest(const nlohmann::json& request, const std::vector<std::string>& ignoreFields)
{
    const std::string canonical
        = ignoreFields.empty() ? canonicalJson(request) : canonicalJson(withoutFields(request, ignoreFields));
    return requestDigestPrefix + sha256Hex(canonical);
}

std::string requestDigestFromText(std::string_view text, const std::vector<std::string>& ignoreFields)
{
    // The parsed value is ours, so the fields are dropped in place rather than from a copy.
    return requestDigestPrefix + sha256Hex(canonicalJson(withoutFields(parseJsonStrict(text), ignoreFields)));
}

} // namespace idem
