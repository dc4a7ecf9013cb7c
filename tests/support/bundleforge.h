#pragma once

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QString>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "operations/actions.h"
#include "operations/signing.h"
#include "operations/snapshotbundle.h"
#include "operations/tasklist.h"

namespace idem::test {

inline QByteArray readBundleFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline bool writeBundleFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

// What someone holding a trusted key does after editing a bundle by hand: MANIFEST written again
// over the files as they are now, signed with `key`, its public key beside it. verifyBundle's
// file checks then pass; only the content can still give the forgery away.
inline bool resignBundle(const QString& dir, const idem::SigningKey& key)
{
    if (!writeBundleFile(dir + QStringLiteral("/") + QString::fromLatin1(idem::publicKeyFile),
            QByteArray::fromStdString(key.publicPem())))
        return false;
    std::map<std::string, std::string> files; // sorted by path, byte order
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        const std::string rel = QDir(dir).relativeFilePath(path).toStdString();
        if (rel == idem::manifestFile || rel == idem::signatureFile)
            continue;
        files[rel] = idem::sha256Hex(readBundleFile(path).toStdString());
    }
    std::string manifest;
    for (const auto& [path, hash] : files)
        manifest += hash + "  " + path + "\n";
    return writeBundleFile(dir + QStringLiteral("/MANIFEST"), QByteArray::fromStdString(manifest))
        && writeBundleFile(dir + QStringLiteral("/MANIFEST.sig"),
            QByteArray::fromStdString(idem::base64Encode(key.sign(manifest)) + "\n"));
}

// snapshot.json of a bundle, edited by `edit`, written back (not re-signed).
template <typename F> bool editSnapshotJson(const QString& dir, F&& edit)
{
    const QString path = dir + QStringLiteral("/snapshot.json");
    auto j = nlohmann::json::parse(readBundleFile(path).toStdString(), nullptr, false);
    if (j.is_discarded())
        return false;
    edit(j);
    return writeBundleFile(path, QByteArray::fromStdString(j.dump(2)));
}

// The forgeries of issue 40, on a bundle whose events hold an audited entry: the first event that
// cites an audit entry gets another actor and text; a `fail` event with an escape sequence and an
// RTL override is appended a minute after taken_at. Returns the audit id of the event changed (0:
// none found).
inline std::int64_t forgeEvents(nlohmann::json& j, const std::string& actor, const std::string& text)
{
    std::int64_t changed = 0;
    auto& rows = j["events"]["rows"];
    for (auto& e : rows)
        if (e["audit_id"].is_number_integer() && e["action"] != "deploy" && e["action"] != "failover") {
            e["actor"] = actor;
            e["text"] = text;
            changed = e["audit_id"].get<std::int64_t>();
            break;
        }
    // taken_at + 1 minute, in the same spelling.
    std::string later = j["taken_at"].get<std::string>();
    const auto us = idem::parseIsoMicros(later);
    if (us)
        later = idem::formatMicros(*us + 60'000'000);
    rows.push_back({ { "audit_id", nullptr }, { "at", later }, { "action", "fail" }, { "tenant", "ta" },
        { "operation", "charge" }, { "actor", "op (mallory)" },
        { "text", "all clear \x1b[2J\xe2\x80\xae" "evil" } });
    j["events"]["limit"] = std::max<std::size_t>(j["events"]["limit"].get<std::size_t>(), rows.size());
    return changed;
}

} // namespace idem::test
