#include "views/tilegrid.h"

#include <QGridLayout>
#include <QResizeEvent>

#include <algorithm>

#include "views/tilewidget.h"

namespace idem::console {

TileGrid::TileGrid(QWidget* parent)
    : QWidget(parent)
    , m_grid(new QGridLayout(this))
{
    setObjectName(QStringLiteral("tileGrid"));
    // Its width is the page's to give: the columns follow it (relayout), never the other way.
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setSpacing(6);
    for (int i = 0; i < tileCount; ++i) {
        const auto t = static_cast<Tile>(i);
        auto* w = new TileWidget(t, tileSpec(t).opensRows(), this);
        m_tiles[static_cast<std::size_t>(i)] = w;
        connect(w, &TileWidget::clicked, this, &TileGrid::clicked);
    }
    relayout(1280);
}

void TileGrid::setTileVisible(Tile tile, bool visible)
{
    m_hidden[static_cast<std::size_t>(tile)] = !visible;
    this->tile(tile)->setVisible(visible);
    relayout(width());
}

void TileGrid::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    relayout(event->size().width());
}

void TileGrid::relayout(int width)
{
    int shown = 0;
    for (const bool hidden : m_hidden)
        shown += hidden ? 0 : 1;
    const int spacing = m_grid->horizontalSpacing();
    const int fit = std::max(1, (width + spacing) / (preferredTileWidth + spacing));
    const int rows = std::max(1, (shown + fit - 1) / fit);
    const int columns = std::max(1, (shown + rows - 1) / rows);
    if (columns == m_columns && shown == m_shown)
        return;
    m_columns = columns;
    m_shown = shown;
    for (auto* t : m_tiles)
        m_grid->removeWidget(t);
    int at = 0;
    for (std::size_t i = 0; i < m_tiles.size(); ++i) {
        if (m_hidden[i])
            continue;
        m_grid->addWidget(m_tiles[i], at / columns, at % columns);
        ++at;
    }
    for (int c = 0; c < tileCount; ++c)
        m_grid->setColumnStretch(c, c < columns ? 1 : 0);
}

} // namespace idem::console
