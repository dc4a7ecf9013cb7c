#include "views/connectiondialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QPixmap>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

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
}

ConnectionDialog::ConnectionDialog(ConsoleSession* session, ProfileStore* profiles, QWidget* parent)
    : QDialog(parent)
    , m_session(session)
    , m_profiles(profiles)
{
    setWindowTitle(tr("Connect to PostgreSQL"));
    setObjectName(QStringLiteral("connectionDialog"));

    m_profileCombo = new QComboBox;
    m_profileCombo->setObjectName(QStringLiteral("profileCombo"));
    m_profileCombo->setEditable(true);
    m_profileCombo->setInsertPolicy(QComboBox::NoInsert);
    m_profileCombo->lineEdit()->setPlaceholderText(tr("name this connection to save it"));
    m_saveProfileButton = new QPushButton(tr("Save"));
    m_saveProfileButton->setObjectName(QStringLiteral("saveProfileButton"));
    m_saveProfileButton->setAutoDefault(false);
    m_saveProfileButton->setToolTip(tr("Save these fields as a profile. The password is never saved."));
    m_deleteProfileButton = new QPushButton(tr("Delete"));
    m_deleteProfileButton->setObjectName(QStringLiteral("deleteProfileButton"));
    m_deleteProfileButton->setAutoDefault(false);
    // A widget, not a layout, so that the form's label gets it as its buddy (and the
    // mnemonic renders as one instead of a literal '&').
    auto* profileRow = new QWidget;
    auto* profileLayout = new QHBoxLayout(profileRow);
    profileLayout->setContentsMargins(0, 0, 0, 0);
    profileLayout->addWidget(m_profileCombo, 1);
    profileLayout->addWidget(m_saveProfileButton);
    profileLayout->addWidget(m_deleteProfileButton);

    m_conninfoEdit = new QLineEdit;
    m_conninfoEdit->setObjectName(QStringLiteral("conninfoEdit"));
    m_conninfoEdit->setPlaceholderText(
        tr("host=db.example.com dbname=app user=alice, postgresql://…, or a service name"));
    m_conninfoEdit->setMinimumWidth(600);
    m_passwordEdit = new QLineEdit;
    m_passwordEdit->setObjectName(QStringLiteral("passwordEdit"));
    m_passwordEdit->setEchoMode(QLineEdit::Password);
    m_passwordEdit->setPlaceholderText(tr("optional: ~/.pgpass or PGPASSWORD otherwise; never saved"));
    m_schemaEdit = new QLineEdit(QString::fromLatin1(idem::SchemaName::defaultName));
    m_schemaEdit->setObjectName(QStringLiteral("schemaEdit"));
    m_monitorEdit = new QLineEdit;
    m_monitorEdit->setObjectName(QStringLiteral("monitorEdit"));
    m_monitorEdit->setPlaceholderText(
        tr("optional: a standby for the dashboard and task reads (same server if empty)"));

    m_patroniEdit = new QLineEdit;
    m_patroniEdit->setObjectName(QStringLiteral("patroniEdit"));
    m_patroniEdit->setPlaceholderText(
        tr("optional: Patroni's REST API, http://host:8008 (several: comma-separated); no password"));
    m_patroniEdit->setText(session->patroniEndpoint());

    // The environment (issue #29): its name and colour on every window and dialog of this connection.
    m_environmentEdit = new QLineEdit;
    m_environmentEdit->setObjectName(QStringLiteral("environmentEdit"));
    m_environmentEdit->setPlaceholderText(tr("optional: prod, staging, dev… shown on every window of this connection"));
    m_environmentColourCombo = new QComboBox;
    m_environmentColourCombo->setObjectName(QStringLiteral("environmentColourCombo"));
    m_environmentColourCombo->addItem(tr("(by its name)"), QString());
    const std::pair<const char*, const char*> colourWords[]
        = { { "red", QT_TR_NOOP("red") }, { "amber", QT_TR_NOOP("amber") }, { "green", QT_TR_NOOP("green") },
              { "blue", QT_TR_NOOP("blue") }, { "purple", QT_TR_NOOP("purple") }, { "grey", QT_TR_NOOP("grey") } };
    for (const auto& [name, word] : colourWords) {
        QPixmap swatch(14, 14);
        swatch.fill(environment::colour(QLatin1String(name)));
        m_environmentColourCombo->addItem(QIcon(swatch), tr(word), QLatin1String(name));
    }
    auto* environmentRow = new QWidget;
    auto* environmentLayout = new QHBoxLayout(environmentRow);
    environmentLayout->setContentsMargins(0, 0, 0, 0);
    environmentLayout->addWidget(m_environmentEdit, 1);
    environmentLayout->addWidget(m_environmentColourCombo);

    auto* hint = new QLabel(tr("Anything left out comes from PG* variables, pg_service.conf and "
                               "~/.pgpass, as in psql."));
    hint->setForegroundRole(QPalette::PlaceholderText);

    auto* form = new QFormLayout;
    form->addRow(tr("&Profile:"), profileRow);
    form->addRow(tr("C&onnection:"), m_conninfoEdit);
    form->addRow(QString(), hint);
    form->addRow(tr("Pass&word:"), m_passwordEdit);
    form->addRow(tr("&Schema:"), m_schemaEdit);
    form->addRow(tr("&Monitor:"), m_monitorEdit);
    form->addRow(tr("Pa&troni:"), m_patroniEdit);
    form->addRow(tr("&Environment:"), environmentRow);

    m_sslModeCombo = new QComboBox;
    m_sslModeCombo->setObjectName(QStringLiteral("sslModeCombo"));
    for (const auto& mode : sslModes)
        m_sslModeCombo->addItem(mode.isEmpty() ? tr("(as in the connection)") : mode, mode);
    m_rootCertEdit = new QLineEdit;
    m_certEdit = new QLineEdit;
    m_keyEdit = new QLineEdit;
    const QString certFilter = tr("Certificates (*.crt *.pem *.cer);;All files (*)");
    auto* tlsForm = new QFormLayout;
    tlsForm->addRow(tr("SSL &mode:"), m_sslModeCombo);
    tlsForm->addRow(tr("&Root certificate:"),
        fileRow(m_rootCertEdit, QStringLiteral("sslRootCertEdit"), tr("Root certificate"), certFilter));
    tlsForm->addRow(tr("Client &certificate:"),
        fileRow(m_certEdit, QStringLiteral("sslCertEdit"), tr("Client certificate"), certFilter));
    tlsForm->addRow(tr("Client &key:"),
        fileRow(m_keyEdit, QStringLiteral("sslKeyEdit"), tr("Client key"), tr("Keys (*.key *.pem);;All files (*)")));
    auto* tlsBox = new QGroupBox(tr("TLS"));
    tlsBox->setLayout(tlsForm);

    m_errorLabel = new QLabel;
    m_errorLabel->setObjectName(QStringLiteral("errorLabel"));
    m_errorLabel->setWordWrap(true);
    m_errorLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_errorLabel->setStyleSheet(
        QStringLiteral("QLabel { background: #fdecea; color: #611a15; border: 1px solid #f5c2c0;"
                       " border-radius: 3px; padding: 6px; }"));
    m_errorLabel->hide();
    m_progressLabel = new QLabel;
    m_progressLabel->setObjectName(QStringLiteral("progressLabel"));
    m_progressLabel->hide();

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    m_connectButton = buttons->addButton(tr("Connect"), QDialogButtonBox::AcceptRole);
    m_connectButton->setObjectName(QStringLiteral("connectButton"));
    m_connectButton->setDefault(true);
    // Connect starts an attempt; the dialog accepts only when the session reports success,
    // so the button box's accepted() is deliberately left unconnected.
    connect(m_connectButton, &QPushButton::clicked, this, &ConnectionDialog::connectClicked);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(tlsBox);
    layout->addWidget(m_errorLabel);
    layout->addWidget(m_progressLabel);
    layout->addStretch();
    layout->addWidget(buttons);

    connect(m_profileCombo, &QComboBox::textActivated, this, &ConnectionDialog::loadProfile);
    connect(m_saveProfileButton, &QPushButton::clicked, this, &ConnectionDialog::saveProfile);
    connect(m_deleteProfileButton, &QPushButton::clicked, this, &ConnectionDialog::deleteProfile);
    connect(m_session, &ConsoleSession::failed, this, &ConnectionDialog::onSessionFailed);
    connect(m_session, &ConsoleSession::stateChanged, this, &ConnectionDialog::onSessionStateChanged);
    connect(this, &QDialog::finished, this, [this] { setBusy(false); });

    const QString last = m_profiles->lastUsed();
    refreshProfiles(last);
    if (!last.isEmpty())
        loadProfile(last);
    // A saved profile usually needs only its password; a first start needs a server.
    if (m_profiles->profile(last))
        m_passwordEdit->setFocus();
    else
        m_conninfoEdit->setFocus();
}

