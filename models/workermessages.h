#pragma once

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

#include "models/rolerights.h"

// Immutable values the database worker hands to the UI thread by queued signal. Each
// carries the id of the request it answers, so that the session can drop stale answers.
namespace idem::console {

struct ServerInfo {
    quint64 requestId = 0;
    QString serverVersion; // server_version, e.g. "16.2 (Debian 16.2-1)"
    QString host;
    QString port;
    QString database;
    QString role; // current_user
    QString sessionRole; // session_user: differs after SET ROLE
    QString displayConninfo; // without password
    bool superuser = false;
    bool isOperator = false; // member of idem_operator (USAGE), or superuser
    bool isReader = false; // may SELECT the schema's task_idempotency
    // What the role may do, right by right (schema v21; before: idem_operator decides). The
    // console greys out the rest, with rights.refusal(right) in the tooltip.
    RoleRights rights;
    bool tls = false;
    QString tlsVersion;
    QString tlsCipher;
    QString schema;
    bool schemaExists = false;
    bool tableExists = false; // task_idempotency, perhaps an article-shaped table to adopt
    int schemaVersion = 0;
    int schemaLatest = 0; // what this console ships
    QStringList schemaProblems; // checksum mismatches, unknown versions
    QString schemaError; // the schema could not be inspected at all (e.g. no privilege)
    QDateTime asOf; // server clock
    // A connection pooler answers in the server's place (PgBouncer: the backend pid libpq was
    // given is not the server's). The console then keeps no session state: every setting is
    // SET LOCAL and every statement unnamed, as transaction pooling needs.
    bool pooler = false;
    bool inRecovery = false; // a standby
    // New transactions are read-only: a standby, or default_transaction_read_only = on (a primary
    // being demoted, or set so). Nothing the console writes (actions, roll-ups) can land there.
    bool readOnly = false;
    QString synchronousStandbyNames; // empty: commits do not wait for any standby
    QString synchronousCommit; // on, remote_apply, remote_write, local, off
    // The replication mode in a sentence an operator can act on.
    QString replicationText() const;

    // The node (issue #29), as the server itself says, read again on every refresh: behind
    // HAProxy or a multi-host conninfo the address connected to names no node, and after a
    // failover the same address reaches another one.
    QString serverAddress; // inet_server_addr():port; empty on a Unix socket
    QString systemIdentifier; // pg_control_system(); empty when not allowed (systemAllowed)
    bool systemAllowed = false;
    int timeline = 0; // 0: not known (a standby whose role may not call pg_control_checkpoint())
    bool checkpointAllowed = false;
    QDateTime postmasterStart; // server clock
    struct Standby {
        QString name;
        QString syncState;
        QString state;
        qint64 replayLagMs = -1; // -1: not known
        qint64 silentMs = -1; // since its last reply; -1: never replied
        qint64 replayBehindBytes = -1; // -1: not known
        // Behind and silent for 5 s, as the at-risk reading judges it: its reported replay lag is stale
        // (a streaming standby replies on every flush).
        bool silentBehind() const { return silentMs >= 5000 && replayBehindBytes > 0; }
    };
    QList<Standby> standbys; // a primary's, as pg_stat_replication shows them now
    int hiddenStandbys = 0; // rows the role may not look into (needs pg_read_all_stats)
    // What idem_note_timeline (schema v20) answered: empty when not called (an older schema, a
    // standby, a read-only server), else its outcome; timelineError when it failed.
    QString timelineOutcome;
    int previousTimeline = 0;
    QDateTime timelineSince; // when any client first saw this timeline (server clock)
    QString timelineError;
    QDateTime connectedAt; // server clock, when this connection was opened (kept by re-reads)
    // Set by the session: when the node (address, system, timeline, primary or standby) last
    // changed under this console (its clock), and what it was before (nodeText(); empty: none).
    QDateTime nodeSince;
    QString previousNode;

    // What tells one node from another: a change of it is a change of node.
    QString nodeKey() const;
    // "127.0.0.1:5433 (the server's address), primary, timeline 3, system 7715…" in words, with
    // what the role may not read said so.
    QString nodeText() const;
    // The primary's standbys now (name, sync state, replay lag), or why they cannot be shown.
    QString standbysText() const;

    bool schemaMissing() const { return schemaError.isEmpty() && schemaVersion == 0; }
    bool schemaNewer() const { return schemaVersion > schemaLatest; }
    bool schemaOlder() const { return schemaVersion > 0 && schemaVersion < schemaLatest; }
    QString privilegeText() const;
};

enum class FailureKind {
    BadConninfo,
    Refused,
    Authentication,
    Tls,
    Timeout,
    BadSchemaName,
    ConnectionLost,
    Query, // a statement failed; sqlstate says why
    MigrationRefused,
    Other,
};

struct Failure {
    enum class Request { Connect, Poll, Migrate, Job };

    quint64 requestId = 0;
    FailureKind kind = FailureKind::Other;
    QString message; // libpq's or the server's words
    QString sqlstate;
    int retryInSeconds = 0; // set by the session when it will reconnect by itself
    // text() and, when the session reconnects by itself, when it tries next.
    QString textWithRetry() const;
    Request request = Request::Connect; // set by the session: what failed
    // Set by the session when it asked the server to cancel the job's statement after this long
    // without an answer (ConsoleSession::JobBound); 0 otherwise.
    qint64 cancelledAfterMs = 0;

    bool isConnectFailure() const;
    // One or two sentences for a person: what happened and what to check. A statement the
    // server cancelled (57014), a lock not available (55P03) and a deadlock (40P01) are said in
    // words; the server's own text, its SQLSTATE and context are detail().
    QString text() const;
    // The server's message as it came (first line), its SQLSTATE, and its context lines: for a
    // tooltip, not for a banner. Empty when text() says it all.
    QString detail() const;
    // The server's message without its CONTEXT (the SQL a function ran) and the lines after.
    QString firstLine() const;
};

struct MigrationOutcome {
    quint64 requestId = 0;
    int fromVersion = 0;
    int toVersion = 0;
    QStringList applied;
    bool rolesApplied = false;
    bool adoptedExistingTable = false;
    ServerInfo after; // re-inspected once the migration committed
};

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::ServerInfo)
Q_DECLARE_METATYPE(idem::console::Failure)
Q_DECLARE_METATYPE(idem::console::MigrationOutcome)
