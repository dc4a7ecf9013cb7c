#include "views/pausebanner.h"

#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

#include "models/pauseramp.h"
#include "models/pausewatch.h"
#include "models/visibletext.h"
#include "views/theme.h"

namespace idem::console {

namespace {
    // A reason is the operator's words, whole in the details; the banner keeps to two lines.
    constexpr int bannerReasonChars = 160;

    QString reasonShort(const std::string& reason)
    {
        const QString r = visibleText(reason);
        return r.size() > bannerReasonChars ? r.left(bannerReasonChars - 1) + QStringLiteral("…") : r;
    }

    QString turnedAwayText(const idem::Pause& p, int minutes)
    {
        if (!p.seen)
            return PauseBanner::tr("matches no traffic yet (nothing of this scope counted in the last %1 min)")
                .arg(minutes);
        return PauseBanner::tr("claims turned away in the last %1 min: %2")
            .arg(QString::number(minutes), QLocale().toString(qlonglong(p.turnedAway)));
    }
} // namespace

PauseBanner::PauseBanner(PauseWatch* watch, QWidget* parent)
    : QFrame(parent)
    , m_watch(watch)
{
    setObjectName(QStringLiteral("pauseBanner"));
    m_text = new QLabel;
    m_text->setObjectName(QStringLiteral("pauseBannerText"));
    m_text->setWordWrap(true);
    m_text->setTextFormat(Qt::PlainText); // reasons and roles come from the database
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details = new QPushButton;
    m_details->setObjectName(QStringLiteral("pauseDetailsButton"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 6, 10, 6);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_details, 0, Qt::AlignVCenter);
    connect(m_details, &QPushButton::clicked, this, &PauseBanner::showDetails);
    connect(watch, &PauseWatch::changed, this, &PauseBanner::render);
    m_clock.setInterval(1000);
    connect(&m_clock, &QTimer::timeout, this, [this] {
        render();
        // A pause that has just run out: read again rather than show "0s left" until the next poll.
        for (const auto& p : m_watch->active())
            if (const auto left = m_watch->remainingNow(p); left && *left == 0) {
                m_watch->refreshNow();
                break;
            }
    });
    applyColours();
    hide();
    render();
}

void PauseBanner::applyColours()
{
    // The notice banner's amber, light background and dark text in both themes (readable on
    // either, as its text colour is set alongside): a pause is a state to keep in mind, not an
    // error.
    const QString colours = QStringLiteral("background: #fff4e0; color: #5c3b00; border: 1px solid #f0cf8c;");
    setStyleSheet(QStringLiteral("QFrame#pauseBanner { %1 border-radius: 4px; }").arg(colours));
    m_text->setStyleSheet(QStringLiteral("QLabel { %1 border: none; }").arg(colours));
}

void PauseBanner::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        render();
    QFrame::changeEvent(event);
}

void PauseBanner::render()
{
    const auto active = m_watch->active();
    if (active.empty()) {
        m_clock.stop();
        m_text->clear();
        setToolTip(QString());
        hide();
        return;
    }
    const int minutes = m_watch->list() ? m_watch->list()->minutes : PauseWatch::windowMinutes;
    const auto& p = active.front();
    // One arg() per value where a value comes from the database: "%2" in a reason stays text.
    QString line1 = tr("Intake paused: %1, %2, by %3.")
                        .arg(pauseScopeText(p), pauseUntilText(p, m_watch->remainingNow(p)), visibleText(p.pausedBy));
    QString line2 = tr("Reason: %1 · %2").arg(reasonShort(p.reason), turnedAwayText(p, minutes));
    if (p.ramp)
        line2 += QStringLiteral(" · ") + rampText(*p.ramp);
    if (active.size() > 1)
        line2 += QStringLiteral(" · ") + tr("and %n more pause(s)", nullptr, int(active.size() - 1));
    m_text->setText(line1 + QLatin1Char('\n') + line2);
    m_details->setText(active.size() > 1 ? tr("All pauses…") : tr("Details…"));
    setToolTip(detailsText());
    if (!m_clock.isActive())
        m_clock.start();
    show();
}

QString PauseBanner::text() const { return isHidden() ? QString() : m_text->text(); }

QString PauseBanner::detailsText() const
{
    QStringList lines;
    const auto& list = m_watch->list();
    if (!list)
        return {};
    for (const auto& p : list->pauses) {
        const QString since
            = QDateTime::fromMSecsSinceEpoch(p.pausedAtUs / 1000).toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        const QString state = p.active
            ? pauseUntilText(p, m_watch->remainingNow(p))
            : tr("expired at %1 (no longer in force; listed until resumed or set again)")
                  .arg(QDateTime::fromMSecsSinceEpoch(*p.untilUs / 1000).toLocalTime().toString(
                      QStringLiteral("yyyy-MM-dd HH:mm:ss")));
        lines << tr("%1 — %2; paused by %3 since %4; %5; reason: %6 (audit entry #%7)")
                     .arg(pauseScopeText(p), state, visibleText(p.pausedBy), since, turnedAwayText(p, list->minutes),
                         visibleText(p.reason), QString::number(p.auditId));
        if (p.ramp)
            lines.last() += QStringLiteral(" ") + rampText(*p.ramp);
    }
    return lines.join(QLatin1Char('\n'));
}

void PauseBanner::showDetails()
{
    auto* dialog = new QDialog(window());
    dialog->setObjectName(QStringLiteral("pauseDetailsDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Pauses of intake – Idem console"));
    auto* text = new QPlainTextEdit(detailsText());
    text->setObjectName(QStringLiteral("pauseDetails"));
    text->setReadOnly(true);
    text->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    auto* layout = new QVBoxLayout(dialog);
    layout->addWidget(new QLabel(tr("Every pause, in force first; idemctl pauses lists the same.")));
    layout->addWidget(text, 1);
    layout->addWidget(buttons);
    dialog->resize(720, 320);
    dialog->open();
}

} // namespace idem::console
