#pragma once

#include <QDateTime>
#include <QMetaType>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QString>

#include <memory>
#include <optional>

#include "operations/audit.h"

class QSettings;

namespace idem::console {

class ConsoleSession;
class DashboardModel;

// The newest audit entry this console verified in one database.
struct WitnessMark {
    std::int64_t id = 0;
    QString hash;
    QDateTime verifiedAt; // this machine's clock
};

// The console as a witness of the audit trail. A hash chain cannot show from the inside that its
// newest entries were removed (or removed and written again): only someone who remembers the head
// can. This remembers, per database, the newest entry it has verified and that entry's hash, in
// the console's settings file, and says so loudly when the trail is later shorter or different.
//
// Per database means: the server's system identifier (pg_control_system(), shared by a primary
// and its physical standbys) when the role may read it, else host:port; plus the database and
// the schema. Nothing else of the connection is stored, never a password.
//
// Verification runs on the session's worker thread, at connect and whenever a dashboard tick
// shows another head than the last verification saw (not every tick): the first time in a run
// the whole chain (verifyChain, with the remembered head expected), after that only what was
// appended (verifyChainFrom the remembered head). An intact trail moves the mark up to its head;
// nothing moves it down but acceptCurrentTrail(), so a truncation is still reported after a
// restart.
class AuditWitness : public QObject {
    Q_OBJECT
public:
    enum class Verdict {
        Unknown, // not verified yet, or could not verify (failure() says why)
        Intact, // the remembered entry is there, unchanged, and the trail chains on from it
        Truncated, // the trail ends before the remembered entry
        Rewritten, // the entry at the remembered id is not the one verified
        Broken, // the chain itself is broken: an entry edited, deleted or reordered
    };
    Q_ENUM(Verdict)

    // Settings: the user-scope INI file of the application (organisation "Idem").
    explicit AuditWitness(ConsoleSession* session, QObject* parent = nullptr);
    AuditWitness(ConsoleSession* session, std::unique_ptr<QSettings> settings, QObject* parent = nullptr);
    ~AuditWitness() override;

    // Looks at every tick's audit head.
    void follow(DashboardModel* dashboard);
    // A head seen elsewhere (a tick): verifies if it is not the one the last verification saw.
    void observeHead(std::int64_t id, const QString& hash);

    Verdict verdict() const { return m_verdict; }
    bool alarm() const
    {
        return m_verdict == Verdict::Truncated || m_verdict == Verdict::Rewritten || m_verdict == Verdict::Broken;
    }
    // What a person should read: the alarm in plain words, or what was verified. Empty before
    // the first verification.
    QString text() const;
    QString failure() const { return m_failure; }
    // The database as the witness names it (see above); empty until connected.
    QString identity() const { return m_identity; }
    std::optional<WitnessMark> mark() const { return m_mark; }
    const std::optional<idem::ChainReport>& lastReport() const { return m_report; }
    // The trail's newest entry when the last verification began.
    const std::optional<idem::ChainHead>& seenHead() const { return m_seenHead; }
    bool verifying() const { return m_job != 0; }
    int verifications() const { return m_verifications; }
    bool lastWasFull() const { return m_lastFull; }

    // The banner stays until acknowledged, and comes back when the situation changes.
    bool acknowledged() const { return alarm() && m_acknowledged == situation(); }
    void acknowledge();
    // Forgets the remembered entry and verifies the whole trail again; if it is intact its head
    // becomes the new mark. Only this console's settings change: nothing is written to the
    // database and nothing is audited.
    void acceptCurrentTrail();

public Q_SLOTS:
    void verifyNow();

Q_SIGNALS:
    void changed();

private:
    void onSessionState();
    void identify();
    void onIdentified(const QVariant& answer);
    void onVerified(const QVariant& answer, bool full);
    void onFailed(const QString& message);
    QString situation() const;
    std::optional<WitnessMark> loadMark() const;
    void saveMark(const std::optional<WitnessMark>& mark);

    QPointer<ConsoleSession> m_session;
    std::unique_ptr<QSettings> m_settings;
    QString m_identity;
    bool m_standby = false;
    quint64 m_identifyJob = 0;
    quint64 m_job = 0;
    bool m_again = false; // a head moved while a verification ran
    QSet<QString> m_fullyVerified; // identities whose whole chain was verified in this run
    std::optional<WitnessMark> m_mark;
    std::optional<idem::ChainReport> m_report;
    std::optional<idem::ChainHead> m_seenHead;
    Verdict m_verdict = Verdict::Unknown;
    QString m_failure;
    QString m_acknowledged;
    int m_verifications = 0;
    bool m_lastFull = false;
};

} // namespace idem::console
