#include "models/snapshots.h"

namespace idem::console {

QString ServerInfo::privilegeText() const
{
    if (superuser)
        return QStringLiteral("operator (superuser)");
    if (isOperator)
        return QStringLiteral("operator");
    if (isReader)
        return QStringLiteral("reader");
    return QStringLiteral("none: cannot read %1.task_idempotency (grant idem_reader)").arg(schema);
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

QString Failure::text() const
{
    const QString state = sqlstate.isEmpty() ? QString() : QStringLiteral(" (SQLSTATE %1)").arg(sqlstate);
    switch (kind) {
    case FailureKind::BadConninfo:
        return QStringLiteral("The connection string is not valid: %1").arg(message);
    case FailureKind::Refused:
        return QStringLiteral("The server could not be reached: %1").arg(message);
    case FailureKind::Authentication:
        return QStringLiteral("Authentication failed: %1\nCheck the user name and the password (or ~/.pgpass, "
                              "PGPASSWORD).")
            .arg(message);
    case FailureKind::Tls:
        return QStringLiteral("TLS failure: %1\nCheck the SSL mode and that the root certificate is the one that "
                              "signed the server's certificate.")
            .arg(message);
    case FailureKind::Timeout:
        return QStringLiteral("The connection timed out: %1").arg(message);
    case FailureKind::BadSchemaName:
        return QStringLiteral("The schema name is not valid: %1").arg(message);
    case FailureKind::ConnectionLost:
        return QStringLiteral("The connection was lost: %1").arg(message);
    case FailureKind::Query:
        return QStringLiteral("A query failed%1: %2").arg(state, message);
    case FailureKind::MigrationRefused:
        return QStringLiteral("Migration refused, nothing was changed: %1").arg(message);
    case FailureKind::Other:
        break;
    }
    return QStringLiteral("Error%1: %2").arg(state, message);
}

} // namespace idem::console
