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

#include "models/consolesession.h"
#include "models/dashboardmodel.h"
#include "operations/signing.h"
#include "views/chartpanel.h"
#include "views/dashboardwidget.h"

namespace idem::console {

namespace {
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

    const auto remembered = SnapshotExportFlow::rememberedChoices(*m_settings);
    m_history->setCurrentIndex(std::max(0, m_history->findData(remembered.historyMinutes)));
    m_rows->setValue(remembered.rowLimit);
    m_redact->setChecked(remembered.redact);
    m_sign->setChecked(remembered.sign);
    m_pdf->setChecked(remembered.pdf);
    m_target->setText(remembered.target);

    connect(m_browse, &QPushButton::clicked, this, &ExportDialog::browse);
    connect(m_createKey, &QPushButton::clicked, this, &ExportDialog::createKey);
    connect(m_copyKeyPath, &QPushButton::clicked, this,
        [this] { QGuiApplication::clipboard()->setText(QDir::toNativeSeparators(m_keyPath)); });
    connect(m_sign, &QCheckBox::toggled, this, &ExportDialog::updateKey);
    connect(&m_keys, &SigningKeyCheck::answered, this, &ExportDialog::showKey);
    connect(m_target, &QLineEdit::textChanged, this, &ExportDialog::updateTarget);
    updateKey();
    updateTarget();
}

ExportDialog::~ExportDialog() = default;

void ExportDialog::prepare()
{
    const QString current = m_target->text().trimmed();
    const QString folder = current.isEmpty() ? SnapshotExportFlow::defaultFolder() : QFileInfo(current).absolutePath();
    m_target->setText(QDir(folder).filePath(SnapshotExportFlow::newBundleName()));
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
        m_target->setText(QDir(folder).filePath(SnapshotExportFlow::newBundleName()));
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
    const bool sign = m_sign->isChecked();
    const bool known = m_key.path == m_keyPath;
    m_createKey->setVisible(sign && known && !m_key.exists);
    m_keyInfo->setVisible(sign);
    m_copyKeyPath->setVisible(sign);
    m_keyInfo->setToolTip(QDir::toNativeSeparators(m_keyPath));
    if (!sign) {
        // "There is no signing key yet" is not true of an export that signs nothing.
        if (m_keyError) {
            m_error->setVisible(false);
            m_keyError = false;
        }
        return;
    }
    if (known)
        showKey(0, m_key);
    else
        m_keyInfo->clear();
    // The file is read on a pool thread: a key on a hung file system never stops the window.
    m_keys.inspect(m_keyPath);
}

void ExportDialog::showKey(quint64 request, const SigningKeyState& state)
{
    if (state.path != m_keyPath)
        return; // about a key path set before the current one
    m_key = state;
    const bool createAnswer = request != 0 && request == m_createRequest;
    if (createAnswer)
        m_createRequest = 0;
    const bool sign = m_sign->isChecked();
    m_createKey->setVisible(sign && !state.exists);
    if (sign) {
        // The short lines break where they say (a wrapped label asks its row for several lines'
        // height and leaves a gap); a message of unknown length wraps.
        m_keyInfo->setWordWrap(false);
        if (createAnswer && state.created) {
            m_keyInfo->setWordWrap(true);
            m_keyInfo->setText(tr("Created a new Ed25519 signing key at %1, readable only by you (mode 0600). Public "
                                  "key SHA-256 %2. Give the public key (idemctl snapshot pubkey) to whoever checks "
                                  "your bundles.")
                                   .arg(shownKeyPath(), state.fingerprint));
            m_error->setVisible(false);
        } else if (!state.exists) {
            m_keyInfo->setText(tr("No signing key yet at %1.\nCreate one to sign (it is used by idemctl too).")
                                   .arg(shownKeyPath()));
        } else if (!state.usable()) {
            m_keyInfo->setWordWrap(true);
            m_keyInfo->setText(tr("The signing key cannot be used: %1").arg(state.error));
        } else {
            m_keyInfo->setText(
                tr("Key %1,\npublic key SHA-256 %2…").arg(shownKeyPath(), state.fingerprint.left(16)));
        }
    }
    if (createAnswer && !state.created)
        showError(tr("The signing key could not be created: %1").arg(state.error));
    if (request != 0 && m_acceptPending && !createAnswer) {
        m_acceptPending = false;
        finishAccept(state);
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
    // Generated and saved off the UI thread; showKey() says what came of it.
    m_createRequest = m_keys.create(m_keyPath);
}

void ExportDialog::showError(const QString& text, bool aboutKey)
{
    m_keyError = aboutKey;
    m_error->setText(text);
    m_error->setVisible(true);
}

bool ExportDialog::checkTarget(const ExportChoices& c)
{
    if (c.target.isEmpty()) {
        showError(tr("Choose a folder name for the snapshot."));
        return false;
    }
    const QFileInfo target(c.target);
    QString parent = target.absolutePath();
    if (!QFileInfo(parent).isDir()) {
        // The default Documents folder may not exist on a fresh account; any other is a typo.
        if (QDir::cleanPath(parent) != QDir::cleanPath(SnapshotExportFlow::defaultFolder()) || !QDir().mkpath(parent)) {
            showError(tr("The folder %1 does not exist.").arg(QDir::toNativeSeparators(parent)));
            return false;
        }
    }
    if (!QFileInfo(parent).isWritable()) {
        showError(tr("You cannot write to %1; choose another folder.").arg(QDir::toNativeSeparators(parent)));
        return false;
    }
    if (target.exists() || target.isSymLink()) {
        if (!target.isDir() || !isBundle(c.target)) {
            showError(tr("%1 exists and is not a snapshot bundle; choose another name.")
                          .arg(QDir::toNativeSeparators(c.target)));
            return false;
        }
        if (!c.overwrite) {
            showError(tr("A snapshot already exists at %1. Tick \"Replace\" to overwrite it, or choose "
                         "another name.")
                          .arg(QDir::toNativeSeparators(c.target)));
            return false;
        }
    }
    return true;
}

void ExportDialog::accept()
{
    if (!checkTarget(choices()))
        return;
    if (!m_sign->isChecked())
        return finishAccept({});
    // The key is read again as it is now, off the UI thread; the dialog closes when it answers.
    m_acceptPending = true;
    m_keys.inspect(m_keyPath);
}

void ExportDialog::finishAccept(const SigningKeyState& key)
{
    if (m_sign->isChecked()) {
        if (!key.exists)
            return showError(tr("There is no signing key yet: create one, or untick \"Sign\"."), true);
        if (!key.usable())
            return showError(tr("The signing key cannot be used: %1").arg(key.error), true);
    }
    SnapshotExportFlow::rememberChoices(*m_settings, choices());
    QDialog::accept();
}

SnapshotExportUi::SnapshotExportUi(
    ConsoleSession* monitor, ConsoleSession* admin, DashboardWidget* dashboard, QSettings* settings, QWidget* window)
    : QObject(window)
    , m_flow(new SnapshotExportFlow(monitor, admin, dashboard ? dashboard->model() : nullptr, this))
    , m_settings(settings)
    , m_window(window)
{
    if (dashboard)
        m_flow->setChartDrawer([dashboard = QPointer<DashboardWidget>(dashboard)](const idem::SnapshotData& snapshot) {
            // Drawn apart from the dashboard's own charts, whether or not its page is showing.
            return dashboard ? ChartPanel::snapshotImages(*dashboard->model(), snapshot) : std::vector<ChartImage>();
        });
    connect(m_flow, &SnapshotExportFlow::finished, this, &SnapshotExportUi::onFinished);
    connect(m_flow, &SnapshotExportFlow::progressChanged, this, [this](const QString& stage, double fraction) {
        if (!m_progress)
            return;
        m_progress->setLabelText(tr("Exporting the snapshot to %1\n%2").arg(m_flow->target(), stage));
        m_progress->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
    });
    connect(m_flow, &SnapshotExportFlow::availabilityChanged, this, &SnapshotExportUi::updateAction);
}

SnapshotExportUi::~SnapshotExportUi() = default;

void SnapshotExportUi::setAction(QAction* action)
{
    m_action = action;
    connect(action, &QAction::triggered, this, &SnapshotExportUi::start);
    updateAction();
}

void SnapshotExportUi::updateAction()
{
    if (m_action)
        m_action->setEnabled(m_flow->available());
}

void SnapshotExportUi::start()
{
    if (m_flow->running()) {
        if (m_progress)
            m_progress->show();
        return;
    }
    if (!m_flow->connected()) {
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
    m_dialog->setScopeText(m_flow->scopeText());
    m_dialog->open();
}

bool SnapshotExportUi::exportWith(const ExportChoices& choices)
{
    if (!m_flow->start(choices, m_dialog ? m_dialog->keyPath() : QString()))
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
        connect(m_progress, &QProgressDialog::canceled, m_flow, &SnapshotExportFlow::cancel);
    }
    m_progress->setLabelText(tr("Exporting the snapshot to %1").arg(choices.target));
    m_progress->setValue(0);
    m_progress->show();
    updateAction();
    return true;
}

void SnapshotExportUi::onFinished(
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
