#pragma once

#include <QDateTime>
#include <QObject>
#include <QStringList>

#include <chrono>

#include "models/patroniparse.h"

class QNetworkAccessManager;
class QNetworkReply;
class QTimer;

namespace idem::console {

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

} // namespace idem::console
