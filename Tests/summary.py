#!/usr/bin/env python3
"""Totals the phases of `make test` from each runner's exit status and its own machine-readable
summary, never from its log text:

- unit: `swift test --xunit-output` (LOGS/unit.xml) and LOGS/unit.status;
- e2e: pytest's `--junitxml` (LOGS/e2e.xml) and LOGS/e2e.status;
- fuzz: Tests/Fuzz/run.sh's results file (LOGS/fuzz.tsv: target, outcome, inputs run) and LOGS/fuzz.status.

Prints one line per phase with its outcome, then the totals, "kc: N passed, N failed, N skipped"
(and ", N known bugs (xfail)": strict xfails, each listed with its reason; an xpass fails).
A phase fails when its exit status is not 0, when its summary is missing or names no test, or when a
test in it failed; a skip fails unless ALLOWED_SKIPS expects it (a test that must run on the machine
`make test` prepares, such as the root, tmpfs, strace or shell tests, may not skip).
Exits non-zero when anything failed. `summary.py --self-test` checks these rules on sample summaries.
"""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

FUZZ_TARGETS = {"vault_parser", "cli_parser"}

# Skips that may happen where `make test` runs: (test module, words of the reason). Anything else
# that skips is a failure.
ALLOWED_SKIPS = [
    ("ftp.test_ftp_ipv6", "IPv6 loopback"),             # containers without ::1
    ("ftp.test_ftp_libcurl", "no unprivileged mount namespace"),
]


@dataclass
class Phase:
    name: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    known_bugs: int = 0      # strict xfails: tests of bugs not fixed yet, that fail the run once they pass
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.problems

    def line(self) -> str:
        counts = f"{self.passed} passed, {self.failed} failed, {self.skipped} skipped" + \
            (f", {self.known_bugs} known bugs (xfail)" if self.known_bugs else "")
        return f"{self.name}: {counts}" + "".join(f"; {p}" for p in self.problems)


def _cases(xml_text: str, phase: Phase) -> list:
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as error:
        phase.problems.append(f"summary is not valid XML ({error})")
        return []
    return list(root.iter("testcase"))


def unit(xml_text: str) -> Phase:
    """XCTest's xUnit summary: a testcase with <failure> or <error> failed, with <skipped> skipped."""
    phase = Phase("unit")
    for case in _cases(xml_text, phase):
        name = f"{case.get('classname')}.{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            phase.failed += 1
            phase.notes.append(f"failed: {name}")
        elif case.find("skipped") is not None:
            phase.skipped += 1
            phase.problems.append(f"skipped: {name}")
        else:
            phase.passed += 1
    return phase


def e2e(xml_text: str) -> Phase:
    """pytest's JUnit summary: strict xfails are known bugs (listed with their reasons), skips must be expected."""
    phase = Phase("e2e")
    for case in _cases(xml_text, phase):
        name = f"{case.get('classname')}::{case.get('name')}"
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            phase.failed += 1
            phase.notes.append(f"failed: {name}")
        elif skipped is not None and skipped.get("type") == "pytest.xfail":
            phase.known_bugs += 1
            reason = skipped.get("message") or ""
            if not reason:
                phase.problems.append(f"xfail without a reason: {name}")
            phase.notes.append(f"known bug: {name}: {reason}")
        elif skipped is not None:
            phase.skipped += 1
            reason = skipped.get("message") or ""
            module = case.get("classname") or ""
            if not any(module.endswith(allowed) and words in reason for allowed, words in ALLOWED_SKIPS):
                phase.problems.append(f"skipped: {name}: {reason}")
        else:
            phase.passed += 1
    return phase


def fuzz(tsv: str) -> Phase:
    """run.sh's results: one line per target, `TARGET<TAB>ok|crash|build-failed|no-input<TAB>INPUTS`."""
    phase = Phase("fuzz")
    seen = set()
    for line in tsv.splitlines():
        parts = line.split("\t")
        if len(parts) != 3:
            phase.problems.append(f"unreadable result line {line!r}")
            continue
        target, outcome, runs = parts
        seen.add(target)
        if outcome == "ok" and runs.isdigit() and int(runs) > 0:
            phase.passed += 1
        else:
            phase.failed += 1
            phase.notes.append(f"{target}: {outcome} ({runs} inputs)")
    if seen != FUZZ_TARGETS:
        phase.problems.append(f"targets {sorted(seen)}, expected {sorted(FUZZ_TARGETS)}")
    return phase


PHASES = {"unit": (unit, "xml"), "e2e": (e2e, "xml"), "fuzz": (fuzz, "tsv")}


