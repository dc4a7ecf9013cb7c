#include "models/workermessages.h"

#include <QCoreApplication>

namespace idem::console {

QString ServerInfo::privilegeText() const
{
    if (superuser)
        return QCoreApplication::translate("idem::console::ServerInfo", "operator (superuser)");
    if (isOperator)
        return QCoreApplication::translate("idem::console::ServerInfo", "operator");
    // Schema v21: rights granted one by one, beyond reading.
    if (rights.perRight() && rights.may(QStringLiteral("read")) && rights.summary() != QLatin1String("read"))
        return QCoreApplication::translate("idem::console::ServerInfo", "rights: %1").arg(rights.summary());
    if (isReader)
        return QCoreApplication::translate("idem::console::ServerInfo", "reader");
    return QCoreApplication::translate(
        "idem::console::ServerInfo", "none: cannot read %1.task_idempotency (grant idem_reader)")
        .arg(schema);
}

QString ServerInfo::nodeKey() const
{
    return QStringList { host, port, serverAddress, systemIdentifier, QString::number(timeline),
        inRecovery ? QStringLiteral("standby") : QStringLiteral("primary") }
        .join(QLatin1Char('|'));
}

QString ServerInfo::nodeText() const
{
    QStringList parts;
    parts << (serverAddress.isEmpty()
            ? QCoreApplication::translate("idem::console::ServerInfo", "%1:%2 (a local socket)").arg(host, port)
            : serverAddress == QString(host + QLatin1Char(':') + port)
            ? serverAddress
            : QCoreApplication::translate("idem::console::ServerInfo", "%1 (connected to %2:%3)")
                  .arg(serverAddress, host, port));
    parts << (inRecovery ? QCoreApplication::translate("idem::console::ServerInfo", "standby")
            : readOnly   ? QCoreApplication::translate("idem::console::ServerInfo", "read-only primary")
                         : QCoreApplication::translate("idem::console::ServerInfo", "primary"));
    if (timeline > 0)
        parts << QCoreApplication::translate("idem::console::ServerInfo", "timeline %1").arg(timeline);
    else
        parts << QCoreApplication::translate(
            "idem::console::ServerInfo", "timeline not known (this role may not call pg_control_checkpoint())");
    if (!systemIdentifier.isEmpty())
        parts << QCoreApplication::translate("idem::console::ServerInfo", "system %1").arg(systemIdentifier);
    else if (!systemAllowed)
        parts << QCoreApplication::translate(
            "idem::console::ServerInfo", "system not known (this role may not call pg_control_system())");
    return parts.join(QStringLiteral(", "));
}

QString ServerInfo::standbysText() const
{
    if (inRecovery)
        return QCoreApplication::translate("idem::console::ServerInfo", "none listed: this server is a standby");
    QStringList parts;
    for (const auto& s : standbys) {
        const QString lag = s.silentBehind()
            ? QCoreApplication::translate(
                  "idem::console::ServerInfo", "no reply for %1 s and behind: its replay lag is not known")
                  .arg(s.silentMs / 1000)
            : s.replayLagMs < 0
            ? QCoreApplication::translate("idem::console::ServerInfo", "no replay lag reported")
            : QCoreApplication::translate("idem::console::ServerInfo", "replay lag %1 s")
                  .arg(QString::number(s.replayLagMs / 1000.0, 'f', 1));
        parts << QCoreApplication::translate("idem::console::ServerInfo", "%1 (%2, %3, %4)")
                     .arg(s.name.isEmpty() ? QCoreApplication::translate("idem::console::ServerInfo", "unnamed")
                                           : s.name,
                         s.syncState, s.state, lag);
    }
    if (hiddenStandbys > 0)
        parts << QCoreApplication::translate("idem::console::ServerInfo",
            "%n standby(s) this role may not look into (grant pg_monitor or pg_read_all_stats)", nullptr,
            hiddenStandbys);
    if (parts.isEmpty())
        return QCoreApplication::translate("idem::console::ServerInfo", "none connected now");
    return parts.join(QStringLiteral("; "));
}

QString ServerInfo::replicationText() const
{
    if (inRecovery)
        return QCoreApplication::translate("idem::console::ServerInfo",
            "this server is a standby: it replays what its primary wrote, figures are as of its replay point");
    if (readOnly)
        return QCoreApplication::translate("idem::console::ServerInfo",
            "this server is read-only (default_transaction_read_only is on): it is not the primary, or is being "
            "demoted; recovery actions and pauses need the primary");
    if (synchronousStandbyNames.trimmed().isEmpty())
        return QCoreApplication::translate("idem::console::ServerInfo",
            "asynchronous (synchronous_standby_names is empty): a commit does not wait for any standby, so "
            "after a failover a success already acknowledged to a client can be forgotten and run again");
    if (synchronousCommit == QLatin1String("on") || synchronousCommit == QLatin1String("remote_apply"))
        return QCoreApplication::translate("idem::console::ServerInfo",
            "synchronous to %1 (synchronous_commit = %2): a commit is acknowledged only once a synchronous "
            "standby has it, so a failover to that standby keeps every acknowledged success")
            .arg(synchronousStandbyNames, synchronousCommit);
    if (synchronousCommit == QLatin1String("remote_write"))
        return QCoreApplication::translate("idem::console::ServerInfo",
            "synchronous to %1 up to the standby's memory (synchronous_commit = remote_write): losing both "
            "servers at once can still forget an acknowledged success")
            .arg(synchronousStandbyNames);
    return QCoreApplication::translate("idem::console::ServerInfo",
        "asynchronous for this role's commits (synchronous_commit = %1, although synchronous_standby_names "
        "is %2): a failover can forget an acknowledged success")
        .arg(synchronousCommit, synchronousStandbyNames);
}

QString Failure::textWithRetry() const
{
    if (retryInSeconds <= 0)
        return text();
    // One arg() call: a server message holding "%1" must not take the seconds.
    return QCoreApplication::translate("idem::console::Failure", "%1 Reconnecting in %2 s.")
        .arg(text(), QString::number(retryInSeconds));
}

bool Failure::isConnectFailure() const
{
    switch (kind) {
    case FailureKind::BadConninfo:
    case FailureKind::Refused:
    case FailureKind::Authentication:
    case FailureKind::Tls:
    case FailureKind::Timeout:
    case FailureKind::BadSchemaName:
        return true;
    case FailureKind::ConnectionLost:
    case FailureKind::Query:
    case FailureKind::MigrationRefused:
    case FailureKind::Other:
        break;
    }
    return false;
}

QString Failure::firstLine() const
{
    // libpq puts the server's CONTEXT (the SQL statement a function ran, the function's line)
    // after the message and its DETAIL and HINT: everything from there on is for a tooltip.
    QStringList kept;
    for (const auto& line : message.split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String("CONTEXT:")))
            break;
        kept << line;
    }
    return kept.join(QLatin1Char('\n'));
}

