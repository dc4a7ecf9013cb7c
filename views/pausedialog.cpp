#include "views/pausedialog.h"
#include "ui_pausedialog.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>

#include "operations/actions.h"
#include "models/consolesession.h"
#include "models/olderschema.h"
#include "models/pauseramp.h"
#include "models/pausewatch.h"
#include "models/visibletext.h"
#include "views/resumeramppanel.h"
#include "views/theme.h"

namespace idem::console {

namespace {
    QString scopeOf(const QString& name) { return name.trimmed().isEmpty() ? QStringLiteral("*") : name.trimmed(); }

    QString localTime(std::int64_t us)
    {
        return QDateTime::fromMSecsSinceEpoch(us / 1000).toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    }
} // namespace

QString pauseRefusal(const ConsoleSession* admin)
{
    if (!admin || admin->state() != ConsoleSession::State::Connected)
        return PauseDialog::tr("Not connected.");
    const auto& si = admin->serverInfo();
    // The pause right (schema v21: role idem_may_pause; before, idem_operator).
    if (!si.rights.may(QStringLiteral("pause")))
        return si.rights.refusal(QStringLiteral("pause"));
    if (admin->readOnly())
        return PauseDialog::tr("The schema is newer than this console, or its migrations do not match: look, change "
                               "nothing.");
    return olderSchemaRefusal(*admin);
}

PauseDialog::PauseDialog(ConsoleSession* admin, const QString& tenant, const QString& operation, QWidget* parent)
    : QDialog(parent)
    , m_admin(admin)
    , m_mode(Mode::Pause)
    , m_ui(std::make_unique<Ui::PauseDialog>())
{
    m_pause.tenant = scopeOf(tenant).toStdString();
    m_pause.operation = scopeOf(operation).toStdString();
    build();
}

PauseDialog::PauseDialog(ConsoleSession* admin, const idem::Pause& pause, QWidget* parent)
    : QDialog(parent)
    , m_admin(admin)
    , m_mode(Mode::Resume)
    , m_pause(pause)
    , m_ui(std::make_unique<Ui::PauseDialog>())
{
    build();
}

PauseDialog::~PauseDialog() = default;

void PauseDialog::build()
{
    // The layout and the fixed words are the form's (pausedialog.ui); the mode's words, the
    // lengths' minutes and the tones are set here.
    m_ui->setupUi(this);
    const bool pausing = m_mode == Mode::Pause;
    setObjectName(pausing ? QStringLiteral("pauseDialog") : QStringLiteral("resumeDialog"));
    setWindowTitle(pausing ? tr("Pause intake – Idem console") : tr("Resume intake – Idem console"));
    m_intro = m_ui->pauseIntro;
    if (pausing) {
        m_intro->setText(tr("While a pause is in force, claim() neither acquires nor takes over a key of its scope: "
                            "workers get the decision 'paused' and ask again later, no attempt is counted. "
                            "Replays of succeeded keys and digest conflicts still answer. '*' means all."));
        m_tenant = m_ui->pauseTenant;
        m_tenant->setText(QString::fromStdString(m_pause.tenant));
        m_operation = m_ui->pauseOperation;
        m_operation->setText(QString::fromStdString(m_pause.operation));
        m_length = m_ui->pauseLength;
        // The minutes of each entry, in the form's order: -1 custom, 0 until resumed.
        const int minutes[] = { 15, 60, 240, 1440, -1, 0 };
        for (int i = 0; i < int(std::size(minutes)); ++i)
            m_length->setItemData(i, minutes[i]);
        m_custom = m_ui->pauseCustomMinutes;
        m_custom->setRange(1, int(idem::PauseRequest::maxLengthMs / 60000));
        m_custom->setValue(30);
        // '*:*' turns every worker away: a second, explicit step, never Enter alone.
        m_everything = m_ui->pauseEverythingConfirm;
        connect(m_everything, &QCheckBox::toggled, this, &PauseDialog::updateRun);
        connect(m_length, &QComboBox::currentIndexChanged, this, [this] {
            m_custom->setEnabled(m_length->currentData().toInt() < 0);
            updateRun();
        });
        connect(m_tenant, &QLineEdit::textChanged, this, &PauseDialog::updateRun);
        connect(m_operation, &QLineEdit::textChanged, this, &PauseDialog::updateRun);
    } else {
        // Lifting one pause: its scope and length are given, so their fields go.
        delete m_ui->pauseScope;
        delete m_ui->pauseEverythingConfirm;
        const QString until = m_pause.untilUs ? localTime(*m_pause.untilUs) : tr("until resumed");
        // One arg() per value: a reason holding "%2" must not become the next placeholder.
        m_intro->setText(tr("Lift the pause of %1. Claims of its keys acquire again from the moment this commits, "
                            "unless another pause still covers them.")
                             .arg(pauseScopeText(m_pause))
            + QStringLiteral("\n")
            + tr("Paused by %1 since %2, %3.").arg(visibleText(m_pause.pausedBy), localTime(m_pause.pausedAtUs), until)
            + QStringLiteral("\n") + tr("Reason: %1").arg(visibleText(m_pause.reason)));
        m_intro->setTextFormat(Qt::PlainText);
        m_rampPanel = new ResumeRampPanel(m_admin, m_pause);
        m_rampPanel->setObjectName(QStringLiteral("resumeRampPanel"));
        m_ui->dialogLayout->insertWidget(m_ui->dialogLayout->indexOf(m_intro) + 1, m_rampPanel);
        connect(m_rampPanel, &ResumeRampPanel::changed, this, &PauseDialog::updateRun);
    }
    m_reason = m_ui->reasonEdit;
    m_reasonHint = m_ui->reasonHint;
    m_why = m_ui->pauseRefusal;
    theme::followTone(m_why, theme::Tone::Bad);
    m_result = m_ui->pauseResult;
    m_run = m_ui->runButton;
    m_run->setText(pausing ? tr("Pause") : tr("Resume"));
    m_close = m_ui->closeButton;
    resize(560, pausing ? 420 : 520);

    connect(m_reason, &QPlainTextEdit::textChanged, this, &PauseDialog::updateRun);
    connect(m_run, &QPushButton::clicked, this, &PauseDialog::run);
    connect(m_close, &QPushButton::clicked, this, [this] {
        if (!m_running)
            m_finished ? accept() : reject();
    });
    m_change = new PauseChange(m_admin, this);
    connect(m_change, &PauseChange::done, this, [this](const PauseOutcome& out) {
        m_auditId = out.auditId;
        QString text;
        if (m_mode == Mode::Pause) {
            text = (out.wasPaused ? tr("Pause of %1 changed: %2.") : tr("Paused %1 %2.")).arg(out.scope, out.until);
        } else {
            text = tr("Resumed %1.").arg(out.scope);
            if (!out.stillPausedBy.isEmpty())
                text += QLatin1Char(' ') + tr("Still paused by: %1.").arg(out.stillPausedBy.join(QStringLiteral(", ")));
        }
        text += QLatin1Char(' ') + tr("Audit entry #%1.").arg(m_auditId);
        showResult(text, true);
    });
    m_rampChange = new PauseRampChange(m_admin, this);
    connect(m_rampChange, &PauseRampChange::done, this, [this](qint64 auditId, qint64 endsAtUs) {
        m_auditId = auditId;
        showResult(tr("Resuming %1 in steps: every key admitted at %2 unless its keys fail first. Audit entry #%3.")
                       .arg(pauseScopeText(m_pause), localTime(endsAtUs), QString::number(auditId)),
            true);
    });
    connect(m_rampChange, &PauseRampChange::failed, this,
        [this](const QString& why) { showResult(tr("Not resumed: %1").arg(visibleLines(why)), false); });
    connect(m_change, &PauseChange::failed, this, [this](const QString& why) {
        // The server's words, whole, with anything that would hide or rearrange them escaped.
        showResult((m_mode == Mode::Pause ? tr("Not paused: %1") : tr("Not resumed: %1")).arg(visibleLines(why)), false);
    });
    if (m_admin) {
        connect(m_admin, &ConsoleSession::stateChanged, this, &PauseDialog::updateRun);
        connect(m_admin, &ConsoleSession::serverInfoChanged, this, &PauseDialog::updateRun);
    }
    updateRun();
}

std::optional<qint64> PauseDialog::lengthMs() const
{
    if (!m_length)
        return std::nullopt;
    const int minutes = m_length->currentData().toInt();
    if (minutes == 0)
        return std::nullopt;
    return qint64(minutes < 0 ? m_custom->value() : minutes) * 60000;
}

bool PauseDialog::pausesEverything() const
{
    return m_mode == Mode::Pause && scopeOf(m_tenant->text()) == QLatin1String("*")
        && scopeOf(m_operation->text()) == QLatin1String("*");
}

void PauseDialog::updateRun()
{
    const bool blank = idem::reasonIsBlank(m_reason->toPlainText().toStdString());
    const bool everything = pausesEverything();
    if (m_everything) {
        m_everything->setVisible(everything && !m_finished);
        if (!everything)
            m_everything->setChecked(false);
    }
    QString why = pauseRefusal(m_admin);
    if (why.isEmpty() && m_mode == Mode::Pause) {
        for (auto* edit : { m_tenant, m_operation })
            if (!idem::validPauseName(edit->text().trimmed().toStdString()))
                why = tr("%1 must be '*' or 1 to 64 visible ASCII characters without ':'.")
                          .arg(edit == m_tenant ? tr("The tenant") : tr("The operation"));
    }
    if (why.isEmpty() && m_rampPanel)
        why = m_rampPanel->problem();
    if (why.isEmpty() && everything && !m_everything->isChecked())
        why = tr("Scope *:* pauses all intake, of every tenant and operation: tick the box above to confirm, or "
                 "name a tenant or an operation.");
    m_why->setText(why);
    m_why->setVisible(!why.isEmpty() && !m_finished);
    m_run->setEnabled(!blank && why.isEmpty() && !m_running && !m_finished);
    // Enter never pauses everything: for '*:*' Run is no default button, only a click runs it.
    if (m_mode == Mode::Pause) {
        m_run->setDefault(!everything);
        m_run->setAutoDefault(!everything);
        m_run->setText(everything ? tr("Pause everything") : tr("Pause"));
    }
    if (blank)
        theme::followTone(m_reasonHint, theme::Tone::Caution);
    else
        theme::clearTone(m_reasonHint);
}

void PauseDialog::run()
{
    if (!m_run->isEnabled() || (pausesEverything() && !m_everything->isChecked()))
        return;
    const std::string reason = m_reason->toPlainText().toStdString();
    m_running = true;
    m_run->setEnabled(false);
    m_close->setEnabled(false);
    m_reason->setReadOnly(true);
    for (QWidget* w : std::initializer_list<QWidget*> { m_tenant, m_operation, m_length, m_custom, m_everything })
        if (w)
            w->setEnabled(false);
    if (m_mode == Mode::Pause) {
        idem::PauseRequest request;
        request.tenant = m_tenant->text().trimmed().toStdString();
        request.operation = m_operation->text().trimmed().toStdString();
        request.reason = reason;
        if (const auto ms = lengthMs())
            request.lengthMs = *ms;
        m_change->pause(request);
    } else if (m_rampPanel && m_rampPanel->inSteps()) {
        m_rampPanel->lock();
        m_rampChange->start(m_rampPanel->request(reason));
    } else {
        if (m_rampPanel)
            m_rampPanel->lock();
        m_change->resume(m_pause, reason);
    }
}

void PauseDialog::showResult(const QString& text, bool good)
{
    m_running = false;
    m_finished = true;
    m_result->setText(text);
    m_result->show();
    theme::followTone(m_result, good ? theme::Tone::Good : theme::Tone::Bad, true);
    m_close->setEnabled(true);
    m_close->setText(tr("Close"));
    m_run->hide();
    m_reasonHint->hide();
    m_why->hide();
    if (m_everything)
        m_everything->hide();
    Q_EMIT done(good ? m_auditId : 0);
}

namespace {
    template <typename Make> PauseDialog* openDialog(QWidget* parent, PauseWatch* watch, Make make)
    {
        PauseDialog* dialog = make();
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        if (watch)
            QObject::connect(dialog, &PauseDialog::done, watch, [watch](qint64 auditId) {
                if (auditId > 0)
                    watch->refreshNow(); // the banner, the tiles and the charts follow at once
            });
        dialog->open();
        Q_UNUSED(parent);
        return dialog;
    }
} // namespace

PauseDialog* openPauseDialog(
    QWidget* parent, ConsoleSession* admin, PauseWatch* watch, const QString& tenant, const QString& operation)
{
    return openDialog(parent, watch, [&] { return new PauseDialog(admin, tenant, operation, parent); });
}

PauseDialog* openResumeDialog(QWidget* parent, ConsoleSession* admin, PauseWatch* watch, const idem::Pause& pause)
{
    return openDialog(parent, watch, [&] { return new PauseDialog(admin, pause, parent); });
}

void addPauseActions(QMenu* menu, QWidget* parent, ConsoleSession* admin, PauseWatch* watch, const QString& tenant,
    const QString& operation)
{
    const QString refusal = pauseRefusal(admin);
    const QString scope = pauseScopeText(scopeOf(tenant).toStdString(), scopeOf(operation).toStdString());
    auto* pause = menu->addAction(PauseDialog::tr("Pause intake of %1…").arg(scope));
    pause->setObjectName(QStringLiteral("pauseIntakeAction"));
    pause->setEnabled(refusal.isEmpty());
    pause->setToolTip(refusal);
    QObject::connect(pause, &QAction::triggered, parent,
        [parent, admin, watch, tenant, operation] { openPauseDialog(parent, admin, watch, tenant, operation); });
    if (!watch)
        return;
    for (const auto& p : watch->coveringSome(tenant, operation)) {
        auto* resume = menu->addAction(PauseDialog::tr("Resume %1…").arg(pauseScopeText(p)));
        resume->setObjectName(QStringLiteral("resumeIntakeAction"));
        resume->setData(QString::fromStdString(p.scope()));
        resume->setEnabled(refusal.isEmpty());
        resume->setToolTip(refusal);
        QObject::connect(
            resume, &QAction::triggered, parent, [parent, admin, watch, p] { openResumeDialog(parent, admin, watch, p); });
    }
}

} // namespace idem::console
