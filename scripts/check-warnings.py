#!/usr/bin/env python3
"""Refuses a build whose compiler output warns about the package's own code.

Reads the output of `swift build` (the files given, or standard input) and lists every warning in a
file under Sources/, Tests/, Examples/ or Benchmarks/. One kind is allowed, in tests only: the use of
a deprecated declaration, since tests of iOS 8's API and of Apple's deprecated options call it on
purpose. Warnings in the dependencies' code are theirs, and not counted.

An incremental build compiles only what changed, so it shows only those files' warnings; CI builds
from a fresh clone, where every file is compiled and every warning shown.
"""
import os
import re
import sys

OWN = ("Sources/", "Tests/", "Examples/", "Benchmarks/")
WARNING = re.compile(r"^(?P<path>/[^:\s]+\.swift):(?P<line>\d+):(?P<column>\d+): warning: (?P<message>.*)$")


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + "/"
    paths = sys.argv[1:]
    lines = []
    if paths:
        for path in paths:
            with open(path, encoding="utf-8", errors="replace") as file:
                lines += file.read().splitlines()
    else:
        lines = sys.stdin.read().splitlines()
    found = set()
    for line in lines:
        match = WARNING.match(line.strip())
        if not match or not match["path"].startswith(root):
            continue
        relative = match["path"][len(root):]
        if not relative.startswith(OWN):
            continue
        if relative.startswith("Tests/") and match["message"].endswith("[#DeprecatedDeclaration]"):
            continue
        found.add(f"{relative}:{match['line']}:{match['column']}: {match['message']}")
    if found:
        print(f"error: the build warns about {len(found)} place(s) of the package's own code:", file=sys.stderr)
        for warning in sorted(found):
            print(f"  {warning}", file=sys.stderr)
        return 1
    print("No warning in the package's own code.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
