#include "models/auditwitness.h"

#include <QCoreApplication>
#include <QSettings>
#include <QVariantMap>

#include <pqxx/pqxx>

#include "models/consolesession.h"
#include "models/dashboardmodel.h"

namespace {

// What one verification job brings back: the head when it began, and the verdict of the chain.
struct WitnessCheck {
    std::optional<idem::ChainHead> head;
    idem::ChainReport report;
};

} // namespace

Q_DECLARE_METATYPE(WitnessCheck)

namespace idem::console {

namespace {
    const QString witnessGroup = QStringLiteral("auditWitness");

    bool sameHead(const std::optional<ChainHead>& a, const std::optional<ChainHead>& b)
    {
        if (!a || !b)
            return !a && !b;
        return a->id == b->id && a->hash == b->hash;
    }

    QString shortHash(const std::string& hash) { return QString::fromStdString(hash).left(12) + QChar(0x2026); }

    QString when(const QDateTime& t)
    {
        return t.isValid() ? t.toString(QStringLiteral("yyyy-MM-dd HH:mm"))
                           : QCoreApplication::translate("idem::console::AuditWitness", "at an unknown time");
    }

    // The settings group of one database, readable in the file: QSettings reads '/' as nesting and
    // escapes much else, so anything but letters, digits and ".-" becomes '_'. Two identities
    // that meet that way are told apart by the identity stored in clear (loadMark).
    QString groupKey(const QString& identity)
    {
        QString key = identity;
        for (QChar& c : key)
            if (!(c.isLetterOrNumber() && c.unicode() < 128) && c != QLatin1Char('.') && c != QLatin1Char('-'))
                c = QLatin1Char('_');
        return witnessGroup + QLatin1Char('/') + key;
    }
} // namespace

AuditWitness::AuditWitness(ConsoleSession* session, QObject* parent)
    : AuditWitness(session,
        std::make_unique<QSettings>(
            QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console")),
        parent)
{
}

AuditWitness::AuditWitness(ConsoleSession* session, std::unique_ptr<QSettings> settings, QObject* parent)
    : QObject(parent)
    , m_session(session)
    , m_settings(std::move(settings))
{
    qRegisterMetaType<WitnessCheck>();
    connect(session, &ConsoleSession::stateChanged, this, &AuditWitness::onSessionState);
    connect(session, &ConsoleSession::serverInfoChanged, this, &AuditWitness::onSessionState);
    onSessionState();
}

AuditWitness::~AuditWitness()
{
    if (m_session && m_identifyJob)
        m_session->cancel(m_identifyJob);
    if (m_session && m_job)
        m_session->cancel(m_job);
}

void AuditWitness::follow(DashboardModel* dashboard)
{
    connect(dashboard, &DashboardModel::updated, this, [this, dashboard] {
        if (const auto& latest = dashboard->latest())
            observeHead(latest->stats.auditHeadId, QString::fromStdString(latest->stats.auditHeadHash));
    });
}

void AuditWitness::observeHead(std::int64_t id, const QString& hash)
{
    if (m_identity.isEmpty() || m_identifyJob)
        return; // the verification at connect comes first
    const auto head = id > 0 ? std::optional<ChainHead>(ChainHead { id, hash.toStdString() }) : std::nullopt;
    if (m_job) {
        // Looked at again when the running verification is done, if it saw another head.
        m_again = m_again || !sameHead(head, m_seenHead);
        return;
    }
    if (!sameHead(head, m_seenHead))
        verifyNow();
}

void AuditWitness::onSessionState()
{
    if (!m_session)
        return;
    if (m_session->state() != ConsoleSession::State::Connected) {
        // A reconnect identifies the database again (it may be another one) and verifies.
        if (m_identifyJob)
            m_session->cancel(m_identifyJob);
        if (m_job)
            m_session->cancel(m_job);
        m_identifyJob = m_job = 0;
        m_again = false;
        m_seenHead.reset();
        m_identity.clear();
        return;
    }
    if (m_session->canPoll() && m_identity.isEmpty() && !m_identifyJob)
        identify();
}

void AuditWitness::identify()
{
    m_identifyJob = m_session->submit(
        [](pqxx::connection& c, const idem::SchemaName&) {
            pqxx::read_transaction t(c);
            t.exec("SET LOCAL statement_timeout = '5s'");
            // Two statements: an EXECUTE privilege is checked when a statement starts, whatever a
            // CASE around the call would decide, and an administrator may have revoked this one.
            const auto r = t.exec("SELECT has_function_privilege('pg_catalog.pg_control_system()', 'EXECUTE'),"
                                  " current_database(), pg_is_in_recovery()");
            QVariantMap m;
            m[QStringLiteral("database")] = QString::fromStdString(r[0][1].as<std::string>());
            m[QStringLiteral("standby")] = r[0][2].as<bool>();
            if (r[0][0].as<bool>())
                m[QStringLiteral("system")] = QString::fromStdString(
                    t.exec("SELECT system_identifier::text FROM pg_catalog.pg_control_system()")[0][0]
                        .as<std::string>());
            t.commit();
            return QVariant(m);
        },
        this, [this](const QVariant& v) { onIdentified(v); },
        [this](const Failure& f) {
            m_identifyJob = 0;
            onFailed(f.text());
        });
}

void AuditWitness::onIdentified(const QVariant& answer)
{
    m_identifyJob = 0;
    const auto m = answer.toMap();
    const auto& info = m_session->serverInfo();
    const QString system = m.value(QStringLiteral("system")).toString();
    const QString where = system.isEmpty() ? QStringLiteral("server %1:%2").arg(info.host, info.port)
                                           : QStringLiteral("system %1").arg(system);
    const QString identity = QStringLiteral("%1 database %2 schema %3")
                                 .arg(where, m.value(QStringLiteral("database")).toString(), info.schema);
    m_standby = m.value(QStringLiteral("standby")).toBool();
    if (identity != m_identity) {
        m_identity = identity;
        m_mark = loadMark();
        m_report.reset();
        m_verdict = Verdict::Unknown;
        m_failure.clear();
    }
    Q_EMIT changed();
    verifyNow();
}

void AuditWitness::verifyNow()
{
    if (!m_session || m_identity.isEmpty() || m_identifyJob)
        return;
    if (m_job) {
        m_again = true;
        return;
    }
    // The whole chain once per run and database (an edit anywhere shows), then only what is new.
    const bool full = !m_mark || !m_fullyVerified.contains(m_identity);
    std::optional<ChainHead> from;
    if (m_mark)
        from = ChainHead { m_mark->id, m_mark->hash.toStdString() };
    m_job = m_session->submit(
        [from, full](pqxx::connection& c, const idem::SchemaName& schema) {
            WitnessCheck check;
            // Read first: whatever the walk then sees is at least this new, so a tick showing this
            // head again has nothing more to verify.
            check.head = idem::readAuditHead(c, schema);
            check.report = full ? idem::verifyChain(c, schema, from) : idem::verifyChainFrom(c, schema, *from);
            return QVariant::fromValue(check);
        },
        this, [this, full](const QVariant& v) { onVerified(v, full); },
        [this](const Failure& f) {
            m_job = 0;
            onFailed(f.text());
        });
}

void AuditWitness::onVerified(const QVariant& answer, bool full)
{
    m_job = 0;
    const auto check = answer.value<WitnessCheck>();
    ++m_verifications;
    m_lastFull = full;
    m_failure.clear();
    m_seenHead = check.head;
    m_report = check.report;
    const auto& r = check.report;
    if (r.ok()) {
        m_verdict = Verdict::Intact;
        if (full)
            m_fullyVerified.insert(m_identity);
        if (r.head && (!m_mark || m_mark->id != r.head->id || m_mark->hash.toStdString() != r.head->hash)) {
            m_mark = WitnessMark { r.head->id, QString::fromStdString(r.head->hash), QDateTime::currentDateTime() };
            saveMark(m_mark);
        }
    } else if (r.brokenBy == ChainBreak::Truncated) {
        // The remembered mark stays where it is: a restart must not forget what went missing.
        m_verdict = !r.head || !m_mark || r.head->id < m_mark->id ? Verdict::Truncated : Verdict::Rewritten;
    } else {
        m_verdict = Verdict::Broken;
    }
    Q_EMIT changed();
    if (m_again) {
        m_again = false;
        verifyNow();
    }
}

void AuditWitness::onFailed(const QString& message)
{
    m_failure = message;
    Q_EMIT changed();
}

void AuditWitness::acknowledge()
{
    if (!alarm())
        return;
    m_acknowledged = situation();
    Q_EMIT changed();
}

void AuditWitness::acceptCurrentTrail()
{
    if (m_identity.isEmpty())
        return;
    if (m_job && m_session)
        m_session->cancel(m_job);
    m_job = 0;
    m_again = false;
    m_mark.reset();
    saveMark(std::nullopt);
    m_fullyVerified.remove(m_identity);
    m_acknowledged.clear();
    m_verdict = Verdict::Unknown;
    m_report.reset();
    Q_EMIT changed();
    verifyNow();
}

QString AuditWitness::situation() const
{
    if (!m_report)
        return {};
    return QStringLiteral("%1 %2 %3 %4 %5")
        .arg(static_cast<int>(m_verdict))
        .arg(m_mark ? m_mark->id : 0)
        .arg(m_report->firstBrokenId.value_or(0))
        .arg(m_report->head ? m_report->head->id : 0)
        .arg(m_report->head ? QString::fromStdString(m_report->head->hash) : QString());
}

QString AuditWitness::text() const
{
    if (!m_report)
        return m_failure.isEmpty() ? QString() : tr("The audit trail could not be verified: %1").arg(m_failure);
    const auto& r = *m_report;
    if ((m_verdict == Verdict::Truncated || m_verdict == Verdict::Rewritten) && !m_mark)
        return QString::fromStdString(r.detail);
    switch (m_verdict) {
    case Verdict::Unknown:
        return {};
    case Verdict::Intact:
        if (!m_mark)
            return tr("The audit trail is empty; this console remembers its head from the first entry on.");
        return tr("This console verified the audit trail up to entry %1 (hash %2, verified %3); it is intact.")
            .arg(m_mark->id)
            .arg(shortHash(m_mark->hash.toStdString()), when(m_mark->verifiedAt));
    case Verdict::Truncated: {
        QString text = r.head
            ? tr("The audit trail is shorter than when this console last verified it: entry %1 (verified %2) is "
                 "gone; the trail now ends at entry %3. Someone with the owner's rights removed entries.")
                  .arg(m_mark->id)
                  .arg(when(m_mark->verifiedAt))
                  .arg(r.head->id)
            : tr("The audit trail is shorter than when this console last verified it: entry %1 (verified %2) is "
                 "gone; the trail is now empty. Someone with the owner's rights removed entries.")
                  .arg(m_mark->id)
                  .arg(when(m_mark->verifiedAt));
        if (m_standby)
            text += QLatin1Char(' ')
                + tr("This server is a standby: if it is still replaying, this clears once it catches up.");
        return text;
    }
    case Verdict::Rewritten:
        return tr("The audit trail was rewritten: entry %1 is not the entry this console verified %2 (hash %3). "
                  "Someone with the owner's rights removed entries and wrote others in their place.")
            .arg(m_mark->id)
            .arg(when(m_mark->verifiedAt), shortHash(m_mark->hash.toStdString()));
    case Verdict::Broken: {
        QString what;
        switch (r.brokenBy) {
        case ChainBreak::HashMismatch:
            what = tr("the entry was changed after it was written");
            break;
        case ChainBreak::MissingEntry:
            what = tr("the entry is missing (deleted)");
            break;
        case ChainBreak::PrevLinkBroken:
            what = tr("it does not follow on from the entry before it (entries were reordered or replaced)");
            break;
        case ChainBreak::None:
        case ChainBreak::Truncated:
            break;
        }
        return tr("The audit trail's hash chain is broken at entry %1: %2. Someone with the owner's rights "
                  "changed the trail.")
            .arg(r.firstBrokenId.value_or(0))
            .arg(what);
    }
    }
    return {};
}

std::optional<WitnessMark> AuditWitness::loadMark() const
{
    const QString g = groupKey(m_identity);
    const qint64 id = m_settings->value(g + QStringLiteral("/id"), 0).toLongLong();
    if (id <= 0 || m_settings->value(g + QStringLiteral("/database")).toString() != m_identity)
        return std::nullopt;
    return WitnessMark { id, m_settings->value(g + QStringLiteral("/hash")).toString(),
        QDateTime::fromString(m_settings->value(g + QStringLiteral("/verifiedAt")).toString(), Qt::ISODate) };
}

void AuditWitness::saveMark(const std::optional<WitnessMark>& mark)
{
    const QString g = groupKey(m_identity);
    if (!mark) {
        m_settings->remove(g);
    } else {
        // The identity in clear: the group name is only its simplified form.
        m_settings->setValue(g + QStringLiteral("/database"), m_identity);
        m_settings->setValue(g + QStringLiteral("/id"), static_cast<qlonglong>(mark->id));
        m_settings->setValue(g + QStringLiteral("/hash"), mark->hash);
        m_settings->setValue(g + QStringLiteral("/verifiedAt"), mark->verifiedAt.toString(Qt::ISODateWithMs));
    }
    m_settings->sync();
}

} // namespace idem::console
