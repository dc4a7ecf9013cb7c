#include "views/auditwidget.h"

#include <QComboBox>
#include <QEvent>
#include <QAction>
#include <QHeaderView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTimer>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "models/auditmodel.h"
#include "models/auditwitness.h"
#include "models/consolesession.h"
#include "models/taskbrowsermodel.h"
#include "models/visibletext.h"
#include "operations/audit.h"
#include "operations/tasklist.h"
#include "views/auditentryview.h"
#include "views/elidedelegate.h"
#include "views/pagestatusline.h"
#include "views/theme.h"

namespace idem::console {

AuditWidget::AuditWidget(ConsoleSession* session, QWidget* parent)
    : QWidget(parent)
    , m_session(session)
    , m_model(new AuditModel(session, this))
    , m_key(new QLineEdit)
    , m_actor(new QLineEdit)
    , m_action(new QComboBox)
    , m_since(new QLineEdit)
    , m_until(new QLineEdit)
    , m_apply(new QPushButton)
    , m_error(new QLabel)
    , m_view(new QTableView)
    , m_entry(new AuditEntryView(QStringLiteral("audit")))
    , m_verify(new QPushButton)
    , m_chain(new QLabel)
    , m_witnessText(new QLabel)
    , m_acceptTrail(new QPushButton)
    , m_statusLine(new PageStatusLine(session, QStringLiteral("auditStatusLine")))
    , m_follow(new QTimer(this))
{
    setObjectName(QStringLiteral("auditPage"));
    m_key->setObjectName(QStringLiteral("auditKeyFilter"));
    m_actor->setObjectName(QStringLiteral("auditActorFilter"));
    m_action->setObjectName(QStringLiteral("auditActionFilter"));
    m_action->addItem(QString(), QString());
    for (const auto& a : auditActionNames())
        m_action->addItem(QString::fromStdString(a), QString::fromStdString(a));
    m_since->setObjectName(QStringLiteral("auditSinceFilter"));
    m_until->setObjectName(QStringLiteral("auditUntilFilter"));
    m_apply->setObjectName(QStringLiteral("auditApply"));
    m_error->setObjectName(QStringLiteral("auditError"));
    theme::followTone(m_error, theme::Tone::Bad);
    m_error->setWordWrap(true);
    m_error->hide();
    m_view->setObjectName(QStringLiteral("auditTable"));
    AuditEntryView::setUpTable(m_view, m_model,
        { { AuditModel::IdColumn, 50 }, { AuditModel::AtColumn, 160 }, { AuditModel::KeyColumn, 200 },
            { AuditModel::ActionColumn, 70 }, { AuditModel::ActorColumn, 200 } });
    // A reason elides at its end; a key from its left, so that its end (the business id, what
    // tells keys apart) stays; time, action and actor are never cut.
    m_view->setTextElideMode(Qt::ElideRight);
    m_view->setItemDelegateForColumn(AuditModel::KeyColumn, new ElideDelegate(Qt::ElideLeft, m_view));
    m_verify->setObjectName(QStringLiteral("verifyChainButton"));
    auto* verifyKey = new QAction(this);
    m_verifyAction = verifyKey;
    verifyKey->setObjectName(QStringLiteral("verifyChainAction"));
    verifyKey->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_V));
    verifyKey->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(verifyKey, &QAction::triggered, m_verify, [this] {
        if (m_verify->isEnabled())
            m_verify->click();
    });
    addAction(verifyKey);
    m_chain->setObjectName(QStringLiteral("chainResult"));
    m_chain->setWordWrap(true);

    auto* filters = new QHBoxLayout;
    filters->addWidget(m_key, 2);
    filters->addWidget(m_actor, 1);
    filters->addWidget(m_action);
    filters->addWidget(m_since, 1);
    filters->addWidget(m_until, 1);
    filters->addWidget(m_apply);

    auto* split = AuditEntryView::split(m_view, m_entry);

    auto* chainRow = new QHBoxLayout;
    chainRow->addWidget(m_chain, 1);
    chainRow->addWidget(m_verify);

    m_witnessText->setObjectName(QStringLiteral("witnessText"));
    m_witnessText->setWordWrap(true);
    m_witnessText->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_witnessText->hide();
    m_acceptTrail->setObjectName(QStringLiteral("acceptTrailButton"));
    m_acceptTrail->hide();
    auto* witnessRow = new QHBoxLayout;
    witnessRow->addWidget(m_witnessText, 1);
    witnessRow->addWidget(m_acceptTrail, 0, Qt::AlignTop);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_statusLine);
    layout->addLayout(filters);
    layout->addWidget(m_error);
    layout->addWidget(split, 1);
    layout->addLayout(chainRow);
    layout->addLayout(witnessRow);

    connect(m_apply, &QPushButton::clicked, this, &AuditWidget::reload);
    for (auto* e : { m_key, m_actor, m_since, m_until })
        connect(e, &QLineEdit::returnPressed, this, &AuditWidget::reload);
    connect(m_action, &QComboBox::activated, this, &AuditWidget::reload);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this, &AuditWidget::onSelection);
    connect(m_model, &AuditModel::failed, this, [this](const QString& message) {
        m_error->setText(message);
        m_error->show();
    });
    connect(m_model, &AuditModel::pageLoaded, m_error, &QWidget::hide);
    const auto fitColumns = [this] {
        for (int c : { int(AuditModel::AtColumn), int(AuditModel::ActionColumn), int(AuditModel::ActorColumn) }) {
            const int before = m_view->columnWidth(c);
            m_view->resizeColumnToContents(c);
            // A few pixels over the content: another style's cell margins must not elide it.
            m_view->setColumnWidth(c, std::max(before, m_view->columnWidth(c) + 8));
        }
    };
    connect(m_model, &AuditModel::pageLoaded, this, [this, fitColumns](int) {
        m_statusLine->markRead();
        fitColumns();
    });
    connect(m_model, &AuditModel::polled, this, [this, fitColumns](int added) {
        m_error->hide();
        m_statusLine->markRead();
        if (added)
            fitColumns();
    });
    // New entries (idemctl, another console) appear by themselves while the page is shown: one
    // short read on the worker thread every few seconds, never two at once.
    m_follow->setInterval(3000);
    connect(m_follow, &QTimer::timeout, this, [this] {
        if (isVisible() && m_session->state() == ConsoleSession::State::Connected)
            m_model->pollNewer();
    });
    m_follow->start();
    connect(m_verify, &QPushButton::clicked, this, [this] {
        m_verify->setEnabled(false);
        m_chain->setText(tr("Verifying every entry's hash and link…"));
        // Against the head the witness remembers: a shorter trail is a break here too.
        std::optional<idem::ChainHead> head;
        if (m_witness && m_witness->mark())
            head = idem::ChainHead { m_witness->mark()->id, m_witness->mark()->hash.toStdString() };
        m_model->verifyChain(head);
    });
    connect(m_model, &AuditModel::chainVerified, this, &AuditWidget::onChain);
    connect(m_model, &AuditModel::verifyFailed, this, [this](const QString& message) {
        m_verify->setEnabled(true);
        m_chain->setText(tr("Could not verify: %1").arg(message));
    });
    connect(session, &ConsoleSession::stateChanged, this, [this](ConsoleSession::State s) {
        if (s == ConsoleSession::State::Connected && m_model->rowCount() == 0 && !m_model->busy())
            reload();
    });
    retranslateUi();
    // The chain and witness lines colour words in rich text: drawn again in the new theme's tones.
    theme::onChange(this, [this] {
        if (m_witness)
            onWitness();
        if (m_lastChain)
            onChain(*m_lastChain);
    });
    if (session->state() == ConsoleSession::State::Connected)
        reload();
}

