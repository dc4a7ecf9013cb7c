# bench/scratch.sh: sourced (not run) by the in-backend benches, bench/claim_isolation.sh and
# bench/redrive_claim.sh, for what they share: the database and the scratch schemas.
#
#   . "$(dirname "${BASH_SOURCE[0]}")/scratch.sh"
#   bench_init DEFAULT_ROUNDS DEFAULT_TASKS "$@"   # cd to the checkout; rounds, tasks, dsn, idemctl, psql
#   bench_schema NAME                              # a scratch schema migrated by idemctl, dropped at exit
#
# rounds and tasks: the script's first two arguments, or the defaults. dsn: IDEM_BENCH_DSN, or this
# checkout's private cluster (scripts/idem-db, started if it is not running). idemctl: IDEMCTL, or
# this checkout's build/ci/cli/idemctl. psql: quiet, unaligned, tuples only, stops at the first error.

bench_schemas=()

bench_init() {
    local default_rounds=$1 default_tasks=$2
    shift 2
    cd "$(dirname "${BASH_SOURCE[0]}")/.."
    rounds=${1:-$default_rounds}
    tasks=${2:-$default_tasks}
    if [ -n "${IDEM_BENCH_DSN:-}" ]; then
        dsn=$IDEM_BENCH_DSN
    else
        scripts/idem-db start >&2
        dsn=$(scripts/idem-db dsn)
    fi
    idemctl=${IDEMCTL:-build/ci/cli/idemctl}
    trap bench_drop_schemas EXIT
}

psql() { command psql "$dsn" -qXAt -v ON_ERROR_STOP=1 "$@"; }

bench_schema() {
    bench_schemas+=("$1")
    "$idemctl" migrate --dsn "$dsn" --schema "$1" --no-roles >&2
}

bench_drop_schemas() {
    local s
    for s in "${bench_schemas[@]}"; do
        psql -c "DROP SCHEMA IF EXISTS $s CASCADE" >/dev/null 2>&1 || true
    done
}
