#pragma once

#include <QWidget>

#include <optional>

#include "models/workermessages.h"

class QTabWidget;

namespace idem::console {

class AuditWitness;
class ClusterPanel;
class ConsoleSession;
class NoticeBanner;
enum class NoticeLevel;
class PauseBanner;
class PauseWatch;
class StatusPanel;

// The console's main content: what needs attention (banner) above the pages; the
// connection page says where we are connected (status panel). The dashboard, tasks and audit
// pages are added by whoever builds the window.
class ConsoleWidget : public QWidget {
    Q_OBJECT
public:
    explicit ConsoleWidget(ConsoleSession* session, QWidget* parent = nullptr);
    ~ConsoleWidget() override;

    NoticeBanner* banner() const { return m_banner; }
    StatusPanel* statusPanel() const { return m_status; }
    // The Patroni cluster on the Connection page (issue #29): hidden without an endpoint.
    ClusterPanel* clusterPanel() const { return m_cluster; }
    // The pages under the banner (dashboard, tasks, audit, connection): whoever builds the
    // window adds them; the connection page is there from the start.
    QTabWidget* pages() const { return m_pages; }
    void addPage(QWidget* page, const QString& title, int index = -1);
    // Its alarms (the audit trail shorter or rewritten since this console verified it) take the
    // banner, red, until acknowledged or the situation changes.
    void setAuditWitness(AuditWitness* witness);
    // Pauses of intake (issue #26): a banner of their own under the notice, above every page.
    void setPauseWatch(PauseWatch* watch);
    PauseBanner* pauseBanner() const { return m_pauseBanner; }

Q_SIGNALS:
    // The user wants the connection dialog (not connected, or the connection failed).
    void connectRequested();

protected:
    void changeEvent(QEvent* event) override;

private:
    enum class Action { None, Connect, Reconnect, Migrate, AcknowledgeAudit };

    void updateNotice();
    void onFailed(const Failure& failure);
    void onBannerAction();
    void notice(NoticeLevel level, const QString& text, Action action = Action::None, const QString& actionText = {});

    ConsoleSession* m_session;
    AuditWitness* m_witness = nullptr;
    NoticeBanner* m_banner;
    PauseBanner* m_pauseBanner = nullptr;
    StatusPanel* m_status;
    ClusterPanel* m_cluster;
    QTabWidget* m_pages;
    std::optional<Failure> m_failure; // shown until something newer supersedes it
    Action m_action = Action::None;
};

} // namespace idem::console
