# Sourced by scripts/run.sh (and tests/scripts/run-stop.sh): whether the pid in "$state/demo.pid"
# is still the demo that run.sh started, so that --stop never signals another program.
# The demo's identity: its pid and the kernel's start time of that pid (field 22 of
# /proc/PID/stat, in clock ticks since boot). A pid alone is not enough: pids wrap, and after a
# reboot or a long enough run the pid in demo.pid may belong to another program by now.
process_start() { # PID -> its start time, or nothing when no such process
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    # The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    stat=${stat##*) }
    set -- $stat
    printf '%s' "${20:-}"
}

# The pid in demo.pid when it is still this checkout's demo (same start time, and an idemctl
# demo by its command line), else nothing. Another demo: demo_pid PIDFILE GLOB (the HTTP demo:
# http-demo.pid, a command line matching *http_demo.py*).
demo_pid() {
    local pid started cmdline file=${1:-$state/demo.pid} pattern=${2:-'*idemctl* demo *'}
    [ -f "$file" ] || return 0
    read -r pid started <"$file" || true
    [[ ${pid:-} =~ ^[0-9]+$ ]] || return 0
    [ -n "${started:-}" ] && [ "$(process_start "$pid")" = "$started" ] || return 0
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 0
    # shellcheck disable=SC2053 # the pattern is a glob
    [[ $cmdline == $pattern ]] || return 0
    printf '%s' "$pid"
}
