#include "views/dashboardsettingsdialog.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QLabel>
#include <QSpinBox>
#include <QVBoxLayout>

namespace idem::console {

namespace {
    // The spin box's minimum stands for "off".
    // Counts (rows, seconds) are whole numbers, shares of claims and ratios have a decimal: a
    // threshold of 20 rows reads "20", not "20.0".
    QDoubleSpinBox* thresholdBox(const std::optional<double>& value, const QString& objectName, int decimals)
    {
        auto* box = new QDoubleSpinBox;
        box->setObjectName(objectName);
        box->setRange(-1, 1e12);
        box->setDecimals(decimals);
        box->setSpecialValueText(QCoreApplication::translate("idem::console::DashboardSettingsDialog", "off"));
        box->setValue(value ? *value : -1);
        return box;
    }

    std::optional<double> valueOf(const QDoubleSpinBox* box)
    {
        return box->value() < 0 ? std::nullopt : std::optional<double>(box->value());
    }
} // namespace

DashboardSettingsDialog::DashboardSettingsDialog(const DashboardSettings& settings, QWidget* parent)
    : QDialog(parent)
    , m_base(settings)
{
    setObjectName(QStringLiteral("dashboardSettingsDialog"));
    setWindowTitle(tr("Dashboard thresholds"));
    auto* grid = new QGridLayout;
    grid->addWidget(new QLabel(tr("<b>Tile</b>")), 0, 0);
    grid->addWidget(new QLabel(tr("<b>Amber from</b>")), 0, 1);
    grid->addWidget(new QLabel(tr("<b>Red from</b>")), 0, 2);
    for (int i = 0; i < tileCount; ++i) {
        const auto& spec = tileSpec(static_cast<Tile>(i));
        const auto& t = settings.thresholds[static_cast<std::size_t>(i)];
        QString unit;
        if (spec.unit == TileUnit::Percent)
            unit = QStringLiteral(" (%)");
        else if (spec.unit == TileUnit::Seconds)
            unit = QStringLiteral(" (s)");
        grid->addWidget(new QLabel(tileTitle(spec.tile) + unit), i + 1, 0);
        const QString key = QLatin1String(spec.key);
        const int decimals = spec.perClaims() || spec.unit == TileUnit::Percent ? 1 : 0;
        m_warning[static_cast<std::size_t>(i)] = thresholdBox(t.warning, key + QStringLiteral("Warning"), decimals);
        m_critical[static_cast<std::size_t>(i)] = thresholdBox(t.critical, key + QStringLiteral("Critical"), decimals);
        grid->addWidget(m_warning[static_cast<std::size_t>(i)], i + 1, 1);
        grid->addWidget(m_critical[static_cast<std::size_t>(i)], i + 1, 2);
    }
    // The latency tile (issue #27) is not a catalogue tile: its row comes after theirs.
    const int worstRow = tileCount + 1;
    grid->addWidget(new QLabel(tr("Worst p95 run time") + QStringLiteral(" (s)")), worstRow, 0);
    m_worstP95Warning = thresholdBox(settings.worstP95Run.warning, QStringLiteral("worstP95RunTimeWarning"), 1);
    m_worstP95Critical = thresholdBox(settings.worstP95Run.critical, QStringLiteral("worstP95RunTimeCritical"), 1);
    grid->addWidget(m_worstP95Warning, worstRow, 1);
    grid->addWidget(m_worstP95Critical, worstRow, 2);
    m_longUnfinished = new QSpinBox;
    m_longUnfinished->setObjectName(QStringLiteral("longUnfinishedMinutes"));
    m_longUnfinished->setRange(1, 7 * 24 * 60);
    m_longUnfinished->setSuffix(tr(" min"));
    m_longUnfinished->setValue(settings.longUnfinishedMinutes);
    grid->addWidget(new QLabel(tr("Long-unfinished after")), worstRow + 1, 0);
    grid->addWidget(m_longUnfinished, worstRow + 1, 1);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("A tile turns amber, then red, at or above these values. Crossing "
                                    "into red raises one desktop notification.")));
    layout->addLayout(grid);
    layout->addWidget(buttons);
}

DashboardSettings DashboardSettingsDialog::settings() const
{
    DashboardSettings s = m_base;
    for (int i = 0; i < tileCount; ++i) {
        auto& t = s.thresholds[static_cast<std::size_t>(i)];
        t.warning = valueOf(m_warning[static_cast<std::size_t>(i)]);
        t.critical = valueOf(m_critical[static_cast<std::size_t>(i)]);
    }
    s.worstP95Run.warning = valueOf(m_worstP95Warning);
    s.worstP95Run.critical = valueOf(m_worstP95Critical);
    s.longUnfinishedMinutes = m_longUnfinished->value();
    return s;
}

} // namespace idem::console
