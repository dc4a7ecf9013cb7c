#include "models/auditmodel.h"
#include "models/visibletext.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

#include <set>

#include "models/consolesession.h"
#include "models/taskbrowsermodel.h"

namespace idem::console {

namespace {
    QString valueText(const QJsonValue& v)
    {
        if (v.isUndefined())
            return {};
        if (v.isString())
            return v.toString();
        if (v.isNull())
            return QStringLiteral("null");
        if (v.isBool())
            return v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
        if (v.isDouble())
            return QString::number(v.toDouble(), 'g', 17);
        return QString::fromUtf8(
            (v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(v.toObject())).toJson(QJsonDocument::Compact));
    }
} // namespace

QList<AuditFieldChange> auditDiff(const std::string& beforeImage, const std::string& afterImage)
{
    const auto before = QJsonDocument::fromJson(QByteArray::fromStdString(beforeImage));
    const auto after = QJsonDocument::fromJson(QByteArray::fromStdString(afterImage));
    QList<AuditFieldChange> out;
    if (!before.isObject() || !after.isObject()) {
        const auto b = QString::fromStdString(beforeImage), a = QString::fromStdString(afterImage);
        out.append({ QStringLiteral("(image)"), b, a, a != b });
        return out;
    }
    const auto bo = before.object(), ao = after.object();
    std::set<QString> fields;
    for (auto it = bo.begin(); it != bo.end(); ++it)
        fields.insert(it.key());
    for (auto it = ao.begin(); it != ao.end(); ++it)
        fields.insert(it.key());
    // What changed first (an operator reads those), then the rest, each by name.
    QList<AuditFieldChange> same;
    for (const auto& f : fields) {
        const auto bv = bo.value(f), av = ao.value(f);
        (bv != av ? out : same).append({ f, valueText(bv), valueText(av), bv != av });
    }
    return out + same;
}

AuditModel::AuditModel(ConsoleSession* session, QObject* parent)
    : RowTableModel(parent)
    , m_session(session)
{
    qRegisterMetaType<std::vector<idem::AuditEntry>>();
    qRegisterMetaType<idem::ChainReport>();
    using E = idem::AuditEntry;
    setColumns({
        { QT_TR_NOOP("#"), [](const E& e) { return QVariant::fromValue<qint64>(e.id); } },
        { QT_TR_NOOP("At"), [](const E& e) { return formatTimeUs(e.atUs); } },
        // A retention change or a purge run is about many keys (or none yet): no single key.
        { QT_TR_NOOP("Key"), [](const E& e) { return e.key.empty() ? QStringLiteral("—") : visibleText(e.key); } },
        { QT_TR_NOOP("Action"), [](const E& e) { return QString::fromStdString(e.action); } },
        { QT_TR_NOOP("Actor"),
            [](const E& e) {
                return tr("%1 (%2 from %3)").arg(visibleText(e.dbRole), visibleText(e.osUser), visibleText(e.clientHost));
            } },
        { QT_TR_NOOP("Reason"),
            [](const E& e) {
                auto r = QString::fromStdString(e.reason);
                r.replace(QLatin1Char('\n'), QChar(0x21b5));
                return visibleText(r.left(300));
            },
            [](const E& e) { return QString::fromStdString(e.reason); } },
    });
}

AuditModel::~AuditModel()
{
    if (m_session && m_pending)
        m_session->cancel(m_pending);
    if (m_session && m_verifyJob)
        m_session->cancel(m_verifyJob);
}

QVariant AuditModel::rowData(const idem::AuditEntry& e, int, int role) const
{
    return role == IdRole ? QVariant::fromValue<qint64>(e.id) : QVariant();
}

bool AuditModel::canFetchMore(const QModelIndex& parent) const
{
    return !parent.isValid() && m_started && m_more && m_pending == 0;
}

void AuditModel::fetchMore(const QModelIndex& parent)
{
    if (canFetchMore(parent))
        requestPage();
}

void AuditModel::setFilter(const idem::AuditFilter& filter)
{
    if (m_session && m_pending)
        m_session->cancel(m_pending);
    m_pending = 0;
    ++m_generation;
    beginResetModel();
    m_rows.clear();
    m_filter = filter;
    m_filter.beforeId.reset();
    m_filter.afterId.reset();
    m_filter.oldestFirst = false;
    m_more = false;
    m_cursor.reset();
    m_started = true;
    endResetModel();
    requestPage();
}

void AuditModel::fetch(idem::AuditFilter filter, std::function<void(std::vector<idem::AuditEntry>)> rows)
{
    const auto generation = m_generation;
    // Bounded by the server (a statement timeout), and by the console when the server does not
    // answer at all.
    filter.statementTimeoutMs = m_statementTimeoutMs;
    m_pending = m_session->submit(
        [filter](pqxx::connection& c, const idem::SchemaName& schema) {
            return QVariant::fromValue(idem::listAudit(c, schema, filter));
        },
        this,
        [this, generation, rows = std::move(rows)](const QVariant& v) {
            if (generation != m_generation)
                return;
            m_pending = 0;
            rows(v.value<std::vector<idem::AuditEntry>>());
        },
        [this, generation](const Failure& fail) {
            if (generation != m_generation)
                return;
            m_pending = 0;
            Q_EMIT failed(fail.text());
        });
    if (m_pending)
        m_session->bound(m_pending, ConsoleSession::boundFor(m_statementTimeoutMs));
}

void AuditModel::requestPage()
{
    if (!m_session)
        return;
    auto f = m_filter;
    f.limit = m_pageSize + 1;
    f.beforeId = m_cursor;
    const int pageSize = m_pageSize;
    fetch(f, [this, pageSize](std::vector<idem::AuditEntry> rows) {
        m_more = static_cast<int>(rows.size()) > pageSize;
        if (m_more)
            rows.resize(static_cast<std::size_t>(pageSize));
        // The cursor moves first: a view may ask for more from inside the insert.
        if (!rows.empty())
            m_cursor = rows.back().id;
        if (!rows.empty()) {
            beginInsertRows({}, rowCount(), rowCount() + static_cast<int>(rows.size()) - 1);
            m_rows.insert(m_rows.end(), rows.begin(), rows.end());
            endInsertRows();
        }
        Q_EMIT pageLoaded(static_cast<int>(rows.size()));
    });
}

void AuditModel::pollNewer()
{
    if (!m_session || !m_started || m_pending)
        return;
    auto f = m_filter;
    f.limit = m_pageSize + 1;
    f.beforeId.reset();
    f.afterId = m_rows.empty() ? std::int64_t(0) : m_rows.front().id;
    const int pageSize = m_pageSize;
    fetch(f, [this, pageSize](std::vector<idem::AuditEntry> rows) {
        if (static_cast<int>(rows.size()) > pageSize) {
            reload(); // a gap between the new page and what is shown: start over
            return;
        }
        if (!rows.empty()) {
            const bool wasEmpty = m_rows.empty();
            beginInsertRows({}, 0, static_cast<int>(rows.size()) - 1);
            m_rows.insert(m_rows.begin(), rows.begin(), rows.end());
            endInsertRows();
            if (wasEmpty)
                m_cursor = m_rows.back().id;
        }
        Q_EMIT polled(static_cast<int>(rows.size()));
    });
}

void AuditModel::verifyChain(const std::optional<idem::ChainHead>& expectedHead)
{
    if (!m_session || m_verifyJob)
        return;
    m_verifyJob = m_session->submit(
        [expectedHead](pqxx::connection& c, const idem::SchemaName& schema) {
            return QVariant::fromValue(idem::verifyChain(c, schema, expectedHead));
        },
        this,
        [this](const QVariant& v) {
            m_verifyJob = 0;
            Q_EMIT chainVerified(v.value<idem::ChainReport>());
        },
        [this](const Failure& f) {
            m_verifyJob = 0;
            Q_EMIT verifyFailed(f.text());
        });
}

} // namespace idem::console