def summarize(logs: Path) -> list[Phase]:
    phases = []
    for name, (read, suffix) in PHASES.items():
        summary_path, status_path = logs / f"{name}.{suffix}", logs / f"{name}.status"
        status = status_path.read_text().strip() if status_path.exists() else "missing"
        if not summary_path.exists():
            phase = Phase(name, problems=[f"no summary {summary_path.name} (the phase did not run, or its runner crashed)"])
        else:
            phase = read(summary_path.read_text(errors="replace"))
        if status != "0":
            phase.problems.append(f"phase exit status {status} (its log: {logs / (name + '.log')})")
        if phase.passed == 0 and summary_path.exists():
            phase.problems.append("ran no test")
        phases.append(phase)
    return phases


def report(phases: list[Phase]) -> int:
    for phase in phases:
        for note in phase.notes:
            print(f"kc test summary: {phase.name}: {note}")
        print(f"kc test summary: {phase.line()}")
    failed = sum(p.failed for p in phases) + sum(1 for p in phases if p.problems and not p.failed)
    known = sum(p.known_bugs for p in phases)
    print(f"kc: {sum(p.passed for p in phases)} passed, {failed} failed, {sum(p.skipped for p in phases)} skipped"
          + (f", {known} known bugs (xfail)" if known else "")
          + ("" if all(p.ok for p in phases) else " (FAILED: " + ", ".join(p.name for p in phases if not p.ok) + ")"))
    return 0 if all(p.ok for p in phases) else 1


def _suite(*cases: str) -> str:
    return "<testsuites><testsuite>" + "".join(cases) + "</testsuite></testsuites>"


UNIT_OK = _suite('<testcase classname="KCFormatTests.A" name="testA" time="0.1"></testcase>',
                 '<testcase classname="KCFormatTests.A" name="testB" time="0.1"></testcase>')
E2E_OK = _suite('<testcase classname="test_cli_items" name="test_a" time="1" />')
FUZZ_OK = "vault_parser\tok\t209162\ncli_parser\tok\t132140\n"


def self_test() -> None:
    """Each rule, on a passing sample and on the failure it must catch."""
    assert unit(UNIT_OK).ok and unit(UNIT_OK).passed == 2
    failing = UNIT_OK.replace('name="testB" time="0.1">', 'name="testB" time="0.1"><failure message="x"/>')
    assert not unit(failing).ok and unit(failing).failed == 1
    skipped = UNIT_OK.replace('name="testB" time="0.1">', 'name="testB" time="0.1"><skipped/>')
    assert not unit(skipped).ok
    assert not unit("<testsuites><testsuite").ok                                  # a cut summary
    assert e2e(E2E_OK).ok and e2e(E2E_OK).passed == 1
    assert not e2e(_suite('<testcase classname="m" name="t"><failure message="boom"/></testcase>')).ok
    assert not e2e(_suite('<testcase classname="m" name="t"><error message="boom"/></testcase>')).ok
    root = '<testcase classname="test_cli_init" name="t"><skipped type="pytest.skip" message="needs root"/></testcase>'
    assert not e2e(_suite(root)).ok                                                # an unexpected skip
    ipv6 = '<testcase classname="ftp.test_ftp_ipv6" name="t"><skipped type="pytest.skip" message="no IPv6 loopback here"/></testcase>'
    assert e2e(_suite(ipv6, '<testcase classname="m" name="u" />')).ok
    xfail = '<testcase classname="m" name="x"><skipped type="pytest.xfail" message="known bug"/></testcase>'
    assert e2e(_suite(xfail, '<testcase classname="m" name="u" />')).ok
    assert e2e(_suite(xfail, '<testcase classname="m" name="u" />')).known_bugs == 1
    bare = '<testcase classname="m" name="x"><skipped type="pytest.xfail" message=""/></testcase>'
    assert not e2e(_suite(bare, '<testcase classname="m" name="u" />')).ok         # an xfail without its reason
    assert fuzz(FUZZ_OK).ok and fuzz(FUZZ_OK).passed == 2
    assert not fuzz("vault_parser\tok\t1\ncli_parser\tbuild-failed\t0\n").ok
    assert not fuzz("vault_parser\tok\t1\ncli_parser\tcrash\t10\n").ok
    assert not fuzz("vault_parser\tok\t1\n").ok                                     # a target missing
    assert not fuzz("vault_parser\tok\t0\ncli_parser\tok\t5\n").ok                  # ran nothing
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        logs = Path(folder)
        (logs / "unit.xml").write_text(UNIT_OK); (logs / "e2e.xml").write_text(E2E_OK); (logs / "fuzz.tsv").write_text(FUZZ_OK)
        for name in PHASES:
            (logs / f"{name}.status").write_text("0\n")
        assert all(p.ok for p in summarize(logs))
        (logs / "e2e.status").write_text("1\n")                                     # the runner failed: whatever its summary says
        assert not all(p.ok for p in summarize(logs))
        (logs / "e2e.status").write_text("0\n"); (logs / "unit.xml").unlink()
        assert not all(p.ok for p in summarize(logs))                               # no summary: the runner crashed
    print("summary.py self-test: every rule caught its failure")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    sys.exit(report(summarize(Path(sys.argv[1] if len(sys.argv) > 1 else ".build/test-logs"))))
