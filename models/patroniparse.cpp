#include "models/patroniparse.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "models/visibletext.h"

#include <cmath>
#include <utility>

namespace idem::console {

QString patroniText(const QString& raw)
{
    // Text from the network reaches the table, the page's lines and the error sentences escaped
    // as text from the database is (a U+202E in a member's name would reverse the rest of the
    // line, the console's own words included), and cut to a sane length.
    constexpr int maxText = 200;
    const QString s = visibleText(raw);
    return s.size() > maxText ? s.left(maxText) + QStringLiteral("…") : s;
}

namespace {

    // A whole number in [min, max] as JSON writes one, or nothing.
    bool wholeNumber(const QJsonValue& v, double min, double max, qint64* out)
    {
        if (!v.isDouble())
            return false;
        const double d = v.toDouble();
        if (!std::isfinite(d) || d != std::floor(d) || d < min || d > max)
            return false;
        *out = static_cast<qint64>(d);
        return true;
    }

    // What the user typed, for an error line: any user and password left out.
    QString shown(const QString& item)
    {
        const int at = item.lastIndexOf(QLatin1Char('@'));
        if (at < 0)
            return patroniText(item);
        const int scheme = item.indexOf(QLatin1String("://"));
        return patroniText(
            (scheme >= 0 && scheme < at ? item.left(scheme + 3) : QString()) + QStringLiteral("…") + item.mid(at));
    }

    QString memberError(int index, const QString& name, const QString& what)
    {
        return name.isEmpty()
            ? QCoreApplication::translate("idem::console::Patroni", "member %1: %2").arg(index + 1).arg(what)
            : QCoreApplication::translate("idem::console::Patroni", "member %1 (%2): %3")
                  .arg(index + 1)
                  .arg(patroniText(name), what);
    }

} // namespace

bool PatroniMember::isLeader() const
{
    return role == QLatin1String("leader") || role == QLatin1String("standby_leader");
}

QString PatroniMember::address() const { return port > 0 ? host + QLatin1Char(':') + QString::number(port) : host; }

const PatroniMember* PatroniCluster::leader() const
{
    for (const auto& m : members)
        if (m.isLeader())
            return &m;
    return nullptr;
}

namespace {

