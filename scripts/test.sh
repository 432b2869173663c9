#!/usr/bin/env bash
# Runs every test of the project. Installs what the tests need when it is missing, so that it works the
# same on a fresh machine (CI) as on a developer's.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v swift >/dev/null 2>&1; then
    echo "error: the Swift toolchain (6.1 or later) is required: https://www.swift.org/install" >&2
    exit 1
fi

# Debian packages the build and the tests use.
needed=()
dpkg -s libsqlite3-dev >/dev/null 2>&1 || needed+=(libsqlite3-dev)
# curl sends pushes over HTTP/2 in the tests and in the APNs emulator's shell example.
command -v curl >/dev/null 2>&1 || needed+=(curl)
# nghttp shows the provider API's answers frame by frame, as APNs clients read them; nghttpd is the
# reference server the HTTP/2 conformance suite is run against beside the provider API.
command -v nghttp >/dev/null 2>&1 || needed+=(nghttp2-client)
command -v nghttpd >/dev/null 2>&1 || needed+=(nghttp2-server)
# The web notification center's tests drive Debian's Chromium through chromedriver (WebDriver).
command -v chromium >/dev/null 2>&1 || needed+=(chromium)
command -v chromedriver >/dev/null 2>&1 || needed+=(chromium-driver)
# The desktop's tests start a session bus, an X server and dunst, and send with notify-send.
command -v dbus-daemon >/dev/null 2>&1 || needed+=(dbus-daemon)
command -v Xvfb >/dev/null 2>&1 || needed+=(xvfb)
command -v dunst >/dev/null 2>&1 || needed+=(dunst)
command -v notify-send >/dev/null 2>&1 || needed+=(libnotify-bin)
# The gateway's PostgreSQL store is tested against a real server, a throw-away cluster the tests start.
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || needed+=(postgresql)
# The systemd units under deploy/ are checked with systemd-analyze verify.
command -v systemd-analyze >/dev/null 2>&1 || needed+=(systemd)
# Notifications carry emoji: without a font for them, the screenshots show empty boxes.
dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || needed+=(fonts-noto-color-emoji)
if [ ${#needed[@]} -gt 0 ]; then
    echo "Installing ${needed[*]}…"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${needed[@]}"
fi

# Python tools the tests use: the local API's spec is validated with openapi-spec-validator, and
# schemathesis sends the daemon random and hostile requests derived from it.
python3 -c "import openapi_spec_validator, yaml" 2>/dev/null || python3 -m pip install --quiet openapi-spec-validator pyyaml
command -v schemathesis >/dev/null 2>&1 || python3 -m pip install --quiet "schemathesis>=4.3,<5"
# aioapns, an APNs client library used in production, sends pushes to the gateway in the tests.
python3 -c "import aioapns" 2>/dev/null || python3 -m pip install --quiet "aioapns>=4,<5"
# The APNs emulator's guide has a Python backend's tests, run with pytest (Examples/emulator/python).
python3 -c "import pytest" 2>/dev/null || python3 -m pip install --quiet "pytest>=8"
# The HTTP/2 conformance suite (Tests/HTTP2Conformance) writes raw frames with hyperframe and hpack.
python3 -c "import hyperframe, hpack" 2>/dev/null || python3 -m pip install --quiet hyperframe hpack
# The web center's accessibility check runs axe-core's rules in the browser: axe.min.js (4.12) ships in
# this wheel, whose Python part (and its Playwright dependency) the tests do not use.
python3 -c "import axe_playwright_python" 2>/dev/null || python3 -m pip install --quiet --no-deps "axe-playwright-python==0.1.8"

# Every module a target imports is one Package.swift declares for it: the build checks it for the
# modules of the package graph (`--explicit-target-dependency-import-check error`, below), and the
# script for each file, the modules a dependency only uses inside (SwiftNIO SSL's BoringSSL) too.
python3 scripts/check-imports.py

# Build everything, the `unotify` executable included (the end-to-end tests run it), then run all tests.
# The package's own code builds without a warning (scripts/check-warnings.py says which are allowed).
mkdir -p .build
swift build --explicit-target-dependency-import-check error 2>&1 | tee .build/build-output.txt
swift build --build-tests --explicit-target-dependency-import-check error 2>&1 | tee -a .build/build-output.txt
python3 scripts/check-warnings.py .build/build-output.txt
# A run takes a few minutes; one that has not ended after 25 has hung, and is stopped with a message
# rather than left to run into the CI's own limit. A test process that has reported its run failed
# is given 60 s to exit (Swift Testing's process does not always exit after a failed run on Linux).
#
# At most 8 test cases run at once: on two cores, hundreds at once (Swift Testing's default) starve
# one another until waits with a deadline of tens of seconds pass it, and the run is no faster.
# A run that prints nothing for 5 minutes has hung: the tests still running are named, and it stops.
# (The test process writes its output in blocks: the last few lines may be missing at a hang.)
set +e
: > .build/test-output.txt
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}"
timeout --kill-after=30s 25m swift test --skip-build > >(tee -a .build/test-output.txt) 2>&1 &
tests=$!
failed_at=""
stopped=""
while kill -0 "$tests" 2>/dev/null; do
    if [ -z "$failed_at" ] && grep -qE "Test run with [0-9]+ tests? .*failed" .build/test-output.txt; then
        failed_at=$SECONDS
    fi
    silent=$(( $(date +%s) - $(stat -c %Y .build/test-output.txt) ))
    if [ -z "$stopped" ] && [ -n "$failed_at" ] && [ $((SECONDS - failed_at)) -ge 60 ]; then
        echo "error: the test process reported failures and did not exit; stopped." >&2
        stopped=1
    elif [ -z "$stopped" ] && [ "$silent" -ge 300 ]; then
        echo "error: the tests printed nothing for 5 minutes (a hang); still running:" >&2
        python3 scripts/unfinished-tests.py .build/test-output.txt >&2
        stopped=1
    fi
    # This checkout's test process only: another clone's run on the machine is left alone.
    [ -n "$stopped" ] && { pkill -f "$PWD/.build/.*PackageTests.xctest" || true; }
    sleep 2
done
wait "$tests"
status=$?
{ [ -n "$failed_at" ] || [ -n "$stopped" ]; } && [ "$status" -eq 0 ] && status=1
set -e
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "error: the tests did not finish within 25 minutes (a hang); the last lines above show what was running." >&2
    exit 1
fi
[ "$status" -eq 0 ] || exit "$status"
grep -qE "Test run with [0-9]+ tests? .*passed" .build/test-output.txt
