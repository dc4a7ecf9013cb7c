#include "views/tilewidget.h"

#include <QEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QToolTip>
#include <QVBoxLayout>

#include "models/dashboardmodel.h"
#include "views/theme.h"

namespace idem::console {

TileWidget::TileWidget(Tile tile, bool clickable, QWidget* parent)
    : QFrame(parent)
    , m_tile(tile)
    , m_clickable(clickable)
{
    setObjectName(QStringLiteral("tile_") + QLatin1String(tileSpec(tile).key));
    build();
    m_title->setText(tileTitle(tile));
    if (clickable)
        setCursor(Qt::PointingHandCursor);
}

void TileWidget::build()
{
    setFrameShape(QFrame::Box);
    setAutoFillBackground(true);
    setMinimumWidth(130);
    m_title = new QLabel;
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
    // Five tiles a row at 1280 px leave ~240 px, eight at 1920 px ~230 px: a longer detail wraps, not clipped.
    m_detail->setWordWrap(true);
    // What the number is, when it is not an exact count of now (a lower bound, an exact figure
    // of some seconds ago): a line of its own, hidden for an exact figure.
    m_quality = new QLabel;
    m_quality->setObjectName(QStringLiteral("tileQuality"));
    m_quality->setFont(small);
    m_quality->setWordWrap(true);
    m_quality->hide();
    m_paused = new QLabel;
    m_paused->setObjectName(QStringLiteral("tilePaused"));
    QFont badge = small;
    badge.setBold(true);
    m_paused->setFont(badge);
    m_paused->setWordWrap(true);
    m_paused->hide();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(10, 6, 10, 6);
    layout->setSpacing(1);
    layout->addWidget(m_title);
    layout->addWidget(m_value);
    layout->addWidget(m_detail);
    layout->addWidget(m_quality);
    layout->addWidget(m_paused);
    applyStyle();
}

QString TileWidget::titleText() const { return m_title->text(); }
QString TileWidget::valueText() const { return m_value->text(); }
QString TileWidget::detailText() const { return m_detail->text(); }
QString TileWidget::qualityText() const { return m_quality->text(); }

void TileWidget::setValue(const TileValue& value, bool stale, const QString& thresholdText)
{
    m_value->setText(value.text);
    m_detail->setText(value.detail);
    m_quality->setText(value.quality);
    m_quality->setVisible(!value.quality.isEmpty());
    m_thresholdText = thresholdText;
    m_opens = value.opens;
    m_opensNothing = value.opensNothing;
    m_more = value.more;
    updateToolTip();
    if (value.level != m_level || stale != m_stale) {
        m_level = value.level;
        m_stale = stale;
        applyStyle();
    }
}

void TileWidget::updateToolTip()
{
    const QString tip = TilePresenter::toolTip(m_tile, m_clickable, m_thresholdText, m_opens, m_opensNothing, m_more);
    setToolTip(m_pausedToolTip.isEmpty() ? tip : tip + QStringLiteral("\n\n") + m_pausedToolTip);
}

void TileWidget::setPaused(const QString& badge, const QString& toolTip)
{
    if (badge == m_paused->text() && toolTip == m_pausedToolTip)
        return;
    m_paused->setText(badge);
    m_paused->setVisible(!badge.isEmpty());
    m_pausedToolTip = toolTip;
    updateToolTip();
}

QString TileWidget::pausedText() const { return m_paused->isHidden() ? QString() : m_paused->text(); }

QString TileWidget::opensNothingText() const { return TilePresenter::opensNothingLine(m_opensNothing); }

void TileWidget::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        m_title->setText(tileTitle(m_tile));
        updateToolTip();
    }
    QFrame::changeEvent(event);
}

bool TileWidget::event(QEvent* event)
{
    // Light / dark switched (View > Theme, or the platform's palette): new tile colours. Our own
    // setPalette() sends a PaletteChange too: the guard stops that round trip.
    const auto type = event->type();
    const bool result = QFrame::event(event);
    if (!m_styling && (type == QEvent::ApplicationPaletteChange || type == QEvent::PaletteChange))
        applyStyle();
    return result;
}

void TileWidget::applyStyle()
{
    // A palette, not a style sheet: a dozen tiles change colour at once when the connection
    // drops, and re-polishing style sheets would cost the UI thread far more.
    // Colours a red-green deficient eye can still tell apart by brightness; on a dark palette
    // the same levels in darker shades with light text.
    const bool dark = theme::isDark();
    QColor background = dark ? QColor(0x33, 0x37, 0x3c) : QColor(0xf4, 0xf6, 0xf8);
    QColor text = dark ? QColor(0xe6, 0xe7, 0xe9) : QColor(0x1f, 0x23, 0x28);
    if (m_stale) {
        background = dark ? QColor(0x3a, 0x3a, 0x3a) : QColor(0xe0, 0xe0, 0xe0);
        text = dark ? QColor(0xb4, 0xb4, 0xb4) : QColor(0x55, 0x5a, 0x60); // greyed, still 4.5:1
    } else if (m_level == Level::Warning) {
        background = dark ? QColor(0x8a, 0x66, 0x00) : QColor(0xff, 0xe0, 0x82);
        text = dark ? QColor(0xff, 0xf3, 0xc4) : text;
    } else if (m_level == Level::Critical) {
        background = QColor(0xc6, 0x28, 0x28);
        text = Qt::white;
    } else if (m_level == Level::Normal) {
        background = dark ? QColor(0x1f, 0x4a, 0x2a) : QColor(0xe3, 0xf2, 0xe6);
    }
    QPalette p = palette();
    p.setColor(QPalette::Window, background);
    p.setColor(QPalette::WindowText, text);
    m_styling = true;
    setPalette(p);
    m_styling = false;
}

void TileWidget::mouseReleaseEvent(QMouseEvent* event)
{
    if (event->button() == Qt::LeftButton && rect().contains(event->position().toPoint())) {
        if (m_clickable) {
            Q_EMIT clicked(m_tile);
        } else if (!m_opensNothing.isEmpty()) {
            // A click that does nothing would look broken: say at the pointer why nothing opens.
            QToolTip::showText(event->globalPosition().toPoint(), opensNothingText(), this);
            Q_EMIT clickedNothing(m_tile, opensNothingText());
        }
    }
    QFrame::mouseReleaseEvent(event);
}

} // namespace idem::console
