#pragma once

#include <QString>
#include <QList>

namespace idem {
struct Rights;
}

namespace idem::console {

// What the connected role may do (schema v21: one role per right, idem_rights() in the
// database, idem::readRights), as the console greys out what it may not do, with the reason in
// the tooltip. The rights are the database's list (idem_right_list), in its order; this names
// none. Against a schema before v21 it falls back to idem_operator: an operator may do
// everything, anyone else nothing but read. The database enforces the rights either way; this
// only spares a refusal.
class RoleRights {
public:
    struct Right {
        QString name;
        QString grantRole; // the role that grants it
        bool granted = false;
    };

    RoleRights() = default;
    static RoleRights fromRights(const idem::Rights& rights);
    // Schema before v21, or the rights could not be read: idem_operator decides.
    static RoleRights fromOperator(const QString& role, bool isOperator, bool isReader);

    bool may(const QString& right) const;
    // Why the role may not: "Role alice does not hold the requeue right (role idem_may_requeue):
    // an administrator grants it with GRANT idem_may_requeue TO alice." Empty when it may.
    QString refusal(const QString& right) const;
    // The rights held, in order, for the connection's summary: "read, requeue, approve".
    QString summary() const;
    const QString& role() const { return m_role; }
    bool perRight() const { return m_perRight; } // read from idem_rights() (schema v21 or later)
    // Every right the database lists, held or not (empty when not perRight()).
    const QList<Right>& rights() const { return m_rights; }

private:
    QString m_role;
    QList<Right> m_rights;
    bool m_perRight = false;
    bool m_operator = false; // not perRight(): idem_operator may do everything
    bool m_reader = false; // not perRight(): idem_reader may read
};

} // namespace idem::console