AuditWidget::~AuditWidget() = default;

void AuditWidget::retranslateUi()
{
    m_key->setPlaceholderText(tr("key (exact)"));
    m_actor->setPlaceholderText(tr("actor (role or OS user)"));
    m_action->setItemText(0, tr("Any action"));
    m_since->setPlaceholderText(tr("since (ISO time)"));
    m_until->setPlaceholderText(tr("until (ISO time)"));
    m_apply->setText(tr("Apply"));
    m_verify->setText(tr("Verify chain"));
    m_verifyAction->setText(m_verify->text());
    m_verify->setToolTip(tr("Recompute every entry's hash and link (%1)")
                             .arg(m_verifyAction->shortcut().toString(QKeySequence::NativeText)));
    m_acceptTrail->setText(tr("Accept current trail"));
    m_acceptTrail->setToolTip(tr("Forget the entry this console verified and remember the current trail's head "
                                 "instead, once its whole chain verifies. Only this console's settings change: "
                                 "nothing is written to the database and nothing is audited."));
    if (m_witness)
        onWitness();
    if (m_lastChain)
        onChain(*m_lastChain);
    m_view->horizontalHeader()->viewport()->update(); // the model's headers speak the new language
}

void AuditWidget::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QWidget::changeEvent(event);
}

void AuditWidget::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    // Shown: what is there now, whether or not a load ran at connect.
    if (m_session->state() != ConsoleSession::State::Connected)
        return;
    if (!m_model->started() || (m_model->rowCount() == 0 && !m_model->busy()))
        reload();
    else
        m_model->pollNewer();
}

