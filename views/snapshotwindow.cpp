#include "views/snapshotwindow.h"

#include <QAction>

#include <QAbstractSeries>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QMessageBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QXYSeries>

#include "operations/snapshotjson.h"
#include "operations/tasklist.h"
#include "models/dashboardmodel.h"
#include "models/eventwatch.h"
#include "models/snapshotopener.h"
#include "views/chartpanel.h"
#include "views/dashboardwidget.h"
#include "views/snapshotauditpage.h"
#include "views/snapshottaskspage.h"
#include "views/snapshotworkpage.h"
#include "views/tilewidget.h"
#include "views/trustedkeysdialog.h"
#include "models/trustedkeystore.h"
#include "models/visibletext.h"

namespace idem::console {

namespace {
    QString text(const std::string& s) { return QString::fromStdString(s); }
    // Anything a bundle says, for rich text: escaped (models/visibletext), then HTML-escaped.
    QString html(const std::string& s) { return visibleHtml(s); }
    QString yesNo(bool b) { return b ? SnapshotWindow::tr("yes") : SnapshotWindow::tr("no"); }
} // namespace

SnapshotWindow::SnapshotWindow(SharedSnapshot snapshot, const QString& dir, QWidget* parent)
    : QMainWindow(parent)
    , m_snapshot(std::move(snapshot))
    , m_dir(dir)
    , m_banner(new QLabel)
    , m_verification(new QLabel)
    , m_pages(new QTabWidget)
    , m_dashboard(new DashboardWidget(nullptr, nullptr))
    , m_tasks(new SnapshotTasksPage(m_snapshot))
    , m_audit(new SnapshotAuditPage(m_snapshot))
    , m_work(new SnapshotWorkPage(m_snapshot))
    , m_details(new QTextBrowser)
    , m_checked(m_snapshot->verification)
    , m_trustButton(new QPushButton(tr("Trust this signer…")))
{
    setObjectName(QStringLiteral("snapshotWindow"));
    setAttribute(Qt::WA_DeleteOnClose);
    const auto& d = m_snapshot->data;

    // The same dashboard as the live console, static: the snapshot's figures, thresholds and
    // counters history; what a snapshot does not hold is said on the charts that would show it.
    m_dashboard->model()->showStatic(
        snapshotDashboardSettings(d), snapshotReading(d), d.windowMinutes, snapshotProcessingSamples(d));
    // Its latency figures and the events of its window (issue #27), when it carries them.
    m_dashboard->showSnapshotExtras(snapshotLatency(d), snapshotEvents(d));
    if (auto* cost = m_dashboard->charts()->series(QStringLiteral("tickms"))) {
        cost->clear();
        cost->chart()->setTitle(tr("Console load: not part of a snapshot"));
    }
    for (auto* view : m_dashboard->charts()->findChildren<QChartView*>()) {
        const auto series = view->chart()->series();
        if (!series.isEmpty() && series.first()->type() == QAbstractSeries::SeriesTypeBar)
            view->chart()->setTitle(tr("Attempts histogram: not part of a snapshot"));
        // With the latency chart beside it, an empty console-load chart would only squeeze the
        // others' time axes until their labels no longer fit: its place goes to them.
        if (d.latency && view->chart()->series().contains(m_dashboard->charts()->series(QStringLiteral("tickms"))))
            view->hide();
    }
    // Its pauses shade every time axis, as the live console's do.
    if (d.pauses) {
        std::vector<PauseSpan> spans;
        const auto end = snapshotTakenAt(d).toMSecsSinceEpoch();
        for (const auto& p : d.pauses->rows) {
            const auto from = idem::parseIsoMicros(p.pausedAt);
            const auto to = p.endedAt ? idem::parseIsoMicros(*p.endedAt) : std::optional<std::int64_t>(end * 1000);
            if (from && to)
                spans.push_back({ *from / 1000, std::min<qint64>(end, *to / 1000) });
        }
        m_dashboard->charts()->setPauseSpans(std::move(spans));
    }
    if (d.processingHistory)
        if (auto* live = m_dashboard->charts()->series(QStringLiteral("processing")))
            for (auto* view : m_dashboard->charts()->findChildren<QChartView*>())
                if (view->chart() == live->chart()) {
                    view->chart()->setTitle(tr("Processing vs expired: rows processing at the snapshot"));
                    view->setToolTip(tr("The rows processing at the snapshot's instant, counted back a minute at a "
                                        "time: by when their attempt started and when their lease ran out. Rows that "
                                        "finished before the instant are not counted, so earlier minutes show at "
                                        "least this many; the last point is exact."));
                }
    for (int i = 0; i < tileCount; ++i) {
        const auto t = static_cast<Tile>(i);
        connect(m_dashboard->tile(t), &TileWidget::clicked, this, [this](Tile tile) { openTile(tile); });
    }

    // A window opened to look at something closes the way such windows do: Ctrl+W or Esc.
    auto* close = new QAction(tr("Close snapshot"), this);
    close->setObjectName(QStringLiteral("closeSnapshotAction"));
    close->setShortcuts({ QKeySequence(QKeySequence::Close), QKeySequence(Qt::Key_Escape) });
    close->setShortcutContext(Qt::WindowShortcut);
    connect(close, &QAction::triggered, this, &QWidget::close);
    addAction(close);

    m_trustButton->setObjectName(QStringLiteral("trustSignerButton"));
    connect(m_trustButton, &QPushButton::clicked, this, [this] {
        if (TrustedKeysDialog::editConsoleKeys(this, QString::fromStdString(m_checked.keyFingerprint.value_or(""))))
            recheckTrust(loadTrustedKeys());
    });
    buildBanner();
    buildDetails();
    m_pages->setObjectName(QStringLiteral("snapshotPages"));
    m_pages->addTab(m_dashboard, tr("Dashboard"));
    m_pages->addTab(m_tasks, tr("Tasks"));
    m_pages->addTab(m_work, tr("Pauses and jobs"));
    m_pages->addTab(m_audit, tr("Audit"));
    m_pages->addTab(m_details, tr("Details"));

    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(m_banner);
    auto* verificationRow = new QHBoxLayout;
    verificationRow->addWidget(m_verification, 1);
    verificationRow->addWidget(m_trustButton, 0, Qt::AlignTop);
    layout->addLayout(verificationRow);
    layout->addWidget(m_pages, 1);
    setCentralWidget(central);
    statusBar()->showMessage(tr("Read-only snapshot from %1").arg(m_dir));
    resize(1280, 940);
}

SnapshotWindow::~SnapshotWindow() = default;

void SnapshotWindow::buildBanner()
{
    const auto& d = m_snapshot->data;
    const auto& v = m_checked;
    const QString source = snapshotSource(d);
    const QString when = snapshotTimeText(snapshotTakenAt(d));
    const QString server = d.inRecovery ? tr("PostgreSQL %1, standby").arg(html(d.serverVersion))
                                        : tr("PostgreSQL %1, primary").arg(html(d.serverVersion));
    QStringList facts;
    facts << tr("producer %1").arg(html(d.producer))
          << tr("schema version %1 (this console knows %2)").arg(d.schemaVersion).arg(d.schemaLatestKnown)
          << tr("format version %1").arg(d.formatVersion) << tr("redacted: %1").arg(yesNo(d.redacted)) << server
          << tr("read as %1").arg(html(d.currentRole));
    if (d.tenant || d.operation)
        facts << tr("only tenant %1, operation %2").arg(html(d.tenant.value_or("*")), html(d.operation.value_or("*")));
    m_banner->setObjectName(QStringLiteral("snapshotBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->setText(QStringLiteral("<span style='font-size:14pt; font-weight:bold'>%1</span><br>%2")
                          .arg(tr("Snapshot of %1 taken %2 — read-only").arg(visibleText(source).toHtmlEscaped(), when),
                              facts.join(QStringLiteral(" · "))));
    m_banner->setStyleSheet(QStringLiteral("QLabel { background:#263238; color:#ffffff; padding:8px; }"));

    // The verification: green only when intact and signed by a key this console trusts; amber
    // when intact and signed by a key nobody trusted (anyone may have re-signed it); neutral when
    // intact and unsigned; red with every finding (naming the files) when anything does not match.
    QString line;
    QString style;
    const QString fingerprint = text(v.keyFingerprint.value_or(""));
    m_trustButton->setVisible(v.intact() && v.unknownSigner());
    if (!v.intact()) {
        QStringList findings;
        for (const auto& f : v.report())
            findings << text(f).toHtmlEscaped();
        line = tr("<b>Verification FAILED: this bundle is not as it was written.</b> The data below may have been "
                  "altered.<br>%1")
                   .arg(findings.join(QStringLiteral("<br>")));
        style = QStringLiteral("QLabel { background:#b71c1c; color:#ffffff; padding:6px; }");
    } else if (!v.consistent()) {
        // Every file is as signed, but what the files say contradicts itself: a signature names who
        // wrote a bundle, not that it is true.
        QStringList findings;
        for (const auto& f : v.contradictions)
            findings << visibleText(f).toHtmlEscaped();
        const QString signer = v.signature != idem::SignatureState::Valid ? tr("It is not signed.")
            : v.trustedKeyMatches
            ? tr("It is signed by the trusted key %1: whoever holds that key wrote it like this.")
                  .arg(html(v.trustedKeyName.value_or("")).isEmpty()
                          ? tr("(unnamed)")
                          : QStringLiteral("“%1”").arg(html(v.trustedKeyName.value_or(""))))
            : tr("It is signed by an unknown key %1.").arg(fingerprint);
        line = tr("<b>This snapshot CONTRADICTS ITSELF: its events do not match its own audit trail or its "
                  "instant.</b> What it shows may have been forged; do not act on it. %1<br>%2")
                   .arg(signer, findings.join(QStringLiteral("<br>")));
        style = QStringLiteral("QLabel { background:#b71c1c; color:#ffffff; padding:6px; }");
    } else if (v.unknownSigner()) {
        line = tr("<b>Signed by an unknown key %1</b>: all %2 files match the MANIFEST, but this console trusts no "
                  "such key, and anyone who edited the bundle could have re-signed it with a key of their own. "
                  "Trust the key (Trust this signer…) only if you know whose it is.")
                   .arg(fingerprint)
                   .arg(v.filesChecked);
        style = QStringLiteral("QLabel { background:#fff3cd; color:#5d4200; padding:6px; }");
    } else if (v.signature == idem::SignatureState::Valid) {
        const QString name = text(v.trustedKeyName.value_or(""));
        line = tr("Signature valid, by the trusted key %1 (SHA-256 %2); all %3 files match the MANIFEST.")
                   .arg(name.isEmpty() ? tr("(unnamed)") : QStringLiteral("“%1”").arg(visibleText(name).toHtmlEscaped()),
                       text(idem::shortFingerprint(fingerprint.toStdString())))
                   .arg(v.filesChecked);
        style = QStringLiteral("QLabel { background:#e3f2e6; color:#1b5e20; padding:6px; }");
    } else {
        line = tr("Unsigned: all %1 files match the MANIFEST, but whoever edited them could have rewritten it too.")
                   .arg(v.filesChecked);
        style = QStringLiteral("QLabel { background:#eceff1; color:#37474f; padding:6px; }");
    }
    m_verification->setToolTip(fingerprint.isEmpty() ? QString() : tr("Signing key SHA-256 %1").arg(fingerprint));
    m_verification->setObjectName(QStringLiteral("snapshotVerification"));
    m_verification->setWordWrap(true);
    m_verification->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_verification->setText(line);
    m_verification->setStyleSheet(style);

    setWindowTitle(tr("%1Snapshot %2, %3 (read-only) – Idem console")
                       .arg(verified() ? QString() : tr("UNVERIFIED "), source,
                           snapshotTakenAt(d).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss 'UTC'"))));
}

void SnapshotWindow::recheckTrust(const idem::TrustedKeys& trusted)
{
    // The files and the signature were checked once; only whom it is by is looked up again.
    m_checked = m_snapshot->verification;
    m_checked.trustedKeyGiven = !trusted.empty();
    m_checked.trustedKeyMatches = false;
    m_checked.trustedKeyName.reset();
    if (m_checked.signature == idem::SignatureState::Valid && m_checked.keyFingerprint)
        if (const auto* key = trusted.find(*m_checked.keyFingerprint)) {
            m_checked.trustedKeyMatches = true;
            m_checked.trustedKeyName = key->name;
        }
    buildBanner();
    buildDetails();
}

void SnapshotWindow::buildDetails()
{
    const auto& d = m_snapshot->data;
    const auto row = [](const QString& k, const QString& value) {
        return QStringLiteral("<tr><th align=left valign=top>%1</th><td>%2</td></tr>")
            .arg(k, visibleLines(value).toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    };
    QString html = QStringLiteral("<table cellspacing=4>");
    html += row(tr("Folder"), m_dir);
    html += row(tr("Taken at"), snapshotTimeText(snapshotTakenAt(d)));
    html += row(tr("Producer"), text(d.producer));
    html += row(tr("Format version"),
        tr("%1 (this console reads up to %2)").arg(d.formatVersion).arg(idem::snapshotFormatVersion));
    html += row(tr("Connection"), text(d.conninfo));
    if (d.adminConninfo || d.adminRole)
        html += row(tr("Admin connection"),
            tr("%1 as %2").arg(text(d.adminConninfo.value_or("")), text(d.adminRole.value_or(""))));
    html += row(tr("Server"),
        tr("PostgreSQL %1 (%2), database %3, %4")
            .arg(text(d.serverVersion))
            .arg(d.serverVersionNum)
            .arg(text(d.database), d.inRecovery ? tr("standby") : tr("primary")));
    html += row(tr("Monitor role"),
        tr("%1 (session %2); superuser %3, idem_reader %4, idem_operator %5")
            .arg(text(d.currentRole), text(d.sessionRole), yesNo(d.superuser), yesNo(d.memberReader),
                yesNo(d.memberOperator)));
    html += row(tr("Schema"),
        tr("%1, version %2 (the exporting Idem knew %3)")
            .arg(text(d.schema))
            .arg(d.schemaVersion)
            .arg(d.schemaLatestKnown));
    html += row(tr("Scope"),
        tr("tenant %1, operation %2; figures over %3 min, long-unfinished after %4 min, history %5 min")
            .arg(text(d.tenant.value_or("*")), text(d.operation.value_or("*")), QString::number(d.windowMinutes),
                QString::number(d.longUnfinishedAfterMinutes), QString::number(d.historyMinutes)));
    html += row(tr("Thresholds"),
        snapshotHasThresholds(d) ? tr("%1 set by the exporting console").arg(d.thresholds.size())
                                 : tr("none in the snapshot: the tiles use this console's defaults"));
    if (d.poll)
        html += row(tr("Poll settings"),
            tr("every %1 ms, statement timeout %2 ms, wide refresh %3 ms")
                .arg(d.poll->intervalMs)
                .arg(d.poll->statementTimeoutMs)
                .arg(d.poll->wideRefreshMs));
    html += row(tr("Redacted"), yesNo(d.redacted));
    QStringList verification;
    for (const auto& f : m_checked.report())
        verification << text(f);
    html += row(tr("Verification"), verification.join(QStringLiteral("\n")));
    html += QStringLiteral("</table>");
    m_details->setObjectName(QStringLiteral("snapshotDetails"));
    m_details->setHtml(html);
}

QString SnapshotWindow::rowSetForTile(Tile tile)
{
    const char* set = tileSpec(tile).snapshotRowSet;
    return set ? QString::fromLatin1(set) : QString();
}

void SnapshotWindow::openTile(Tile tile)
{
    const QString set = rowSetForTile(tile);
    if (set.isEmpty() || !m_tasks->selectSet(set)) {
        statusBar()->showMessage(
            tr("This snapshot lists no rows for “%1”: it holds only its row sets (Tasks page).").arg(tileTitle(tile)),
            8000);
        return;
    }
    m_pages->setCurrentWidget(m_tasks);
}

SnapshotOpener* openSnapshotWindow(const QString& dir, QWidget* errorParent)
{
    auto* opener = new SnapshotOpener(errorParent);
    QObject::connect(opener, &SnapshotOpener::opened, opener, [opener](const QString& where, const SharedSnapshot& s) {
        auto* window = new SnapshotWindow(s, where);
        window->show();
        window->raise();
        opener->deleteLater();
    });
    QObject::connect(
        opener, &SnapshotOpener::failed, opener, [opener, errorParent](const QString&, const QString& message) {
            auto* box = new QMessageBox(QMessageBox::Warning, SnapshotWindow::tr("Cannot open the snapshot"), message,
                QMessageBox::Ok, errorParent);
            box->setObjectName(QStringLiteral("snapshotOpenError"));
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
            opener->deleteLater();
        });
    opener->open(dir);
    return opener;
}

} // namespace idem::console
