#!/usr/bin/env python3
"""Names the tests a Swift Testing run started and has not reported ended, from its console output.

Usage: unfinished-tests.py OUTPUT
"""
import re
import sys

started, ended = [], set()
with open(sys.argv[1], errors="replace") as output:
    for line in output:
        # Lines of concurrent tests can run into one another: every event on a line counts.
        for name in re.findall(r"◇ Test (\w+\([^)]*\)) started", line):
            started.append(name)
        for name in re.findall(r"[✔✘] Test (\w+\([^)]*\))(?: with \d+ test cases?)? (?:passed|failed)", line):
            ended.add(name)
for name in started:
    if name not in ended:
        print(f"  {name}")
