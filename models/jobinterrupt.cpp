#include "models/jobinterrupt.h"

#include <sys/socket.h>

#include <pqxx/connection_base>

namespace idem::console {

void JobInterrupt::attach(pqxx::connection_base* conn)
{
    std::unique_lock lock(m_mutex);
    // A cancel request in flight reads the connection it was sent for: it must end first.
    m_idle.wait(lock, [this] { return m_cancelling == 0; });
    m_conn = conn;
    m_socket = conn ? conn->sock() : -1;
}

void JobInterrupt::begin(quint64 requestId)
{
    std::lock_guard lock(m_mutex);
    m_running = requestId;
    m_since = std::chrono::steady_clock::now();
    m_cancel = Cancel::None;
    m_cancelError.clear();
    m_cut = false;
    m_cutRequest = 0;
}

bool JobInterrupt::end()
{
    std::lock_guard lock(m_mutex);
    m_running = 0;
    return m_cut;
}

quint64 JobInterrupt::cutRequest() const
{
    std::lock_guard lock(m_mutex);
    return m_cutRequest;
}

bool JobInterrupt::cancel(quint64 requestId)
{
    pqxx::connection_base* conn = nullptr;
    {
        std::lock_guard lock(m_mutex);
        if (requestId == 0 || m_running != requestId || !m_conn || m_cut)
            return false;
        conn = m_conn;
        ++m_cancelling;
        m_cancel = Cancel::Sending;
    }
    QString error;
    try {
        conn->cancel_query();
    } catch (const std::exception& e) {
        error = QString::fromUtf8(e.what()).simplified();
        if (error.isEmpty())
            error = QStringLiteral("?");
    }
    std::lock_guard lock(m_mutex);
    --m_cancelling;
    if (m_running == requestId) {
        m_cancel = error.isEmpty() ? Cancel::Sent : Cancel::Failed;
        m_cancelError = error;
    }
    m_idle.notify_all();
    return true;
}

bool JobInterrupt::cut(quint64 requestId)
{
    std::lock_guard lock(m_mutex);
    if (requestId == 0 || m_running != requestId || m_socket < 0)
        return false;
    if (!m_cut)
        ::shutdown(m_socket, SHUT_RDWR);
    m_cut = true;
    m_cutRequest = requestId;
    return true;
}

JobInterrupt::Progress JobInterrupt::progress(quint64 requestId) const
{
    std::lock_guard lock(m_mutex);
    Progress p;
    if (requestId == 0 || m_running != requestId)
        return p;
    p.running = true;
    p.runningFor = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - m_since);
    p.cancel = m_cancel;
    p.cancelError = m_cancelError;
    p.cut = m_cut;
    return p;
}

} // namespace idem::console