void AuditWidget::setWitness(AuditWitness* witness)
{
    m_witness = witness;
    connect(witness, &AuditWitness::changed, this, &AuditWidget::onWitness);
    connect(m_acceptTrail, &QPushButton::clicked, witness, &AuditWitness::acceptCurrentTrail);
    onWitness();
}

void AuditWidget::onWitness()
{
    const QString text = m_witness->text();
    m_witnessText->setVisible(!text.isEmpty());
    m_acceptTrail->setVisible(m_witness->alarm());
    if (m_witness->alarm())
        m_witnessText->setText(QStringLiteral("<span style='%3'><b>%1</b></span> %2")
                                   .arg(tr("Audit trail witness:"), text.toHtmlEscaped(), theme::toneCss(theme::Tone::Bad)));
    else
        m_witnessText->setText(QStringLiteral("<b>%1</b> %2").arg(tr("Audit trail witness:"), text.toHtmlEscaped()));
}

void AuditWidget::showKey(const QString& key)
{
    m_key->setText(key);
    reload();
}

void AuditWidget::reload()
{
    idem::AuditFilter f;
    const auto text = [](const QLineEdit* e) {
        return e->text().isEmpty() ? std::nullopt : std::optional<std::string>(e->text().toStdString());
    };
    f.key = text(m_key);
    f.actor = text(m_actor);
    const auto action = m_action->currentData().toString();
    if (!action.isEmpty())
        f.action = action.toStdString();
    for (auto [edit, target] : { std::pair { m_since, &f.sinceUs }, std::pair { m_until, &f.untilUs } }) {
        if (edit->text().isEmpty())
            continue;
        *target = idem::parseIsoMicros(edit->text().trimmed().toStdString());
        if (!*target) {
            m_error->setText(
                tr("“%1” is not an ISO 8601 time such as 2024-05-01 or 2024-05-01T10:00:00Z").arg(edit->text()));
            m_error->show();
            return;
        }
    }
    m_error->hide();
    m_entry->clearEntry();
    m_model->setFilter(f);
}

void AuditWidget::onSelection()
{
    const auto rows = m_view->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return;
    const auto& e = m_model->entry(rows.first().row());
    m_entry->showEntry(
        tr("<b>#%1 %2</b> on <tt>%3</tt> at %4 by %5 (OS user %6, host %7, %8)")
            .arg(QString::number(e.id), visibleHtml(e.action), visibleHtml(e.key), formatTimeUs(e.atUs),
                visibleHtml(e.dbRole), visibleHtml(e.osUser), visibleHtml(e.clientHost), visibleHtml(e.application)),
        QString::fromStdString(e.reason), e.beforeImage, e.afterImage);
}

void AuditWidget::onChain(const idem::ChainReport& r)
{
    m_lastChain = r;
    m_verify->setEnabled(true);
    if (r.ok()) {
        m_chain->setText(tr("<span style='%3'>Chain intact:</span> %1 entries verified%2.")
                             .arg(r.checked)
                             .arg(r.head ? tr(", head #%1 %2")
                                               .arg(r.head->id)
                                               .arg(QString::fromStdString(r.head->hash).left(16) + QStringLiteral("…"))
                                         : QString())
                             .arg(theme::toneCss(theme::Tone::Good)));
        return;
    }
    m_chain->setText(tr("<span style='%5'><b>Chain broken at entry #%1</b> (%2):</span> %3 "
                        "(%4 entries verified before it)")
                         .arg(r.firstBrokenId ? QString::number(*r.firstBrokenId) : QStringLiteral("?"),
                             QString::fromLatin1(idem::chainBreakName(r.brokenBy)), visibleHtml(r.detail),
                             QString::number(r.checked), theme::toneCss(theme::Tone::Bad)));
}

} // namespace idem::console
