#pragma once

#include <QFrame>

#include "models/dashboardthresholds.h"

class QLabel;

namespace idem::console {

struct TileValue;

// One headline figure: title, the number, a line of context. Its colour says the threshold
// level; greyed out it says the number is not live (the reason is in the tooltip and the
// dashboard's status line). A click asks for the rows behind it.
class TileWidget : public QFrame {
    Q_OBJECT
public:
    TileWidget(Tile tile, bool clickable, QWidget* parent = nullptr);

    void setValue(const TileValue& value, bool stale, const QString& thresholdText);
    // Intake of the tile's scope paused (issue #26): a badge line ("intake paused"), and the
    // pause in the tooltip; an empty badge takes it away.
    void setPaused(const QString& badge, const QString& toolTip);
    QString pausedText() const;

    Tile tile() const { return m_tile; }
    QString titleText() const;
    QString valueText() const;
    QString detailText() const;
    QString qualityText() const; // empty for an exact figure
    QString opensText() const { return m_opens; }
    QString opensNothingText() const;
    Level level() const { return m_level; }
    bool stale() const { return m_stale; }

Q_SIGNALS:
    void clicked(idem::console::Tile tile);
    // A click on a tile that opens nothing: `why` says so (also shown as a tooltip at the click).
    void clickedNothing(idem::console::Tile tile, const QString& why);

protected:
    void mouseReleaseEvent(QMouseEvent* event) override;
    void changeEvent(QEvent* event) override;
    bool event(QEvent* event) override;

private:
    void build();
    void applyStyle();
    void updateToolTip();

    Tile m_tile;
    bool m_clickable;
    QLabel* m_title;
    QLabel* m_value;
    QLabel* m_detail;
    QLabel* m_quality;
    QLabel* m_paused;
    QString m_pausedToolTip;
    QString m_more; // the tooltip's lines of the moment (TileValue::more)
    Level m_level = Level::NoData;
    bool m_stale = true;
    QString m_thresholdText;
    QString m_opens; // what a click opens, in words
    QString m_opensNothing; // why a click opens nothing
    bool m_styling = false;
};

} // namespace idem::console
