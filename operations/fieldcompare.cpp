#include "operations/fieldcompare.h"

#include <pqxx/pqxx>

#include <algorithm>
#include <map>

#include "core/utf8.h"

namespace idem {

namespace {
    std::map<std::string, std::string> printsOf(const std::string& json)
    {
        std::map<std::string, std::string> out;
        if (json.empty())
            return out;
        const auto j = nlohmann::json::parse(json);
        if (!j.is_object())
            return out;
        for (auto it = j.begin(); it != j.end(); ++it)
            out[it.key()] = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
        return out;
    }

    std::string names(const std::vector<std::string>& list, std::size_t maxNames, std::size_t maxNameBytes)
    {
        std::string out;
        for (std::size_t i = 0; i < list.size() && i < maxNames; ++i) {
            if (i)
                out += ", ";
            out += displaySafe(list[i], maxNameBytes);
        }
        if (list.size() > maxNames)
            out += " and " + std::to_string(list.size() - maxNames) + " more";
        return out;
    }

    nlohmann::json array(const std::vector<std::string>& list)
    {
        nlohmann::json a = nlohmann::json::array();
        for (const auto& n : list)
            a.push_back(n);
        return a;
    }

    std::vector<std::string> strings(const nlohmann::json& j, const char* name)
    {
        std::vector<std::string> out;
        if (j.contains(name) && j.at(name).is_array())
            for (const auto& n : j.at(name))
                out.push_back(n.get<std::string>());
        return out;
    }
} // namespace

FieldComparison compareFields(const std::string& storedJson, int storedFields, const std::string& conflictJson,
    int conflictFields)
{
    FieldComparison c;
    c.storedKept = !storedJson.empty();
    c.conflictKept = !conflictJson.empty();
    c.storedFields = storedFields;
    c.conflictFields = conflictFields;
    if (!c.comparable())
        return c;
    const auto a = printsOf(storedJson);
    const auto b = printsOf(conflictJson);
    // A side that kept every field it had tells an absent name from one it did not fingerprint.
    const bool aWhole = static_cast<int>(a.size()) >= storedFields;
    const bool bWhole = static_cast<int>(b.size()) >= conflictFields;
    for (const auto& [name, print] : a) {
        const auto other = b.find(name);
        if (other != b.end())
            (other->second == print ? c.same : c.differ).push_back(name);
        else if (bWhole)
            c.onlyStored.push_back(name);
        else
            ++c.notCompared;
    }
    for (const auto& [name, print] : b)
        if (a.count(name) == 0) {
            if (aWhole)
                c.onlyConflicting.push_back(name);
            else
                ++c.notCompared;
        }
    // Fields neither side fingerprinted: at least the larger side's remainder.
    const int aLeft = storedFields - static_cast<int>(a.size());
    const int bLeft = conflictFields - static_cast<int>(b.size());
    c.notCompared = std::max(c.notCompared, std::max(aLeft, bLeft));
    return c;
}

std::optional<FieldComparison> readFieldComparison(pqxx::transaction_base& t, const SchemaName& schema,
    const std::string& key)
{
    const auto fields = schema.qualify("idem_request_fields");
    if (!t.exec_params("SELECT to_regclass($1) IS NOT NULL", fields)[0][0].as<bool>())
        return std::nullopt;
    const auto r = t.exec_params("SELECT (SELECT f.fields::text FROM " + fields
            + " f WHERE f.idempotency_key = $1), (SELECT f.field_count FROM " + fields
            + " f WHERE f.idempotency_key = $1), (SELECT c.last_fields::text FROM "
            + schema.qualify("task_idempotency_conflicts") + " c WHERE c.idempotency_key = $1),"
              " (SELECT c.last_field_count FROM "
            + schema.qualify("task_idempotency_conflicts") + " c WHERE c.idempotency_key = $1)",
        key);
    const auto& row = r[0];
    if (row[0].is_null() && row[2].is_null())
        return std::nullopt;
    return compareFields(row[0].is_null() ? std::string() : row[0].as<std::string>(),
        row[1].is_null() ? 0 : row[1].as<int>(), row[2].is_null() ? std::string() : row[2].as<std::string>(),
        row[3].is_null() ? 0 : row[3].as<int>());
}

std::string fieldComparisonText(const FieldComparison& c, std::size_t maxNames, std::size_t maxNameBytes)
{
    if (!c.conflictKept)
        return c.storedKept ? std::to_string(c.storedFields) + " fingerprinted; no conflicting request's"
                              " fingerprints to compare with"
                            : std::string();
    if (!c.storedKept)
        return "the conflicting request's fields are fingerprinted, the key's request was not (claimed without"
               " fingerprints): nothing to compare";
    std::vector<std::string> parts;
    if (!c.differ.empty())
        parts.push_back(names(c.differ, maxNames, maxNameBytes) + (c.differ.size() == 1 ? " differs" : " differ"));
    if (!c.onlyStored.empty())
        parts.push_back(names(c.onlyStored, maxNames, maxNameBytes) + " only in the stored request");
    if (!c.onlyConflicting.empty())
        parts.push_back(names(c.onlyConflicting, maxNames, maxNameBytes) + " only in the conflicting request");
    if (!c.same.empty())
        parts.push_back(names(c.same, maxNames, maxNameBytes) + " same");
    if (c.notCompared > 0)
        parts.push_back(std::to_string(c.notCompared) + (c.notCompared == 1 ? " field" : " fields")
            + " not compared (past 64 fields or a name over 256 bytes)");
    if (c.differ.empty() && c.onlyStored.empty() && c.onlyConflicting.empty() && c.notCompared == 0)
        parts.insert(parts.begin(), "no field differs by its fingerprint (the field keys differ, or a field was"
                                    " ignored for the digest)");
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i)
        out += (i ? "; " : "") + parts[i];
    return out;
}

nlohmann::json fieldComparisonJson(const FieldComparison& c)
{
    return { { "stored_fingerprinted", c.storedKept }, { "stored_fields", c.storedFields },
        { "conflict_fingerprinted", c.conflictKept }, { "conflict_fields", c.conflictFields },
        { "differ", array(c.differ) }, { "same", array(c.same) }, { "only_stored", array(c.onlyStored) },
        { "only_conflicting", array(c.onlyConflicting) }, { "not_compared", c.notCompared } };
}

FieldComparison fieldComparisonFromJson(const nlohmann::json& j)
{
    FieldComparison c;
    c.storedKept = j.value("stored_fingerprinted", false);
    c.storedFields = j.value("stored_fields", 0);
    c.conflictKept = j.value("conflict_fingerprinted", false);
    c.conflictFields = j.value("conflict_fields", 0);
    c.differ = strings(j, "differ");
    c.same = strings(j, "same");
    c.onlyStored = strings(j, "only_stored");
    c.onlyConflicting = strings(j, "only_conflicting");
    c.notCompared = j.value("not_compared", 0);
    return c;
}

} // namespace idem