namespace {
    // What a statement's end means, for the SQLSTATEs an operator meets while another session
    // holds a lock or the server is slow; empty for the rest. The server's words (English unless
    // lc_messages says otherwise) only tell a statement timeout from a cancel request.
    QString sqlstateWords(const Failure& f)
    {
        if (f.kind != FailureKind::Query)
            return {};
        if (f.sqlstate == QLatin1String("57014")) {
            if (f.cancelledAfterMs > 0)
                return QCoreApplication::translate("idem::console::Failure",
                    "The database did not answer within %1 s, so the console cancelled the statement.")
                    .arg(QString::number(f.cancelledAfterMs / 1000.0));
            if (f.message.contains(QLatin1String("statement timeout")))
                return QCoreApplication::translate("idem::console::Failure",
                    "The database did not answer in time: the statement reached its time limit (a lock held by "
                    "another session, or a busy server).");
            if (f.message.contains(QLatin1String("user request")))
                return QCoreApplication::translate("idem::console::Failure",
                    "The statement was cancelled on request (by an administrator, or by this console after it "
                    "waited too long).");
            return QCoreApplication::translate("idem::console::Failure",
                "The statement was cancelled before it finished (its time limit, a lock held by another session, "
                "or a cancel request).");
        }
        if (f.sqlstate == QLatin1String("55P03"))
            return QCoreApplication::translate("idem::console::Failure",
                "A row or table this needs is locked by another session, and the statement gave up waiting for it.");
        if (f.sqlstate == QLatin1String("40P01"))
            return QCoreApplication::translate("idem::console::Failure",
                "The statement was caught in a deadlock with another session; the database cancelled it to "
                "break the deadlock.");
        return {};
    }
} // namespace

