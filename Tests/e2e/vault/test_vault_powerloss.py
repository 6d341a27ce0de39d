"""Power loss: every state a crash of the machine could leave on disk, checked with the binary.

kill -9 leaves the page cache intact, so it never loses an unsynced write; a power loss does.
Each mutating command runs once with the fault seam's trace on (KC_FAULT_TRACE: every open,
write, fsync, ftruncate, rename, link, unlink and mkdir it completes), and `powerloss` builds
from the trace every state a power loss could leave at every point: unsynced writes lost,
reordered, torn at a 512-byte boundary or zero-filled, folder entries without a folder fsync
undone (see powerloss.py). Each distinct state is written to the folders and checked with kc:

- the vault opens (with the old or the new password), or plain `kc repair` makes it open;
  never only `kc repair --salvage` (a power loss leaves only unacknowledged torn tails);
- before the command's acknowledgement (its exit 0, after its last operation) the items and the
  record count are exactly the old or exactly the new ones, never half of either; after it,
  exactly the new ones and `kc check` finds the vault whole;
- the state takes the next write (no false rollback alarm, no leftover that blocks), after
  which `kc check` finds the vault whole and the items are the state's plus the new one.

Appends use long secrets, so that a record spans several sectors and can tear; zero-filled
sectors in an unacknowledged final record (or batch) are a torn tail (Docs/FORMAT.md).
KC_POWERLOSS_SEED changes the sample of random mixtures; KC_STRESS=1 takes more of them.
The trace is complete only if no Swift file outside KCSystem changes files by itself: checked last.
"""
from __future__ import annotations

import os
import random
import re
from collections import Counter
from dataclasses import dataclass

import pytest

from powerloss import CLASSES, Model, crash_states, digest, materialize, parse_trace
from kcharness import REPO
from vaultkit import Kc, figure, scale
from vaultscenarios import SCENARIOS, Scenario, _base, _torn

SEED = int(os.environ.get("KC_POWERLOSS_SEED", "20141006"))
COMBINATIONS = scale(8, 100)         # random mixtures per trace point, besides the systematic states
# A secret long enough that its record spans several 512-byte sectors, so an append can tear.
LONG = "".join(f"{i:04d}-long-secret-" for i in range(100))
NETRC = "machine ftp.one.example login ann password pw-one\nmachine ftp.two.example login bob password pw-two\n" \
        "machine ftp.three.example login cy password pw-three\n"


