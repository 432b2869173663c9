#!/usr/bin/env bash
# PostgreSQL ÷ SQLite in one run: the provider-API benchmark (provider-api.sh) on each store in
# turn, one round each, `pairs` times, each pair's ratio of accepted pushes per second printed beside
# the CPU per push of the gateway and of PostgreSQL. With `postgres-2`, the PostgreSQL side is two
# nodes on one database (their pushes added; the ratio is then of two nodes to one SQLite node).
#
# Usage: Benchmarks/GatewayBenchmarks/provider-api-stores.sh [unotify binary] [pairs] [postgres|postgres-2]
set -euo pipefail
unotify="${1:-.build-bench/release/unotify}"
pairs="${2:-3}"
postgres="${3:-postgres}"
here="$(cd "$(dirname "$0")" && pwd)"
# The row of a one-round run: | 1 | nghttpd | pushes/s (2xx of all) | ÷ nghttpd | gateway CPU | PostgreSQL CPU |
row() { "$here/provider-api.sh" "$unotify" 1 "$1" | grep -E '^\| 1 \|'; }
field() { echo "$1" | awk -F'|' -v n="$2" '{ gsub(/^ +| +$/, "", $n); print $n }'; }
echo "| pair | SQLite pushes/s | PostgreSQL ($postgres) pushes/s | PostgreSQL ÷ SQLite | gateway CPU per push (SQLite, PostgreSQL) | PostgreSQL's CPU per push |"
echo "| --- | --- | --- | --- | --- | --- |"
for pair in $(seq "$pairs"); do
    sqlite="$(row sqlite)"
    database="$(row "$postgres")"
    sqlite_rate="$(field "$sqlite" 4 | cut -d' ' -f1)"
    database_rate="$(field "$database" 4 | cut -d' ' -f1)"
    ratio="$(python3 -c "print('%.3f' % ($database_rate / $sqlite_rate))")"
    echo "| $pair | $sqlite_rate | $database_rate | $ratio | $(field "$sqlite" 6), $(field "$database" 6) | $(field "$database" 7) |"
done
