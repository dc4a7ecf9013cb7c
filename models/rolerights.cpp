#include "models/rolerights.h"

#include <QCoreApplication>

#include "operations/rights.h"
#include "operations/wording.h"

namespace idem::console {

RoleRights RoleRights::fromRights(const idem::Rights& rights)
{
    RoleRights r;
    r.m_role = QString::fromStdString(rights.caller.empty() ? rights.login : rights.caller);
    r.m_perRight = rights.known;
    r.m_operator = !rights.known;
    for (const auto& x : rights.rights)
        r.m_rights.append({ QString::fromStdString(x.name), QString::fromStdString(x.grantRole), x.granted });
    return r;
}

RoleRights RoleRights::fromOperator(const QString& role, bool isOperator, bool isReader)
{
    RoleRights r;
    r.m_role = role;
    r.m_operator = isOperator;
    r.m_reader = isReader;
    return r;
}

bool RoleRights::may(const QString& right) const
{
    if (!m_perRight)
        return m_operator || (m_reader && right == QLatin1String("read"));
    for (const auto& x : m_rights)
        if (x.name == right)
            return x.granted;
    return false;
}

QString RoleRights::refusal(const QString& right) const
{
    if (may(right))
        return {};
    // idemctl's words too (operations/wording), in the console's language.
    if (!m_perRight)
        return QCoreApplication::translate(idem::wordingContext, idem::rightMissingOperatorWords).arg(m_role);
    QString grantRole = QString::fromStdString(idem::rightRole(right.toStdString()));
    for (const auto& x : m_rights)
        if (x.name == right)
            grantRole = x.grantRole;
    return QCoreApplication::translate(idem::wordingContext, idem::rightMissingWords).arg(m_role, right, grantRole);
}

QString RoleRights::summary() const
{
    QStringList held;
    for (const auto& x : m_rights)
        if (x.granted)
            held << x.name;
    if (held.isEmpty())
        return QCoreApplication::translate("idem::console::RoleRights", "none");
    return held.join(QStringLiteral(", "));
}

} // namespace idem::console
