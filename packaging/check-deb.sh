#!/usr/bin/env bash
# Installs the package the way an operator would (apt-get install ./idem_*.deb), checks what
# landed, then removes it and checks it is gone. Needs root (or sudo); changes the system's
# package state for the duration and leaves idem uninstalled.
#   packaging/check-deb.sh [PACKAGE.deb]   (default: the one in build/release/package/)
# Exits non-zero, naming every failed check, when anything is wrong.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

deb=${1:-}
if [ -z "$deb" ]; then
    debs=("$here"/build/release/package/idem_*.deb)
    deb=${debs[0]}
fi
[ -f "$deb" ] || { echo "check-deb: no package at '$deb' (run packaging/build-deb.sh)" >&2; exit 2; }
deb=$(realpath "$deb")

sudo=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "check-deb: installs a package: run as root or with sudo" >&2; exit 2; }
    sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive

app_id=io.github.idem.Console
failures=()
passed=0
pass() { passed=$((passed + 1)); echo "  ok   $1"; }
fail() { failures+=("$1"); echo "  FAIL $1" >&2; }
check() { # check DESCRIPTION COMMAND...: passes when the command succeeds
    local what=$1
    shift
    if out=$("$@" 2>&1); then pass "$what"; else fail "$what: $out"; fi
}
installed() { dpkg-query -W -f='${Status}' idem 2>/dev/null | grep -q "install ok installed"; }
remove_idem() { $sudo apt-get remove -y -qq idem >/dev/null 2>&1 || true; }

echo "check-deb: $deb"

# --- The package as a file ---------------------------------------------------------------
field() { dpkg-deb -f "$deb" "$1"; }
version=$(field Version)
[ "$(field Package)" = idem ] && pass "Package: idem" || fail "Package is '$(field Package)', not idem"
project_version=$(sed -n 's/^project(idem VERSION \([0-9.]*\).*/\1/p' "$here/CMakeLists.txt")
[ "$version" = "$project_version" ] && pass "Version: $version (project VERSION)" \
    || fail "Version '$version' is not the project's '$project_version'"
case "$(field Section)" in admin | database) pass "Section: $(field Section)" ;; *) fail "Section '$(field Section)'" ;; esac
for f in Maintainer Homepage Description Architecture; do
    [ -n "$(field "$f")" ] && pass "$f: $(field "$f" | head -1)" || fail "no $f field"
done
depends=$(field Depends)
for d in qt6-qpa-plugins libpq5 libpqxx-6.4 libqt6widgets6 libqt6charts6 libssl3 libstdc++6 libprometheus-cpp-core1.0; do
    [[ ",$depends," == *"$d"* ]] && pass "Depends names $d" || fail "Depends lacks $d: $depends"
done
recommends=$(field Recommends)
for r in fonts-noto-cjk postgresql-client qt6-translations-l10n; do
    [[ "$recommends" == *"$r"* ]] && pass "Recommends names $r" || fail "Recommends lacks $r: $recommends"
