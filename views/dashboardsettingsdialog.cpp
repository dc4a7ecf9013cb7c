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
        else if (spec.unit == TileUnit::Seconds || spec.unit == TileUnit::Latency)
            unit = QStringLiteral(" (s)");
        grid->addWidget(new QLabel(tileTitle(spec.tile) + unit), i + 1, 0);
        const QString key = QLatin1String(spec.key);
        const int decimals = spec.perClaims() || spec.unit == TileUnit::Percent || spec.unit == TileUnit::Latency ? 1 : 0;
        m_warning[static_cast<std::size_t>(i)] = thresholdBox(t.warning, key + QStringLiteral("Warning"), decimals);
        m_critical[static_cast<std::size_t>(i)] = thresholdBox(t.critical, key + QStringLiteral("Critical"), decimals);
        grid->addWidget(m_warning[static_cast<std::size_t>(i)], i + 1, 1);
        grid->addWidget(m_critical[static_cast<std::size_t>(i)], i + 1, 2);
    }
    m_longUnfinished = new QSpinBox;
    m_longUnfinished->setObjectName(QStringLiteral("longUnfinishedMinutes"));
    m_longUnfinished->setRange(1, 7 * 24 * 60);
    m_longUnfinished->setSuffix(tr(" min"));
    m_longUnfinished->setValue(settings.longUnfinishedMinutes);
    grid->addWidget(new QLabel(tr("Long-unfinished after")), tileCount + 1, 0);
    grid->addWidget(m_longUnfinished, tileCount + 1, 1);

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
    s.longUnfinishedMinutes = m_longUnfinished->value();
    return s;
}

} // namespace idem::console
