#include "models/sessionrequest.h"

#include <memory>
#include <utility>

#include "models/consolesession.h"

namespace idem::console {

SessionRequest::SessionRequest(ConsoleSession* session, Kind kind, QObject* parent)
    : QObject(parent)
    , m_session(session)
    , m_kind(kind)
{
}

SessionRequest::~SessionRequest() { drop(); }

ConsoleSession* SessionRequest::session() const { return m_session; }

void SessionRequest::drop()
{
    if (m_pending && m_session && m_kind == Kind::Read)
        m_session->cancel(m_pending);
    m_pending = 0;
    ++m_last; // an answer of the one dropped, already queued, is not this one's
}

void SessionRequest::run(DatabaseJob job, int boundMs)
{
    drop();
    if (!m_session)
        return;
    const quint64 mine = ++m_last;
    m_pending = m_session->submit(
        std::move(job), this,
        [this, mine](const QVariant& answer) {
            if (mine != m_last)
                return;
            m_pending = 0;
            Q_EMIT answered(answer);
        },
        [this, mine](const Failure& failure) {
            if (mine != m_last)
                return;
            m_pending = 0;
            Q_EMIT failed(failure);
        });
    if (m_pending && boundMs > 0)
        m_session->bound(m_pending, ConsoleSession::boundFor(boundMs));
}

} // namespace idem::console
