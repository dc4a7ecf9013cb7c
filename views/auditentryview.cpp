#include "views/auditentryview.h"

#include <QEvent>
#include <QFont>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include "models/visibletext.h"
#include "models/auditmodel.h"
#include "models/tones.h"

namespace idem::console {

AuditEntryView::AuditEntryView(const QString& namePrefix, QWidget* parent)
    : QWidget(parent)
    , m_title(new QLabel(tr("Select an entry to see what it changed.")))
    , m_reason(new QPlainTextEdit)
    , m_diff(new QTableWidget(0, 3))
{
    m_title->setObjectName(namePrefix + QStringLiteral("EntryTitle"));
    m_title->setWordWrap(true);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_reason->setObjectName(namePrefix + QStringLiteral("Reason"));
    m_reason->setReadOnly(true);
    m_reason->setMaximumHeight(60);
    m_diff->setObjectName(namePrefix + QStringLiteral("Diff"));
    m_diff->setHorizontalHeaderLabels({ tr("Field"), tr("Before"), tr("After") });
    m_diff->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_diff->verticalHeader()->setVisible(false);
    m_diff->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_diff->setWordWrap(false);
    m_diff->verticalHeader()->setDefaultSectionSize(m_diff->fontMetrics().height() + 6);

    auto* el = new QVBoxLayout(this);
    el->setContentsMargins(0, 0, 0, 0);
    el->addWidget(m_title);
    el->addWidget(m_reason);
    el->addWidget(m_diff, 1);
}

AuditEntryView::~AuditEntryView() = default;

void AuditEntryView::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        m_diff->setHorizontalHeaderLabels({ tr("Field"), tr("Before"), tr("After") });
        if (!m_showing)
            m_title->setText(tr("Select an entry to see what it changed."));
    }
    QWidget::changeEvent(event);
}

void AuditEntryView::clearEntry()
{
    m_showing = false;
    m_diff->setRowCount(0);
    m_reason->clear();
    m_title->setText(tr("Select an entry to see what it changed."));
}

void AuditEntryView::showEntry(
    const QString& titleHtml, const QString& reason, const std::string& beforeImage, const std::string& afterImage)
{
    m_showing = true;
    m_title->setText(titleHtml);
    m_reason->setPlainText(visibleLines(reason));
    const auto diff = auditDiff(beforeImage, afterImage);
    m_diff->setRowCount(static_cast<int>(diff.size()));
    QFont bold = m_diff->font();
    bold.setBold(true);
    for (int i = 0; i < diff.size(); ++i) {
        const auto& d = diff[i];
        QTableWidgetItem* items[]
            = { new QTableWidgetItem(visibleText(d.field)), new QTableWidgetItem(visibleText(d.before)),
                  new QTableWidgetItem(visibleText(d.after)) };
        for (int c = 0; c < 3; ++c) {
            items[c]->setToolTip(items[c]->text());
            if (d.changed) {
                // Its own text colour too: the palette's light text on light yellow is unreadable.
                const bool dark = tones::isDark();
                items[c]->setBackground(dark ? QColor(0x5c, 0x4a, 0x00) : QColor(0xff, 0xf0, 0xb3));
                items[c]->setForeground(dark ? QColor(0xff, 0xf3, 0xc4) : QColor(0x1f, 0x23, 0x28));
                items[c]->setFont(bold);
            }
            items[c]->setData(Qt::UserRole, d.changed);
            m_diff->setItem(i, c, items[c]);
        }
    }
}

void AuditEntryView::setUpTable(
    QTableView* view, QAbstractItemModel* model, std::initializer_list<std::pair<int, int>> widths)
{
    view->setModel(model);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->verticalHeader()->setVisible(false);
    view->horizontalHeader()->setStretchLastSection(true);
    view->setWordWrap(false);
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    for (const auto& [column, width] : widths)
        view->setColumnWidth(column, width);
}

QSplitter* AuditEntryView::split(QTableView* view, AuditEntryView* entry)
{
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(view);
    split->addWidget(entry);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    return split;
}

} // namespace idem::console
