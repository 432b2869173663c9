#!/usr/bin/env python3
"""Checks that every module a target imports is one it declares in Package.swift.

A module is declared when it is one of the target's dependencies: a target of this package, or a
product of a package it depends on (imported under the product's name). The toolchain's own modules
(the standard library's, Foundation, Dispatch, the C library, the test libraries) need no
declaration; an Apple framework imported under `#if canImport(<it>)` (UIKit, where the framework
exists, in place of ours) needs none either. Anything else, such as a module a dependency uses inside (`CNIOBoringSSL` under
SwiftNIO SSL, `CDispatch` under Dispatch), is refused: it is no API, and it can change or vanish in
any release of the package that holds it.

Usage: scripts/check-imports.py [package description JSON]
Without an argument it runs `swift package describe --type json` itself. Exits 1, naming each file,
line and module, when an import is not declared.
"""

import json
import os
import re
import subprocess
import sys

TOOLCHAIN_MODULES = {
    "Swift", "_Concurrency", "_StringProcessing", "RegexBuilder", "Synchronization", "Observation",
    "Foundation", "FoundationEssentials", "FoundationInternationalization", "FoundationNetworking", "FoundationXML",
    "Dispatch", "Glibc", "Musl", "Darwin", "XCTest", "Testing",
}

IMPORT = re.compile(
    r"^\s*(?:@[\w()]+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+"
    r"(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?([A-Za-z_]\w*)"
)
# Apple's frameworks that our modules stand in for where they do not exist.
APPLE_FRAMEWORKS = {"UIKit", "UserNotifications", "UserNotificationsUI", "PushKit", "CoreLocation", "Darwin"}

CAN_IMPORT = re.compile(r"canImport\(\s*([A-Za-z_]\w*)")


def imports(path):
    """Yields (line number, module, modules whose `#if canImport` encloses the line)."""
    in_string = False
    conditions = []  # one list of canImport modules per open #if
    with open(path, encoding="utf-8", errors="replace") as source:
        for number, line in enumerate(source, 1):
            # Multi-line string literals (a Python script a test runs) hold no imports of ours.
            if line.count('"""') % 2 == 1:
                in_string = not in_string
                continue
            if in_string:
                continue
            stripped = line.strip()
            if stripped.startswith("#if"):
                conditions.append(CAN_IMPORT.findall(stripped))
            elif stripped.startswith("#elseif"):
                if conditions:
                    conditions[-1] = CAN_IMPORT.findall(stripped)
            elif stripped.startswith("#else"):
                if conditions:
                    conditions[-1] = []
            elif stripped.startswith("#endif"):
                if conditions:
                    conditions.pop()
            else:
                match = IMPORT.match(line)
                if match:
                    yield number, match.group(1), {module for modules in conditions for module in modules}


def main():
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as file:
            package = json.load(file)
    else:
        described = subprocess.run(["swift", "package", "describe", "--type", "json"], capture_output=True, text=True, check=True)
        package = json.loads(described.stdout)
    root = package["path"]
    problems = []
    for target in package["targets"]:
        declared = set(target.get("target_dependencies", [])) | set(target.get("product_dependencies", []))
        declared.add(target["name"])
        for source in target.get("sources", []):
            path = os.path.join(target["path"], source)
            for number, module, guarded_by in imports(os.path.join(root, path) if not os.path.isabs(path) else path):
                if module in declared or module in TOOLCHAIN_MODULES or (module in APPLE_FRAMEWORKS and module in guarded_by):
                    continue
                problems.append(f"{path}:{number}: {target['name']} imports {module}, which it does not declare in Package.swift")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"error: {len(problems)} import(s) of undeclared modules", file=sys.stderr)
        return 1
    print(f"Every import of the package's {len(package['targets'])} targets is declared.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
