#pragma once

#include <QString>

#include "operations/trustedkeys.h"

class QSettings;

namespace idem::console {

// The signing keys this console trusts, kept in its settings (name and SHA-256 fingerprint, no
// key material needed: a bundle carries its public key, trust is whether its fingerprint is
// listed). The snapshot viewer shows a signature as valid only when its key is among them.
idem::TrustedKeys loadTrustedKeys(QSettings& settings);
void saveTrustedKeys(QSettings& settings, const idem::TrustedKeys& keys);
// The console's own settings file (Idem/idem-console, INI, user scope).
idem::TrustedKeys loadTrustedKeys();
void saveTrustedKeys(const idem::TrustedKeys& keys);

} // namespace idem::console
