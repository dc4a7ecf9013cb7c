#include "views/tilewidget.h"

#include <QLabel>
#include <QMouseEvent>
#include <QVBoxLayout>

#include "models/dashboardmodel.h"

namespace idem::console {

TileWidget::TileWidget(Tile tile, bool clickable, QWidget* parent)
    : QFrame(parent)
    , m_tile(tile)
    , m_clickable(clickable)
{
    const auto& spec = tileSpec(tile);
    setObjectName(QStringLiteral("tile_") + QLatin1String(spec.key));
    setFrameShape(QFrame::Box);
    setAutoFillBackground(true);
    setMinimumWidth(130);
    m_title = new QLabel(spec.title);
    m_title->setObjectName(QStringLiteral("tileTitle"));
    m_value = new QLabel(QStringLiteral("–"));
    m_value->setObjectName(QStringLiteral("tileValue"));
    QFont big = m_value->font();
    big.setPointSizeF(big.pointSizeF() * 1.9);
    big.setBold(true);
    m_value->setFont(big);
    m_detail = new QLabel;
    m_detail->setObjectName(QStringLiteral("tileDetail"));
    QFont small = m_detail->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_detail->setFont(small);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(10, 6, 10, 6);
    layout->setSpacing(1);
    layout->addWidget(m_title);
    layout->addWidget(m_value);
    layout->addWidget(m_detail);
    if (clickable)
        setCursor(Qt::PointingHandCursor);
    applyStyle();
}

QString TileWidget::titleText() const { return m_title->text(); }
QString TileWidget::valueText() const { return m_value->text(); }
QString TileWidget::detailText() const { return m_detail->text(); }

void TileWidget::setValue(const TileValue& value, bool stale, const QString& thresholdText)
{
    m_value->setText(value.text);
    m_detail->setText(value.detail);
    QString tip = tileSpec(m_tile).definition;
    if (!thresholdText.isEmpty())
        tip += QStringLiteral("\n") + thresholdText;
    if (m_clickable)
        tip += QStringLiteral("\nClick to open these rows.");
    setToolTip(tip);
    if (value.level != m_level || stale != m_stale) {
        m_level = value.level;
        m_stale = stale;
        applyStyle();
    }
}

void TileWidget::applyStyle()
{
    // A palette, not a style sheet: a dozen tiles change colour at once when the connection
    // drops, and re-polishing style sheets would cost the UI thread far more.
    // Colours a red-green deficient eye can still tell apart by brightness.
    QColor background(0xf4, 0xf6, 0xf8);
    QColor text(0x1f, 0x23, 0x28);
    if (m_stale) {
        background = QColor(0xe0, 0xe0, 0xe0);
        text = QColor(0x8a, 0x8a, 0x8a);
    } else if (m_level == Level::Warning) {
        background = QColor(0xff, 0xe0, 0x82);
    } else if (m_level == Level::Critical) {
        background = QColor(0xc6, 0x28, 0x28);
        text = Qt::white;
    } else if (m_level == Level::Normal) {
        background = QColor(0xe3, 0xf2, 0xe6);
    }
    QPalette p = palette();
    p.setColor(QPalette::Window, background);
    p.setColor(QPalette::WindowText, text);
    setPalette(p);
}

void TileWidget::mouseReleaseEvent(QMouseEvent* event)
{
    if (m_clickable && event->button() == Qt::LeftButton && rect().contains(event->position().toPoint()))
        Q_EMIT clicked(m_tile);
    QFrame::mouseReleaseEvent(event);
}

} // namespace idem::console
