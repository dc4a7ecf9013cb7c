#include "models/sessionpoll.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "models/consolesession.h"
#include "models/dashboardpolling.h"

namespace idem::console {

SessionPoll::SessionPoll(ConsoleSession* session, MakeJob makeJob, QObject* parent)
    : QObject(parent)
    , m_session(session)
    , m_makeJob(std::move(makeJob))
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &SessionPoll::refreshNow);
    connect(session, &ConsoleSession::stateChanged, this, &SessionPoll::onSessionState);
    connect(session, &ConsoleSession::serverInfoChanged, this, &SessionPoll::onSessionState);
}

SessionPoll::~SessionPoll()
{
    if (m_pending && m_session)
        m_session->cancel(m_pending);
}

void SessionPoll::start()
{
    m_started = true;
    onSessionState();
}

bool SessionPoll::readable() const { return m_session && m_session->canPoll(); }

void SessionPoll::onSessionState()
{
    if (!m_started)
        return;
    if (!readable()) {
        // Nothing is read while it stays so: one stop says it all.
        if (std::exchange(m_stopped, true))
            return;
        m_timer.stop();
        if (m_pending && m_session)
            m_session->cancel(m_pending);
        m_pending = 0;
        m_again = false;
        m_error.clear();
        Q_EMIT stopped();
        return;
    }
    m_stopped = false;
    if (!m_pending && !m_timer.isActive())
        refreshNow();
}

void SessionPoll::setInterval(int ms)
{
    m_intervalMs = std::max(minIntervalMs, ms);
    if (nextReadInMs() > 0)
        readIn(m_intervalMs);
}

void SessionPoll::rescope()
{
    ++m_scope;
    m_error.clear(); // the earlier scope's
    refreshNow();
}

void SessionPoll::refreshNow()
{
    if (!m_started || !readable())
        return;
    if (m_pending) {
        m_again = true;
        return;
    }
    m_timer.stop();
    auto job = m_makeJob();
    if (!job)
        return;
    auto id = std::make_shared<quint64>(0);
    const quint64 scope = m_scope;
    *id = m_session->submit(
        std::move(job), this,
        [this, id, scope](const QVariant& answer) {
            if (*id != m_pending)
                return;
            m_pending = 0;
            const bool again = std::exchange(m_again, false);
            if (scope == m_scope) {
                ++m_reads;
                m_error.clear();
                Q_EMIT answered(answer, again);
            }
            next(again || scope != m_scope);
        },
        [this, id, scope](const Failure& failure) {
            if (*id != m_pending)
                return;
            m_pending = 0;
            const bool again = std::exchange(m_again, false);
            if (scope == m_scope) {
                m_error = failure.text();
                Q_EMIT failed(failure);
            }
            next(again || scope != m_scope);
        });
    m_pending = *id;
    if (m_pending && m_boundMs > 0)
        m_session->bound(m_pending, ConsoleSession::boundFor(m_boundMs));
}

void SessionPoll::next(bool again)
{
    if (again)
        refreshNow();
    else if (m_intervalMs && !m_timer.isActive())
        readIn(m_intervalMs);
}

void SessionPoll::readIn(qint64 ms)
{
    if (m_pending || !readable())
        return;
    m_timer.start(int(std::clamp<qint64>(ms, 0, std::numeric_limits<int>::max())));
}

ConsoleSession* SessionPoll::session() const { return m_session; }

qint64 SessionPoll::nextReadInMs() const { return m_timer.isActive() ? m_timer.remainingTime() : 0; }

} // namespace idem::console
