#include "models/patroni.h"

#include <QCoreApplication>
#include <QFont>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

#include "models/visibletext.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace idem::console {

namespace {

    // Text from the network reaches the table, the page's lines and the error sentences escaped
    // as text from the database is (a U+202E in a member's name would reverse the rest of the
    // line, the console's own words included), and cut to a sane length.
    constexpr int maxText = 200;
    QString bounded(const QString& raw)
    {
        const QString s = visibleText(raw);
        return s.size() > maxText ? s.left(maxText) + QStringLiteral("…") : s;
    }

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
            return bounded(item);
        const int scheme = item.indexOf(QLatin1String("://"));
        return bounded(
            (scheme >= 0 && scheme < at ? item.left(scheme + 3) : QString()) + QStringLiteral("…") + item.mid(at));
    }

    QString memberError(int index, const QString& name, const QString& what)
    {
        return name.isEmpty()
            ? QCoreApplication::translate("idem::console::Patroni", "member %1: %2").arg(index + 1).arg(what)
            : QCoreApplication::translate("idem::console::Patroni", "member %1 (%2): %3")
                  .arg(index + 1)
                  .arg(bounded(name), what);
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
            m.name = bounded(name.toString());
            const auto text = [&](const char* key, QString* into) {
                const QJsonValue v = o.value(QLatin1String(key));
                if (v.isUndefined() || v.isNull())
                    return true;
                if (!v.isString())
                    return false;
                *into = bounded(v.toString());
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
            out.cluster.scheduledSwitchover = bounded(scheduled.toObject().value(QLatin1String("at")).toString());
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

namespace {
    constexpr const char* endpointProperty = "idemPatroniEndpoint";
}

QString patroniEndpointOf(const QObject* session)
{
    return session ? session->property(endpointProperty).toString() : QString();
}

void setPatroniEndpointOf(QObject* session, const QString& endpoint)
{
    if (session)
        session->setProperty(endpointProperty, endpoint.trimmed());
}

PatroniWatcher::PatroniWatcher(QObject* parent)
    : QObject(parent)
    , m_network(new QNetworkAccessManager(this))
    , m_timer(new QTimer(this))
{
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &PatroniWatcher::poll);
}

PatroniWatcher::~PatroniWatcher()
{
    if (m_reply) {
        m_reply->disconnect(this);
        m_reply->abort();
    }
}

void PatroniWatcher::setEndpoint(const QString& text)
{
    if (text.trimmed() == m_endpoint.trimmed() && (m_reply || m_timer->isActive()))
        return;
    stop();
    m_endpoint = text.trimmed();
    m_cluster = {};
    m_readAt = {};
    m_answeredBy = {};
    m_error.clear();
    m_preferred = 0;
    if (m_endpoint.isEmpty()) {
        m_urls.clear();
        Q_EMIT changed();
        return;
    }
    const PatroniEndpoints endpoints = parsePatroniEndpoints(m_endpoint);
    m_urls = endpoints.urls;
    if (!endpoints.error.isEmpty() || m_urls.isEmpty()) {
        m_urls.clear();
        m_error = endpoints.error.isEmpty() ? QCoreApplication::translate("idem::console::Patroni", "no URL given")
                                            : endpoints.error;
        Q_EMIT changed();
        return;
    }
    poll();
}

void PatroniWatcher::setInterval(std::chrono::milliseconds interval)
{
    m_interval = std::max(interval, std::chrono::milliseconds(500));
}

void PatroniWatcher::setTimeout(std::chrono::milliseconds timeout)
{
    m_timeout = std::max(timeout, std::chrono::milliseconds(100));
}

void PatroniWatcher::stop()
{
    m_timer->stop();
    if (m_reply) {
        QNetworkReply* reply = m_reply;
        m_reply = nullptr;
        reply->disconnect(this);
        reply->abort();
        reply->deleteLater();
    }
}

void PatroniWatcher::poll()
{
    if (m_urls.isEmpty() || m_reply)
        return;
    m_tried = 0;
    m_failures.clear();
    ask(m_preferred);
}

void PatroniWatcher::ask(int index)
{
    ++m_tried;
    QNetworkRequest request(m_urls.at(index));
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    request.setRawHeader("Accept", "application/json");
    QNetworkReply* reply = m_network->get(request);
    m_reply = reply;
    // Why the reply was cut short from this side: set before abort(), read in finished().
    auto cut = std::make_shared<QString>();
    connect(reply, &QNetworkReply::downloadProgress, this, [reply, cut](qint64 received, qint64 total) {
        if (cut->isEmpty() && (received > patroniMaxBody || total > patroniMaxBody)) {
            *cut = QCoreApplication::translate(
                "idem::console::Patroni", "the answer is larger than %1 kB: not Patroni's cluster list")
                       .arg(patroniMaxBody / 1024);
            reply->abort();
        }
    });
    // One bound for the whole request (a server trickling bytes never resets it).
    QTimer::singleShot(m_timeout, reply, [reply, cut, ms = m_timeout.count()] {
        if (cut->isEmpty() && reply->isRunning()) {
            *cut = QCoreApplication::translate("idem::console::Patroni", "no answer within %1 s")
                       .arg(QLocale().toString(ms / 1000.0, 'g', 3));
            reply->abort();
        }
    });
    connect(reply, &QNetworkReply::finished, this, [this, reply, cut, index] {
        if (reply != m_reply)
            return;
        m_reply = nullptr;
        reply->deleteLater();
        const QString url = m_urls.value(index).toDisplayString();
        QString why = *cut;
        QByteArray body;
        if (why.isEmpty()) {
            const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
            if (reply->error() != QNetworkReply::NoError && status == 0)
                why = bounded(reply->errorString());
            else if (status != 200)
                why = QCoreApplication::translate("idem::console::Patroni", "answered HTTP %1 %2")
                          .arg(status)
                          .arg(bounded(reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString()));
            else
                body = reply->read(patroniMaxBody + 1);
        }
        if (why.isEmpty()) {
            const PatroniParse parsed = parsePatroniCluster(body);
            if (parsed.error.isEmpty()) {
                m_preferred = index;
                m_cluster = parsed.cluster;
                m_readAt = QDateTime::currentDateTime();
                m_answeredBy = m_urls.value(index);
                m_error.clear();
                ++m_reads;
                Q_EMIT changed();
                m_timer->start(m_interval);
                return;
            }
            why = parsed.error;
        }
        m_failures << QCoreApplication::translate("idem::console::Patroni", "%1: %2").arg(url, why);
        if (m_tried < m_urls.size()) {
            ask((index + 1) % m_urls.size());
            return;
        }
        fail(m_failures.join(QStringLiteral("; ")));
    });
}

void PatroniWatcher::fail(const QString& why)
{
    m_error = why;
    ++m_reads;
    Q_EMIT changed();
    m_timer->start(m_interval);
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
                   .arg(self->name, PatroniModel::roleText(self->role));
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
                           .arg(m.name, PatroniModel::roleText(m.role));
            else if (found != server.standbys.constEnd() && m.role == QLatin1String("sync_standby")
                && found.value() != QLatin1String("sync") && found.value() != QLatin1String("quorum"))
                out << QCoreApplication::translate("idem::console::Patroni",
                    "Patroni says %1 is a synchronous standby; the server streams to it as %2")
                           .arg(m.name, visibleText(found.value()));
        }
    }
    return out;
}

