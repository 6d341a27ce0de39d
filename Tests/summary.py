#!/usr/bin/env python3
"""Totals the phases of `make test` from their logs: XCTest (unit), pytest (end-to-end) and the
fuzz smoke run (each target without a crash counts as one passed test). Prints one closing line,
"kc: N passed, N failed, N skipped", and exits non-zero when anything failed or a phase is missing."""
import re
import sys
from pathlib import Path

logs = Path(sys.argv[1] if len(sys.argv) > 1 else ".build/test-logs")
passed = failed = skipped = 0
problems = []

unit = (logs / "unit.log").read_text(errors="replace") if (logs / "unit.log").exists() else ""
runs = re.findall(r"Executed (\d+) tests?, with (?:(\d+) tests? skipped and )?(\d+) failures?", unit)
if runs:
    total, skip, fail = (int(x or 0) for x in runs[-1])   # the last line is the 'All tests' suite
    passed += total - int(skip or 0) - fail
    skipped += int(skip or 0)
    failed += fail
else:
    problems.append("no XCTest summary in unit.log")

e2e = (logs / "e2e.log").read_text(errors="replace") if (logs / "e2e.log").exists() else ""
closing = [line for line in e2e.splitlines() if re.search(r"\d+ (passed|failed|error)", line) and " in " in line]
if closing:
    counts = dict((word, int(n)) for n, word in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)", closing[-1]))
    passed += counts.get("passed", 0)
    failed += counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0) + counts.get("xpassed", 0)
    skipped += counts.get("skipped", 0) + counts.get("xfailed", 0)
else:
    problems.append("no pytest summary in e2e.log")

fuzz = (logs / "fuzz.log").read_text(errors="replace") if (logs / "fuzz.log").exists() else ""
targets = re.findall(r"fuzz: (\S+): (\d+) crash", fuzz)
if targets:
    for _, crashes in targets:
        if int(crashes) == 0:
            passed += 1
        else:
            failed += 1
else:
    problems.append("no fuzz summary in fuzz.log")

for problem in problems:
    print(f"kc test summary: {problem}")
print(f"kc: {passed} passed, {failed + len(problems)} failed, {skipped} skipped")
sys.exit(1 if failed or problems else 0)
