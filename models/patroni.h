#pragma once

#include <QAbstractTableModel>
#include <QDateTime>
#include <QList>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QUrl>

#include <chrono>

class QNetworkAccessManager;
class QNetworkReply;
class QTimer;

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

// The Patroni endpoint of a connection rides on its session as a property, set by whoever
// connects it (the connection dialog from its field or profile, --patroni, the Fleet window from
// the profile) and read by the Connection page when the session connects. Kept out of
// ConnectionSettings, whose header every console source includes.
QString patroniEndpointOf(const QObject* session);
void setPatroniEndpointOf(QObject* session, const QString& endpoint);

// Reads a Patroni cluster through its REST API, off the UI thread's back (QNetworkAccessManager
// is asynchronous): one GET at a time, each bounded by a timeout and patroniMaxBody, the next one
// armed when the last ended. With several URLs it asks the one that answered last first, and the
// others in turn when it does not: the cluster is unreachable only when none answers.
class PatroniWatcher : public QObject {
    Q_OBJECT
public:
    explicit PatroniWatcher(QObject* parent = nullptr);
    ~PatroniWatcher() override;

    // Empty text: stops, forgets the cluster. Starts a read at once otherwise.
    void setEndpoint(const QString& text);
    QString endpoint() const { return m_endpoint; }
    bool configured() const { return !m_endpoint.trimmed().isEmpty(); }
    void setInterval(std::chrono::milliseconds interval);
    void setTimeout(std::chrono::milliseconds timeout);
    void stop();

    // The last cluster read (kept while unreachable, as the last known picture).
    const PatroniCluster& cluster() const { return m_cluster; }
    bool hasCluster() const { return m_readAt.isValid(); }
    QDateTime readAt() const { return m_readAt; } // this console's clock
    QUrl answeredBy() const { return m_answeredBy; }
    // Empty while the last read worked; else why it did not, in words.
    QString error() const { return m_error; }
    int reads() const { return m_reads; }

Q_SIGNALS:
    void changed();

private:
    void poll();
    void ask(int index);
    void finished(QNetworkReply* reply, int index);
    void fail(const QString& why);

    QNetworkAccessManager* m_network;
    QTimer* m_timer;
    QString m_endpoint;
    QList<QUrl> m_urls;
    int m_preferred = 0;
    int m_tried = 0;
    QStringList m_failures;
    QNetworkReply* m_reply = nullptr;
    std::chrono::milliseconds m_interval { 2000 };
    std::chrono::milliseconds m_timeout { 3000 };
    PatroniCluster m_cluster;
    QDateTime m_readAt;
    QUrl m_answeredBy;
    QString m_error;
    int m_reads = 0;
};

// The members as a table: name, role, state, host, lag, timeline, and which the console is on.
class PatroniModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Member, Role, State, Host, Lag, Timeline, Console, COLUMN_COUNT };
    enum Roles { LeaderRole = Qt::UserRole + 1 };

    explicit PatroniModel(QObject* parent = nullptr);

    // The cluster, and the server addresses (inet_server_addr():port) of the console's
    // connections: admin first, then the pages' (when it differs).
    void setCluster(const PatroniCluster& cluster, const QString& adminAddress, const QString& pagesAddress);
    void clear();
    // The language changed: headers and cells are said again.
    void retranslate();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    static QString roleText(const QString& role);
    static QString lagText(const PatroniMember& member);

private:
    QString consoleText(const PatroniMember& member) const;

    PatroniCluster m_cluster;
    QString m_admin;
    QString m_pages;
};

} // namespace idem::console
