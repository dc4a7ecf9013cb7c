#include "models/connectionsettings.h"

#include "core/connection.h"

namespace idem::console {

namespace {

    std::string normalised(const QString& input)
    {
        const QString text = input.trimmed();
        const bool uri
            = text.startsWith(QStringLiteral("postgresql://")) || text.startsWith(QStringLiteral("postgres://"));
        if (!text.isEmpty() && !uri && !text.contains(QLatin1Char('=')))
            return idem::formatConninfo({ { "service", text.toStdString() } });
        return text.toStdString();
    }

    std::map<std::string, std::string> mergedOptions(const ConnectionSettings& s)
    {
        auto options = idem::parseConninfo(normalised(s.conninfo));
        const auto override = [&options](const char* key, const QString& value) {
            if (!value.trimmed().isEmpty())
                options[key] = value.trimmed().toStdString();
        };
        override("sslmode", s.sslmode);
        override("sslrootcert", s.sslRootCert);
        override("sslcert", s.sslCert);
        override("sslkey", s.sslKey);
        // Not trimmed: a password may well end in a space.
        if (!s.password.isEmpty())
            options["password"] = s.password.toStdString();
        return options;
    }

} // namespace

std::string effectiveConninfo(const ConnectionSettings& settings)
{
    return idem::formatConninfo(mergedOptions(settings));
}

std::string storableConninfo(const ConnectionSettings& settings)
{
    // redactConninfo drops the password; sslpassword (the client key's passphrase) is a
    // secret too and must not reach the settings file either.
    auto options = idem::parseConninfo(idem::redactConninfo(effectiveConninfo(settings)));
    options.erase("sslpassword");
    return idem::formatConninfo(options);
}

ConnectionSettings monitorSettings(const ConnectionSettings& settings)
{
    ConnectionSettings out = settings;
    out.monitorConninfo.clear();
    if (settings.monitorConninfo.trimmed().isEmpty())
        return out;
    out.conninfo = settings.monitorConninfo.trimmed();
    try {
        auto options = idem::parseConninfo(normalised(out.conninfo));
        if (!options.count("target_session_attrs")) {
            options["target_session_attrs"] = "prefer-standby";
            out.conninfo = QString::fromStdString(idem::formatConninfo(options));
        }
    } catch (const idem::ConnectError&) {
        // Left as typed: connecting reports what libpq rejected.
    }
    return out;
}

ConnectionSettings withPasswordSeparated(ConnectionSettings settings)
{
    try {
        auto options = idem::parseConninfo(normalised(settings.conninfo));
        const auto it = options.find("password");
        if (it == options.end())
            return settings;
        if (settings.password.isEmpty())
            settings.password = QString::fromStdString(it->second);
        options.erase(it);
        settings.conninfo = QString::fromStdString(idem::formatConninfo(options));
    } catch (const idem::ConnectError&) {
        // Unparseable: leave it as typed so the dialog shows the user what libpq rejected.
    }
    return settings;
}

} // namespace idem::console
