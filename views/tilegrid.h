#pragma once

#include <QWidget>

#include <array>

#include "models/tilecatalogue.h"

class QGridLayout;

namespace idem::console {

class TileWidget;

// The dashboard's tiles, one per catalogue row in its order, in rows that differ by one tile at
// most: as many columns as fit at preferredTileWidth, then as few as still make that many rows
// (15 tiles: 5 × 3 at 1280 px, 8 + 7 at 1920 px), so no row is left with one or two. A hidden
// tile (a snapshot without latency figures) gives its place to the next.
class TileGrid : public QWidget {
    Q_OBJECT
public:
    static constexpr int preferredTileWidth = 200;

    explicit TileGrid(QWidget* parent = nullptr);

    TileWidget* tile(Tile tile) const { return m_tiles[static_cast<std::size_t>(tile)]; }
    const std::array<TileWidget*, tileCount>& tiles() const { return m_tiles; }
    void setTileVisible(Tile tile, bool visible);
    int columns() const { return m_columns; }

Q_SIGNALS:
    // A tile that opens rows was clicked.
    void clicked(idem::console::Tile tile);

protected:
    void resizeEvent(QResizeEvent* event) override;

private:
    void relayout(int width);

    QGridLayout* m_grid;
    std::array<TileWidget*, tileCount> m_tiles {};
    std::array<bool, tileCount> m_hidden {};
    int m_columns = 0;
    int m_shown = 0;
};

} // namespace idem::console
