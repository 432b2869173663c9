#!/usr/bin/env bash
# Accepted pushes per second through the gateway's provider API, against nghttpd in the same run.
#
# The gateway (a release build of `unotify gateway`) serves the sandbox endpoint over TLS with a real
# ES256 provider token and stores every push durably (SQLite, synchronous=FULL, group commit) before
# its 200. The reference is nghttpd (Debian's nghttp2-server) over TLS with the same certificate,
# answering the same requests with an empty static file. Both are driven by h2load with the same flags,
# headers, payload and 2,000 device tokens (APNs throttles one token; providers send to many).
#
# Usage: Benchmarks/GatewayBenchmarks/provider-api.sh [unotify binary] [rounds]
set -euo pipefail
unotify="${1:-.build-bench/release/unotify}"
rounds="${2:-2}"
for tool in h2load nghttpd python3; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed (apt-get install nghttp2-client nghttp2-server)" >&2; exit 1; }
done
work="$(mktemp -d /tmp/gateway-bench.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
gateway="$work/gateway"
"$unotify" gateway teams add ABCDE12345 --gateway-dir "$gateway" >/dev/null
"$unotify" gateway apps add com.example.todo --team ABCDE12345 --gateway-dir "$gateway"
key_id="$("$unotify" gateway keys create --team ABCDE12345 --output "$work/key.p8" --gateway-dir "$gateway" 2>/dev/null)"
python3 - "$gateway/gateway.sqlite" "$work" <<'PYTHON'
import os, secrets, sqlite3, sys, time
database, work = sys.argv[1], sys.argv[2]
db = sqlite3.connect(database)
tokens = [secrets.token_hex(32) for _ in range(2000)]
for index, token in enumerate(tokens):
    device = "bench%05d" % index
    db.execute("INSERT INTO device (deviceID, secretHash, createdAt) VALUES (?, 'unused', ?)", (device, time.time()))
    db.execute("INSERT INTO registration (token, deviceID, bundleIdentifier, environment, registeredAt) "
               "VALUES (?, ?, 'com.example.todo', 'sandbox', ?)", (token, device, time.time()))
db.commit()
os.makedirs(work + "/www/3/device")
for token in tokens:
    open(work + "/www/3/device/" + token, "w").close()
with open(work + "/gateway-uris.txt", "w") as file:
    file.writelines("https://localhost:2197/3/device/%s\n" % token for token in tokens)
with open(work + "/reference-uris.txt", "w") as file:
    file.writelines("https://localhost:8443/3/device/%s\n" % token for token in tokens)
PYTHON
echo '{"aps":{"alert":{"title":"Benchmark","body":"A push of a typical size, with a title and a body."}}}' > "$work/payload.json"
listening() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
"$unotify" gateway --gateway-dir "$gateway" --log-level warning &
listening 2197
# The gateway wrote its certificate at start; nghttpd serves the same one.
nghttpd -d "$work/www" 8443 "$gateway/server-key.pem" "$gateway/server.pem" &
listening 8443
token="$("$unotify" gateway token --key "$work/key.p8" --key-id "$key_id" --team ABCDE12345)"

load() {
    h2load -c 10 -m 100 -D 10 -d "$work/payload.json" -H "authorization: bearer $token" -H "apns-topic: com.example.todo" \
        -H "apns-push-type: alert" -H "apns-priority: 10" -i "$1" 2>&1
}
rate() { sed -n 's/^finished in .*s, \([0-9.]*\) req\/s.*/\1/p'; }
succeeded() { sed -n 's/^status codes: \([0-9]*\) 2xx.*/\1/p'; }

echo "| round | nghttpd req/s | gateway pushes/s (all 2xx) | gateway ÷ nghttpd |"
echo "| --- | --- | --- | --- |"
for round in $(seq "$rounds"); do
    reference="$(load "$work/reference-uris.txt")"
    measured="$(load "$work/gateway-uris.txt")"
    reference_rate="$(echo "$reference" | rate)"
    measured_rate="$(echo "$measured" | rate)"
    measured_total="$(echo "$measured" | sed -n 's/^requests: \([0-9]*\) total.*/\1/p')"
    measured_ok="$(echo "$measured" | succeeded)"
    ratio="$(python3 -c "print('%.3f' % ($measured_rate / $reference_rate))")"
    echo "| $round | ${reference_rate%.*} | ${measured_rate%.*} ($measured_ok of $measured_total) | $ratio |"
done
echo
echo "stored pushes: $(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from push').fetchone()[0])" "$gateway/gateway.sqlite")"
