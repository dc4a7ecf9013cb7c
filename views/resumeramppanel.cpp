#include "views/resumeramppanel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QVBoxLayout>

#include <stdexcept>

#include "models/pauseramp.h"
#include "models/visibletext.h"
#include "views/theme.h"

namespace idem::console {

ResumeRampPanel::ResumeRampPanel(ConsoleSession* session, const idem::Pause& pause, QWidget* parent)
    : QWidget(parent)
    , m_pause(pause)
{
    m_forecast = new QLabel(tr("Reading what a resume sends…"));
    m_forecast->setObjectName(QStringLiteral("resumeForecast"));
    m_forecast->setWordWrap(true);
    m_forecast->setTextFormat(Qt::PlainText);
    m_inSteps = new QCheckBox(tr("Resume in steps: admit a growing share of keys (by key hash), pause again by itself "
                                 "when they fail"));
    m_inSteps->setObjectName(QStringLiteral("resumeInSteps"));
    m_steps = new QLineEdit(QStringLiteral("10,25,50,100"));
    m_steps->setObjectName(QStringLiteral("rampSteps"));
    m_steps->setToolTip(tr("Percentages of keys admitted step by step, rising, the last 100."));
    m_minutes = new QSpinBox;
    m_minutes->setObjectName(QStringLiteral("rampStepMinutes"));
    m_minutes->setRange(1, 1440);
    m_minutes->setValue(5);
    m_minutes->setSuffix(tr(" min"));
    m_abort = new QDoubleSpinBox;
    m_abort->setObjectName(QStringLiteral("rampAbortAbove"));
    m_abort->setRange(1, 100);
    m_abort->setDecimals(0);
    m_abort->setValue(20);
    m_abort->setSuffix(QStringLiteral(" %"));
    m_abort->setToolTip(tr("Once a step admitted 20 claims, more failures than this share of them pause the scope "
                           "again, until resumed."));
    auto* form = new QFormLayout;
    form->addRow(tr("Steps (%):"), m_steps);
    form->addRow(tr("Each step:"), m_minutes);
    form->addRow(tr("Pause again above:"), m_abort);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_forecast);
    layout->addWidget(m_inSteps);
    layout->addLayout(form);
    const auto follow = [this] {
        for (QWidget* w : std::initializer_list<QWidget*> { m_steps, m_minutes, m_abort })
            w->setEnabled(m_inSteps->isChecked());
        Q_EMIT changed();
    };
    connect(m_inSteps, &QCheckBox::toggled, this, follow);
    connect(m_steps, &QLineEdit::textChanged, this, &ResumeRampPanel::changed);
    follow();

    m_read = new PauseForecastRead(session, this);
    connect(m_read, &PauseForecastRead::answered, this,
        [this](const idem::PauseForecast& f) { m_forecast->setText(forecastText(f)); });
    connect(m_read, &PauseForecastRead::failed, this, [this](const QString& why) {
        m_forecast->setText(tr("What a resume sends could not be read: %1").arg(visibleLines(why)));
        theme::followTone(m_forecast, theme::Tone::Caution);
    });
    m_read->read(m_pause);
}

bool ResumeRampPanel::inSteps() const { return m_inSteps->isChecked(); }

idem::RampRequest ResumeRampPanel::request(const std::string& reason) const
{
    idem::RampRequest r;
    r.tenant = m_pause.tenant;
    r.operation = m_pause.operation;
    r.steps = idem::parseRampSteps(m_steps->text().trimmed().toStdString());
    r.stepMs = qint64(m_minutes->value()) * 60000;
    r.abortAbove = m_abort->value() / 100.0;
    r.reason = reason;
    return r;
}

QString ResumeRampPanel::problem() const
{
    if (!inSteps())
        return {};
    try {
        idem::validateRampRequest(request("reason"));
    } catch (const std::invalid_argument&) {
        return tr("Steps are 2 to 20 rising percentages from 1 to 100 separated by commas, the last 100 "
                  "(e.g. 10,25,50,100).");
    }
    return {};
}

void ResumeRampPanel::lock()
{
    for (QWidget* w : std::initializer_list<QWidget*> { m_inSteps, m_steps, m_minutes, m_abort })
        w->setEnabled(false);
}

} // namespace idem::console
