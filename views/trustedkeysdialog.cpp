#include "views/trustedkeysdialog.h"

#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "views/theme.h"
#include "models/trustedkeystore.h"
#include "operations/signing.h"

namespace idem::console {

TrustedKeysDialog::TrustedKeysDialog(idem::TrustedKeys keys, QWidget* parent)
    : QDialog(parent)
    , m_keys(std::move(keys))
    , m_table(new QTableWidget(0, 2))
    , m_error(new QLabel)
    , m_remove(new QPushButton(tr("&Remove")))
{
    setObjectName(QStringLiteral("trustedKeysDialog"));
    setWindowTitle(tr("Trusted signing keys"));
    auto* intro = new QLabel(tr("A snapshot's signature is shown as valid only when it was made by one of these keys. "
                                "A bundle carries its signer's public key, so anyone who edits a bundle can re-sign "
                                "it: trust a key only when you know whose it is (compare the fingerprint that "
                                "<tt>idemctl snapshot keygen</tt> printed)."));
    intro->setWordWrap(true);
    m_table->setObjectName(QStringLiteral("trustedKeysTable"));
    m_table->setHorizontalHeaderLabels({ tr("Name"), tr("SHA-256 fingerprint") });
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_error->setObjectName(QStringLiteral("trustedKeysError"));
    m_error->setWordWrap(true);
    theme::followTone(m_error, theme::Tone::Bad);
    m_error->hide();

    auto* add = new QPushButton(tr("&Add public key file…"));
    add->setObjectName(QStringLiteral("addTrustedKeyButton"));
    connect(add, &QPushButton::clicked, this, &TrustedKeysDialog::addFromFile);
    m_remove->setObjectName(QStringLiteral("removeTrustedKeyButton"));
    connect(m_remove, &QPushButton::clicked, this, &TrustedKeysDialog::removeSelected);
    connect(m_table, &QTableWidget::itemSelectionChanged, this,
        [this] { m_remove->setEnabled(!m_table->selectedItems().isEmpty()); });
    auto* row = new QHBoxLayout;
    row->addWidget(add);
    row->addWidget(m_remove);
    row->addStretch(1);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(m_table, 1);
    layout->addLayout(row);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
    resize(760, 360);
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