QString Failure::detail() const
{
    if (message.isEmpty() || kind != FailureKind::Query)
        return {};
    // Each line cut to a tooltip's width: a CONTEXT line can carry a whole statement.
    QStringList lines;
    for (const auto& line : message.split(QLatin1Char('\n')))
        lines << (line.size() > 160 ? QString(line.left(159) + QChar(0x2026)) : line);
    const QString text = lines.join(QLatin1Char('\n'));
    return sqlstate.isEmpty() ? text : QStringLiteral("SQLSTATE %1: %2").arg(sqlstate, text);
}

QString Failure::text() const
{
    const QString state = sqlstate.isEmpty() ? QString() : QStringLiteral(" (SQLSTATE %1)").arg(sqlstate);
    switch (kind) {
    case FailureKind::BadConninfo:
        return QCoreApplication::translate("idem::console::Failure", "The connection string is not valid: %1")
            .arg(message);
    case FailureKind::Refused:
        return QCoreApplication::translate("idem::console::Failure", "The server could not be reached: %1")
            .arg(message);
    case FailureKind::Authentication:
        return QCoreApplication::translate("idem::console::Failure",
            "Authentication failed: %1\nCheck the user name and the password (or ~/.pgpass, "
            "PGPASSWORD).")
            .arg(message);
    case FailureKind::Tls:
        return QCoreApplication::translate("idem::console::Failure",
            "TLS failure: %1\nCheck the SSL mode and that the root certificate is the one that "
            "signed the server's certificate.")
            .arg(message);
    case FailureKind::Timeout:
        return QCoreApplication::translate("idem::console::Failure", "The connection timed out: %1").arg(message);
    case FailureKind::BadSchemaName:
        return QCoreApplication::translate("idem::console::Failure", "The schema name is not valid: %1").arg(message);
    case FailureKind::ConnectionLost:
        if (sqlstate == QLatin1String("25006"))
            return QCoreApplication::translate("idem::console::Failure",
                "The server is read-only now: it is not the primary any more (a switchover or a failover). %1")
                .arg(message);
        return QCoreApplication::translate("idem::console::Failure", "The connection was lost: %1").arg(message);
    case FailureKind::Query:
        if (sqlstate == QLatin1String("25006"))
            return QCoreApplication::translate("idem::console::Failure",
                "The server is read-only (a standby, or not the primary): this needs the primary. %1")
                .arg(firstLine());
        if (const QString words = sqlstateWords(*this); !words.isEmpty())
            return words;
        return QCoreApplication::translate("idem::console::Failure", "A query failed%1: %2").arg(state, firstLine());
    case FailureKind::MigrationRefused:
        return QCoreApplication::translate("idem::console::Failure", "Migration refused, nothing was changed: %1")
            .arg(message);
    case FailureKind::Other:
        break;
    }
    return QCoreApplication::translate("idem::console::Failure", "Error%1: %2").arg(state, message);
}

} // namespace idem::console
