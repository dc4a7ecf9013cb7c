#pragma once

#include <QString>
#include <QStringList>

namespace idem {
struct Rights;
}

namespace idem::console {

// What the connected role may do (schema v21: one role per right, idem_rights() in the
// database, idem::readRights), as the console greys out what it may not do, with the reason in
// the tooltip. Rights: read, requeue, release, fail, pause, purge, approve. Against a schema
// before v21 it falls back to idem_operator: an operator may do everything, anyone else nothing
// but read. The database enforces the rights either way; this only spares a refusal.
class RoleRights {
public:
    RoleRights() = default;
    static RoleRights fromRights(const idem::Rights& rights);
    // Schema before v21, or the rights could not be read: idem_operator decides.
    static RoleRights fromOperator(const QString& role, bool isOperator, bool isReader);

    bool may(const QString& right) const { return m_granted.contains(right); }
    // Why the role may not: "Role alice does not hold the requeue right (role idem_may_requeue):
    // an administrator grants it with GRANT idem_may_requeue TO alice." Empty when it may.
    QString refusal(const QString& right) const;
    // The rights held, in order, for the connection's summary: "read, requeue, approve".
    QString summary() const;
    const QString& role() const { return m_role; }
    bool perRight() const { return m_perRight; } // read from idem_rights() (schema v21 or later)

    // The role that grants `right`: idem_reader, or idem_may_<right>.
    static QString grantRole(const QString& right);
    static QStringList names();

private:
    QString m_role;
    QStringList m_granted;
    bool m_perRight = false;
};

} // namespace idem::console
