#include "models/atriskwatch.h"

#include <pqxx/pqxx>

#include "models/consolesession.h"

namespace idem::console {

AtRiskWatch::AtRiskWatch(ConsoleSession* session, QObject* parent)
    : QObject(parent)
    , m_request(session, SessionRequest::Kind::Read)
{
    qRegisterMetaType<idem::AtRiskReading>();
    connect(session, &ConsoleSession::stateChanged, this, [this](ConsoleSession::State s) {
        if (s == ConsoleSession::State::Connected && m_wanted)
            read();
    });
    connect(&m_request, &SessionRequest::answered, this, [this](const QVariant& answer) {
        m_reading = std::make_shared<const idem::AtRiskReading>(answer.value<idem::AtRiskReading>());
        m_error.clear();
        Q_EMIT changed();
    });
    connect(&m_request, &SessionRequest::failed, this, [this](const Failure& failure) {
        m_reading.reset();
        m_error = failure.text();
        Q_EMIT changed();
    });
}

void AtRiskWatch::read()
{
    auto* session = m_request.session();
    if (!session || m_request.pending())
        return;
    // A job submitted before the session says it is connected would fail as "not connected".
    if (session->state() != ConsoleSession::State::Connected) {
        m_wanted = true;
        return;
    }
    m_wanted = false;
    const ServerInfo& info = session->serverInfo();
    m_unavailable = !info.isReader || !info.schemaError.isEmpty();
    if (m_unavailable) {
        m_reading.reset();
        m_error.clear();
        Q_EMIT changed();
        return;
    }
    m_request.run(
        [memory = m_memory](pqxx::connection& conn, const idem::SchemaName& schema) {
            pqxx::read_transaction t(conn);
            t.exec("SET LOCAL statement_timeout = '5s'");
            return QVariant::fromValue(idem::readAtRisk(t, schema, 100000, memory.get()));
        },
        5000);
}

void AtRiskWatch::clear()
{
    m_reading.reset();
    m_error.clear();
    m_unavailable = false;
}

} // namespace idem::console