    PatroniParse parseCluster(const QByteArray& body)
    {
        PatroniParse out;
        if (body.size() > patroniMaxBody) {
            out.error = QCoreApplication::translate(
                "idem::console::Patroni", "the answer is larger than %1 kB: not Patroni's cluster list")
                            .arg(patroniMaxBody / 1024);
            return out;
        }
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(body, &error);
        if (error.error != QJsonParseError::NoError) {
            out.error = body.trimmed().isEmpty()
                ? QCoreApplication::translate("idem::console::Patroni", "the answer is empty, not JSON")
                : QCoreApplication::translate("idem::console::Patroni", "the answer is not JSON (%1 at byte %2)")
                      .arg(error.errorString())
                      .arg(error.offset);
            return out;
        }
        if (!doc.isObject()) {
            out.error = QCoreApplication::translate("idem::console::Patroni",
                "the answer is JSON but not an object with \"members\": not Patroni's cluster list");
            return out;
        }
        const QJsonObject root = doc.object();
        const QJsonValue membersValue = root.value(QLatin1String("members"));
        if (!membersValue.isArray()) {
            out.error = QCoreApplication::translate(
                "idem::console::Patroni", "the answer has no \"members\" list: not Patroni's GET /cluster");
            return out;
        }
        const QJsonArray members = membersValue.toArray();
        if (members.size() > patroniMaxMembers) {
            out.error = QCoreApplication::translate(
                "idem::console::Patroni", "the answer lists %1 members, more than %2: not taken")
                            .arg(members.size())
                            .arg(patroniMaxMembers);
            return out;
        }
        for (int i = 0; i < members.size(); ++i) {
            if (!members.at(i).isObject()) {
                out.error = memberError(i, {}, QCoreApplication::translate("idem::console::Patroni", "not an object"));
                return out;
            }
            const QJsonObject o = members.at(i).toObject();
            PatroniMember m;
            const QJsonValue name = o.value(QLatin1String("name"));
            if (!name.isString() || name.toString().trimmed().isEmpty()) {
                out.error = memberError(i, {}, QCoreApplication::translate("idem::console::Patroni", "no name"));
                return out;
            }
            m.name = patroniText(name.toString());
            const auto text = [&](const char* key, QString* into) {
                const QJsonValue v = o.value(QLatin1String(key));
                if (v.isUndefined() || v.isNull())
                    return true;
                if (!v.isString())
                    return false;
                *into = patroniText(v.toString());
                return true;
            };
            for (const auto& [key, into] :
                { std::pair { "role", &m.role }, std::pair { "state", &m.state }, std::pair { "host", &m.host } }) {
                if (!text(key, into)) {
                    out.error = memberError(i, m.name,
                        QCoreApplication::translate("idem::console::Patroni", "\"%1\" is not text")
                            .arg(QLatin1String(key)));
                    return out;
                }
            }
            qint64 n = 0;
            const QJsonValue port = o.value(QLatin1String("port"));
            if (!port.isUndefined()) {
                if (!wholeNumber(port, 1, 65535, &n)) {
                    out.error = memberError(i, m.name,
                        QCoreApplication::translate("idem::console::Patroni", "\"port\" is not a port number"));
                    return out;
                }
                m.port = static_cast<int>(n);
            }
            const QJsonValue timeline = o.value(QLatin1String("timeline"));
            if (!timeline.isUndefined() && !timeline.isNull()) {
                if (!wholeNumber(timeline, 1, 2147483647.0, &n)) {
                    out.error = memberError(i, m.name,
                        QCoreApplication::translate("idem::console::Patroni", "\"timeline\" is not a timeline number"));
                    return out;
                }
                m.timeline = static_cast<int>(n);
            }
            const QJsonValue lag = o.value(QLatin1String("lag"));
            if (lag.isString() && lag.toString() == QLatin1String("unknown")) {
                m.lagUnknown = true;
            } else if (!lag.isUndefined() && !lag.isNull()) {
                // Bytes of WAL; 2^53 is past any cluster's WAL and still exact in a double.
                if (!wholeNumber(lag, 0, 9007199254740992.0, &n)) {
                    out.error = memberError(i, m.name,
                        QCoreApplication::translate(
                            "idem::console::Patroni", "\"lag\" is neither a byte count nor \"unknown\""));
                    return out;
                }
                m.lagBytes = n;
            }
            m.pendingRestart = o.value(QLatin1String("pending_restart")).toBool(false);
            out.cluster.members.append(m);
        }
        out.cluster.paused = root.value(QLatin1String("pause")).toBool(false);
        const QJsonValue scheduled = root.value(QLatin1String("scheduled_switchover"));
        if (scheduled.isObject())
            out.cluster.scheduledSwitchover = patroniText(scheduled.toObject().value(QLatin1String("at")).toString());
        return out;
    }

} // namespace

PatroniParse parsePatroniCluster(const QByteArray& body)
{
    PatroniParse out = parseCluster(body);
    if (!out.error.isEmpty())
        out.cluster = {}; // all or nothing: no half a cluster in the table
    return out;
}

PatroniEndpoints parsePatroniEndpoints(const QString& text)
{
    PatroniEndpoints out;
    const QStringList parts = text.split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (const QString& part : parts) {
        const QString item = part.trimmed();
        if (item.isEmpty())
            continue;
        QUrl url(item, QUrl::StrictMode);
        if (!url.isValid() || url.scheme().isEmpty()) {
            out.error = QCoreApplication::translate("idem::console::Patroni", "%1 is not a URL (http://host:8008)")
                            .arg(shown(item));
            return out;
        }
        if (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")) {
            out.error = QCoreApplication::translate(
                "idem::console::Patroni", "%1: Patroni's REST API is http or https, not %2")
                            .arg(shown(item), url.scheme());
            return out;
        }
        if (url.host().isEmpty()) {
            out.error = QCoreApplication::translate("idem::console::Patroni", "%1 names no host").arg(shown(item));
            return out;
        }
        if (!url.password().isEmpty()) {
            out.error = QCoreApplication::translate("idem::console::Patroni",
                "a Patroni URL must not carry a password (GET /cluster needs none, and profiles keep none)");
            return out;
        }
        QString path = url.path();
        while (path.endsWith(QLatin1Char('/')))
            path.chop(1);
        if (!path.endsWith(QLatin1String("/cluster")))
            path += QStringLiteral("/cluster");
        url.setPath(path);
        out.urls.append(url);
    }
    return out;
}

QStringList patroniDisagreements(const PatroniCluster& cluster, const PatroniServerFacts& server)
{
    QStringList out;
    const PatroniMember* self = nullptr;
    for (const auto& m : cluster.members)
        if (!server.address.isEmpty() && m.address() == server.address)
            self = &m;
    if (!self)
        return out; // the page says that the server is none of the members
    const bool patroniPrimary = self->role == QLatin1String("leader");
    const bool patroniStandby = !self->role.isEmpty() && !self->isLeader();
    if (patroniPrimary && server.inRecovery)
        out << QCoreApplication::translate(
            "idem::console::Patroni", "Patroni says %1 is the leader; the server says it is a standby (in recovery)")
                   .arg(self->name);
    else if (self->role == QLatin1String("standby_leader") && !server.inRecovery)
        out << QCoreApplication::translate("idem::console::Patroni",
            "Patroni says %1 is a standby cluster's leader; the server says it is a primary (not in recovery)")
                   .arg(self->name);
    else if (patroniStandby && !server.inRecovery)
        out << QCoreApplication::translate(
            "idem::console::Patroni", "Patroni says %1 is a %2; the server says it is a primary (not in recovery)")
                   .arg(self->name, patroniRoleText(self->role));
    const PatroniMember* leader = cluster.leader();
    if (leader && leader != self && !server.inRecovery)
        out << QCoreApplication::translate("idem::console::Patroni",
            "Patroni's leader is %1, not this server, which is a primary too: two primaries, or Patroni's view is "
            "not the cluster's")
                   .arg(leader->name);
    if (self->timeline > 0 && server.timeline > 0 && self->timeline != server.timeline && !server.inRecovery)
        out << QCoreApplication::translate(
            "idem::console::Patroni", "Patroni says timeline %1; the server is on timeline %2")
                   .arg(self->timeline)
                   .arg(server.timeline);
    // The standbys Patroni has streaming from this leader, against the server's pg_stat_replication.
    if (patroniPrimary && !server.inRecovery && server.standbysKnown) {
        for (const auto& m : cluster.members) {
            if (&m == self || m.isLeader())
                continue;
            const bool streaming = m.state == QLatin1String("running") || m.state == QLatin1String("streaming");
            const auto found = server.standbys.constFind(m.name);
            if (streaming && found == server.standbys.constEnd())
                out << QCoreApplication::translate("idem::console::Patroni",
                    "Patroni lists %1 as a %2 streaming from this server; the server has no such standby")
                           .arg(m.name, patroniRoleText(m.role));
            else if (found != server.standbys.constEnd() && m.role == QLatin1String("sync_standby")
                && found.value() != QLatin1String("sync") && found.value() != QLatin1String("quorum"))
                out << QCoreApplication::translate("idem::console::Patroni",
                    "Patroni says %1 is a synchronous standby; the server streams to it as %2")
                           .arg(m.name, visibleText(found.value()));
        }
    }
    return out;
}

QString patroniRoleText(const QString& role)
{
    if (role == QLatin1String("leader"))
        return QCoreApplication::translate("idem::console::PatroniModel", "leader (primary)");
    if (role == QLatin1String("sync_standby"))
        return QCoreApplication::translate("idem::console::PatroniModel", "synchronous standby");
    if (role == QLatin1String("replica"))
        return QCoreApplication::translate("idem::console::PatroniModel", "replica (asynchronous)");
    if (role == QLatin1String("standby_leader"))
        return QCoreApplication::translate("idem::console::PatroniModel", "standby leader");
    return role.isEmpty() ? QStringLiteral("–") : role;
}

} // namespace idem::console
