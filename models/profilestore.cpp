#include "models/profilestore.h"

#include "models/patroniparse.h"

#include <QSettings>
#include <QUrl>

#include <stdexcept>

namespace idem::console {

namespace {
    const QString profilesGroup = QStringLiteral("profiles");

    // Profile names are free text; QSettings would read '/' as nesting.
    QString groupKey(const QString& name) { return QString::fromLatin1(QUrl::toPercentEncoding(name)); }
}

ProfileStore::ProfileStore()
    : ProfileStore(std::make_unique<QSettings>(
        QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console")))
{
}

ProfileStore::ProfileStore(std::unique_ptr<QSettings> settings)
    : m_settings(std::move(settings))
{
}

ProfileStore::~ProfileStore() = default;

QStringList ProfileStore::names() const
{
    QStringList out;
    m_settings->beginGroup(profilesGroup);
    const auto groups = m_settings->childGroups();
    for (const auto& g : groups)
        out << m_settings->value(g + QStringLiteral("/name"), QUrl::fromPercentEncoding(g.toLatin1())).toString();
    m_settings->endGroup();
    out.sort(Qt::CaseInsensitive);
    return out;
}

std::optional<Profile> ProfileStore::profile(const QString& name) const
{
    m_settings->beginGroup(profilesGroup + QLatin1Char('/') + groupKey(name));
    std::optional<Profile> out;
    if (m_settings->contains(QStringLiteral("name"))) {
        Profile p;
        p.name = m_settings->value(QStringLiteral("name")).toString();
        auto& s = p.settings;
        s.conninfo = m_settings->value(QStringLiteral("conninfo")).toString();
        s.sslmode = m_settings->value(QStringLiteral("sslmode")).toString();
        s.sslRootCert = m_settings->value(QStringLiteral("sslrootcert")).toString();
        s.sslCert = m_settings->value(QStringLiteral("sslcert")).toString();
        s.sslKey = m_settings->value(QStringLiteral("sslkey")).toString();
        s.schema = m_settings->value(QStringLiteral("schema"), s.schema).toString();
        s.monitorConninfo = m_settings->value(QStringLiteral("monitorConninfo")).toString();
        s.environment = m_settings->value(QStringLiteral("environment")).toString();
        s.environmentColour = m_settings->value(QStringLiteral("environmentColour")).toString();
        p.patroni = m_settings->value(QStringLiteral("patroni")).toString();
        out = p;
    }
    m_settings->endGroup();
    return out;
}

void ProfileStore::save(const Profile& profile)
{
    if (profile.name.trimmed().isEmpty())
        throw std::invalid_argument("a profile needs a name");
    // Only the string itself is redacted here; the TLS fields stay separate so the dialog
    // shows them where the user put them.
    ConnectionSettings bare;
    bare.conninfo = profile.settings.conninfo;
    const QString conninfo = QString::fromStdString(storableConninfo(bare));
    QString monitor;
    if (!profile.settings.monitorConninfo.trimmed().isEmpty()) {
        bare.conninfo = profile.settings.monitorConninfo;
        monitor = QString::fromStdString(storableConninfo(bare)); // without its password too
    }

    // A URL with a password is refused, not stored (GET /cluster needs none).
    const QString patroni = profile.patroni.trimmed();
    if (!patroni.isEmpty()) {
        const auto endpoints = parsePatroniEndpoints(patroni);
        if (!endpoints.error.isEmpty())
            throw std::invalid_argument(endpoints.error.toStdString());
    }

    m_settings->beginGroup(profilesGroup + QLatin1Char('/') + groupKey(profile.name.trimmed()));
    m_settings->remove(QString()); // whatever an older version of this profile held
    m_settings->setValue(QStringLiteral("name"), profile.name.trimmed());
    m_settings->setValue(QStringLiteral("conninfo"), conninfo);
    m_settings->setValue(QStringLiteral("sslmode"), profile.settings.sslmode);
    m_settings->setValue(QStringLiteral("sslrootcert"), profile.settings.sslRootCert);
    m_settings->setValue(QStringLiteral("sslcert"), profile.settings.sslCert);
    m_settings->setValue(QStringLiteral("sslkey"), profile.settings.sslKey);
    m_settings->setValue(QStringLiteral("schema"), profile.settings.schema);
    m_settings->setValue(QStringLiteral("monitorConninfo"), monitor);
    m_settings->setValue(QStringLiteral("environment"), profile.settings.environment.trimmed());
    m_settings->setValue(QStringLiteral("environmentColour"), profile.settings.environmentColour);
    if (!patroni.isEmpty())
        m_settings->setValue(QStringLiteral("patroni"), patroni);
    m_settings->endGroup();
    m_settings->sync();
}

void ProfileStore::remove(const QString& name)
{
    m_settings->remove(profilesGroup + QLatin1Char('/') + groupKey(name));
    if (lastUsed() == name)
        m_settings->remove(QStringLiteral("lastProfile"));
    m_settings->sync();
}

QString ProfileStore::lastUsed() const { return m_settings->value(QStringLiteral("lastProfile")).toString(); }

void ProfileStore::setLastUsed(const QString& name)
{
    m_settings->setValue(QStringLiteral("lastProfile"), name);
    m_settings->sync();
}

QString ProfileStore::fileName() const { return m_settings->fileName(); }

void ProfileStore::sync() { m_settings->sync(); }

} // namespace idem::console
