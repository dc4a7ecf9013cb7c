#include "models/signingkeycheck.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QPromise>
#include <QThreadPool>

#include <memory>

#include "operations/signing.h"

namespace idem::console {

SigningKeyCheck::SigningKeyCheck(QObject* parent)
    : QObject(parent)
{
}

// A check still running on the pool finishes into a promise nobody watches: nothing waits for it.
SigningKeyCheck::~SigningKeyCheck() = default;

SigningKeyState SigningKeyCheck::inspectNow(const QString& path)
{
    SigningKeyState s;
    s.path = path;
    s.exists = QFileInfo::exists(path);
    if (!s.exists)
        return s;
    try {
        const auto key = idem::SigningKey::load(path.toStdString());
        s.fingerprint = QString::fromStdString(idem::publicKeyFingerprint(key.publicPem()));
    } catch (const std::exception& e) {
        s.error = QString::fromStdString(e.what());
    }
    return s;
}

SigningKeyState SigningKeyCheck::createNow(const QString& path)
{
    SigningKeyState s;
    s.path = path;
    try {
        const auto key = idem::SigningKey::generate();
        key.save(path.toStdString(), false);
        s.exists = true;
        s.created = true;
        s.fingerprint = QString::fromStdString(idem::publicKeyFingerprint(key.publicPem()));
    } catch (const std::exception& e) {
        s.exists = QFileInfo::exists(path);
        s.error = QString::fromStdString(e.what());
    }
    return s;
}

quint64 SigningKeyCheck::inspect(const QString& path) { return run(path, false); }

quint64 SigningKeyCheck::create(const QString& path) { return run(path, true); }

quint64 SigningKeyCheck::run(const QString& path, bool create)
{
    const quint64 id = ++m_latest;
    m_pending = id;
    auto promise = std::make_shared<QPromise<SigningKeyState>>();
    auto* watcher = new QFutureWatcher<SigningKeyState>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, id] {
        watcher->deleteLater();
        if (id != m_latest)
            return; // a newer request answers instead
        m_pending = 0;
        const auto future = watcher->future();
        if (future.resultCount() > 0)
            Q_EMIT answered(id, future.result());
    });
    watcher->setFuture(promise->future());
    QThreadPool::globalInstance()->start([promise, path, create] {
        promise->start();
        promise->addResult(create ? createNow(path) : inspectNow(path));
        promise->finish();
    });
    return id;
}

} // namespace idem::console
