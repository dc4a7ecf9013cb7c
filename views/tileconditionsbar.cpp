#include "views/tileconditionsbar.h"


#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QStringList>
#include <QToolButton>

namespace idem::console {

idem::TaskFilter visiblePart(const idem::TaskFilter& f)
{
    idem::TaskFilter v;
    v.statuses = f.statuses;
    v.tenant = f.tenant;
    v.operation = f.operation;
    v.keyPrefix = f.keyPrefix;
    v.minAttempts = f.minAttempts.value_or(0) > 0 ? f.minAttempts : std::nullopt; // 0 reads "any"
    v.expiredLease = f.expiredLease;
    v.uncertain = f.uncertain;
    v.digestConflicts = f.digestConflicts;
    v.failedSince = f.failedSince;
    v.errorClass = f.errorClass;
    v.liveLease = f.liveLease;
    v.exhausted = f.exhausted;
    v.unfinishedForMinutes = f.unfinishedForMinutes.value_or(0) > 0 ? f.unfinishedForMinutes : std::nullopt;
    v.updatedWithinMinutes = f.updatedWithinMinutes.value_or(0) > 0 ? f.updatedWithinMinutes : std::nullopt;
    v.errorContains = f.errorContains;
    return v;
}

idem::TaskFilter withHidden(idem::TaskFilter to, const idem::TaskFilter& from)
{
    to.conflictWithinMinutes = from.conflictWithinMinutes;
    to.failedRetryInWindow = from.failedRetryInWindow;
    return to;
}

idem::TaskFilter hiddenPart(const idem::TaskFilter& f) { return withHidden({}, f); }

TileConditionsBar::TileConditionsBar(QWidget* parent)
    : QWidget(parent)
    , m_text(new QLabel)
    , m_clear(new QToolButton)
{
    setObjectName(QStringLiteral("tileConditionsRow"));
    m_text->setObjectName(QStringLiteral("tileConditions"));
    m_text->setWordWrap(true);
    m_clear->setObjectName(QStringLiteral("clearTileConditions"));
    m_clear->setText(QStringLiteral("×"));
    m_clear->setAutoRaise(true);
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_clear, 0, Qt::AlignTop);
    connect(m_clear, &QToolButton::clicked, this, &TileConditionsBar::removeRequested);
    retranslate();
}

void TileConditionsBar::setConditions(const idem::TaskFilter& hidden)
{
    m_hidden = hiddenPart(hidden);
    retranslate();
}

QString TileConditionsBar::text() const { return isHidden() ? QString() : m_text->text(); }

void TileConditionsBar::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslate();
    QWidget::changeEvent(event);
}

void TileConditionsBar::retranslate()
{
    m_clear->setToolTip(tr("Remove these conditions: list exactly what the controls above say"));
    m_clear->setAccessibleName(m_clear->toolTip());
    const auto& f = m_hidden;
    QStringList parts;
    if (f.conflictWithinMinutes)
        parts << tr("a digest conflict in the last %1 min").arg(*f.conflictWithinMinutes);
    if (f.failedRetryInWindow)
        parts << tr("a failure of attempt 2 or later in that window (from the error history)");
    m_text->setText(tr("Also narrowed by the tile: %1").arg(parts.join(QStringLiteral(" · "))));
    setVisible(!parts.isEmpty());
}

} // namespace idem::console
