#include "views/pagestatusline.h"

#include <QCoreApplication>
#include <QEvent>
#include <QTimer>

#include "models/consolesession.h"
#include "models/durationtext.h"
#include "models/visibletext.h"
#include "views/theme.h"

namespace idem::console {

QString ageText(const QDateTime& at, const QDateTime& now)
{
    return QCoreApplication::translate("idem::console::PageStatusLine", "%1 ago")
        .arg(durationText(1000.0 * double(std::max<qint64>(0, at.secsTo(now))), idem::DurationForm::Largest));
}

PageStatusLine::PageStatusLine(ConsoleSession* reads, const QString& objectName, QWidget* parent)
    : QLabel(parent)
    , m_reads(reads)
    , m_tick(new QTimer(this))
{
    setObjectName(objectName);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    // One line, whatever the reason says: the whole text is in the tooltip.
    setWordWrap(false);
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_tick->setInterval(1000);
    connect(m_tick, &QTimer::timeout, this, &PageStatusLine::refresh);
    m_tick->start();
    connect(reads, &ConsoleSession::stateChanged, this, &PageStatusLine::refresh);
    connect(reads, &ConsoleSession::failed, this, &PageStatusLine::refresh);
    refresh();
}

PageStatusLine::~PageStatusLine() = default;

void PageStatusLine::watch(ConsoleSession* other)
{
    if (!other || other == m_reads)
        return;
    m_other = other;
    connect(other, &ConsoleSession::stateChanged, this, &PageStatusLine::refresh);
    refresh();
}

void PageStatusLine::markRead()
{
    m_readAt = QDateTime::currentDateTime();
    refresh();
}

void PageStatusLine::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        refresh();
    QLabel::changeEvent(event);
}

void PageStatusLine::resizeEvent(QResizeEvent* event)
{
    QLabel::resizeEvent(event);
    refresh();
}

void PageStatusLine::refresh()
{
    if (!m_reads)
        return;
    using State = ConsoleSession::State;
    const State state = m_reads->state();
    // The server's words can be long: they are what gets elided, never the state or the age.
    QString reason;
    QString connection;
    switch (state) {
    case State::Disconnected:
        connection = tr("Not connected");
        break;
    case State::Connecting:
        connection = tr("Connecting…");
        break;
    case State::Connected:
        connection = tr("Connected");
        break;
    case State::Failed: {
        const auto& f = m_reads->lastFailure();
        reason = f ? oneLine(f->message) : tr("the connection failed");
        connection = f && f->retryInSeconds > 0 ? tr("Disconnected: %1; reconnecting by itself")
                                                : tr("Disconnected: %1");
        break;
    }
    }
    const bool live = state == State::Connected;
    QString age;
    if (m_readAt.isValid()) {
        const QString when = m_readAt.toString(QStringLiteral("HH:mm:ss"));
        age = live ? tr("as of %1 (%2)").arg(when, ageText(m_readAt))
                    : tr("showing what was read as of %1, %2 (stale)").arg(when, ageText(m_readAt));
    } else if (live) {
        age = tr("reading…");
    }
    QStringList parts { connection };
    if (!age.isEmpty())
        parts << age;
    if (live && m_other && m_other->state() == State::Failed)
        parts << tr("the recovery actions' connection is lost, reconnecting by itself");
    const QString pattern = parts.join(QStringLiteral(" · "));
    const QString full = reason.isEmpty() ? pattern : pattern.arg(reason);
    setToolTip(full);
    QString shown = full;
    const int width = contentsRect().width();
    if (!reason.isEmpty() && width > 50) {
        const int room = width - fontMetrics().horizontalAdvance(QString(pattern).replace(QStringLiteral("%1"), QString()));
        shown = pattern.arg(fontMetrics().elidedText(reason, Qt::ElideRight, std::max(room, 40)));
    }
    setText(shown);
    theme::followTone(this, live ? Tone::Muted : Tone::Caution, !live);
}

} // namespace idem::console