ConnectionDialog::~ConnectionDialog() = default;

QWidget* ConnectionDialog::fileRow(
    QLineEdit* edit, const QString& objectName, const QString& title, const QString& filter)
{
    edit->setObjectName(objectName);
    edit->setPlaceholderText(tr("(as in the connection)"));
    auto* browse = new QToolButton;
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("Choose a file"));
    browse->setObjectName(objectName + QStringLiteral("Browse"));
    connect(browse, &QToolButton::clicked, this, [this, edit, title, filter] { pickFile(edit, title, filter); });
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit, 1);
    layout->addWidget(browse);
    return row;
}

void ConnectionDialog::pickFile(QLineEdit* edit, const QString& title, const QString& filter)
{
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
    s.conninfo = m_conninfoEdit->text().trimmed();
    s.password = m_passwordEdit->text();
    s.sslmode = m_sslModeCombo->currentData().toString();
    s.sslRootCert = m_rootCertEdit->text().trimmed();
    s.sslCert = m_certEdit->text().trimmed();
    s.sslKey = m_keyEdit->text().trimmed();
    s.schema = m_schemaEdit->text().trimmed();
    s.monitorConninfo = m_monitorEdit->text().trimmed();
    s.environment = m_environmentEdit->text().trimmed();
    s.environmentColour = m_environmentColourCombo->currentData().toString();
    return s;
}

