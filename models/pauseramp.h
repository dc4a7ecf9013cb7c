#pragma once

#include <QObject>
#include <QString>

#include "models/sessionrequest.h"
#include "operations/pauseramp.h"
#include "operations/pauses.h"

namespace idem::console {

class ConsoleSession;

// Before a resume (schema v33): what it sends at the recovering downstream, read on the session's
// worker thread (idem_pause_forecast), and a resume in steps (idem_resume_ramp), both by signal.
class PauseForecastRead : public QObject {
    Q_OBJECT
public:
    explicit PauseForecastRead(ConsoleSession* session, QObject* parent = nullptr);
    void read(const idem::Pause& pause, int minutes = 30);

Q_SIGNALS:
    void answered(const idem::PauseForecast& forecast);
    void failed(const QString& why);

private:
    SessionRequest m_request;
};

class PauseRampChange : public QObject {
    Q_OBJECT
public:
    explicit PauseRampChange(ConsoleSession* admin, QObject* parent = nullptr);
    void start(const idem::RampRequest& request);

Q_SIGNALS:
    void done(qint64 auditId, qint64 endsAtUs);
    void failed(const QString& why);

private:
    SessionRequest m_request;
};

// The forecast in words (display-safe), "at least" where the read reached its cap:
// "Resuming sends 412 retries due in the next 30 min (120 due already, 96 in the busiest minute)
// and 1,204 callers turned away since 10:02: 1,616 in all."
QString forecastText(const idem::PauseForecast& forecast);
// A ramp under way in words: "Ramping: step 2 of 4, 25 % of keys admitted; 3.1 % of 120 admitted
// claims failed (re-pauses above 20 %)."
QString rampText(const idem::Ramp& ramp);

} // namespace idem::console

Q_DECLARE_METATYPE(idem::PauseForecast)
