#include "models/snapshots.h"

#include <QCoreApplication>

namespace idem::console {

QString ServerInfo::privilegeText() const
{
    if (superuser)
        return QCoreApplication::translate("idem::console::ServerInfo", "operator (superuser)");
    if (isOperator)
        return QCoreApplication::translate("idem::console::ServerInfo", "operator");
    if (isReader)
        return QCoreApplication::translate("idem::console::ServerInfo", "reader");
    return QCoreApplication::translate(
        "idem::console::ServerInfo", "none: cannot read %1.task_idempotency (grant idem_reader)")
        .arg(schema);
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
        return QCoreApplication::translate("idem::console::Failure", "The connection was lost: %1").arg(message);
    case FailureKind::Query:
        return QCoreApplication::translate("idem::console::Failure", "A query failed%1: %2").arg(state, message);
    case FailureKind::MigrationRefused:
        return QCoreApplication::translate("idem::console::Failure", "Migration refused, nothing was changed: %1")
            .arg(message);
    case FailureKind::Other:
        break;
    }
    return QCoreApplication::translate("idem::console::Failure", "Error%1: %2").arg(state, message);
}

} // namespace idem::console
