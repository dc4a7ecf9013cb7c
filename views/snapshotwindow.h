#pragma once

#include <QMainWindow>

#include "models/snapshotopener.h"

class QLabel;
class QPushButton;
class QTabWidget;
class QTextBrowser;

namespace idem::console {

class DashboardWidget;
class SnapshotAuditPage;
class SnapshotTasksPage;
class SnapshotWorkPage;

// An incident snapshot shown read-only, in a top-level window of its own beside the live
// console (several may be open): a banner that says whose snapshot it is, when it was taken and
// whether the bundle verifies, then the live console's Dashboard (the same tiles and charts, fed
// from the snapshot, never polling), Tasks (the row sets and a row's detail) and Audit (the tail
// and chain head) pages, and the snapshot's details. It never opens a database connection.
class SnapshotWindow : public QMainWindow {
    Q_OBJECT
public:
    SnapshotWindow(SharedSnapshot snapshot, const QString& dir, QWidget* parent = nullptr);
    ~SnapshotWindow() override;

    const SharedSnapshot& snapshot() const { return m_snapshot; }
    QString directory() const { return m_dir; }
    QLabel* banner() const { return m_banner; }
    QLabel* verificationBanner() const { return m_verification; }
    // Intact and, when signed, signed by a key this console trusts (the console's list is no
    // demand that every bundle be signed: an unsigned one is shown as such, not as altered).
    // And its content agrees with itself: events match the audit entries they cite, nothing is dated
    // after its instant (a bundle re-signed by a trusted key may still be forged).
    bool verified() const { return m_checked.intact() && m_checked.consistent() && !m_checked.unknownSigner(); }
    QPushButton* trustSignerButton() const { return m_trustButton; }
    // The signer looked up again in `trusted` (after the operator changed the list); the banner follows.
    void recheckTrust(const idem::TrustedKeys& trusted);
    QTabWidget* pages() const { return m_pages; }
    DashboardWidget* dashboard() const { return m_dashboard; }
    SnapshotTasksPage* tasks() const { return m_tasks; }
    SnapshotAuditPage* audit() const { return m_audit; }
    SnapshotWorkPage* work() const { return m_work; }
    QTextBrowser* details() const { return m_details; }

    // What a click on a tile opens: the row set that lists the tile's rows, or empty.
    static QString rowSetForTile(Tile tile);

private:
    void buildBanner();
    void buildDetails();
    void openTile(Tile tile);

    SharedSnapshot m_snapshot;
    QString m_dir;
    QLabel* m_banner;
    QLabel* m_verification;
    QTabWidget* m_pages;
    DashboardWidget* m_dashboard;
    SnapshotTasksPage* m_tasks;
    SnapshotAuditPage* m_audit;
    SnapshotWorkPage* m_work;
    QTextBrowser* m_details;
    idem::BundleVerification m_checked;
    QPushButton* m_trustButton;
};

// Opens the bundle in `dir` off the UI thread, then shows a SnapshotWindow, or a message box
// saying why not (a child of errorParent, object name "snapshotOpenError"); nothing else
// changes. The opener deletes itself once it has answered; its signals say when.
SnapshotOpener* openSnapshotWindow(const QString& dir, QWidget* errorParent);

} // namespace idem::console
