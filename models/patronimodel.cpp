#include "models/patronimodel.h"

#include <QCoreApplication>
#include <QFont>
#include <QLocale>

namespace idem::console {

PatroniModel::PatroniModel(QObject* parent)
    : RowTableModel(parent)
{
    using M = PatroniMember;
    const auto dash = [](const QString& s) { return s.isEmpty() ? QStringLiteral("–") : s; };
    const auto right = Qt::AlignRight | Qt::AlignVCenter;
    const auto role = [](const M& m) { return patroniRoleText(m.role); };
    const auto state = [dash](const M& m) { return dash(m.state); };
    const auto host = [](const M& m) { return m.host.isEmpty() ? QStringLiteral("–") : m.address(); };
    const auto lag = [](const M& m) { return lagText(m); };
    const auto timeline = [](const M& m) { return m.timeline > 0 ? QString::number(m.timeline) : QStringLiteral("–"); };
    const auto console = [this](const M& m) { return consoleText(m); };
    setColumns({
        { QT_TR_NOOP("Member"),
            [](const M& m) { return m.pendingRestart ? tr("%1 (restart pending)").arg(m.name) : m.name; },
            [](const M& m) { return m.name; } },
        { QT_TR_NOOP("Role"), role, role },
        { QT_TR_NOOP("State"), state, state },
        { QT_TR_NOOP("Host"), host, host },
        { .header = QT_TR_NOOP("Lag"), .display = lag, .toolTip = lag, .alignment = right },
        { .header = QT_TR_NOOP("Timeline"), .display = timeline, .toolTip = timeline, .alignment = right },
        { QT_TR_NOOP("Console on it"), console, console },
    });
}

void PatroniModel::setCluster(const PatroniCluster& cluster, const QString& adminAddress, const QString& pagesAddress)
{
    bool sameRows = std::size_t(cluster.members.size()) == m_rows.size();
    for (int i = 0; sameRows && i < cluster.members.size(); ++i)
        sameRows = cluster.members.at(i).name == m_rows[std::size_t(i)].name;
    if (!sameRows)
        beginResetModel();
    m_rows.assign(cluster.members.begin(), cluster.members.end());
    m_admin = adminAddress;
    m_pages = pagesAddress;
    if (!sameRows)
        endResetModel();
    else if (!m_rows.empty())
        rowsChanged(0, rowCount() - 1);
}

void PatroniModel::clear()
{
    if (m_rows.empty())
        return;
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

void PatroniModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, COLUMN_COUNT - 1);
    if (!m_rows.empty())
        rowsChanged(0, rowCount() - 1);
}

QString PatroniModel::lagText(const PatroniMember& m)
{
    if (m.isLeader())
        return QStringLiteral("–");
    if (m.lagUnknown)
        return QCoreApplication::translate("idem::console::PatroniModel", "unknown (no WAL position reported)");
    if (m.lagBytes < 0)
        return QStringLiteral("–");
    const QLocale locale;
    if (m.lagBytes < 1024 * 1024)
        return QCoreApplication::translate("idem::console::PatroniModel", "%1 bytes").arg(locale.toString(m.lagBytes));
    return QCoreApplication::translate("idem::console::PatroniModel", "%1 MB (%2 bytes)")
        .arg(locale.toString(static_cast<double>(m.lagBytes) / (1024.0 * 1024.0), 'f', 1), locale.toString(m.lagBytes));
}

QString PatroniModel::consoleText(const PatroniMember& m) const
{
    const QString address = m.address();
    const bool admin = !m_admin.isEmpty() && address == m_admin;
    const bool pages = !m_pages.isEmpty() && address == m_pages;
    if (admin && pages)
        return QCoreApplication::translate("idem::console::PatroniModel", "this console (actions and pages)");
    if (admin)
        return QCoreApplication::translate("idem::console::PatroniModel", "this console (actions)");
    if (pages)
        return QCoreApplication::translate("idem::console::PatroniModel", "this console (pages)");
    return {};
}

QVariant PatroniModel::rowData(const PatroniMember& m, int, int role) const
{
    if (role == LeaderRole)
        return m.isLeader();
    if (role == Qt::FontRole && m.isLeader()) {
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    return {};
}

} // namespace idem::console
