#include "views/dashboardrowsdialog.h"

#include <QDateTime>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTableWidget>
#include <QVBoxLayout>

#include <vector>

#include "models/tilerows.h"
#include "models/visibletext.h"

namespace idem::console {

namespace {
    QString utc(std::optional<std::int64_t> us)
    {
        if (!us)
            return {};
        return QDateTime::fromMSecsSinceEpoch(*us / 1000, Qt::UTC).toString(QStringLiteral("yyyy-MM-ddTHH:mm:ssZ"));
    }
} // namespace

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

    auto* read = new TileRowsRead(session, this);
    connect(read, &TileRowsRead::answered, this, [this, what, order](const TileRows& a) {
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
    });
    connect(read, &TileRowsRead::failed, this, [this](const QString& why) {
        m_status->setText(tr("Could not read the rows: %1").arg(why));
        Q_EMIT loaded();
    });
    read->read(filter, order, rowLimit);
}

QString DashboardRowsDialog::statusText() const { return m_status->text(); }

} // namespace idem::console
