#!/usr/bin/env bash
# A provider's CI step in the shell, with curl, against the APNs emulator: a push reaches a simulated
# device, the provider token is expired an hour later, a 410 for a chosen token, a 503 window that a
# retry gets through once the clock has moved past it. Exits non-zero at the first surprise.
#
# Run: Examples/emulator/shell/provider-ci.sh (the emulator is `unotify`, on PATH or named by $UNOTIFY).
set -euo pipefail
unotify=${UNOTIFY:-unotify}
work=$(mktemp -d)

# Start the emulator; its endpoints, CA, key and tokens arrive as shell variables.
"$unotify" emulator run --topic com.example.app=2 --env-file "$work/emulator.env" > "$work/emulator.out" &
emulator=$!
trap 'kill "$emulator" 2>/dev/null; wait "$emulator" 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 300); do [ -s "$work/emulator.env" ] && break; sleep 0.1; done
# shellcheck disable=SC1091
source "$work/emulator.env"
read -r first second <<< "$UNOTIFY_EMULATOR_TOKENS_COM_EXAMPLE_APP"
# The `unotify emulator` commands find it here.
export UNOTIFY_EMULATOR=$UNOTIFY_EMULATOR_CONTROL

token() { "$unotify" gateway token --key "$UNOTIFY_EMULATOR_KEY_FILE" --key-id "$UNOTIFY_EMULATOR_KEY_ID" --team "$UNOTIFY_EMULATOR_TEAM_ID"; }
# push JWT DEVICE-TOKEN PAYLOAD: prints the status; the body is in $work/body.
push() {
    curl -s --http2 --cacert "$UNOTIFY_EMULATOR_CA_FILE" -o "$work/body" -w '%{http_code}' \
        -H "authorization: bearer $1" -H "apns-topic: com.example.app" -H "apns-push-type: alert" -d "$3" \
        "$UNOTIFY_EMULATOR_SANDBOX/3/device/$2"
}
# control METHOD PATH [JSON]: the emulator's control API.
control() { curl -sf -X "$1" -H "content-type: application/json" ${3:+-d "$3"} "$UNOTIFY_EMULATOR_CONTROL$2"; }
expect() { [ "$1" = "$2" ] || { echo "FAILED: $3: expected $2, got $1 $(cat "$work/body" 2>/dev/null)" >&2; exit 1; }; }

jwt=$(token)
expect "$(push "$jwt" "$first" '{"aps":{"alert":"Hello"}}')" 200 "a push"

# An hour later the provider token is expired; a new one goes through.
control POST /v1/clock/advance '{"by":"61m"}' > /dev/null
expect "$(push "$jwt" "$first" '{"aps":{"alert":"Stale"}}')" 403 "the old token"
expect "$(cat "$work/body")" '{"reason":"ExpiredProviderToken"}' "the old token's reason"
jwt=$(token)
expect "$(push "$jwt" "$first" '{"aps":{"alert":"Fresh"}}')" 200 "a new token"

# 410 for a chosen token, with its timestamp.
"$unotify" emulator fault add status --reason Unregistered --token "$second" > /dev/null
expect "$(push "$jwt" "$second" '{"aps":{"alert":"Gone?"}}')" 410 "the uninstalled app's token"
grep -q '"reason":"Unregistered","timestamp":' "$work/body" || expect "$(cat "$work/body")" "a 410 body with a timestamp" "the 410 body"

# A 503 window: refused inside it, taken once the clock has passed it.
control POST /v1/faults '{"action":"status","reason":"ServiceUnavailable","for":"10m"}' > /dev/null
expect "$(push "$jwt" "$first" '{"aps":{"alert":"Retried"}}')" 503 "inside the window"
"$unotify" emulator clock advance 10m > /dev/null
expect "$(push "$jwt" "$first" '{"aps":{"alert":"Retried"}}')" 200 "after the window"

# The device received the three pushes that were taken, in order.
received=$("$unotify" emulator received --token "$first" --count 3 --wait 3)
expect "$(grep -o '"alert":"[A-Za-z]*"' <<< "$received" | tr '\n' ' ')" '"alert":"Hello" "alert":"Fresh" "alert":"Retried" ' "the inbox"
echo "Every check passed."
