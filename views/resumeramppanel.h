#pragma once

#include <QWidget>

#include "operations/pauseramp.h"
#include "operations/pauses.h"

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace idem::console {

class ConsoleSession;
class PauseForecastRead;

// The resume dialog's part before a resume (schema v33): what it sends at the recovering
// downstream (the forecast, read when the dialog opens), and the choice to resume in steps (the
// percentages, each step's minutes, the failure rate past which the database pauses again).
class ResumeRampPanel : public QWidget {
    Q_OBJECT
public:
    ResumeRampPanel(ConsoleSession* session, const idem::Pause& pause, QWidget* parent = nullptr);

    QLabel* forecastLabel() const { return m_forecast; }
    QCheckBox* inStepsBox() const { return m_inSteps; }
    QLineEdit* stepsEdit() const { return m_steps; }
    QSpinBox* stepMinutes() const { return m_minutes; }
    QDoubleSpinBox* abortAbove() const { return m_abort; }
    bool inSteps() const;
    // The ramp as chosen; what is wrong with it (empty when nothing).
    idem::RampRequest request(const std::string& reason) const;
    QString problem() const;
    void lock(); // while running and after

Q_SIGNALS:
    void changed();

private:
    idem::Pause m_pause;
    PauseForecastRead* m_read = nullptr;
    QLabel* m_forecast = nullptr;
    QCheckBox* m_inSteps = nullptr;
    QLineEdit* m_steps = nullptr;
    QSpinBox* m_minutes = nullptr;
    QDoubleSpinBox* m_abort = nullptr;
};

} // namespace idem::console
