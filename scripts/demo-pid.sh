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
# demo by its command line), else nothing.
demo_pid() {
    local pid started cmdline
    [ -f "$state/demo.pid" ] || return 0
    read -r pid started <"$state/demo.pid" || true
    [[ ${pid:-} =~ ^[0-9]+$ ]] || return 0
    [ -n "${started:-}" ] && [ "$(process_start "$pid")" = "$started" ] || return 0
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 0
    [[ $cmdline == *idemctl*" demo "* ]] || return 0
    printf '%s' "$pid"
}