def _torn_long(kc: Kc) -> None:
    """A vault ending in most of a long record, never acknowledged (longer than the next record)."""
    _base(kc)
    anchors = {p: p.read_bytes() for p in kc.anchor_files()}
    before = kc.vault.stat().st_size
    kc.put("echo", LONG)
    with open(kc.vault, "r+b") as f:
        f.truncate(before + (kc.vault.stat().st_size - before) * 3 // 4)
    for p, content in anchors.items():
        p.write_bytes(content)


def _netrc(kc: Kc) -> None:
    _base(kc)
    kc.write_secret_file(kc.root / "import.netrc", NETRC)


POWERLOSS_SCENARIOS = [s for s in SCENARIOS if s.name in (
    "init", "delete", "compact", "passwd", "passwd --rotate-key", "repair", "repair --salvage")] + [
    Scenario("add", ["add", "generic", "-s", "foxtrot", "-a", "acct", "--password-stdin"], input=LONG),
    Scenario("update", ["update", "generic", "-s", "delta", "-a", "acct", "--password-stdin"], input=LONG),
    # The first write of a new vault creates the state folder, the device id and the anchor.
    Scenario("add (first write)", ["add", "generic", "-s", "foxtrot", "-a", "acct", "--password-stdin"],
             prepare=Kc.create, input="secret-foxtrot"),
    Scenario("add (torn vault)", ["add", "generic", "-s", "foxtrot", "-a", "acct", "--password-stdin"],
             prepare=_torn, input=LONG),
    Scenario("add (long torn tail)", ["add", "generic", "-s", "foxtrot", "-a", "acct", "--password-stdin"],
             prepare=_torn_long, input="secret-foxtrot"),
    Scenario("import netrc", ["import", "netrc", "IMPORT"], prepare=_netrc),
]
TOTALS: Counter = Counter()


@dataclass(frozen=True)
class Seen:
    """A vault as kc sees it: the password that opens it (index), its items and records."""
    exists: bool
    password: int | None = None
    items: tuple | None = None
    records: int | None = None
    whole: bool = False

    @property
    def signature(self):
        return self.password, self.items, self.records


class Checker:
    def __init__(self, kc: Kc, scenario: Scenario):
        self.kc, self.scenario = kc, scenario
        self.passwords = [kc.master_password] + ([scenario.new_password] if scenario.new_password else [])
        self.envs = [{"KC_MASTER_PASSWORD_FILE": str(kc.password_file_for(p, f"password-{i}"))}
                     for i, p in enumerate(self.passwords)]

    def args(self) -> list:
        return [str(self.kc.root / "import.netrc") if a == "IMPORT" else a for a in self.scenario.command(self.kc)]

    def run(self, env: dict | None = None):
        return self.kc.run(self.args(), input=self.scenario.input, env=env)

    def observe(self) -> Seen:
        if not self.kc.vault.exists():
            return Seen(False)
        for index, env in enumerate(self.envs):
            _, items = self.kc.try_items(env=env)
            if items is not None:
                report = self.kc.check(env=env)
                return Seen(True, index, tuple(sorted(items.items())), report.records, report.whole)
        return Seen(True)

    def repair(self) -> Seen:
        for env in self.envs:
            self.kc.run(["repair", "--yes"], env=env)
        return self.observe()

    def next_write(self, seen: Seen) -> str | None:
        """The state takes the next write and is whole after it. Returns a problem or None."""
        env = self.envs[seen.password]
        r = self.kc.run(["add", "generic", "-s", "probe", "-a", "acct", "--password-stdin"], input="probe", env=env)
        if r.returncode != 0:
            return f"the next write failed: {r}"
        report = self.kc.check(env=env)
        if not report.whole:
            return f"after the next write the vault is not whole: {report.raw}"
        expected = dict(seen.items)
        expected[("generic", "probe", "acct")] = "probe"
        if self.kc.items(env=env) != expected:
            return f"after the next write the items are {self.kc.items(env=env)}, expected {expected}"
        return None


def check_state(checker: Checker, old: Seen, new: Seen, old_bytes: bytes | None, acknowledged: bool) -> tuple[str, str | None]:
    """Checks the state now in the folders. Returns (how it opened, problem or None)."""
    kc, scenario = checker.kc, checker.scenario
    seen = checker.observe()
    how = "opened"
    if seen.password is None and not scenario.old_opens and not acknowledged:
        current = kc.vault.read_bytes() if seen.exists else None
        if current == old_bytes:
            r = checker.run()   # no vault yet, or the damaged one: running the command again works
            if r.returncode != 0 or checker.observe().items != new.items:
                return "old", f"running {scenario.name} again after the power loss failed: {r}"
            return "old", None
    if seen.password is None and seen.exists:
        seen, how = checker.repair(), "opened after kc repair"
    if seen.password is None:
        if not seen.exists:
            return "did not open", "the vault is gone"
        r = kc.run(["check"], env=checker.envs[0])
        said = [line for line in r.stdout.splitlines() + r.stderr.splitlines() if line.startswith(("damaged", "kc: error"))]
        return "did not open", f"the vault opens with neither password, even after plain kc repair: {said}"
    if acknowledged:
        if seen.signature != new.signature or not seen.whole:
            return how, f"acknowledged, but the vault holds {seen} instead of {new}"
    elif seen.signature not in (old.signature, new.signature):
        return how, f"neither the old nor the new state: {seen}; old {old}, new {new}"
    return how, checker.next_write(seen)


@dataclass
class Traced:
    """One command run with the trace on, and its crash states by digest: (class, point, tree),
    each state under the weakest fault class that produces it."""
    checker: Checker
    old: Seen
    new: Seen
    old_bytes: bytes | None
    ops: list
    states: dict
    generated: int


def trace(tmp_path, scenario: Scenario) -> Traced:
    kc = Kc(tmp_path)
    if scenario.prepare:
        scenario.prepare(kc)
    checker = Checker(kc, scenario)
    old = checker.observe()
    old_bytes = kc.vault.read_bytes() if kc.vault.exists() else None
    model = Model(kc.home)
    path = tmp_path / "trace"
    r = checker.run(env={"KC_FAULT_TRACE": str(path)})
    assert r.returncode == 0, f"{scenario.name}: the traced run failed: {r}"
    new = checker.observe()
    assert new.password is not None and new.whole, f"{scenario.name}: after the run: {new}"
    ops = parse_trace(path.read_text())
    assert any(op[0] == "fsync" for op in ops), (f"{scenario.name}: the trace holds no fsync: is {kc.binary} "
                                                 f"a build without the fault seam (a release build)?")
    states, generated = {}, 0
    for point, cls, tree in crash_states(model, ops, random.Random(f"{SEED}:{scenario.name}"), COMBINATIONS):
        generated += 1
        key = (digest(tree), point == len(ops))      # the same files, before or after the acknowledgement
        if key not in states or CLASSES.index(cls) < CLASSES.index(states[key][0]):
            states[key] = (cls, point, tree)
    return Traced(checker, old, new, old_bytes, ops, states, generated)


def check_all(traced: Traced, classes) -> tuple[Counter, Counter, list[str]]:
    """Checks every state of `classes`. Returns the states checked by class, the outcomes, the failures."""
    checked, outcomes, failures = Counter(), Counter(), []
    ops = traced.ops
    for (_, acknowledged), (cls, point, tree) in traced.states.items():
        if cls not in classes:
            continue
        checked[cls] += 1
        materialize(traced.checker.kc.home, tree)
        how, problem = check_state(traced.checker, traced.old, traced.new, traced.old_bytes, acknowledged)
        outcomes[how] += 1
        if problem:
            where = f"after operation {point} of {len(ops)}" + (f" ({ops[point - 1][0]})" if point else "")
            failures.append(f"{cls} state {where}: {problem}\n  files: " +
                            ", ".join(f"{p} ({'folder' if c is None else len(c)})" for p, c in sorted(tree.items())))
    return checked, outcomes, failures


def report(name: str, traced: Traced, checked: Counter, outcomes: Counter, failures: list[str]) -> None:
    total = sum(checked.values())
    assert not failures, (f"{name} (seed {SEED}): {len(failures)} of {total} crash states failed:\n"
                          + "\n".join(failures[:12]))
    by_class = ", ".join(f"{checked[c]} {c}" for c in CLASSES if checked[c])
    figure(f"[power loss] {name}: {len(traced.ops)} traced operations, {total} distinct crash states checked "
           f"({by_class}): " + ", ".join(f"{n} {how}" for how, n in sorted(outcomes.items()))
           + ", 0 failed")


# A power loss after an append made the file longer but before all its data reached the disk
# leaves the unacknowledged end of the file with zero-filled sectors: at its end ("zero-filled"),
# or before data that did reach the disk ("zero-filled-gap"). Either is a torn tail, not damage
# (FORMAT.md, "Reading rules"). These commands build such states (or that rule would go untested):
# the zero fill of an import runs past the record it starts in; an append's gap lies in its record.
ZERO_FILL_STATES = {"import netrc": ("zero-filled",), "add": ("zero-filled-gap",), "update": ("zero-filled-gap",),
                    "add (torn vault)": ("zero-filled-gap",)}


@pytest.mark.parametrize("scenario", POWERLOSS_SCENARIOS, ids=[s.name for s in POWERLOSS_SCENARIOS])
def test_power_loss_at_every_point(tmp_path, scenario):
    traced = trace(tmp_path, scenario)
    checked, outcomes, failures = check_all(traced, CLASSES)
    for cls in ZERO_FILL_STATES.get(scenario.name, ()):
        assert checked[cls] > 0, f"{scenario.name}: no {cls} state: the zero-fill cases are no longer built"
    TOTALS["states"] += sum(checked.values())
    TOTALS["generated"] += traced.generated
    TOTALS["commands"] += 1
    report(scenario.name, traced, checked, outcomes, failures)
    if TOTALS["commands"] == len(POWERLOSS_SCENARIOS):
        figure(f"[power loss] {TOTALS['states']} distinct crash states over {len(POWERLOSS_SCENARIOS)} commands "
               f"({TOTALS['generated']} generated, seed {SEED}): each opened in the "
               f"old or the new state, the new one once acknowledged, and took the next write")


# A call that changes files or folders, made without FileDescriptor or FileSystem, would not reach
# the fault seam: the trace would miss it and the states above would not be the real ones.
RAW_CALL = re.compile(r"(?<![.\w])(?:Glibc\.)?(?:unlink|unlinkat|link|linkat|rename|renameat|mkdir|mkdirat|ftruncate|"
                      r"truncate|fsync|fdatasync|creat|pwrite|open(?!\(\w+:)|write(?=\(\w+(?:\.rawValue)?,))\(")
NOT_A_FILE = {"Sources/KCCLI/Terminal/Terminal.swift": ('Glibc.open("/dev/tty"', "Glibc.write(fd, &byte, 1)")}


def raw_file_calls(path: str, text: str) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("//")[0]
        if "func " in code or not RAW_CALL.search(code):
            continue
        if any(allowed in code for allowed in NOT_A_FILE.get(path, ())):
            continue
        found.append(f"{path}:{number}: {line.strip()}")
    return found


def test_every_file_change_goes_through_the_seam():
    sources = REPO / "Sources"
    files = [p for p in sources.rglob("*.swift") if "KCSystem" not in p.parts]
    found = [hit for p in files for hit in raw_file_calls(str(p.relative_to(REPO)), p.read_text())]
    assert files and not found, "file system calls that bypass FileDescriptor/FileSystem (and the fault seam):\n" + \
        "\n".join(found)
    figure(f"[power loss] {len(files)} Swift files outside KCSystem: no file or folder change bypasses the fault seam")
