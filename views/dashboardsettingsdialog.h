#pragma once

#include <QDialog>

#include <array>

#include "models/dashboardthresholds.h"

class QDoubleSpinBox;
class QSpinBox;

namespace idem::console {

// Where an operator sets each tile's amber and red thresholds (or turns them off) and the
// long-unfinished limit. Kept in the settings file by the dashboard.
class DashboardSettingsDialog : public QDialog {
    Q_OBJECT
public:
    explicit DashboardSettingsDialog(const DashboardSettings& settings, QWidget* parent = nullptr);

    DashboardSettings settings() const;

private:
    DashboardSettings m_base;
    std::array<QDoubleSpinBox*, tileCount> m_warning {};
    std::array<QDoubleSpinBox*, tileCount> m_critical {};
    QSpinBox* m_longUnfinished;
};

} // namespace idem::console
