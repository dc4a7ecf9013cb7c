#include "models/trustedkeystore.h"

#include <QSettings>

namespace idem::console {

namespace {
    const QString group = QStringLiteral("trustedSigningKeys");

    QSettings consoleSettings()
    {
        return QSettings(QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"));
    }
} // namespace

idem::TrustedKeys loadTrustedKeys(QSettings& settings)
{
    idem::TrustedKeys keys;
    const int n = settings.beginReadArray(group);
    for (int i = 0; i < n; ++i) {
        settings.setArrayIndex(i);
        const QString fp = settings.value(QStringLiteral("fingerprint")).toString().trimmed().toLower();
        // A hand-edited entry that is not a fingerprint trusts nothing.
        if (fp.size() == 64 && QByteArray::fromHex(fp.toLatin1()).size() == 32)
            keys.add({ settings.value(QStringLiteral("name")).toString().toStdString(), fp.toStdString() });
    }
    settings.endArray();
    return keys;
}

void saveTrustedKeys(QSettings& settings, const idem::TrustedKeys& keys)
{
    settings.remove(group);
    settings.beginWriteArray(group, int(keys.keys.size()));
    for (int i = 0; i < int(keys.keys.size()); ++i) {
        settings.setArrayIndex(i);
        settings.setValue(QStringLiteral("name"), QString::fromStdString(keys.keys[std::size_t(i)].name));
        settings.setValue(QStringLiteral("fingerprint"), QString::fromStdString(keys.keys[std::size_t(i)].fingerprint));
    }
    settings.endArray();
    settings.sync();
}

idem::TrustedKeys loadTrustedKeys()
{
    auto s = consoleSettings();
    return loadTrustedKeys(s);
}

void saveTrustedKeys(const idem::TrustedKeys& keys)
{
    auto s = consoleSettings();
    saveTrustedKeys(s, keys);
}

} // namespace idem::console
