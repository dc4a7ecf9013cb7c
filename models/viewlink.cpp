#include "models/viewlink.h"

#include <QCoreApplication>
#include <QUrl>
#include <QUrlQuery>

#include <stdexcept>

#include "models/visibletext.h"
#include "operations/jobs.h"
#include "operations/tasklist.h"

namespace idem::console {

namespace {
    const QString scheme = QStringLiteral("idem");
    const QString host = QStringLiteral("view");
    constexpr int maxProfileLength = 200;
    constexpr int maxFieldLength = 1024;
    constexpr int maxWindowMinutes = 44640;

    bool hasControl(const QString& s)
    {
        for (const QChar c : s)
            if (c.category() == QChar::Other_Control || c.category() == QChar::Other_Format
                || c.category() == QChar::Other_Surrogate || c.category() == QChar::Other_NotAssigned)
                return true;
        return false;
    }
} // namespace

QStringList viewLinkPages()
{
    return { QStringLiteral("dashboard"), QStringLiteral("tasks"), QStringLiteral("audit"), QStringLiteral("jobs"),
        QStringLiteral("storage"), QStringLiteral("connection") };
}

bool isViewLink(const QString& text) { return text.startsWith(scheme + QLatin1Char(':'), Qt::CaseInsensitive); }

QString buildViewLink(const ViewLink& link)
{
    QUrlQuery q;
    // Every value percent-encoded by QUrl, '&', '=', '+' and '#' included.
    const auto add = [&q](const QString& key, const QString& value) {
        q.addQueryItem(key, QString::fromUtf8(QUrl::toPercentEncoding(value)));
    };
    add(QStringLiteral("profile"), link.profile);
    add(QStringLiteral("page"), link.page);
    if (link.windowMinutes)
        add(QStringLiteral("window"), QString::number(*link.windowMinutes));
    if (!link.tenant.isEmpty())
        add(QStringLiteral("tenant"), link.tenant);
    if (!link.operation.isEmpty())
        add(QStringLiteral("operation"), link.operation);
    if (link.filter)
        add(QStringLiteral("filter"), QString::fromStdString(idem::jobFilterJson(*link.filter)));
    QUrl url;
    url.setScheme(scheme);
    url.setHost(host);
    url.setQuery(q.query(QUrl::FullyEncoded), QUrl::StrictMode);
    return url.toString(QUrl::FullyEncoded);
}

ViewLinkParse parseViewLink(const QString& text)
{
    ViewLinkParse out;
    const auto fail = [&out](const QString& why) {
        out.link.reset();
        out.error = why;
        return out;
    };
    if (text.size() > maxViewLinkLength)
        return fail(QCoreApplication::translate(
            "idem::console::ViewLink", "The link is %1 characters long; a console link is at most %2.")
                        .arg(text.size())
                        .arg(maxViewLinkLength));
    const QString trimmed = text.trimmed();
    if (hasControl(trimmed) || trimmed.contains(QLatin1Char(' ')))
        return fail(QCoreApplication::translate(
            "idem::console::ViewLink", "The link has spaces or control characters: it is not a console link."));
    const QUrl url(trimmed, QUrl::StrictMode);
    if (!url.isValid() || url.scheme().compare(scheme, Qt::CaseInsensitive) != 0)
        return fail(QCoreApplication::translate(
            "idem::console::ViewLink", "Not a console link: it must start with idem://view?"));
    if (url.host() != host || !url.userInfo().isEmpty() || url.port() != -1
        || (!url.path().isEmpty() && url.path() != QLatin1String("/")) || url.hasFragment())
        return fail(QCoreApplication::translate("idem::console::ViewLink",
            "Not a console link: it must start with idem://view? and carry nothing else before the '?'."));
    ViewLink link;
    link.page.clear();
    const QUrlQuery query(url.query(QUrl::FullyEncoded));
    QStringList seen;
    for (const auto& [rawKey, rawValue] : query.queryItems(QUrl::FullyEncoded)) {
        const QString key = QUrl::fromPercentEncoding(rawKey.toUtf8());
        const QByteArray bytes = QByteArray::fromPercentEncoding(rawValue.toUtf8());
        const QString value = QString::fromUtf8(bytes);
        if (value.toUtf8() != bytes)
            return fail(QCoreApplication::translate("idem::console::ViewLink", "The link's %1 is not valid UTF-8.")
                            .arg(visibleText(key)));
        if (seen.contains(key))
            return fail(QCoreApplication::translate("idem::console::ViewLink", "The link names %1 twice.")
                            .arg(visibleText(key)));
        seen << key;
        if (value.size() > maxFieldLength || hasControl(value))
            return fail(QCoreApplication::translate(
                "idem::console::ViewLink", "The link's %1 is too long or has control characters.")
                            .arg(visibleText(key)));
        if (key == QLatin1String("profile")) {
            if (value.trimmed().isEmpty() || value.size() > maxProfileLength)
                return fail(QCoreApplication::translate(
                    "idem::console::ViewLink", "The link's profile name is empty or longer than %1 characters.")
                                .arg(maxProfileLength));
            link.profile = value;
        } else if (key == QLatin1String("page")) {
            if (!viewLinkPages().contains(value))
                return fail(QCoreApplication::translate(
                    "idem::console::ViewLink", "The link names no page this console has (%1): %2.")
                                .arg(viewLinkPages().join(QStringLiteral(", ")), visibleText(value)));
            link.page = value;
        } else if (key == QLatin1String("window")) {
            bool ok = false;
            const int minutes = value.toInt(&ok);
            if (!ok || minutes < 1 || minutes > maxWindowMinutes || value != QString::number(minutes))
                return fail(
                    QCoreApplication::translate("idem::console::ViewLink", "The link's window must be 1 to %1 minutes.")
                        .arg(maxWindowMinutes));
            link.windowMinutes = minutes;
        } else if (key == QLatin1String("tenant") || key == QLatin1String("operation")) {
            if (value.isEmpty() || value.contains(QLatin1Char(':')))
                return fail(QCoreApplication::translate("idem::console::ViewLink", "The link's %1 is empty or has ':'.")
                                .arg(key));
            (key == QLatin1String("tenant") ? link.tenant : link.operation) = value;
        } else if (key == QLatin1String("filter")) {
            try {
                auto filter = idem::taskFilterFromJobJson(value.toStdString());
                idem::jobFilterJson(filter); // every check the Tasks page and a job make
                link.filter = std::move(filter);
            } catch (const std::exception& e) {
                return fail(QCoreApplication::translate(
                    "idem::console::ViewLink", "The link's Tasks filter is not one this console accepts: %1")
                                .arg(visibleText(std::string(e.what()))));
            }
        } else {
            // A conninfo, a host, a password: never in a link, and never read from one.
            return fail(QCoreApplication::translate(
                "idem::console::ViewLink", "The link carries %1, which a console link never does.")
                            .arg(visibleText(key)));
        }
    }
    if (link.profile.isEmpty())
        return fail(QCoreApplication::translate("idem::console::ViewLink", "The link names no profile."));
    if (link.page.isEmpty())
        return fail(QCoreApplication::translate("idem::console::ViewLink", "The link names no page."));
    out.link = std::move(link);
    return out;
}

} // namespace idem::console
