#pragma once

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QUrl>

namespace idem::console {

// One member of a Patroni cluster as GET /cluster (Patroni 3.0) lists it.
// Every text field is escaped as it is parsed (models/visibletext): what Patroni sends is shown, compared
// and quoted in error sentences in that form.
struct PatroniMember {
    QString name;
    QString role; // leader, sync_standby, replica, standby_leader (as Patroni says it)
    QString state; // running, streaming, starting, stopped, ...
    QString host;
    int port = 0; // 0: not given
    qint64 lagBytes = -1; // -1: not given (the leader) or "unknown"
    bool lagUnknown = false; // Patroni said "unknown" (the member reported no WAL position)
    int timeline = 0; // 0: not given
    bool pendingRestart = false;

    bool isLeader() const;
    // "127.0.0.1:5433", what inet_server_addr():inet_server_port() names on that member.
    QString address() const;
};

struct PatroniCluster {
    QList<PatroniMember> members; // sorted by name, as Patroni sends them
    bool paused = false; // maintenance mode: Patroni fails nothing over
    QString scheduledSwitchover; // when one is scheduled (ISO time), else empty
    const PatroniMember* leader() const;
};

// What a body of GET /cluster says, or why it says nothing usable (error non-empty). Bounded and
// defensive: anything that is not Patroni's shape (not JSON, no members array, members that are
// not objects, absurd numbers) is an error in words, never a crash; at most maxMembers members.
struct PatroniParse {
    PatroniCluster cluster;
    QString error;
};
PatroniParse parsePatroniCluster(const QByteArray& body);

// What the server itself says (its own reading of pg_is_in_recovery, its timeline and
// pg_stat_replication), held against what Patroni says of the member at the server's address.
struct PatroniServerFacts {
    QString address; // inet_server_addr():port
    bool inRecovery = false;
    int timeline = 0; // 0: not known
    bool standbysKnown = false; // a primary whose role may read pg_stat_replication
    QMap<QString, QString> standbys; // application_name (escaped) -> sync_state
};

// Where Patroni contradicts the server, one sentence each (issue 40 item 3: a lying or stale
// endpoint said "synchronous standby on timeline 7 under another leader" of a primary on
// timeline 1 with no standbys, and nothing flagged it). Empty when they agree, or when no member
// has the server's address (said separately).
QStringList patroniDisagreements(const PatroniCluster& cluster, const PatroniServerFacts& server);

// The answer's largest accepted size: a three-member answer is about 1 kB.
constexpr qint64 patroniMaxBody = 1024 * 1024;
constexpr int patroniMaxMembers = 64;

// Checks a configured endpoint ("http://host:8008", a comma-separated list of them for each
// member's REST API, "/cluster" optional): the URLs to ask, or an error in words (not http(s), no
// host, a password in it: a password never goes into a profile).
struct PatroniEndpoints {
    QList<QUrl> urls;
    QString error;
};
PatroniEndpoints parsePatroniEndpoints(const QString& text);

// Text from the network as the console shows it: escaped (models/visibletext) and cut to a sane
// length.
QString patroniText(const QString& raw);
// "leader (primary)", "synchronous standby", … for people; another role by its name.
QString patroniRoleText(const QString& role);

} // namespace idem::console
