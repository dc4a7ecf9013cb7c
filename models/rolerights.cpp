#include "models/rolerights.h"

#include <QCoreApplication>

#include "operations/rights.h"
#include "operations/wording.h"

namespace idem::console {

QStringList RoleRights::names()
{
    return { QStringLiteral("read"), QStringLiteral("requeue"), QStringLiteral("release"), QStringLiteral("fail"),
        QStringLiteral("pause"), QStringLiteral("purge"), QStringLiteral("approve"), QStringLiteral("read_requests") };
}

QString RoleRights::grantRole(const QString& right)
{
    return right == QLatin1String("read") ? QStringLiteral("idem_reader") : QStringLiteral("idem_may_") + right;
}

RoleRights RoleRights::fromRights(const idem::Rights& rights)
{
    RoleRights r;
    r.m_role = QString::fromStdString(rights.caller.empty() ? rights.login : rights.caller);
    r.m_perRight = rights.known;
    for (const auto& n : names())
        if (rights.may(n.toStdString()))
            r.m_granted << n;
    return r;
}

RoleRights RoleRights::fromOperator(const QString& role, bool isOperator, bool isReader)
{
    RoleRights r;
    r.m_role = role;
    if (isOperator) {
        r.m_granted = names();
        // Schema v25: stored requests hold personal data; idem_operator does not read them.
        r.m_granted.removeAll(QStringLiteral("read_requests"));
    }
    else if (isReader)
        r.m_granted << QStringLiteral("read");
    return r;
}

QString RoleRights::refusal(const QString& right) const
{
    if (may(right))
        return {};
    // idemctl's words too (operations/wording), in the console's language.
    if (!m_perRight)
        return QCoreApplication::translate(idem::wordingContext, idem::rightMissingOperatorWords).arg(m_role);
    return QCoreApplication::translate(idem::wordingContext, idem::rightMissingWords)
        .arg(m_role, right, grantRole(right));
}

QString RoleRights::summary() const
{
    if (m_granted.isEmpty())
        return QCoreApplication::translate("idem::console::RoleRights", "none");
    return m_granted.join(QStringLiteral(", "));
}

} // namespace idem::console
