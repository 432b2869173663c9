#!/usr/bin/env bash
# Accepted pushes per second through the gateway's provider API, against nghttpd in the same run.
#
# The gateway (a release build of `unotify gateway`) serves the sandbox endpoint over TLS with a real
# ES256 provider token and stores every push durably before its 200: in SQLite (synchronous=FULL,
# group commit), or in PostgreSQL (a throw-away cluster started here, fsync and synchronous_commit on)
# with one node or two on the same database. The reference is nghttpd (Debian's nghttp2-server) over
# TLS with the same certificate, answering the same requests with an empty static file. Both are driven
# by h2load with the same flags, headers, payload and 20,000 device tokens (APNs throttles one token;
# providers send to many); with two nodes, two h2load share the connections between them.
#
# On PostgreSQL the CPU per push of the database's processes (its server and every backend) is
# reported beside the gateway's; with STATEMENTS=1, the statements that took the database's time
# (pg_stat_statements) are listed after the rounds.
#
# Usage: Benchmarks/GatewayBenchmarks/provider-api.sh [unotify binary] [rounds] [sqlite|postgres|postgres-2]
set -euo pipefail
unotify="${1:-.build-bench/release/unotify}"
rounds="${2:-2}"
store="${3:-sqlite}"
case "$store" in sqlite|postgres|postgres-2) ;; *) echo "error: the store is sqlite, postgres or postgres-2" >&2; exit 1 ;; esac
for tool in h2load nghttpd python3; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed (apt-get install nghttp2-client nghttp2-server)" >&2; exit 1; }
done
work="$(mktemp -d /tmp/gateway-bench.XXXXXX)"
cleanup() {
    kill $(jobs -p) 2>/dev/null || true
    if [ -n "${pg_data:-}" ]; then as_postgres "$pg_bin/pg_ctl" -D "$pg_data" -m immediate stop >/dev/null 2>&1 || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
# PostgreSQL refuses to run as root: as root, its programs run as the postgres user.
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
listening() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
database_options=()
if [ "$store" != sqlite ]; then
    command -v psql >/dev/null || { echo "error: PostgreSQL is needed (apt-get install postgresql)" >&2; exit 1; }
    pg_bin="/usr/lib/postgresql/$(ls /usr/lib/postgresql | sort -n | tail -1)/bin"
    pg_data="$work/pg/data"
    mkdir -p "$pg_data"
    chmod 755 "$work"
    [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$work/pg"
    as_postgres "$pg_bin/initdb" -D "$pg_data" -U unotify -A trust -E UTF8 --no-instructions >/dev/null
    statements_options=()
    [ "${STATEMENTS:-0}" = 1 ] && statements_options=(-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all)
    as_postgres "$pg_bin/postgres" -D "$pg_data" -k "$work/pg" -c listen_addresses= -p 5432 -c max_connections=200 "${statements_options[@]}" \
        >"$work/pg/log" 2>&1 &
    for _ in $(seq 200); do pg_isready -h "$work/pg" -p 5432 -q && break; sleep 0.1; done
    psql -h "$work/pg" -p 5432 -U unotify -d postgres -q -c "CREATE DATABASE gateway"
    database_options=(--database "postgres://unotify@/gateway?host=$work/pg&port=5432")
    [ "${STATEMENTS:-0}" = 1 ] && psql -h "$work/pg" -p 5432 -U unotify -d gateway -q -c "CREATE EXTENSION pg_stat_statements"
    [ "${STATEMENTS:-0}" = 1 ] && psql -h "$work/pg" -p 5432 -U unotify -d gateway -tAq -c "SHOW lc_collate"
fi
gateway="$work/gateway"
"$unotify" gateway teams add ABCDE12345 --gateway-dir "$gateway" "${database_options[@]}" >/dev/null
"$unotify" gateway apps add com.example.todo --team ABCDE12345 --gateway-dir "$gateway" "${database_options[@]}"
key_id="$("$unotify" gateway keys create --team ABCDE12345 --output "$work/key.p8" --gateway-dir "$gateway" "${database_options[@]}" 2>/dev/null)"
python3 - "$store" "$gateway/gateway.sqlite" "$work" <<'PYTHON'
import os, secrets, sqlite3, subprocess, sys, time
store, database, work = sys.argv[1], sys.argv[2], sys.argv[3]
tokens = [secrets.token_hex(32) for _ in range(20000)]
if store == "sqlite":
    db = sqlite3.connect(database)
    for index, token in enumerate(tokens):
        device = "bench%05d" % index
        db.execute("INSERT INTO device (deviceID, secretHash, createdAt) VALUES (?, 'unused', ?)", (device, time.time()))
        db.execute("INSERT INTO registration (token, deviceID, bundleIdentifier, environment, registeredAt) "
                   "VALUES (?, ?, 'com.example.todo', 'sandbox', ?)", (token, device, time.time()))
    db.commit()
else:
    now = time.time()
    statements = ["BEGIN;"]
    for index, token in enumerate(tokens):
        device = "bench%05d" % index
        statements.append("INSERT INTO device (device_id, secret_hash, created_at) VALUES ('%s', 'unused', %f);" % (device, now))
        statements.append("INSERT INTO registration (token, device_id, bundle_identifier, environment, registered_at) "
                          "VALUES ('%s', '%s', 'com.example.todo', 'sandbox', %f);" % (token, device, now))
    statements.append("COMMIT;")
    subprocess.run(["psql", "-h", work + "/pg", "-p", "5432", "-U", "unotify", "-d", "gateway", "-q", "-v", "ON_ERROR_STOP=1"],
                   input="\n".join(statements), text=True, check=True)
os.makedirs(work + "/www/3/device")
for token in tokens:
    open(work + "/www/3/device/" + token, "w").close()
with open(work + "/gateway-uris.txt", "w") as file:
    file.writelines("https://localhost:2197/3/device/%s\n" % token for token in tokens)
with open(work + "/second-node-uris.txt", "w") as file:
    file.writelines("https://localhost:2297/3/device/%s\n" % token for token in tokens)
with open(work + "/reference-uris.txt", "w") as file:
    file.writelines("https://localhost:8443/3/device/%s\n" % token for token in tokens)
PYTHON
echo '{"aps":{"alert":{"title":"Benchmark","body":"A push of a typical size, with a title and a body."}}}' > "$work/payload.json"
"$unotify" gateway --gateway-dir "$gateway" "${database_options[@]}" --log-level warning &
gateway_pid=$!
listening 2197
if [ "$store" = postgres-2 ]; then
    "$unotify" gateway --gateway-dir "$gateway" "${database_options[@]}" --log-level warning \
        --sandbox-port 2297 --production-port 2298 --device-link-port 2299 --metrics-port 0 &
    listening 2297
fi
# The gateway wrote its certificate at start; nghttpd serves the same one.
nghttpd -d "$work/www" 8443 "$gateway/server-key.pem" "$gateway/server.pem" &
listening 8443
token="$("$unotify" gateway token --key "$work/key.p8" --key-id "$key_id" --team ABCDE12345)"

load() {
    h2load -c "${2:-10}" -m 100 -D 10 -d "$work/payload.json" -H "authorization: bearer $token" -H "apns-topic: com.example.todo" \
        -H "apns-push-type: alert" -H "apns-priority: 10" -i "$1" 2>&1
}
# Both nodes at once, five connections each: one h2load's figures, the two rates and counts added.
load_two_nodes() {
    load "$work/gateway-uris.txt" 5 >"$work/first.out" &
    local first=$!
    load "$work/second-node-uris.txt" 5 >"$work/second.out"
    wait "$first"
    python3 - "$work/first.out" "$work/second.out" <<'PYTHON'
import re, sys
rate = total = ok = 0.0
for path in sys.argv[1:]:
    text = open(path).read()
    rate += float(re.search(r"finished in .*s, ([0-9.]+) req/s", text).group(1))
    total += int(re.search(r"requests: ([0-9]+) total", text).group(1))
    ok += int(re.search(r"status codes: ([0-9]+) 2xx", text).group(1))
print("finished in 10.00s, %.2f req/s, 0B/s" % rate)
print("requests: %d total" % total)
print("status codes: %d 2xx" % ok)
PYTHON
}
# The gateway's CPU time so far (user and system), in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$gateway_pid/stat"; }
# PostgreSQL's: its server's, its backends' that run now, and those of the backends that ended (counted
# in the server's cutime and cstime once it waited for them).
database_ticks() {
    [ -n "${pg_data:-}" ] || { echo 0; return; }
    local server total=0 child
    server="$(head -1 "$pg_data/postmaster.pid")"
    total="$(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$server/stat")"
    for child in $(pgrep -P "$server"); do
        total=$((total + $(awk '{ print $14 + $15 }' "/proc/$child/stat" 2>/dev/null || echo 0)))
    done
    echo "$total"
}
rate() { sed -n 's/^finished in .*s, \([0-9.]*\) req\/s.*/\1/p'; }
succeeded() { sed -n 's/^status codes: \([0-9]*\) 2xx.*/\1/p'; }

echo "store: $store"
echo "| round | nghttpd req/s | gateway pushes/s accepted (2xx of all) | gateway ÷ nghttpd | gateway's CPU per push | PostgreSQL's CPU per push |"
echo "| --- | --- | --- | --- | --- | --- |"
for round in $(seq "$rounds"); do
    reference="$(load "$work/reference-uris.txt")"
    ticks_before="$(cpu_ticks)"
    database_before="$(database_ticks)"
    if [ "$store" = postgres-2 ]; then measured="$(load_two_nodes)"; else measured="$(load "$work/gateway-uris.txt")"; fi
    ticks_after="$(cpu_ticks)"
    database_after="$(database_ticks)"
    reference_rate="$(echo "$reference" | rate)"
    measured_rate="$(echo "$measured" | rate)"
    measured_total="$(echo "$measured" | sed -n 's/^requests: \([0-9]*\) total.*/\1/p')"
    measured_ok="$(echo "$measured" | succeeded)"
    # Accepted pushes only: a refusal (429 once a token's rate is spent) is not a push stored.
    accepted_rate="$(python3 -c "print('%.2f' % ($measured_rate * $measured_ok / max(1, $measured_total)))")"
    ratio="$(python3 -c "print('%.3f' % ($accepted_rate / $reference_rate))")"
    # The first node's (with two nodes, the other one's is not counted), over the pushes it answered.
    cpu="$(python3 -c "import os; print('%.0f µs' % (($ticks_after - $ticks_before) / os.sysconf('SC_CLK_TCK') * 1e6 / max(1, $measured_ok)))")"
    [ "$store" = postgres-2 ] && cpu="n/a"
    # Over every push accepted (with two nodes, both nodes' pushes: the database serves them all).
    database_cpu="$(python3 -c "import os; print('%.0f µs' % (($database_after - $database_before) / os.sysconf('SC_CLK_TCK') * 1e6 / max(1, $measured_ok)))")"
    [ "$store" = sqlite ] && database_cpu="n/a"
    echo "| $round | ${reference_rate%.*} | ${accepted_rate%.*} ($measured_ok of $measured_total) | $ratio | $cpu | $database_cpu |"
done
echo
if [ "$store" = sqlite ]; then
    stored="$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from push').fetchone()[0])" "$gateway/gateway.sqlite")"
else
    stored="$(psql -h "$work/pg" -p 5432 -U unotify -d gateway -tAq -c "SELECT count(*) FROM push")"
fi
echo "stored pushes: $stored"
if [ "${STATEMENTS:-0}" = 1 ] && [ "$store" != sqlite ]; then
    echo
    psql -h "$work/pg" -p 5432 -U unotify -d gateway -q -c "
        SELECT calls, round(total_exec_time::numeric, 0) AS total_ms, round((total_exec_time / calls)::numeric, 3) AS mean_ms, rows,
               left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS statement
        FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'gateway')
        ORDER BY total_exec_time DESC LIMIT 15"
fi
