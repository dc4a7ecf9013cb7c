#pragma once

#include <QDialog>

#include <memory>

#include "operations/trustedkeys.h"

class QLabel;
class QPushButton;
class QTableWidget;

namespace idem::console {

namespace Ui {
    class TrustedKeysDialog;
}

// Settings > Trusted signing keys: the keys whose signature the snapshot viewer shows as valid,
// each with the name the operator gave it and its SHA-256 fingerprint. Keys are added from a
// public key file (what `idemctl snapshot pubkey` prints) or by fingerprint; OK saves them.
class TrustedKeysDialog : public QDialog {
    Q_OBJECT
public:
    explicit TrustedKeysDialog(idem::TrustedKeys keys, QWidget* parent = nullptr);
    ~TrustedKeysDialog() override;

    const idem::TrustedKeys& keys() const { return m_keys; }
    QTableWidget* table() const { return m_table; }
    QLabel* errorLabel() const { return m_error; }

    // A public key PEM or a 64-digit fingerprint, under a name. False (the reason shown) when
    // it is neither.
    bool addKey(const QString& name, const QString& pemOrFingerprint);
    void removeSelected();

    // Opens the dialog over the console's saved list and saves it on OK; true when saved.
    static bool editConsoleKeys(QWidget* parent, const QString& offerFingerprint = {});

private:
    void addFromFile();
    void refill();

    idem::TrustedKeys m_keys;
    std::unique_ptr<Ui::TrustedKeysDialog> m_ui;
    // The form's, named for the code that uses them.
    QTableWidget* m_table = nullptr;
    QLabel* m_error = nullptr;
    QPushButton* m_remove = nullptr;
};

} // namespace idem::console
