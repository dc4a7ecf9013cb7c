#include "operations/snapshotconsistency.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/utf8.h"
#include "operations/actions.h"
#include "operations/pauses.h"
#include "operations/tasklist.h"

namespace idem {

namespace {
    std::string shown(const std::string& text) { return "\"" + displaySafe(text, 200) + "\""; }

    std::string field(const std::string& key, int index)
    {
        std::size_t start = 0;
        for (int i = 0; i < index; ++i) {
            const auto colon = key.find(':', start);
            if (colon == std::string::npos)
                return {};
            start = colon + 1;
        }
        return key.substr(start, key.find(':', start) - start);
    }

    // The tenant or operation idem_events gives an entry: its key's, else its images', else '*'.
    std::string scopeOf(const SnapshotAuditEntry& e, const char* name, int index)
    {
        if (!e.key.empty())
            return field(e.key, index);
        for (const auto* image : { &e.afterImage, &e.beforeImage }) {
            const auto j = nlohmann::json::parse(*image, nullptr, false);
            if (j.is_object() && j.contains(name) && j[name].is_string())
                return j[name].get<std::string>();
        }
        return "*";
    }

    std::string eventName(std::size_t i, const SnapshotEvent& e)
    {
        return "event " + std::to_string(i + 1) + " (" + displaySafe(e.action, 64) + " at " + displaySafe(e.at, 64)
            + ")";
    }
} // namespace

bool eventOutsideAudit(const std::string& action) { return action == "deploy" || action == "failover"; }

SnapshotConsistency checkSnapshotConsistency(const SnapshotData& d)
{
    SnapshotConsistency out;
    auto& c = out.contradictions;
    const auto takenUs = parseIsoMicros(d.takenAt);
    if (!takenUs) {
        c.push_back("taken_at " + shown(d.takenAt) + " is not a time: nothing can be held against it");
        return out;
    }
    const std::string taken = " after the snapshot was taken (taken_at " + displaySafe(d.takenAt, 64) + ")";

    // The tail by id, and its range.
    std::map<std::int64_t, const SnapshotAuditEntry*> tail;
    std::map<std::int64_t, std::int64_t> entryUs;
    for (const auto& e : d.audit.tail) {
        tail.emplace(e.id, &e);
        const auto us = parseIsoMicros(e.at);
        if (!us) {
            c.push_back("audit entry " + std::to_string(e.id) + ": its time " + shown(e.at) + " is not a time");
            continue;
        }
        entryUs[e.id] = *us;
        if (*us > *takenUs)
            c.push_back("audit entry " + std::to_string(e.id) + " (" + displaySafe(e.action, 64) + " by "
                + displaySafe(e.dbRole, 64) + ") is dated " + displaySafe(e.at, 64) + "," + taken);
    }
    // The tail's oldest entry (INT64_MAX: none, or its time unreadable).
    const std::int64_t oldestId = tail.empty() ? INT64_MAX : tail.begin()->first;
    const std::int64_t oldestUs = entryUs.count(oldestId) ? entryUs[oldestId] : INT64_MAX;
    const std::int64_t headId = d.audit.headId.value_or(0);

    if (!d.events)
        return out;
    std::map<std::int64_t, bool> cited;
    for (std::size_t i = 0; i < d.events->rows.size(); ++i) {
        const auto& ev = d.events->rows[i];
        const auto name = eventName(i, ev);
        const auto atUs = parseIsoMicros(ev.at);
        if (atUs && *atUs > *takenUs)
            c.push_back(name + " by " + shown(ev.actor) + ", text " + shown(ev.text) + ", is dated" + taken
                + "; no event of a snapshot can be later than its instant");
        if (eventOutsideAudit(ev.action))
            continue;
        if (ev.auditId <= 0) {
            c.push_back(name + " claims an operator's action by " + shown(ev.actor) + " (text " + shown(ev.text)
                + ") but cites no audit entry; every such event is an entry of the audit trail");
            continue;
        }
        const std::string entry = "audit entry " + std::to_string(ev.auditId);
        if (ev.auditId > headId) {
            c.push_back(name + " cites " + entry + ", past the audit chain's head (entry " + std::to_string(headId)
                + "): the trail held no such entry when the snapshot was taken");
            continue;
        }
        const auto it = tail.find(ev.auditId);
        if (it == tail.end()) {
            const bool inRange = ev.auditId > oldestId;
            const bool inTime = atUs && *atUs > oldestUs;
            if (inRange || inTime)
                c.push_back(name + " cites " + entry + ", which the audit tail (entries " + std::to_string(oldestId)
                    + " to " + std::to_string(headId) + ") does not hold though "
                    + (inRange ? "its id" : "its time") + " falls within it");
            else
                ++out.eventsBeforeTail;
            continue;
        }
        cited[ev.auditId] = true;
        ++out.eventsChecked;
        const auto& e = *it->second;
        std::vector<std::string> diffs;
        const auto differ = [&](const char* what, const std::string& here, const std::string& there) {
            if (here != there)
                diffs.push_back(std::string(what) + " " + shown(here) + " where the entry has " + shown(there));
        };
        differ("kind", ev.action, e.action);
        differ("actor", ev.actor, e.dbRole + " (" + e.osUser + ")");
        differ("text", ev.text, e.reason);
        if (!atUs || !entryUs.count(e.id) || *atUs != entryUs[e.id])
            differ("time", ev.at, e.at);
        differ("tenant", ev.tenant, scopeOf(e, "tenant", 0));
        differ("operation", ev.operation, scopeOf(e, "operation", 1));
        if (!diffs.empty()) {
            std::string joined;
            for (const auto& x : diffs)
                joined += (joined.empty() ? "" : "; ") + x;
            c.push_back(name + " contradicts " + entry + " of the hash-chained audit tail: " + joined);
        }
    }

    // The other way: an entry of the window and scope the events leave out (unless cut at the bound).
    // A scope no key could carry lists no events at all (readEvents): nothing to hold against.
    const bool scopeValid = (!d.tenant || validPauseName(*d.tenant)) && (!d.operation || validPauseName(*d.operation));
    if (!d.events->truncated && scopeValid) {
        const std::int64_t windowUs
            = std::min<std::int64_t>(31LL * 24 * 3600 * 1000000, std::int64_t(d.historyMinutes) * 60'000'000);
        const std::int64_t fromUs = *takenUs - windowUs;
        for (const auto& [id, us] : entryUs) {
            if (us < fromUs || us > *takenUs || cited.count(id))
                continue;
            const auto& e = *tail[id];
            const auto tenant = scopeOf(e, "tenant", 0), operation = scopeOf(e, "operation", 1);
            if ((d.tenant && tenant != *d.tenant && tenant != "*")
                || (d.operation && operation != *d.operation && operation != "*"))
                continue;
            c.push_back("audit entry " + std::to_string(id) + " (" + displaySafe(e.action, 64) + " by "
                + displaySafe(e.dbRole + " (" + e.osUser + ")", 200) + " at " + displaySafe(e.at, 64)
                + ") is within the events' window and scope but no event shows it");
        }
    }
    return out;
}

} // namespace idem
