#pragma once

#include <QString>
#include <QStringList>

#include <memory>
#include <optional>

#include "models/connectionsettings.h"

class QSettings;

namespace idem::console {

struct Profile {
    QString name;
    ConnectionSettings settings; // password always empty when read back
    // Patroni's REST API for this database (issue #29; models/patroniparse.h), for the Connection
    // page's cluster table: one URL or several, comma-separated; never a password.
    QString patroni = QString();
};

// Connection profiles in QSettings (the user's idem-console.conf unless told otherwise).
// A password never reaches the file: the conninfo is stored redacted and the password field
// is not stored at all.
class ProfileStore {
public:
    // The user-scope INI file of the application (organisation "Idem").
    ProfileStore();
    explicit ProfileStore(std::unique_ptr<QSettings> settings);
    ~ProfileStore();
    ProfileStore(const ProfileStore&) = delete;
    ProfileStore& operator=(const ProfileStore&) = delete;

    QStringList names() const;
    std::optional<Profile> profile(const QString& name) const;
    // Throws idem::ConnectError(BadConninfo) for a conninfo libpq cannot parse (it could
    // not be redacted either), std::invalid_argument for an empty name.
    void save(const Profile& profile);
    void remove(const QString& name);

    QString lastUsed() const;
    void setLastUsed(const QString& name);

    QString fileName() const;
    void sync();

private:
    std::unique_ptr<QSettings> m_settings;
};

} // namespace idem::console
