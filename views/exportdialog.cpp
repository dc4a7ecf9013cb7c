#include "views/exportdialog.h"
#include "views/theme.h"

#include <QAction>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetrics>
#include <QFormLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>

#include "operations/signing.h"
#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "views/chartpanel.h"
#include "views/dashboardwidget.h"

namespace idem::console {

namespace {
    const QString group = QStringLiteral("snapshotExport");
    // What the export reads per statement at most; the dashboard's own tick timeout is far
    // shorter, but an export is a one-off that reads more.
    constexpr int exportStatementTimeoutMs = 30000;
    // As DashboardModel: the attempts histogram (a wide aggregate) refreshes at most this often.
    constexpr int histogramEveryMs = 30000;

    bool isBundle(const QString& dir) { return QFileInfo(QDir(dir).filePath(QStringLiteral("MANIFEST"))).isFile(); }
} // namespace

ExportDialog::ExportDialog(QSettings* settings, QWidget* parent)
    : QDialog(parent)
    , m_settings(settings)
    , m_keyPath(QString::fromStdString(idem::defaultSigningKeyPath().string()))
    , m_scope(new QLabel)
    , m_target(new QLineEdit)
    , m_browse(new QPushButton(tr("Browse…")))
    , m_replace(new QCheckBox(tr("Replace the previous snapshot in this folder")))
    , m_history(new QComboBox)
    , m_rows(new QSpinBox)
    , m_redact(new QCheckBox(tr("Redact results and error messages (for bundles that leave the team)")))
    , m_sign(new QCheckBox(tr("Sign with my Ed25519 key")))
    , m_keyInfo(new QLabel)
    , m_createKey(new QPushButton(tr("Create signing key")))
    , m_copyKeyPath(new QPushButton(tr("Copy path")))
    , m_pdf(new QCheckBox(tr("Also write report.pdf")))
    , m_error(new QLabel)
{
    if (!m_settings) {
        m_ownSettings = std::make_unique<QSettings>(
            QSettings::IniFormat, QSettings::UserScope, QStringLiteral("Idem"), QStringLiteral("idem-console"));
        m_settings = m_ownSettings.get();
    }
    setWindowTitle(tr("Export incident snapshot"));
    setObjectName(QStringLiteral("exportDialog"));
    m_target->setObjectName(QStringLiteral("target"));
    m_browse->setObjectName(QStringLiteral("browse"));
    m_replace->setObjectName(QStringLiteral("replace"));
    m_history->setObjectName(QStringLiteral("history"));
    m_rows->setObjectName(QStringLiteral("rowLimit"));
    m_redact->setObjectName(QStringLiteral("redact"));
    m_sign->setObjectName(QStringLiteral("sign"));
    m_keyInfo->setObjectName(QStringLiteral("keyInfo"));
    m_createKey->setObjectName(QStringLiteral("createKey"));
    m_copyKeyPath->setObjectName(QStringLiteral("copyKeyPath"));
    m_copyKeyPath->setToolTip(tr("Copy the signing key's full path"));
    m_pdf->setObjectName(QStringLiteral("pdf"));
    m_error->setObjectName(QStringLiteral("errorLabel"));

    m_scope->setWordWrap(true);
    m_keyInfo->setWordWrap(true);
    m_keyInfo->setTextFormat(Qt::PlainText);
    m_keyInfo->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setWordWrap(true);
    theme::followTone(m_error, theme::Tone::Bad);
    m_error->setVisible(false);
    m_replace->setVisible(false);
    for (const int minutes : { 15, 60, 360, 1440 })
        m_history->addItem(
            minutes < 60 ? tr("last %n minute(s)", nullptr, minutes) : tr("last %n hour(s)", nullptr, minutes / 60),
            minutes);
    m_rows->setRange(1, 1000000);
    m_rows->setSingleStep(100);
    m_rows->setSuffix(tr(" rows per set"));
    m_rows->setToolTip(tr("At most this many rows of each set (expired leases, longest running, failed, "
                          "uncertain); the snapshot states the total and whether the bound was reached."));

    auto* targetRow = new QHBoxLayout;
    targetRow->addWidget(m_target, 1);
    targetRow->addWidget(m_browse);
    // The key line on a row of its own: a wrapped label beside buttons is given one line's height
    // and its second line is cut off.
    auto* keyRow = new QHBoxLayout;
    keyRow->addWidget(m_createKey);
    keyRow->addWidget(m_copyKeyPath);
    keyRow->addStretch(1);
    auto* form = new QFormLayout;
    form->addRow(tr("Folder:"), targetRow);
    form->addRow(QString(), m_replace);
    form->addRow(tr("Charts history:"), m_history);
    form->addRow(tr("Row bound:"), m_rows);
    form->addRow(QString(), m_redact);
    form->addRow(QString(), m_sign);
    form->addRow(QString(), m_keyInfo);
    form->addRow(QString(), keyRow);
    form->addRow(QString(), m_pdf);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    buttons->button(QDialogButtonBox::Ok)->setObjectName(QStringLiteral("exportButton"));
    connect(buttons, &QDialogButtonBox::accepted, this, &ExportDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &ExportDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_scope);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(buttons);

    m_settings->beginGroup(group);
    const QString folder = m_settings->value(QStringLiteral("folder"), defaultFolder()).toString();
    const int history = m_settings->value(QStringLiteral("historyMinutes"), 60).toInt();
    m_history->setCurrentIndex(std::max(0, m_history->findData(history)));
    m_rows->setValue(m_settings->value(QStringLiteral("rowLimit"), 1000).toInt());
    m_redact->setChecked(m_settings->value(QStringLiteral("redact"), false).toBool());
    m_sign->setChecked(m_settings->value(QStringLiteral("sign"), false).toBool());
    m_pdf->setChecked(m_settings->value(QStringLiteral("pdf"), true).toBool());
    m_settings->endGroup();
    m_target->setText(QDir(folder).filePath(newBundleName()));

    connect(m_browse, &QPushButton::clicked, this, &ExportDialog::browse);
    connect(m_createKey, &QPushButton::clicked, this, &ExportDialog::createKey);
    connect(m_copyKeyPath, &QPushButton::clicked, this,
        [this] { QGuiApplication::clipboard()->setText(QDir::toNativeSeparators(m_keyPath)); });
    connect(m_sign, &QCheckBox::toggled, this, &ExportDialog::updateKey);
    connect(m_target, &QLineEdit::textChanged, this, &ExportDialog::updateTarget);
    updateKey();
    updateTarget();
}

ExportDialog::~ExportDialog() = default;

QString ExportDialog::lastFolder(QSettings& settings)
{
    return settings.value(QStringLiteral("snapshotExport/folder"), defaultFolder()).toString();
}

QString ExportDialog::defaultFolder()
{
    const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    return docs.isEmpty() ? QDir::homePath() : docs;
}

QString ExportDialog::newBundleName()
{
    return QStringLiteral("idem-snapshot-")
        + QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")) + QStringLiteral("Z");
}

void ExportDialog::prepare()
{
    const QString current = m_target->text().trimmed();
    const QString folder = current.isEmpty() ? defaultFolder() : QFileInfo(current).absolutePath();
    m_target->setText(QDir(folder).filePath(newBundleName()));
    m_replace->setChecked(false);
    updateKey();
}

void ExportDialog::setScopeText(const QString& text) { m_scope->setText(text); }

void ExportDialog::setKeyPath(const QString& path)
{
    m_keyPath = path;
    updateKey();
}

QString ExportDialog::errorText() const { return m_error->isVisible() ? m_error->text() : QString(); }

ExportChoices ExportDialog::choices() const
{
    ExportChoices c;
    c.target = QDir::cleanPath(m_target->text().trimmed());
    c.overwrite = !m_replace->isHidden() && m_replace->isChecked(); // read after the dialog closed too
    c.historyMinutes = m_history->currentData().toInt();
    c.rowLimit = m_rows->value();
    c.redact = m_redact->isChecked();
    c.sign = m_sign->isChecked();
    c.pdf = m_pdf->isChecked();
    return c;
}

void ExportDialog::browse()
{
    const QString current = QFileInfo(m_target->text().trimmed()).absolutePath();
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Folder for the snapshot"), current);
    if (!folder.isEmpty())
        m_target->setText(QDir(folder).filePath(newBundleName()));
}

void ExportDialog::updateTarget()
{
    // Only a previous bundle may be replaced, and only when asked (BundleWriter's rule too).
    const QString target = QDir::cleanPath(m_target->text().trimmed());
    const bool bundle = !target.isEmpty() && QFileInfo(target).isDir() && isBundle(target);
    m_replace->setVisible(bundle);
    if (!bundle)
        m_replace->setChecked(false);
    m_error->setVisible(false);
}

void ExportDialog::updateKey()
{
    const QFileInfo info(m_keyPath);
    m_createKey->setVisible(m_sign->isChecked() && !info.exists());
    m_keyInfo->setVisible(m_sign->isChecked());
    m_copyKeyPath->setVisible(m_sign->isChecked());
    m_keyInfo->setToolTip(QDir::toNativeSeparators(m_keyPath));
    if (!m_sign->isChecked()) {
        // "There is no signing key yet" is not true of an export that signs nothing.
        if (m_keyError) {
            m_error->setVisible(false);
            m_keyError = false;
        }
        return;
    }
    // The short lines break where they say (a wrapped label asks its row for several lines' height
    // and leaves a gap); a message of unknown length wraps.
    m_keyInfo->setWordWrap(false);
    if (!info.exists()) {
        m_keyInfo->setText(tr("No signing key yet at %1.\nCreate one to sign (it is used by idemctl too).")
                               .arg(shownKeyPath()));
        return;
    }
    try {
        const auto key = idem::SigningKey::load(m_keyPath.toStdString());
        m_keyInfo->setText(tr("Key %1,\npublic key SHA-256 %2…")
                               .arg(shownKeyPath(),
                                   QString::fromStdString(idem::publicKeyFingerprint(key.publicPem()).substr(0, 16))));
    } catch (const std::exception& e) {
        m_keyInfo->setWordWrap(true);
        m_keyInfo->setText(tr("The signing key cannot be used: %1").arg(QString::fromStdString(e.what())));
    }
}

QString ExportDialog::shownKeyPath() const
{
    // About fifty characters: the line wraps at spaces, and a path has none to wrap at.
    const QFontMetrics metrics(m_keyInfo->font());
    return metrics.elidedText(
        QDir::toNativeSeparators(m_keyPath), Qt::ElideMiddle, metrics.averageCharWidth() * 50);
}

void ExportDialog::createKey()
{
    try {
        const auto key = idem::SigningKey::generate();
        key.save(m_keyPath.toStdString(), false);
        updateKey();
        m_keyInfo->setWordWrap(true);
        m_keyInfo->setText(tr("Created a new Ed25519 signing key at %1, readable only by you (mode 0600). Public "
                              "key SHA-256 %2. Give the public key (idemctl snapshot pubkey) to whoever checks "
                              "your bundles.")
                               .arg(shownKeyPath(),
                                   QString::fromStdString(idem::publicKeyFingerprint(key.publicPem()))));
        m_error->setVisible(false);
    } catch (const std::exception& e) {
        showError(tr("The signing key could not be created: %1").arg(QString::fromStdString(e.what())));
    }
}

void ExportDialog::showError(const QString& text, bool aboutKey)
{
    m_keyError = aboutKey;
    m_error->setText(text);
    m_error->setVisible(true);
}

void ExportDialog::accept()
{
    const auto c = choices();
    if (c.target.isEmpty())
        return showError(tr("Choose a folder name for the snapshot."));
    const QFileInfo target(c.target);
    QString parent = target.absolutePath();
    if (!QFileInfo(parent).isDir()) {
        // The default Documents folder may not exist on a fresh account; any other is a typo.
        if (QDir::cleanPath(parent) != QDir::cleanPath(defaultFolder()) || !QDir().mkpath(parent))
            return showError(tr("The folder %1 does not exist.").arg(QDir::toNativeSeparators(parent)));
    }
    if (!QFileInfo(parent).isWritable())
        return showError(tr("You cannot write to %1; choose another folder.").arg(QDir::toNativeSeparators(parent)));
    if (target.exists() || target.isSymLink()) {
        if (!target.isDir() || !isBundle(c.target))
            return showError(tr("%1 exists and is not a snapshot bundle; choose another name.")
                                 .arg(QDir::toNativeSeparators(c.target)));
        if (!c.overwrite)
            return showError(tr("A snapshot already exists at %1. Tick \"Replace\" to overwrite it, or choose "
                                "another name.")
                                 .arg(QDir::toNativeSeparators(c.target)));
    }
    if (c.sign) {
        if (!QFileInfo::exists(m_keyPath))
            return showError(tr("There is no signing key yet: create one, or untick \"Sign\"."), true);
        try {
            idem::SigningKey::load(m_keyPath.toStdString());
        } catch (const std::exception& e) {
            return showError(tr("The signing key cannot be used: %1").arg(QString::fromStdString(e.what())), true);
        }
    }
    save();
    QDialog::accept();
}

void ExportDialog::save()
{
    const auto c = choices();
    m_settings->beginGroup(group);
    m_settings->setValue(QStringLiteral("folder"), QFileInfo(c.target).absolutePath());
    m_settings->setValue(QStringLiteral("historyMinutes"), c.historyMinutes);
    m_settings->setValue(QStringLiteral("rowLimit"), c.rowLimit);
    m_settings->setValue(QStringLiteral("redact"), c.redact);
    m_settings->setValue(QStringLiteral("sign"), c.sign);
    m_settings->setValue(QStringLiteral("pdf"), c.pdf);
    m_settings->endGroup();
}

SnapshotExportFlow::SnapshotExportFlow(
    ConsoleSession* monitor, ConsoleSession* admin, DashboardWidget* dashboard, QSettings* settings, QWidget* window)
    : QObject(window)
    , m_monitor(monitor)
    , m_admin(admin)
    , m_dashboard(dashboard)
    , m_settings(settings)
    , m_window(window)
    , m_exporter(new SnapshotExporter(monitor, this))
{
    connect(m_exporter, &SnapshotExporter::finished, this, &SnapshotExportFlow::onFinished);
    connect(m_exporter, &SnapshotExporter::progressChanged, this, [this](const QString& stage, double fraction) {
        if (!m_progress)
            return;
        m_progress->setLabelText(tr("Exporting the snapshot to %1\n%2").arg(m_exporter->target(), stage));
        m_progress->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
    });
    connect(monitor, &ConsoleSession::stateChanged, this, &SnapshotExportFlow::updateAction);
}

SnapshotExportFlow::~SnapshotExportFlow() = default;

void SnapshotExportFlow::setAction(QAction* action)
{
    m_action = action;
    connect(action, &QAction::triggered, this, &SnapshotExportFlow::start);
    updateAction();
}

void SnapshotExportFlow::updateAction()
{
    if (m_action)
        m_action->setEnabled(
            m_monitor && m_monitor->state() == ConsoleSession::State::Connected && !m_exporter->running());
}

QString SnapshotExportFlow::scopeText() const
{
    if (!m_dashboard)
        return {};
    const auto& s = m_dashboard->model()->settings();
    const QString tenant = s.tenant.isEmpty() ? tr("all tenants") : tr("tenant %1").arg(s.tenant);
    const QString operation = s.operation.isEmpty() ? tr("all operations") : tr("operation %1").arg(s.operation);
    // Named as an operator names a database, not as a conninfo string (which would show the
    // passfile's path and every TLS option).
    QString where;
    if (m_monitor) {
        const auto& info = m_monitor->serverInfo();
        where = tr("database %1 on %2:%3 as %4 (schema %5)")
                    .arg(info.database, info.host.isEmpty() ? QStringLiteral("localhost") : info.host, info.port,
                        info.role, info.schema);
    }
    return tr("One consistent read of %1 (%2, %3; figures over the dashboard's last %n minute(s)), read-only through "
              "the monitor connection.",
        nullptr, s.windowMinutes)
        .arg(where, tenant, operation);
}

void SnapshotExportFlow::start()
{
    if (m_exporter->running()) {
        if (m_progress)
            m_progress->show();
        return;
    }
    if (!m_monitor || m_monitor->state() != ConsoleSession::State::Connected) {
        auto* box = new QMessageBox(QMessageBox::Information, tr("Export snapshot"),
            tr("Connect to a database first: the snapshot is read from the monitor connection."), QMessageBox::Ok,
            m_window);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return;
    }
    if (!m_dialog) {
        m_dialog = new ExportDialog(m_settings, m_window);
        connect(m_dialog, &QDialog::accepted, this, [this] { exportWith(m_dialog->choices()); });
    } else {
        m_dialog->prepare();
    }
    m_dialog->setScopeText(scopeText());
    m_dialog->open();
}

SnapshotExportRequest SnapshotExportFlow::request(const ExportChoices& c) const
{
    SnapshotExportRequest r;
    r.target = c.target;
    r.overwrite = c.overwrite;
    r.pdf = c.pdf;
    if (c.sign)
        r.signingKeyPath
            = m_dialog ? m_dialog->keyPath() : QString::fromStdString(idem::defaultSigningKeyPath().string());
    r.options.historyMinutes = c.historyMinutes;
    r.options.rowLimit = c.rowLimit;
    r.options.redact = c.redact;
    r.options.stats.statementTimeoutMs = exportStatementTimeoutMs;
    const QString version = QCoreApplication::applicationVersion();
    r.context.producer
        = (version.isEmpty() ? QStringLiteral("idem-console") : QStringLiteral("idem-console %1").arg(version))
              .toStdString();
    if (m_monitor)
        r.context.conninfo = m_monitor->serverInfo().displayConninfo.toStdString(); // no password in it
    if (m_admin && m_admin != m_monitor && m_admin->state() == ConsoleSession::State::Connected) {
        r.context.adminConninfo = m_admin->serverInfo().displayConninfo.toStdString();
        r.context.adminRole = m_admin->serverInfo().role.toStdString();
    }
    if (m_dashboard) {
        const auto* model = m_dashboard->model();
        const auto& s = model->settings();
        r.options.stats.windowMinutes = s.windowMinutes;
        r.options.stats.longUnfinishedAfterMinutes = s.longUnfinishedMinutes;
        if (!s.tenant.isEmpty())
            r.options.stats.tenant = s.tenant.toStdString();
        if (!s.operation.isEmpty())
            r.options.stats.operation = s.operation.toStdString();
        r.context.thresholds = snapshotThresholds(s);
        idem::SnapshotPollSettings poll;
        poll.intervalMs = s.intervalMs;
        poll.statementTimeoutMs = model->statementTimeoutMs();
        poll.wideRefreshMs = std::max(histogramEveryMs, 10 * s.intervalMs);
        r.context.poll = poll;
        // The charts as they are on the dashboard now, whether or not its page is showing.
        r.charts = m_dashboard->charts()->renderImages();
    }
    return r;
}

bool SnapshotExportFlow::exportWith(const ExportChoices& choices)
{
    if (m_exporter->running())
        return false;
    if (!m_exporter->start(request(choices)))
        return false;
    if (!m_progress) {
        m_progress = new QProgressDialog(m_window);
        m_progress->setObjectName(QStringLiteral("exportProgress"));
        m_progress->setWindowTitle(tr("Export snapshot"));
        m_progress->setCancelButtonText(tr("Cancel"));
        m_progress->setRange(0, 1000);
        m_progress->setMinimumDuration(0);
        m_progress->setAutoClose(false);
        m_progress->setAutoReset(false);
        // Not modal: the window stays usable (its monitor reads queue behind the export meanwhile).
        m_progress->setWindowModality(Qt::NonModal);
        connect(m_progress, &QProgressDialog::canceled, m_exporter, &SnapshotExporter::cancel);
    }
    m_progress->setLabelText(tr("Exporting the snapshot to %1").arg(choices.target));
    m_progress->setValue(0);
    m_progress->show();
    updateAction();
    return true;
}

void SnapshotExportFlow::onFinished(
    SnapshotExporter::Outcome outcome, const QString& message, const SnapshotExportResult& result)
{
    if (m_progress)
        m_progress->hide();
    updateAction();
    if (m_outcome)
        m_outcome->deleteLater();
    const auto icon = outcome == SnapshotExporter::Outcome::Failed ? QMessageBox::Warning : QMessageBox::Information;
    m_outcome = new QMessageBox(icon, tr("Export snapshot"), message, QMessageBox::Ok, m_window);
    m_outcome->setObjectName(QStringLiteral("exportOutcome"));
    m_outcome->setAttribute(Qt::WA_DeleteOnClose);
    if (outcome == SnapshotExporter::Outcome::Written) {
        QString info = tr("Taken at %1 (server clock, UTC).").arg(result.takenAt);
        if (!result.keyFingerprint.isEmpty())
            info += QLatin1Char('\n') + tr("Signed with Ed25519 key %1.").arg(result.keyFingerprint);
        info += QLatin1Char('\n') + result.summary.join(QLatin1Char('\n'));
        m_outcome->setInformativeText(info);
        auto* show = m_outcome->addButton(tr("Show in folder"), QMessageBox::ActionRole);
        show->setObjectName(QStringLiteral("showInFolder"));
        const QString path = result.path;
        // ActionRole buttons close the box too; the folder opens beside it.
        connect(show, &QPushButton::clicked, this,
            [path] { QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(path).absoluteFilePath())); });
    }
    m_outcome->open();
    Q_EMIT finished(outcome, message);
}

} // namespace idem::console