void ConnectionDialog::setSettings(const ConnectionSettings& incoming)
{
    const ConnectionSettings s = withPasswordSeparated(incoming);
    m_conninfoEdit->setText(s.conninfo);
    m_conninfoEdit->setCursorPosition(0); // the host comes first: show it, not the tail
    m_passwordEdit->setText(s.password);
    const int mode = m_sslModeCombo->findData(s.sslmode);
    m_sslModeCombo->setCurrentIndex(mode < 0 ? 0 : mode);
    m_rootCertEdit->setText(s.sslRootCert);
    m_certEdit->setText(s.sslCert);
    m_keyEdit->setText(s.sslKey);
    m_schemaEdit->setText(s.schema);
    m_monitorEdit->setText(s.monitorConninfo);
    m_monitorEdit->setCursorPosition(0);
    m_environmentEdit->setText(s.environment);
    const int colour = m_environmentColourCombo->findData(s.environmentColour);
    m_environmentColourCombo->setCurrentIndex(colour < 0 ? 0 : colour);
}

QString ConnectionDialog::patroniEndpoint() const { return m_patroniEdit->text().trimmed(); }

void ConnectionDialog::setPatroniEndpoint(const QString& endpoint)
{
    m_patroniEdit->setText(endpoint);
    m_patroniEdit->setCursorPosition(0);
}

void ConnectionDialog::showFailure(const Failure& failure)
{
    setError(failure.text());
    if (failure.kind == FailureKind::Authentication)
        m_passwordEdit->setFocus();
    else if (failure.kind == FailureKind::BadSchemaName)
        m_schemaEdit->setFocus();
    else if (failure.kind == FailureKind::Tls)
        m_rootCertEdit->setFocus();
    else
        m_conninfoEdit->setFocus();
}

void ConnectionDialog::reject()
{
    if (m_waiting)
        m_session->disconnectFromServer();
    QDialog::reject();
}

QString ConnectionDialog::errorText() const { return m_errorLabel->isHidden() ? QString() : m_errorLabel->text(); }

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
            m_patroniEdit->setFocus();
            return;
        }
    }
    setError({});
    setBusy(true);
    m_session->setPatroniEndpoint(patroni);
    const QString profile = m_profileCombo->currentText().trimmed();
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
    m_progressLabel->setVisible(busy);
    if (busy) {
        QString where;
        try {
            const auto options = idem::parseConninfo(effectiveConninfo(settings()));
            const auto host = options.find("host");
            where = host == options.end() ? QString() : QString::fromStdString(host->second);
        } catch (const idem::ConnectError&) {
        }
        m_progressLabel->setText(where.isEmpty() ? tr("Connecting…") : tr("Connecting to %1…").arg(where));
    }
}

void ConnectionDialog::setError(const QString& text)
{
    m_errorLabel->setText(text);
    m_errorLabel->setVisible(!text.isEmpty());
}

void ConnectionDialog::loadProfile(const QString& name)
{
    const auto p = m_profiles->profile(name);
    if (!p)
        return;
    setSettings(p->settings);
    setPatroniEndpoint(p->patroni);
    m_passwordEdit->clear();
    m_profileCombo->setCurrentText(p->name);
    setError({});
}

void ConnectionDialog::saveProfile()
{
    const QString name = m_profileCombo->currentText().trimmed();
    if (name.isEmpty()) {
        setError(tr("Type a name for the profile first."));
        m_profileCombo->setFocus();
        return;
    }
    const PatroniEndpoints endpoints = parsePatroniEndpoints(patroniEndpoint());
    if (!endpoints.error.isEmpty()) {
        setError(tr("Not saved: Patroni: %1").arg(endpoints.error));
        m_patroniEdit->setFocus();
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
    const QString name = m_profileCombo->currentText().trimmed();
    if (name.isEmpty() || !m_profiles->profile(name))
        return;
    m_profiles->remove(name);
    refreshProfiles(QString());
}

void ConnectionDialog::refreshProfiles(const QString& select)
{
    const QSignalBlocker block(m_profileCombo);
    m_profileCombo->clear();
    m_profileCombo->addItems(m_profiles->names());
    m_profileCombo->setCurrentText(select);
    m_deleteProfileButton->setEnabled(m_profileCombo->count() > 0);
}

} // namespace idem::console
