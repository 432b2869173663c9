#!/usr/bin/env bash
# Runs every test of the project. Installs what the tests need when it is missing, so that it works the
# same on a fresh machine (CI) as on a developer's.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v swift >/dev/null 2>&1; then
    echo "error: the Swift toolchain (6.1 or later) is required: https://www.swift.org/install" >&2
    exit 1
fi

# Swift Testing runs the tests in parallel; the XCTest line that follows reports 0 tests and is not ours.
swift build --build-tests
swift test --skip-build 2>&1 | tee .build/test-output.txt
grep -qE "Test run with [0-9]+ tests? .*passed" .build/test-output.txt
