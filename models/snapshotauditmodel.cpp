#include "models/snapshotauditmodel.h"

#include "operations/audit.h"
#include "operations/tasklist.h"
#include "models/snapshottaskmodel.h"

namespace idem::console {

SnapshotAuditModel::SnapshotAuditModel(QObject* parent)
    : RowTableModel(parent)
{
    using E = idem::SnapshotAuditEntry;
    const auto key = [](const E& e) { return QString::fromStdString(e.key); };
    const auto reason = [](const E& e) {
        QString r = QString::fromStdString(e.reason).left(300);
        r.replace(QLatin1Char('\n'), QLatin1Char(' '));
        return r;
    };
    setColumns({
        { QT_TR_NOOP("#"), [](const E& e) { return qlonglong(e.id); } },
        { QT_TR_NOOP("At (UTC)"), [](const E& e) { return snapshotTimeCell(e.at); },
            [](const E& e) { return QString::fromStdString(e.at); } },
        { QT_TR_NOOP("Key"), key, key },
        { QT_TR_NOOP("Action"), [](const E& e) { return QString::fromStdString(e.action); } },
        { QT_TR_NOOP("Actor (role, OS user)"),
            [](const E& e) {
                return tr("%1 (%2)").arg(QString::fromStdString(e.dbRole), QString::fromStdString(e.osUser));
            } },
        { QT_TR_NOOP("Reason"), reason, reason },
    });
}

SnapshotAuditModel::~SnapshotAuditModel() = default;

void SnapshotAuditModel::setSnapshot(const SharedSnapshot& snapshot)
{
    beginResetModel();
    m_rows = snapshot ? snapshot->data.audit.tail : std::vector<idem::SnapshotAuditEntry>();
    endResetModel();
}

const idem::SnapshotAuditEntry& SnapshotAuditModel::entry(int row) const { return m_rows[static_cast<std::size_t>(row)]; }

QVariant SnapshotAuditModel::rowData(const idem::SnapshotAuditEntry& e, int, int role) const
{
    return role == IdRole ? QVariant(qlonglong(e.id)) : QVariant();
}

idem::AuditEntry toAuditEntry(const idem::SnapshotAuditEntry& e)
{
    idem::AuditEntry a;
    a.id = e.id;
    a.atUs = idem::parseIsoMicros(e.at).value_or(0);
    a.key = e.key;
    a.action = e.action;
    a.reason = e.reason;
    a.dbRole = e.dbRole;
    a.osUser = e.osUser;
    a.clientHost = e.clientHost;
    a.application = e.application.value_or(std::string());
    a.beforeImage = e.beforeImage;
    a.afterImage = e.afterImage;
    a.prevHash = e.prevHash;
    a.entryHash = e.entryHash;
    return a;
}

TailCheck checkAuditTail(const idem::SnapshotData& data)
{
    TailCheck c;
    const auto& tail = data.audit.tail; // newest first
    if (tail.empty()) {
        c.text = SnapshotAuditModel::tr("The audit was empty when the snapshot was taken.");
        return c;
    }
    // Redaction rewrites the images, so their hashes cannot match; the links still can.
    c.hashesChecked = !data.redacted;
    for (std::size_t i = 0; i < tail.size(); ++i) {
        const auto& e = tail[i];
        if (c.hashesChecked && idem::auditEntryHash(toAuditEntry(e)) != e.entryHash) {
            c.ok = false;
            c.text = SnapshotAuditModel::tr("Entry #%1 does not hash to its entry_hash: it was edited.").arg(e.id);
            return c;
        }
        if (i + 1 < tail.size()) {
            const auto& older = tail[i + 1];
            if (older.id != e.id - 1 || e.prevHash != older.entryHash) {
                c.ok = false;
                c.text = SnapshotAuditModel::tr("The link from entry #%1 to #%2 is broken.").arg(e.id).arg(older.id);
                return c;
            }
            ++c.linksChecked;
        }
    }
    if (data.audit.headId && *data.audit.headId != tail.front().id) {
        c.ok = false;
        c.text
            = SnapshotAuditModel::tr("The chain head #%1 is not the newest entry of the tail.").arg(*data.audit.headId);
        return c;
    }
    c.text = c.hashesChecked
        ? SnapshotAuditModel::tr("Tail entries checked offline: %1; every hash and link is correct.").arg(tail.size())
        : SnapshotAuditModel::tr(
            "Tail entries checked offline: %1; every link is correct (hashes not rechecked: the images are redacted).")
              .arg(tail.size());
    return c;
}

} // namespace idem::console
