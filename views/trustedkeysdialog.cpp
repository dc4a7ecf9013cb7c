#include "views/trustedkeysdialog.h"
#include "ui_trustedkeysdialog.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>

#include <algorithm>

#include "views/theme.h"
#include "models/trustedkeystore.h"
#include "operations/signing.h"

namespace idem::console {

TrustedKeysDialog::TrustedKeysDialog(idem::TrustedKeys keys, QWidget* parent)
    : QDialog(parent)
    , m_keys(std::move(keys))
    , m_ui(std::make_unique<Ui::TrustedKeysDialog>())
{
    m_ui->setupUi(this); // the layout and its words: trustedkeysdialog.ui
    m_table = m_ui->trustedKeysTable;
    m_error = m_ui->trustedKeysError;
    m_remove = m_ui->removeTrustedKeyButton;
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    theme::followTone(m_error, theme::Tone::Bad);
    connect(m_ui->addTrustedKeyButton, &QPushButton::clicked, this, &TrustedKeysDialog::addFromFile);
    connect(m_remove, &QPushButton::clicked, this, &TrustedKeysDialog::removeSelected);
    connect(m_table, &QTableWidget::itemSelectionChanged, this,
        [this] { m_remove->setEnabled(!m_table->selectedItems().isEmpty()); });
    refill();
}

TrustedKeysDialog::~TrustedKeysDialog() = default;

void TrustedKeysDialog::refill()
{
    m_table->setRowCount(int(m_keys.keys.size()));
    for (int i = 0; i < int(m_keys.keys.size()); ++i) {
        const auto& k = m_keys.keys[std::size_t(i)];
        m_table->setItem(i, 0, new QTableWidgetItem(QString::fromStdString(k.name)));
        auto* fp = new QTableWidgetItem(QString::fromStdString(k.fingerprint));
        fp->setFont(QFont(QStringLiteral("monospace")));
        m_table->setItem(i, 1, fp);
    }
    m_remove->setEnabled(!m_table->selectedItems().isEmpty());
}

bool TrustedKeysDialog::addKey(const QString& name, const QString& pemOrFingerprint)
{
    const QString text = pemOrFingerprint.trimmed();
    idem::TrustedKeys parsed;
    try {
        // A bare fingerprint, or a PEM: the trusted-keys file format reads both.
        const QString entry = text.contains(QLatin1String("-----BEGIN"))
            ? QStringLiteral("# %1\n%2\n").arg(name, text)
            : QStringLiteral("%1 %2\n").arg(text, name);
        parsed = idem::parseTrustedKeys(entry.toStdString(), tr("the key").toStdString());
    } catch (const idem::SigningError& e) {
        m_error->setText(tr("Not added: %1").arg(QString::fromStdString(e.what())));
        m_error->show();
        return false;
    }
    if (parsed.keys.size() != 1) {
        m_error->setText(tr("Not added: give one public key or one fingerprint."));
        m_error->show();
        return false;
    }
    m_error->hide();
    parsed.keys.front().name = name.trimmed().toStdString();
    m_keys.add(parsed.keys.front());
    refill();
    return true;
}

void TrustedKeysDialog::removeSelected()
{
    std::vector<int> rows;
    for (const auto& range : m_table->selectedRanges())
        for (int r = range.topRow(); r <= range.bottomRow(); ++r)
            rows.push_back(r);
    std::sort(rows.rbegin(), rows.rend());
    for (int r : rows)
        if (r >= 0 && r < int(m_keys.keys.size()))
            m_keys.keys.erase(m_keys.keys.begin() + r);
    refill();
}

void TrustedKeysDialog::addFromFile()
{
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Public key to trust"), QString(), tr("PEM public keys (*.pem *.pub);;All files (*)"));
    if (path.isEmpty())
        return;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        m_error->setText(tr("Not added: %1 cannot be read.").arg(path));
        m_error->show();
        return;
    }
    const QString pem = QString::fromUtf8(file.read(64 * 1024));
    bool ok = false;
    const QString name = QInputDialog::getText(
        this, tr("Name the key"), tr("Whose key is this?"), QLineEdit::Normal, QFileInfo(path).baseName(), &ok);
    if (ok)
        addKey(name, pem);
}

bool TrustedKeysDialog::editConsoleKeys(QWidget* parent, const QString& offerFingerprint)
{
    TrustedKeysDialog dialog(loadTrustedKeys(), parent);
    if (!offerFingerprint.isEmpty() && !dialog.keys().find(offerFingerprint.toStdString())) {
        bool ok = false;
        const QString name = QInputDialog::getText(&dialog, tr("Trust this signer"),
            tr("Trust the key %1 only if you know whose it is. Name:").arg(offerFingerprint), QLineEdit::Normal,
            QString(), &ok);
        if (ok)
            dialog.addKey(name, offerFingerprint);
    }
    if (dialog.exec() != QDialog::Accepted)
        return false;
    saveTrustedKeys(dialog.keys());
    return true;
}

} // namespace idem::console
