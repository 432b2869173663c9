#!/usr/bin/env bash
# A provider's load test against the APNs emulator: pushes per second taken by `unotify emulator` (a
# release build) to thousands of simulated devices, and how soon after the load every push taken has
# reached its device, against nghttpd in the same run.
#
# The emulator starts with DEVICES simulated devices (each acknowledging at once); its start-up time
# is reported. h2load sends to every device's token, with a real ES256 provider token, over TLS; the
# reference is nghttpd over TLS with the emulator's certificate, answering the same requests with an
# empty static file, driven by the same h2load flags. After each round the control API is read
# (`GET /v1/received`) until every push the emulator answered 200 is in its device's inbox.
#
# Usage: Benchmarks/GatewayBenchmarks/emulator-load.sh [unotify binary] [rounds] [devices]
set -euo pipefail
unotify="${1:-.build-bench/release/unotify}"
rounds="${2:-2}"
devices="${3:-2000}"
for tool in h2load nghttpd python3 curl; do
    command -v "$tool" >/dev/null || { echo "error: $tool is needed (apt-get install nghttp2-client nghttp2-server curl)" >&2; exit 1; }
done
work="$(mktemp -d /tmp/emulator-bench.XXXXXX)"
cleanup() {
    kill $(jobs -p) 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
listening() { for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

started="$(date +%s.%N)"
"$unotify" emulator run --topic "com.example.app=$devices" --endpoints-file "$work/emulator.json" --log-level warning > "$work/emulator.out" &
for _ in $(seq 3000); do [ -s "$work/emulator.json" ] && break; sleep 0.02; done
ready="$(date +%s.%N)"
python3 - "$work" <<'PYTHON'
import json, os, sys
work = sys.argv[1]
document = json.load(open(work + "/emulator.json"))
tokens = document["topics"]["com.example.app"]
os.makedirs(work + "/www/3/device")
for token in tokens:
    open(work + "/www/3/device/" + token, "w").close()
with open(work + "/emulator-uris.txt", "w") as file:
    file.writelines("%s/3/device/%s\n" % (document["sandbox"], token) for token in tokens)
with open(work + "/reference-uris.txt", "w") as file:
    file.writelines("https://localhost:8443/3/device/%s\n" % token for token in tokens)
with open(work + "/env", "w") as file:
    for key in ("control", "folder", "keyFile", "keyID", "teamID"):
        file.write("%s=%s\n" % (key, document[key]))
PYTHON
# shellcheck disable=SC1091
source "$work/env"
echo "devices: $devices; ready after $(python3 -c "print('%.2f s' % ($ready - $started))")"
nghttpd -d "$work/www" 8443 "$folder/server-key.pem" "$folder/server.pem" &
listening 8443
token="$("$unotify" gateway token --key "$keyFile" --key-id "$keyID" --team "$teamID")"
echo '{"aps":{"alert":{"title":"Benchmark","body":"A push of a typical size, with a title and a body."}}}' > "$work/payload.json"

load() {
    h2load -c 10 -m 100 -D 10 -d "$work/payload.json" -H "authorization: bearer $token" -H "apns-topic: com.example.app" \
        -H "apns-push-type: alert" -H "apns-priority: 10" -i "$1" 2>&1
}
rate() { sed -n 's/^finished in .*s, \([0-9.]*\) req\/s.*/\1/p'; }
received() { curl -s "$control/v1/received" | python3 -c "import json, sys; print(json.load(sys.stdin)['total'])"; }

echo "| round | nghttpd req/s | emulator pushes/s taken (2xx of all) | emulator ÷ nghttpd | every push in its device's inbox after the load |"
echo "| --- | --- | --- | --- | --- |"
taken=0
for round in $(seq "$rounds"); do
    reference="$(load "$work/reference-uris.txt")"
    measured="$(load "$work/emulator-uris.txt")"
    ended="$(date +%s.%N)"
    reference_rate="$(echo "$reference" | rate)"
    measured_rate="$(echo "$measured" | rate)"
    total="$(echo "$measured" | sed -n 's/^requests: \([0-9]*\) total.*/\1/p')"
    ok="$(echo "$measured" | sed -n 's/^status codes: \([0-9]*\) 2xx.*/\1/p')"
    taken=$((taken + ok))
    while [ "$(received)" -lt "$taken" ]; do sleep 0.05; done
    delivered="$(date +%s.%N)"
    accepted_rate="$(python3 -c "print('%.2f' % ($measured_rate * $ok / max(1, $total)))")"
    ratio="$(python3 -c "print('%.3f' % ($accepted_rate / $reference_rate))")"
    after="$(python3 -c "print('%.2f s' % ($delivered - $ended))")"
    echo "| $round | ${reference_rate%.*} | ${accepted_rate%.*} ($ok of $total) | $ratio | $after |"
done
