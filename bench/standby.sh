#!/usr/bin/env bash
# bench/standby.sh: a streaming standby of the scripts/idem-db cluster named by IDEM_DB_DIR, on
# loopback, for the consoles-on-a-standby benchmark (bench/README.md, "Session 7").
#
#   bench/standby.sh start   pg_basebackup of the running primary, then start it streaming
#   bench/standby.sh dsn     its conninfo (the primary's password file and CA: it is a copy)
#   bench/standby.sh pin P S pin the primary's server processes to CPU list P and the standby's
#                            to S (taskset; new backends inherit it from their postmaster), so
#                            that on one machine the standby's work does not take the primary's CPU
#   bench/standby.sh stop    stop it; destroy: stop it and delete it
#
# The primary gets a replication line in its pg_hba.conf (loopback, SCRAM) on first use.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
state=${IDEM_DB_DIR:-$here/.idem-db}
die() { echo "standby: $*" >&2; exit 1; }

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r | head -n 1)
[ -x "$pgbin/pg_basebackup" ] || die "no pg_basebackup under /usr/lib/postgresql"
if [ "$(id -u)" = 0 ]; then
    key=$(printf '%s' "$(realpath -m "$state")" | sha256sum | cut -c1-16)
    home=/var/lib/idem-db/$key
    as_server() { runuser -u postgres -- "$@"; }
else
    home=$state/server
    as_server() { "$@"; }
fi
primary=$home/data
standby=$home/standby
sstate=$state/standby
port_file=$sstate/port

primary_port() { cat "$state/port" 2>/dev/null || die "the primary has no port: scripts/idem-db start first"; }

dsn() {
    [ -f "$port_file" ] || die "no standby yet: bench/standby.sh start"
    printf "host=127.0.0.1 port=%s dbname=%s user=postgres passfile=%s sslmode=verify-full sslrootcert=%s\n" \
        "$(cat "$port_file")" "${IDEM_DB_NAME:-idem}" "$state/pgpass" "$state/tls/ca.crt"
}

start() {
    local pport sport
    pport=$(primary_port)
    mkdir -p "$sstate"
    if [ ! -f "$standby/PG_VERSION" ]; then
        if ! grep -q '^host *replication' "$primary/pg_hba.conf"; then
            echo "host    replication postgres 127.0.0.1/32 scram-sha-256" | as_server tee -a "$primary/pg_hba.conf" >/dev/null
            as_server "$pgbin/pg_ctl" -D "$primary" reload >/dev/null
        fi
        # The password file, readable by the server's OS user for the base backup and the
        # standby's own connection to the primary.
        install -m 600 "$state/pgpass" "$home/standby.pgpass"
        if [ "$(id -u)" = 0 ]; then chown postgres: "$home/standby.pgpass"; fi
        echo "standby: base backup of 127.0.0.1:$pport into $standby"
        as_server env PGPASSFILE="$home/standby.pgpass" "$pgbin/pg_basebackup" -D "$standby" -h 127.0.0.1 \
            -p "$pport" -U postgres -X stream -c fast -R --no-sync
    fi
    sport=$((pport + 1))
    while (exec 3<>"/dev/tcp/127.0.0.1/$sport") 2>/dev/null; do sport=$((sport + 1)); done
    echo "$sport" >"$port_file"
    # postgresql.auto.conf is read last: its port and primary_conninfo win over the copied idem.conf.
    as_server sed -i '/^port = /d; /^hot_standby/d' "$standby/postgresql.auto.conf"
    printf "port = %s\nhot_standby = on\n" "$sport" | as_server tee -a "$standby/postgresql.auto.conf" >/dev/null
    if ! grep -q passfile "$standby/postgresql.auto.conf"; then
        as_server sed -i "s|^primary_conninfo = '|primary_conninfo = 'passfile=$home/standby.pgpass |" \
            "$standby/postgresql.auto.conf"
    fi
    as_server "$pgbin/pg_ctl" -D "$standby" -l "$home/standby.log" -w -t 120 start >/dev/null
    echo "standby: streaming from 127.0.0.1:$pport, serving 127.0.0.1:$sport"
}

pin() {
    local pcpus=$1 scpus=$2 d pid
    for d in "$primary:$pcpus" "$standby:$scpus"; do
        pid=$(head -n 1 "${d%%:*}/postmaster.pid")
        for p in $pid $(pgrep -P "$pid"); do taskset -a -p -c "${d##*:}" "$p" >/dev/null; done
    done
    echo "standby: primary on CPUs $pcpus, standby on CPUs $scpus"
}

case "${1:-}" in
start) start ;;
dsn) dsn ;;
pin) [ $# = 3 ] || die "usage: bench/standby.sh pin PRIMARY_CPUS STANDBY_CPUS"; pin "$2" "$3" ;;
stop) as_server "$pgbin/pg_ctl" -D "$standby" -m fast -w stop >/dev/null && echo "standby: stopped" ;;
destroy)
    as_server "$pgbin/pg_ctl" -D "$standby" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$standby" "$sstate" "$home/standby.pgpass" "$home/standby.log"
    echo "standby: removed"
    ;;
*) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
