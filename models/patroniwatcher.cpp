#include "models/patroniwatcher.h"

#include <QCoreApplication>
#include <QLocale>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

#include <algorithm>
#include <memory>

namespace idem::console {

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
                why = patroniText(reply->errorString());
            else if (status != 200)
                why = QCoreApplication::translate("idem::console::Patroni", "answered HTTP %1 %2")
                          .arg(status)
                          .arg(patroniText(reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString()));
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

} // namespace idem::console
