#include "views/dashboardrowsdialog.h"

#include <QDateTime>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableWidget>
#include <QVBoxLayout>

#include <stdexcept>
#include <vector>

#include "operations/tasklist.h"
#include "models/consolesession.h"

#include "models/visibletext.h"

namespace idem::console {

namespace {
    // What one read brings back: the count and the first page, from the same worker job.
    struct RowsAnswer {
        idem::TaskCount count;
        std::vector<idem::TaskRow> rows;
    };

    QString utc(std::optional<std::int64_t> us)
    {
        if (!us)
            return {};
        return QDateTime::fromMSecsSinceEpoch(*us / 1000, Qt::UTC).toString(QStringLiteral("yyyy-MM-ddTHH:mm:ssZ"));
    }
} // namespace

} // namespace idem::console

Q_DECLARE_METATYPE(idem::console::RowsAnswer)

namespace idem::console {

DashboardRowsDialog::DashboardRowsDialog(ConsoleSession* session, const idem::TaskFilter& filter, const QString& title,
    const LiveText& what, const std::optional<idem::TaskSort>& order, QWidget* parent)
    : QDialog(parent)
{
    setObjectName(QStringLiteral("dashboardRowsDialog"));
    setWindowTitle(what.isEmpty() ? title : tr("%1: %2").arg(title, what.text()));
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
    m_table->setTextElideMode(Qt::ElideMiddle);
    m_table->verticalHeader()->hide();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);
    layout->addWidget(buttons);

    qRegisterMetaType<RowsAnswer>();
    session->submit(
        [filter, order](pqxx::connection& conn, const idem::SchemaName& schema) {
            // The tile's order, else newest first where the unfinished-rows index serves it, by
            // key otherwise (a set with succeeded rows): the same reads and count as the Tasks page.
            idem::TaskSort sort = order.value_or(idem::TaskSort { idem::TaskSortColumn::UpdatedAt, true });
            try {
                idem::validateTaskQuery(filter, sort);
            } catch (const std::invalid_argument&) {
                sort = {};
            }
            idem::TaskReadOptions options;
            options.statementTimeoutMs = 5000;
            RowsAnswer out;
            out.count = idem::countTasks(conn, schema, filter, 10000, options);
            out.rows = idem::listTasks(conn, schema, filter, sort, std::nullopt, rowLimit, std::nullopt, options).rows;
            return QVariant::fromValue(out);
        },
        this,
        [this, what, order](const QVariant& answer) {
            const auto a = answer.value<RowsAnswer>();
            m_table->setRowCount(static_cast<int>(a.rows.size()));
            int r = 0;
            for (const auto& row : a.rows) {
                const QStringList cells = { visibleText(row.key), QString::fromStdString(row.status),
                    QString::number(row.attempts), QString::fromStdString(row.errorClass), utc(row.updatedAtUs),
                    utc(row.leaseUntilUs) };
                for (int c = 0; c < cells.size(); ++c) {
                    auto* item = new QTableWidgetItem(cells.at(c));
                    if (!row.errorMessage.empty())
                        item->setToolTip(visibleLines(QString::fromStdString(row.errorMessage)));
                    m_table->setItem(r, c, item);
                }
                ++r;
            }
            if (order && r > 0) // the row the tile's figure is about
                m_table->selectRow(0);
            m_matched = a.count.n;
            const QString n = QLocale().toString(qint64(a.count.n));
            QString text = a.count.exact ? tr("%1 rows match").arg(n) : tr("about %1 rows match (planner estimate)").arg(n);
            if (!what.isEmpty())
                text = tr("%1: %2").arg(text, what.text());
            if (a.rows.empty())
                text = tr("%1.").arg(text);
            else if (qint64(a.rows.size()) < a.count.n || !a.count.exact)
                text = tr("%1; the first %2 are listed.").arg(text, QString::number(a.rows.size()));
            else
                text = tr("%1; all are listed.").arg(text);
            m_status->setText(text);
            Q_EMIT loaded();
        },
        [this](const Failure& failure) {
            m_status->setText(tr("Could not read the rows: %1").arg(failure.text()));
            Q_EMIT loaded();
        });
}

QString DashboardRowsDialog::statusText() const { return m_status->text(); }

} // namespace idem::console