PatroniModel::PatroniModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void PatroniModel::setCluster(const PatroniCluster& cluster, const QString& adminAddress, const QString& pagesAddress)
{
    bool sameRows = cluster.members.size() == m_cluster.members.size();
    for (int i = 0; sameRows && i < cluster.members.size(); ++i)
        sameRows = cluster.members.at(i).name == m_cluster.members.at(i).name;
    if (!sameRows) {
        beginResetModel();
        m_cluster = cluster;
        m_admin = adminAddress;
        m_pages = pagesAddress;
        endResetModel();
        return;
    }
    m_cluster = cluster;
    m_admin = adminAddress;
    m_pages = pagesAddress;
    if (!m_cluster.members.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, COLUMN_COUNT - 1));
}

void PatroniModel::clear()
{
    if (m_cluster.members.isEmpty())
        return;
    beginResetModel();
    m_cluster = {};
    endResetModel();
}

void PatroniModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, COLUMN_COUNT - 1);
    if (!m_cluster.members.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, COLUMN_COUNT - 1));
}

int PatroniModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_cluster.members.size());
}

int PatroniModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : COLUMN_COUNT; }

QString PatroniModel::roleText(const QString& role)
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

QString PatroniModel::lagText(const PatroniMember& m)
{
    if (m.isLeader())
        return QStringLiteral("–");
    if (m.lagUnknown)
        return QCoreApplication::translate("idem::console::PatroniModel", "unknown (no WAL position reported)");
    if (m.lagBytes < 0)
        return QStringLiteral("–");
    const QLocale locale;
    if (m.lagBytes < 1024 * 1024)
        return QCoreApplication::translate("idem::console::PatroniModel", "%1 bytes").arg(locale.toString(m.lagBytes));
    return QCoreApplication::translate("idem::console::PatroniModel", "%1 MB (%2 bytes)")
        .arg(locale.toString(static_cast<double>(m.lagBytes) / (1024.0 * 1024.0), 'f', 1), locale.toString(m.lagBytes));
}

