#pragma once

#include <QMetaType>
#include <QPointer>
#include <QString>

#include <vector>

#include "models/rowtablemodel.h"
#include "operations/approvals.h"

namespace idem::console {

class ConsoleSession;
struct Failure;

// What waits for a second person's approval (schema v28: one mechanism, every gated kind): the
// requests of recovery jobs, retention changes and manual purges, one row each, read on the
// session's worker thread; and the approve (naming the spec sha256 the row shows) and decline of
// one of them, run there too. The dialog over it (views/approvalsdialog) does no database work.
class ApprovalsModel : public RowTableModel<idem::ApprovalRequest> {
    Q_OBJECT
public:
    enum Column { RequestColumn, WhatColumn, ByColumn, ReasonColumn, UntilColumn, SpecColumn, COLUMN_COUNT };
    enum Role { IdRole = Qt::UserRole, KindRole, SpecRole };

    explicit ApprovalsModel(ConsoleSession* session, QObject* parent = nullptr);
    ~ApprovalsModel() override;

    const idem::ApprovalRequest& request(int row) const { return m_rows[static_cast<std::size_t>(row)]; }
    // Why row's request can be neither approved nor declined now (approved already, its time
    // over); empty when it can.
    QString whyNot(int row) const;
    bool loading() const { return m_loading != 0; }
    bool busy() const { return m_deciding != 0; }
    QString error() const { return m_error; }

    void reload();
    // Approves (with the row's spec sha256) or declines row's request; finished() says how it went.
    void approve(int row, const QString& reason);
    void decline(int row, const QString& reason);

Q_SIGNALS:
    void loaded();
    // good: the request was approved or declined; text: what happened, or the server's refusal.
    void finished(bool good, const QString& text, qint64 auditId);

protected:
    QVariant rowData(const idem::ApprovalRequest& r, int column, int role) const override;

private:
    QString whyNot(const idem::ApprovalRequest& r) const;
    void decide(int row, const QString& reason, bool approving);

    QPointer<ConsoleSession> m_session;
    quint64 m_loading = 0;
    quint64 m_deciding = 0;
    QString m_error;
};

} // namespace idem::console

Q_DECLARE_METATYPE(std::vector<idem::ApprovalRequest>)
Q_DECLARE_METATYPE(idem::ApprovalDecision)