done
contents=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
expect_files=(
    /usr/bin/idemctl /usr/bin/idem-console
    /usr/share/man/man1/idemctl.1.gz /usr/share/man/man1/idem-console.1.gz
    "/usr/share/applications/$app_id.desktop" "/usr/share/metainfo/$app_id.metainfo.xml"
    "/usr/share/icons/hicolor/scalable/apps/$app_id.svg" /usr/share/idem/sql/roles.sql
    /usr/lib/systemd/system/idem-exporter.service /usr/lib/sysusers.d/idem-exporter.conf
    /usr/share/idem/prometheus/idem-alerts.yml /usr/share/idem/exporter/pg_service.conf.example
    /usr/share/idem/exporter/exporter.pgpass.example /usr/share/idem/exporter/exporter.env.example
)
for size in 16 22 24 32 48 64 128 256; do expect_files+=("/usr/share/icons/hicolor/${size}x${size}/apps/$app_id.png"); done
for sql in "$here"/resources/sql/*.sql "$here"/resources/sql/migrations/[0-9][0-9][0-9][0-9]_*.sql "$here"/resources/sql/functions/*.sql; do
    expect_files+=("/usr/share/idem/sql/${sql#"$here"/resources/sql/}")
done
missing=()
for f in "${expect_files[@]}"; do grep -qxF "$f" <<<"$contents" || missing+=("$f"); done
[ ${#missing[@]} -eq 0 ] && pass "holds the ${#expect_files[@]} expected files" || fail "package lacks ${missing[*]}"
unexpected=$(grep -vE '^/usr/(bin|share/(man/man1|applications|metainfo|icons/hicolor|idem|doc/idem)|lib/(systemd/system|sysusers\.d))(/|$)|^/$|^/usr/$|^/usr/(share|lib|lib/systemd)/$|^/usr/share/(icons|man)/$' <<<"$contents" || true)
[ -z "$unexpected" ] && pass "nothing installed outside its places" || fail "unexpected paths: $unexpected"

# --- Installed -----------------------------------------------------------------------------
cleanup() { installed && remove_idem; }
trap cleanup EXIT
installed && remove_idem # a package of the same version would not be reinstalled
# Recommends (CJK fonts, psql) are left out to keep the check quick and offline-safe; every
# Depends must resolve from what is installed or the archive.
if $sudo apt-get install -y -qq --no-install-recommends "$deb" >/tmp/check-deb-apt.log 2>&1 && installed; then
    pass "apt-get install ./$(basename "$deb")"
else
    fail "apt-get install: $(tail -5 /tmp/check-deb-apt.log)"
    echo "check-deb: ${#failures[@]} check(s) failed" >&2
    exit 1
fi

out=$(/usr/bin/idemctl --version 2>&1) && [ "$out" = "idemctl $version" ] && pass "idemctl --version: $out" \
    || fail "idemctl --version said '$out'"
out=$(QT_QPA_PLATFORM=offscreen /usr/bin/idem-console --version 2>&1) && [ "$out" = "idem-console $version" ] \
    && pass "idem-console --version: $out" || fail "idem-console --version said '$out'"
check "idemctl --help lists the commands" bash -c '/usr/bin/idemctl --help | grep -q "^  migrate "'
check "idem-console --help names --dsn" bash -c 'QT_QPA_PLATFORM=offscreen /usr/bin/idem-console --help | grep -q -- "--dsn"'
# The console really starts from the package (platform plugin, window, icon): it fails to
# connect to a socket directory that does not exist, saves its window and exits 0.
shot=$(mktemp --suffix=.png)
check "idem-console starts (offscreen) and saves its window" \
    env QT_QPA_PLATFORM=offscreen HOME="$(mktemp -d)" timeout 60 /usr/bin/idem-console \
    --dsn "host=/nonexistent/idem-check dbname=x connect_timeout=2" --screenshot "$shot"
[ -s "$shot" ] && pass "the saved window is a non-empty image" || fail "no screenshot written"
rm -f "$shot"
for b in /usr/bin/idemctl /usr/bin/idem-console; do
    notfound=$(ldd "$b" | grep "not found" || true)
    [ -z "$notfound" ] && pass "$b: every library resolves" || fail "$b: $notfound"
    sections=$(readelf -S --wide "$b")
    grep -qE '\.(symtab|debug_info)' <<<"$sections" && fail "$b is not stripped" || pass "$b is stripped"
done

# The exporter's unit: the user it runs as exists, systemd-analyze (Debian 12's systemd package;
# it needs no systemd as PID 1) finds nothing to say about it, and its sandbox stays tight.
unit=/usr/lib/systemd/system/idem-exporter.service
check "postinst made the idem-exporter system user" bash -c \
    'getent passwd idem-exporter | grep -q ":/nonexistent:" && [ "$(id -u idem-exporter)" -lt 1000 ]'
check "idemctl exporter --help" bash -c '/usr/bin/idemctl exporter --help | grep -q -- "--listen"'
grep -q -- '--dsn\|password' <(grep '^ExecStart=' "$unit") && fail "the unit's ExecStart carries a connection" \
    || pass "the unit's ExecStart names no DSN or password"
if command -v systemd-analyze >/dev/null; then
    out=$(systemd-analyze verify "$unit" 2>&1) && [ -z "$out" ] && pass "systemd-analyze verify idem-exporter.service" \
        || fail "systemd-analyze verify idem-exporter.service: $out"
    check "systemd-analyze security: exposure 2.0 or less" \
        systemd-analyze security --offline=yes --threshold=20 "$unit"
else
    fail "no systemd-analyze (Debian 12's systemd package; scripts/deps.sh test installs it)"
fi
if command -v promtool >/dev/null; then
    check "promtool check rules /usr/share/idem/prometheus/idem-alerts.yml" \
        promtool check rules /usr/share/idem/prometheus/idem-alerts.yml
else
    fail "no promtool (Debian's prometheus; scripts/deps.sh test installs it)"
fi

check "man -w idemctl finds the page" bash -c '[ "$(man -w idemctl)" = /usr/share/man/man1/idemctl.1.gz ]'
check "man -w idem-console finds the page" bash -c '[ "$(man -w idem-console)" = /usr/share/man/man1/idem-console.1.gz ]'
for page in idemctl idem-console; do
    warnings=$(zcat "/usr/share/man/man1/$page.1.gz" | groff -man -Tutf8 -ww -z 2>&1)
    [ -z "$warnings" ] && pass "$page.1 renders without groff warnings" || fail "$page.1: $warnings"
    zcat "/usr/share/man/man1/$page.1.gz" | grep -q "@PROJECT_VERSION@" && fail "$page.1 has no version" \
        || pass "$page.1 names the version"
done
for cmd in migrate digest verify stats exporter demo tasks requeue release fail "audit list" "audit verify" \
    "snapshot export" "snapshot verify" "snapshot keygen" "snapshot show" "snapshot pubkey" \
    "job start" "job resume" "job status" "job cancel" "job refused"; do
    zcat /usr/share/man/man1/idemctl.1.gz | groff -man -Tascii -P-cbou 2>/dev/null | grep -q "^       $cmd\b" \
        || missing_cmds+=("$cmd")
done
[ -z "${missing_cmds[*]:-}" ] && pass "idemctl.1 describes every command" || fail "idemctl.1 lacks: ${missing_cmds[*]}"

check "desktop-file-validate $app_id.desktop" desktop-file-validate "/usr/share/applications/$app_id.desktop"
check "appstreamcli validate --no-net $app_id.metainfo.xml" \
    appstreamcli validate --no-net "/usr/share/metainfo/$app_id.metainfo.xml"
grep -q "<release version=\"$version\"" "/usr/share/metainfo/$app_id.metainfo.xml" \
    && pass "metainfo has a release entry for $version" || fail "metainfo has no <release version=\"$version\">"
grep -qx "Icon=$app_id" "/usr/share/applications/$app_id.desktop" && grep -qx "Exec=idem-console %u" \
    "/usr/share/applications/$app_id.desktop" && pass "desktop entry: Icon=$app_id, Exec=idem-console %u" \
    || fail "desktop entry's Icon or Exec is wrong"
# A console link (idem://view?profile=...) opens in the console: the entry registers the scheme.
grep -qx "MimeType=x-scheme-handler/idem;" "/usr/share/applications/$app_id.desktop" \
    && pass "desktop entry: MimeType=x-scheme-handler/idem; (idem:// links open the console)" \
    || fail "desktop entry does not register x-scheme-handler/idem"
for sql in "$here"/resources/sql/*.sql "$here"/resources/sql/migrations/*.sql "$here"/resources/sql/functions/*.sql; do
    rel=${sql#"$here"/resources/sql/}
    cmp -s "$sql" "/usr/share/idem/sql/$rel" || sql_diff+=("$rel")
done
[ -z "${sql_diff[*]:-}" ] && pass "/usr/share/idem/sql matches resources/sql" || fail "differs: ${sql_diff[*]}"

# --- Removed -------------------------------------------------------------------------------
if $sudo apt-get remove -y -qq idem >/tmp/check-deb-apt.log 2>&1; then pass "apt-get remove -y idem"; else
    fail "apt-get remove: $(tail -5 /tmp/check-deb-apt.log)"
fi
for f in /usr/bin/idemctl /usr/bin/idem-console "/usr/share/applications/$app_id.desktop" \
    /usr/share/man/man1/idemctl.1.gz /usr/share/idem /usr/lib/systemd/system/idem-exporter.service; do
    [ ! -e "$f" ] || left+=("$f")
done
[ -z "${left[*]:-}" ] && ! installed && pass "removed: /usr/bin/idemctl and the rest are gone" \
    || fail "left behind after remove: ${left[*]:-} (installed: $(installed && echo yes || echo no))"
trap - EXIT

if [ ${#failures[@]} -ne 0 ]; then
    echo "check-deb: ${#failures[@]} check(s) failed, $passed passed" >&2
    exit 1
fi
echo "check-deb: all $passed checks passed"
