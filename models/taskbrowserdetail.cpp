#include "models/taskbrowserdetail.h"

#include <QCoreApplication>
#include <QFile>

#include <cstdio>
#include <fstream>

#include "models/consolesession.h"
#include "models/redrivewatch.h"

namespace idem::console {

TaskDetailLoader::TaskDetailLoader(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_session(session)
    , m_redrive(new KeyRedriveWatch(session, this))
{
    qRegisterMetaType<TaskDetailAnswer>();
    m_progressTimer.setInterval(100);
    connect(&m_progressTimer, &QTimer::timeout, this, [this] {
        if (m_save)
            Q_EMIT saveProgress(m_save->done.load(), m_save->total.load());
    });
}

TaskDetailLoader::~TaskDetailLoader()
{
    if (m_save)
        m_save->stop = true;
    if (m_session && m_loadJob)
        m_session->cancel(m_loadJob);
}

void TaskDetailLoader::clear()
{
    if (m_session && m_loadJob)
        m_session->cancel(m_loadJob);
    m_loadJob = 0;
    m_current.reset();
    m_redrive->setKey({});
}

void TaskDetailLoader::load(const QString& key)
{
    clear();
    if (!m_session)
        return;
    const auto k = key.toStdString();
    const int preview = m_previewChars;
    const auto options = m_readOptions; // each of the two reads under its statement timeout
    const quint64 id = m_session->submit(
        [k, preview, key, options](pqxx::connection& c, const idem::SchemaName& schema) {
            TaskDetailAnswer a;
            a.key = key;
            a.detail = idem::readTask(c, schema, k, preview, options);
            try {
                idem::AuditFilter f;
                f.key = k;
                f.limit = 200;
                f.statementTimeoutMs = options.statementTimeoutMs;
                a.audit = idem::listAudit(c, schema, f);
            } catch (const std::exception& e) {
                a.auditError = QString::fromStdString(e.what());
            }
            return QVariant::fromValue(a);
        },
        this,
        [this](const QVariant& v) {
            m_loadJob = 0;
            m_current = v.value<TaskDetailAnswer>();
            Q_EMIT loaded(*m_current);
        },
        [this](const Failure& f) {
            m_loadJob = 0;
            Q_EMIT failed(f.text());
        });
    m_loadJob = id;
    if (id)
        m_session->bound(id, ConsoleSession::boundFor(2 * options.statementTimeoutMs));
    m_redrive->setKey(key);
}

void TaskDetailLoader::saveResult(const QString& key, const QString& path)
{
    if (!m_session || m_saveJob)
        return;
    m_save = std::make_shared<SaveState>();
    auto state = m_save;
    const auto k = key.toStdString();
    const auto target = path.toStdString();
    m_saveJob = m_session->submit(
        [state, k, target](pqxx::connection& c, const idem::SchemaName& schema) {
            const std::string part = target + ".part";
            bool complete = false;
            try {
                std::ofstream out(part, std::ios::binary | std::ios::trunc);
                if (!out)
                    throw std::runtime_error("cannot write " + part);
                complete = idem::streamResult(c, schema, k, out, [state](std::int64_t done, std::int64_t total) {
                    state->done = done;
                    state->total = total;
                    return !state->stop.load();
                });
                out.close();
                if (!out)
                    throw std::runtime_error("writing " + part + " failed");
            } catch (...) {
                std::remove(part.c_str()); // nothing half-written stays behind
                throw;
            }
            if (!complete) {
                std::remove(part.c_str());
                return QVariant(false);
            }
            if (std::rename(part.c_str(), target.c_str()) != 0)
                throw std::runtime_error("cannot rename " + part + " to " + target);
            return QVariant(true);
        },
        this,
        [this, path](const QVariant& v) {
            m_saveJob = 0;
            m_progressTimer.stop();
            const qint64 total = m_save ? m_save->total.load() : 0;
            Q_EMIT saveProgress(total, total);
            Q_EMIT saveFinished(v.toBool(),
                v.toBool() ? QCoreApplication::translate("idem::console::TaskDetailLoader", "Saved %1 bytes to %2")
                                 .arg(total)
                                 .arg(path)
                           : QCoreApplication::translate(
                               "idem::console::TaskDetailLoader", "Save cancelled; nothing written"));
        },
        [this](const Failure& f) {
            m_saveJob = 0;
            m_progressTimer.stop();
            Q_EMIT saveFinished(
                false, QCoreApplication::translate("idem::console::TaskDetailLoader", "Save failed: %1").arg(f.text()));
        });
    if (m_saveJob)
        m_progressTimer.start();
}

void TaskDetailLoader::cancelSave()
{
    if (m_save)
        m_save->stop = true;
}

} // namespace idem::console
