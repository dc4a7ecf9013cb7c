#pragma once

#include <QDialog>

#include "models/connectionsettings.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace idem::console {

class ConsoleSession;
class ProfileStore;
struct Failure;

// Asks where to connect: a conninfo string, a postgresql:// URI or a service name, plus
// password and TLS fields, with named profiles. Connecting happens in the session's worker;
// the dialog stays responsive, shows the failure in place, and closes once connected.
class ConnectionDialog : public QDialog {
    Q_OBJECT
public:
    ConnectionDialog(ConsoleSession* session, ProfileStore* profiles, QWidget* parent = nullptr);
    ~ConnectionDialog() override;

    ConnectionSettings settings() const;
    void setSettings(const ConnectionSettings& settings);
    // Patroni's REST API for the connection (issue #29): saved with the profile, handed to the
    // session on Connect (ConsoleSession::setPatroniEndpoint), never with a password.
    QString patroniEndpoint() const;
    void setPatroniEndpoint(const QString& endpoint);
    // Shows why the last attempt failed, e.g. when --dsn did not work at start.
    void showFailure(const Failure& failure);
    QString errorText() const;

    // Cancel while connecting abandons the attempt rather than letting it land later.
    void reject() override;

private:
    void connectClicked();
    void onSessionFailed(const Failure& failure);
    void onSessionStateChanged();
    void loadProfile(const QString& name);
    void saveProfile();
    void deleteProfile();
    void refreshProfiles(const QString& select);
    void pickFile(QLineEdit* edit, const QString& title, const QString& filter);
    void setBusy(bool busy);
    void setError(const QString& text);
    QWidget* fileRow(QLineEdit* edit, const QString& objectName, const QString& title, const QString& filter);

    ConsoleSession* m_session;
    ProfileStore* m_profiles;
    bool m_waiting = false; // an attempt started here is still running

    QComboBox* m_profileCombo;
    QPushButton* m_saveProfileButton;
    QPushButton* m_deleteProfileButton;
    QLineEdit* m_conninfoEdit;
    QLineEdit* m_passwordEdit;
    QLineEdit* m_schemaEdit;
    QLineEdit* m_monitorEdit;
    QLineEdit* m_patroniEdit;
    QLineEdit* m_environmentEdit;
    QComboBox* m_environmentColourCombo;
    QComboBox* m_sslModeCombo;
    QLineEdit* m_rootCertEdit;
    QLineEdit* m_certEdit;
    QLineEdit* m_keyEdit;
    QLabel* m_errorLabel;
    QLabel* m_progressLabel;
    QPushButton* m_connectButton;
};

} // namespace idem::console
