#pragma once

#include <QString>

#include "models/patroniparse.h"
#include "models/rowtablemodel.h"

namespace idem::console {

// The members as a table: name, role, state, host, lag, timeline, and which the console is on.
class PatroniModel : public RowTableModel<PatroniMember> {
    Q_OBJECT
public:
    enum Column { Member, Role, State, Host, Lag, Timeline, Console, COLUMN_COUNT };
    enum Roles { LeaderRole = Qt::UserRole + 1 };

    explicit PatroniModel(QObject* parent = nullptr);

    // The cluster, and the server addresses (inet_server_addr():port) of the console's
    // connections: admin first, then the pages' (when it differs).
    void setCluster(const PatroniCluster& cluster, const QString& adminAddress, const QString& pagesAddress);
    void clear();
    // The language changed: headers and cells are said again.
    void retranslate();

    static QString lagText(const PatroniMember& member);

protected:
    QVariant rowData(const PatroniMember& m, int column, int role) const override;

private:
    QString consoleText(const PatroniMember& member) const;

    QString m_admin;
    QString m_pages;
};

} // namespace idem::console
