#pragma once

#include <QObject>
#include <QString>

namespace idem::console {

// What the export dialog says about the signing key file: whether it is there, its public key's
// fingerprint when it loads, or why it cannot be used.
struct SigningKeyState {
    QString path;
    bool exists = false;
    bool created = false; // this answer is to create(): the key was just generated and saved
    QString fingerprint; // SHA-256 of the public key, hex; empty when the key did not load
    QString error; // why it cannot be used (or could not be created)

    bool usable() const { return exists && error.isEmpty() && !fingerprint.isEmpty(); }
};

// Reads, checks and creates signing keys off the UI thread: the key file may sit on a slow or
// hung file system, and loading it parses PEM and derives the public key. Each call answers once
// by `answered` on the owner's thread; an answer to anything but the latest call is dropped, so a
// stale check cannot overwrite a newer one.
class SigningKeyCheck : public QObject {
    Q_OBJECT
public:
    explicit SigningKeyCheck(QObject* parent = nullptr);
    ~SigningKeyCheck() override;

    // Whether the file exists and loads (idem::SigningKey::load), and its fingerprint.
    quint64 inspect(const QString& path);
    // Generates an Ed25519 key and saves it at path (mode 0600, never over an existing file).
    quint64 create(const QString& path);
    bool pending() const { return m_pending != 0; }

    // The same, on the calling thread (the work both of the above do on a pool thread).
    static SigningKeyState inspectNow(const QString& path);
    static SigningKeyState createNow(const QString& path);

Q_SIGNALS:
    void answered(quint64 request, const idem::console::SigningKeyState& state);

private:
    quint64 run(const QString& path, bool create);

    quint64 m_latest = 0;
    quint64 m_pending = 0; // the latest request while it has not answered
};

} // namespace idem::console
