#include "views/connectiondialog.h"
#include "ui_connectiondialog.h"

#include <QComboBox>
#include <QEvent>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QPixmap>
#include <QPushButton>
#include <QToolButton>

#include "core/connection.h"
#include "core/identifier.h"
#include "models/consolesession.h"
#include "models/environment.h"
#include "models/patroniparse.h"
#include "models/profilestore.h"

namespace idem::console {

namespace {
    // The first entry leaves sslmode to the connection string, PGSSLMODE or libpq's default.
    const QStringList sslModes
        = { QString(), QStringLiteral("disable"), QStringLiteral("allow"), QStringLiteral("prefer"),
              QStringLiteral("require"), QStringLiteral("verify-ca"), QStringLiteral("verify-full") };
    // The environment colours after "(by its name)": the setting's word, and the one shown.
    const std::pair<const char*, const char*> colourWords[] = { { "red", QT_TRANSLATE_NOOP("idem::console::ConnectionDialog", "red") },
        { "amber", QT_TRANSLATE_NOOP("idem::console::ConnectionDialog", "amber") },
        { "green", QT_TRANSLATE_NOOP("idem::console::ConnectionDialog", "green") },
        { "blue", QT_TRANSLATE_NOOP("idem::console::ConnectionDialog", "blue") },
        { "purple", QT_TRANSLATE_NOOP("idem::console::ConnectionDialog", "purple") },
        { "grey", QT_TRANSLATE_NOOP("idem::console::ConnectionDialog", "grey") } };
}

ConnectionDialog::ConnectionDialog(ConsoleSession* session, ProfileStore* profiles, QWidget* parent)
    : QDialog(parent)
    , m_session(session)
    , m_profiles(profiles)
    , m_ui(std::make_unique<Ui::ConnectionDialog>())
{
    // The layout, the labels and their keys are the form's (connectiondialog.ui); what follows
    // is what a form cannot say: the lists, the defaults, the signals.
    m_ui->setupUi(this);
    m_ui->hintLabel->setForegroundRole(QPalette::PlaceholderText);
    m_ui->schemaEdit->setText(QString::fromLatin1(idem::SchemaName::defaultName));
    m_ui->patroniEdit->setText(session->patroniEndpoint());
    for (const auto& mode : sslModes)
        m_ui->sslModeCombo->addItem(QString(), mode);
    // The environment (issue #29): its name and colour on every window and dialog of this connection.
    m_ui->environmentColourCombo->addItem(QString(), QString());
    for (const auto& [name, word] : colourWords) {
        QPixmap swatch(14, 14);
        swatch.fill(environment::colour(QLatin1String(name)));
        m_ui->environmentColourCombo->addItem(QIcon(swatch), QString(), QLatin1String(name));
    }
    m_connectButton = m_ui->buttons->addButton(QString(), QDialogButtonBox::AcceptRole);
    m_connectButton->setObjectName(QStringLiteral("connectButton"));
    m_connectButton->setDefault(true);
    retranslate();
    // Connect starts an attempt; the dialog accepts only when the session reports success,
    // so the button box's accepted() is deliberately left unconnected.
    connect(m_connectButton, &QPushButton::clicked, this, &ConnectionDialog::connectClicked);
    connect(m_ui->buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    const std::pair<QToolButton*, QLineEdit*> browse[]
        = { { m_ui->sslRootCertEditBrowse, m_ui->sslRootCertEdit }, { m_ui->sslCertEditBrowse, m_ui->sslCertEdit },
              { m_ui->sslKeyEditBrowse, m_ui->sslKeyEdit } };
    for (const auto& [button, edit] : browse)
        connect(button, &QToolButton::clicked, this, [this, edit = edit] { pickFile(edit); });

    connect(m_ui->profileCombo, &QComboBox::textActivated, this, &ConnectionDialog::loadProfile);
    connect(m_ui->saveProfileButton, &QPushButton::clicked, this, &ConnectionDialog::saveProfile);
    connect(m_ui->deleteProfileButton, &QPushButton::clicked, this, &ConnectionDialog::deleteProfile);
    connect(m_session, &ConsoleSession::failed, this, &ConnectionDialog::onSessionFailed);
    connect(m_session, &ConsoleSession::stateChanged, this, &ConnectionDialog::onSessionStateChanged);
    connect(this, &QDialog::finished, this, [this] { setBusy(false); });

    const QString last = m_profiles->lastUsed();
    refreshProfiles(last);
    if (!last.isEmpty())
        loadProfile(last);
    // A saved profile usually needs only its password; a first start needs a server.
    if (m_profiles->profile(last))
        m_ui->passwordEdit->setFocus();
    else
        m_ui->conninfoEdit->setFocus();
}

ConnectionDialog::~ConnectionDialog() = default;

void ConnectionDialog::retranslate()
{
    m_ui->profileCombo->lineEdit()->setPlaceholderText(tr("name this connection to save it"));
    m_ui->sslModeCombo->setItemText(0, tr("(as in the connection)"));
    m_ui->environmentColourCombo->setItemText(0, tr("(by its name)"));
    for (int i = 0; i < int(std::size(colourWords)); ++i)
        m_ui->environmentColourCombo->setItemText(i + 1, tr(colourWords[i].second));
    m_connectButton->setText(tr("Connect"));
}

void ConnectionDialog::changeEvent(QEvent* event)
{
    if (event->type() == QEvent::LanguageChange) {
        m_ui->retranslateUi(this);
        retranslate();
    }
    QDialog::changeEvent(event);
}

void ConnectionDialog::pickFile(QLineEdit* edit)
{
    const QString certFilter = tr("Certificates (*.crt *.pem *.cer);;All files (*)");
    const QString title = edit == m_ui->sslRootCertEdit ? tr("Root certificate")
        : edit == m_ui->sslCertEdit                    ? tr("Client certificate")
                                                       : tr("Client key");
    const QString filter = edit == m_ui->sslKeyEdit ? tr("Keys (*.key *.pem);;All files (*)") : certFilter;
    // Non-blocking, like everything else in this dialog.
    auto* picker = new QFileDialog(this, title, edit->text(), filter);
    picker->setAttribute(Qt::WA_DeleteOnClose);
    picker->setFileMode(QFileDialog::ExistingFile);
    connect(picker, &QFileDialog::fileSelected, edit, &QLineEdit::setText);
    picker->open();
}

ConnectionSettings ConnectionDialog::settings() const
{
    ConnectionSettings s;
    s.conninfo = m_ui->conninfoEdit->text().trimmed();
    s.password = m_ui->passwordEdit->text();
    s.sslmode = m_ui->sslModeCombo->currentData().toString();
    s.sslRootCert = m_ui->sslRootCertEdit->text().trimmed();
    s.sslCert = m_ui->sslCertEdit->text().trimmed();
    s.sslKey = m_ui->sslKeyEdit->text().trimmed();
    s.schema = m_ui->schemaEdit->text().trimmed();
    s.monitorConninfo = m_ui->monitorEdit->text().trimmed();
    s.environment = m_ui->environmentEdit->text().trimmed();
    s.environmentColour = m_ui->environmentColourCombo->currentData().toString();
    return s;
}

void ConnectionDialog::setSettings(const ConnectionSettings& incoming)
{
    const ConnectionSettings s = withPasswordSeparated(incoming);
    m_ui->conninfoEdit->setText(s.conninfo);
    m_ui->conninfoEdit->setCursorPosition(0); // the host comes first: show it, not the tail
    m_ui->passwordEdit->setText(s.password);
    const int mode = m_ui->sslModeCombo->findData(s.sslmode);
    m_ui->sslModeCombo->setCurrentIndex(mode < 0 ? 0 : mode);
    m_ui->sslRootCertEdit->setText(s.sslRootCert);
    m_ui->sslCertEdit->setText(s.sslCert);
    m_ui->sslKeyEdit->setText(s.sslKey);
    m_ui->schemaEdit->setText(s.schema);
    m_ui->monitorEdit->setText(s.monitorConninfo);
    m_ui->monitorEdit->setCursorPosition(0);
    m_ui->environmentEdit->setText(s.environment);
    const int colour = m_ui->environmentColourCombo->findData(s.environmentColour);
    m_ui->environmentColourCombo->setCurrentIndex(colour < 0 ? 0 : colour);
}

QString ConnectionDialog::patroniEndpoint() const { return m_ui->patroniEdit->text().trimmed(); }

void ConnectionDialog::setPatroniEndpoint(const QString& endpoint)
{
    m_ui->patroniEdit->setText(endpoint);
    m_ui->patroniEdit->setCursorPosition(0);
}

void ConnectionDialog::showFailure(const Failure& failure)
{
    setError(failure.text());
    if (failure.kind == FailureKind::Authentication)
        m_ui->passwordEdit->setFocus();
    else if (failure.kind == FailureKind::BadSchemaName)
        m_ui->schemaEdit->setFocus();
    else if (failure.kind == FailureKind::Tls)
        m_ui->sslRootCertEdit->setFocus();
    else
        m_ui->conninfoEdit->setFocus();
}

void ConnectionDialog::reject()
{
    if (m_waiting)
        m_session->disconnectFromServer();
    QDialog::reject();
}

QString ConnectionDialog::errorText() const { return m_ui->errorLabel->isHidden() ? QString() : m_ui->errorLabel->text(); }

void ConnectionDialog::connectClicked()
{
    const ConnectionSettings s = settings();
    // Checked here too so a typo is reported before anything goes over the network.
    try {
        effectiveConninfo(s);
    } catch (const idem::ConnectError& e) {
        setError(Failure { 0, FailureKind::BadConninfo, QString::fromUtf8(e.what()), {}, 0 }.text());
        return;
    }
    const QString patroni = patroniEndpoint();
    if (!patroni.isEmpty()) {
        const PatroniEndpoints endpoints = parsePatroniEndpoints(patroni);
        if (!endpoints.error.isEmpty()) {
            setError(tr("Patroni: %1").arg(endpoints.error));
            m_ui->patroniEdit->setFocus();
            return;
        }
    }
    setError({});
    setBusy(true);
    m_session->setPatroniEndpoint(patroni);
    const QString profile = m_ui->profileCombo->currentText().trimmed();
    if (!profile.isEmpty() && m_profiles->profile(profile))
        m_profiles->setLastUsed(profile);
    m_session->connectTo(s);
}

void ConnectionDialog::onSessionFailed(const Failure& failure)
{
    if (!m_waiting)
        return;
    setBusy(false);
    showFailure(failure);
}

void ConnectionDialog::onSessionStateChanged()
{
    if (m_waiting && m_session->state() == ConsoleSession::State::Connected) {
        setBusy(false);
        accept();
    }
}

void ConnectionDialog::setBusy(bool busy)
{
    m_waiting = busy;
    m_connectButton->setEnabled(!busy);
    m_ui->progressLabel->setVisible(busy);
    if (busy) {
        QString where;
        try {
            const auto options = idem::parseConninfo(effectiveConninfo(settings()));
            const auto host = options.find("host");
            where = host == options.end() ? QString() : QString::fromStdString(host->second);
        } catch (const idem::ConnectError&) {
        }
        m_ui->progressLabel->setText(where.isEmpty() ? tr("Connecting…") : tr("Connecting to %1…").arg(where));
    }
}

void ConnectionDialog::setError(const QString& text)
{
    m_ui->errorLabel->setText(text);
    m_ui->errorLabel->setVisible(!text.isEmpty());
}

void ConnectionDialog::loadProfile(const QString& name)
{
    const auto p = m_profiles->profile(name);
    if (!p)
        return;
    setSettings(p->settings);
    setPatroniEndpoint(p->patroni);
    m_ui->passwordEdit->clear();
    m_ui->profileCombo->setCurrentText(p->name);
    setError({});
}

void ConnectionDialog::saveProfile()
{
    const QString name = m_ui->profileCombo->currentText().trimmed();
    if (name.isEmpty()) {
        setError(tr("Type a name for the profile first."));
        m_ui->profileCombo->setFocus();
        return;
    }
    const PatroniEndpoints endpoints = parsePatroniEndpoints(patroniEndpoint());
    if (!endpoints.error.isEmpty()) {
        setError(tr("Not saved: Patroni: %1").arg(endpoints.error));
        m_ui->patroniEdit->setFocus();
        return;
    }
    try {
        m_profiles->save({ name, settings(), patroniEndpoint() });
    } catch (const idem::ConnectError& e) {
        setError(tr("Not saved: the connection string is not valid: %1").arg(QString::fromUtf8(e.what())));
        return;
    }
    m_profiles->setLastUsed(name);
    setError({});
    refreshProfiles(name);
}

void ConnectionDialog::deleteProfile()
{
    const QString name = m_ui->profileCombo->currentText().trimmed();
    if (name.isEmpty() || !m_profiles->profile(name))
        return;
    m_profiles->remove(name);
    refreshProfiles(QString());
}

void ConnectionDialog::refreshProfiles(const QString& select)
{
    const QSignalBlocker block(m_ui->profileCombo);
    m_ui->profileCombo->clear();
    m_ui->profileCombo->addItems(m_profiles->names());
    m_ui->profileCombo->setCurrentText(select);
    m_ui->deleteProfileButton->setEnabled(m_ui->profileCombo->count() > 0);
}

} // namespace idem::console
