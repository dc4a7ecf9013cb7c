#include "views/dashboardrowsdialog.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <vector>

#include "operations/dashboardquery.h"
#include "models/consolesession.h"

Q_DECLARE_METATYPE(std::vector<idem::TaskSummaryRow>)

namespace idem::console {

DashboardRowsDialog::DashboardRowsDialog(
    ConsoleSession* session, const idem::TaskFilter& filter, const QString& title, QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("dashboardRowsDialog"));
    setWindowTitle(tr("%1: newest %2 rows").arg(title).arg(rowLimit));
    resize(900, 480);
    m_status = new QLabel(tr("Reading…"));
    m_status->setObjectName(QStringLiteral("rowsStatus"));
    m_status->setWordWrap(true);
    m_table = new QTableWidget(0, 6);
    m_table->setObjectName(QStringLiteral("rowsTable"));
    m_table->setHorizontalHeaderLabels(
        { tr("Key"), tr("Status"), tr("Attempts"), tr("Error class"), tr("Updated (UTC)"), tr("Lease until (UTC)") });
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_table->verticalHeader()->hide();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);
    layout->addWidget(buttons);

    session->submit(
        [filter](pqxx::connection& conn, const idem::SchemaName& schema) {
            return QVariant::fromValue(idem::readTopTasks(conn, schema, filter, rowLimit, 5000));
        },
        this,
        [this](const QVariant& answer) {
            const auto rows = answer.value<std::vector<idem::TaskSummaryRow>>();
            m_table->setRowCount(static_cast<int>(rows.size()));
            int r = 0;
            for (const auto& row : rows) {
                const QStringList cells = { QString::fromStdString(row.key), QString::fromStdString(row.status),
                    QString::number(row.attempts), QString::fromStdString(row.errorClass),
                    QString::fromStdString(row.updatedAt), QString::fromStdString(row.leaseUntil) };
                for (int c = 0; c < cells.size(); ++c) {
                    auto* item = new QTableWidgetItem(cells.at(c));
                    if (!row.errorMessage.empty())
                        item->setToolTip(QString::fromStdString(row.errorMessage));
                    m_table->setItem(r, c, item);
                }
                ++r;
            }
            m_status->setText(rows.empty() ? tr("No rows match.")
                                           : tr("%1 rows (at most %2, newest first).").arg(rows.size()).arg(rowLimit));
            Q_EMIT loaded();
        },
        [this](const Failure& failure) {
            m_status->setText(tr("Could not read the rows: %1").arg(failure.text()));
            Q_EMIT loaded();
        });
}

QString DashboardRowsDialog::statusText() const { return m_status->text(); }

} // namespace idem::console