QString PatroniModel::consoleText(const PatroniMember& m) const
{
    const QString address = m.address();
    const bool admin = !m_admin.isEmpty() && address == m_admin;
    const bool pages = !m_pages.isEmpty() && address == m_pages;
    if (admin && pages)
        return QCoreApplication::translate("idem::console::PatroniModel", "this console (actions and pages)");
    if (admin)
        return QCoreApplication::translate("idem::console::PatroniModel", "this console (actions)");
    if (pages)
        return QCoreApplication::translate("idem::console::PatroniModel", "this console (pages)");
    return {};
}

QVariant PatroniModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= m_cluster.members.size())
        return {};
    const PatroniMember& m = m_cluster.members.at(index.row());
    if (role == LeaderRole)
        return m.isLeader();
    if (role == Qt::FontRole && m.isLeader()) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    if (role == Qt::TextAlignmentRole && (index.column() == Lag || index.column() == Timeline))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case Member:
        return m.pendingRestart && role == Qt::DisplayRole
            ? QCoreApplication::translate("idem::console::PatroniModel", "%1 (restart pending)").arg(m.name)
            : m.name;
    case Role:
        return roleText(m.role);
    case State:
        return m.state.isEmpty() ? QStringLiteral("–") : m.state;
    case Host:
        return m.host.isEmpty() ? QStringLiteral("–") : m.address();
    case Lag:
        return lagText(m);
    case Timeline:
        return m.timeline > 0 ? QString::number(m.timeline) : QStringLiteral("–");
    case Console:
        return consoleText(m);
    default:
        return {};
    }
}

QVariant PatroniModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case Member:
        return QCoreApplication::translate("idem::console::PatroniModel", "Member");
    case Role:
        return QCoreApplication::translate("idem::console::PatroniModel", "Role");
    case State:
        return QCoreApplication::translate("idem::console::PatroniModel", "State");
    case Host:
        return QCoreApplication::translate("idem::console::PatroniModel", "Host");
    case Lag:
        return QCoreApplication::translate("idem::console::PatroniModel", "Lag");
    case Timeline:
        return QCoreApplication::translate("idem::console::PatroniModel", "Timeline");
    case Console:
        return QCoreApplication::translate("idem::console::PatroniModel", "Console on it");
    default:
        return {};
    }
}

} // namespace idem::console
