#!/usr/bin/env bash
# CTest prometheus_rules: the shipped alert rules parse (promtool check rules) and behave as their
# unit tests say (promtool test rules). Fails, never skips, without promtool.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v promtool >/dev/null || { echo "promtool not found: install Debian's prometheus (scripts/deps.sh test)" >&2; exit 1; }
promtool check rules "$here/../../packaging/prometheus/idem-alerts.yml"
cd "$here" # the test file names the rules relative to itself
promtool test rules idem-alerts.test.yml
