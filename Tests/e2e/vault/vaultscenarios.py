"""Mutating-command scenarios shared by the crash-point (2) and I/O-error (7) tests.

Each scenario builds a starting vault ("old" state), runs one mutating command, and knows how to
tell, afterwards, whether the vault is in the old state, the new state, or neither.
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kcharness import EXIT_DECODE, EXIT_NO_SUCH_KEYCHAIN
from kcformat import frames, sha256
from vaultkit import Kc

NEW_PASSWORD = "a new master password ✓"


# The live items of the base vault (charlie was deleted, bravo updated).
BASE_ITEMS = {("generic", "alpha", "acct"): "secret-alpha", ("generic", "bravo", "acct"): "secret-bravo-2",
              ("generic", "delta", "acct"): "secret-delta"}


def _base(kc: Kc) -> None:
    kc.create()
    for name, secret in (("alpha", "secret-alpha"), ("bravo", "secret-bravo"), ("charlie", "secret-charlie"),
                         ("delta", "secret-delta")):
        kc.put(name, secret)
    kc.ok(["update", "generic", "-s", "bravo", "-a", "acct", "--password-stdin"], input="secret-bravo-2")
    kc.ok(["delete", "generic", "-s", "charlie", "-a", "acct"])


def _torn(kc: Kc) -> None:
    """A vault whose last write was interrupted mid-record: a torn tail the anchor never saw."""
    _base(kc)
    anchors = {p: p.read_bytes() for p in kc.anchor_files()}
    before = kc.vault.stat().st_size
    kc.put("echo", "secret-echo-never-acknowledged")
    data = kc.vault.read_bytes()
    cut = before + (len(data) - before) // 2
    with open(kc.vault, "r+b") as f:
        f.truncate(cut)
    for p, content in anchors.items():
        p.write_bytes(content)


def _damaged(kc: Kc) -> None:
    """A vault with one complete record that no longer authenticates (a flipped body byte)."""
    _base(kc)
    data = bytearray(kc.vault.read_bytes())
    second = frames(bytes(data))[1]
    data[second.body[0] + 30] ^= 0x10
    kc.vault.write_bytes(bytes(data))


@dataclass
class Scenario:
    name: str
    args: list
    prepare: Callable[[Kc], None] | None = _base
    input: str | None = None
    new_password: str | None = None          # passwd: the new master password
    old_opens: bool = True                    # False: the old state is not a readable vault
    # What the command must do, checked on the reference run: (old state, new state) -> bool.
    expect: Callable[["State", "State"], bool] = lambda old, new: False

    def command(self, kc: Kc) -> list:
        args = list(self.args)
        if self.new_password is not None:
            args += ["--new-password-file", str(kc.password_file_for(self.new_password, "new"))]
        return args


def _with(items: dict, key: str, secret: str | None) -> dict:
    """`items` with generic item `key` set to `secret` (removed when None)."""
    out = dict(items)
    out.pop(("generic", key, "acct"), None)
    return out if secret is None else {**out, ("generic", key, "acct"): secret}


def _same_items(old, new) -> bool:
    return new.items == old.items and new.password == old.password


SCENARIOS = [
    Scenario("init", ["init", "--kdf-ops", "1", "--kdf-memory", "8K"], prepare=None, old_opens=False,
             expect=lambda old, new: not old.exists and new.items == {} and new.records == 0),
    Scenario("add", ["add", "generic", "-s", "foxtrot", "-a", "acct", "--password-stdin"], input="secret-foxtrot",
             expect=lambda old, new: new.items == _with(old.items, "foxtrot", "secret-foxtrot")),
    Scenario("add -U", ["add", "generic", "-s", "alpha", "-a", "acct", "-U", "--password-stdin"], input="secret-alpha-2",
             expect=lambda old, new: new.items == _with(old.items, "alpha", "secret-alpha-2")),
    Scenario("update", ["update", "generic", "-s", "delta", "-a", "acct", "--password-stdin"], input="secret-delta-2",
             expect=lambda old, new: new.items == _with(old.items, "delta", "secret-delta-2")),
    Scenario("update --set-label", ["update", "generic", "-s", "alpha", "-a", "acct", "--set-label", "Alpha"],
             expect=lambda old, new: _same_items(old, new) and new.labels == {**old.labels, "alpha": "Alpha"}),
    Scenario("delete", ["delete", "generic", "-s", "bravo", "-a", "acct"],
             expect=lambda old, new: new.items == _with(old.items, "bravo", None)),
    Scenario("compact", ["compact"],
             expect=lambda old, new: _same_items(old, new) and new.records < old.records),
    Scenario("passwd", ["passwd"], new_password=NEW_PASSWORD,
             expect=lambda old, new: new.items == old.items and new.password == NEW_PASSWORD),
    Scenario("passwd --rotate-key", ["passwd", "--rotate-key"], new_password=NEW_PASSWORD,
             expect=lambda old, new: new.items == old.items and new.password == NEW_PASSWORD),
    Scenario("repair", ["repair", "--yes"], prepare=_torn,
             expect=lambda old, new: old.torn and not new.torn and _same_items(old, new)),
    # Salvage keeps what still authenticates: never a value the base vault did not hold last.
    Scenario("repair --salvage", ["repair", "--salvage", "--yes"], prepare=_damaged, old_opens=False,
             expect=lambda old, new: new.items is not None and new.items.items() <= BASE_ITEMS.items()),
]


@dataclass
class State:
    """What a vault looks like from outside: which password opens it, its items, its records."""
    exists: bool
    password: str | None = None
    items: dict | None = None
    records: int | None = None
    torn: bool = False
    digest: str | None = None
    labels: dict | None = None

    def key(self):
        return (self.exists, self.password, tuple(sorted(self.items.items())) if self.items is not None else None,
                self.records, self.torn, tuple(sorted((self.labels or {}).items())))


class Lab:
    """One scenario's starting state, kept as a snapshot so every trial starts from the same bytes."""

    def __init__(self, root: Path, scenario: Scenario):
        self.scenario = scenario
        self.kc = Kc(root)
        if scenario.prepare:
            scenario.prepare(self.kc)
        self.old_password = self.kc.master_password
        self.passwords = [self.old_password] + ([scenario.new_password] if scenario.new_password else [])
        self.snap = self.kc.snapshot()
        self.old = self.observe()
        # The reference run: the state the command produces when nothing goes wrong.
        self.reset()
        r = self.run()
        assert r.returncode == 0, f"{scenario.name}: reference run failed: {r}"
        self.new = self.observe()
        assert scenario.expect(self.old, self.new), \
            f"{scenario.name}: the reference run did not do what the command must: {self.old} -> {self.new}"
        self.new_digest_records = self.new.records
        self.reset()

    def reset(self) -> None:
        self.kc.restore(self.snap)
        if not self.snap and self.kc.vault.parent.exists():
            shutil.rmtree(self.kc.vault.parent)
        self.kc.set_password(self.old_password)

    def run(self, fault: str | None = None):
        return self.kc.run(self.scenario.command(self.kc), input=self.scenario.input, fault=fault)

    def env_for_password(self, password: str) -> dict:
        return {"KC_MASTER_PASSWORD_FILE": str(self.kc.password_file_for(password, "probe"))}

    def observe(self) -> State:
        kc = self.kc
        if not kc.vault.exists():
            return State(exists=False)
        digest = sha256(kc.vault)
        for password in self.passwords:
            env = self.env_for_password(password)
            r, items = kc.try_items(env=env)
            if items is None:
                continue
            report = kc.check(env=env)
            labels = {}
            lr = kc.run(["find", "--all", "--json"], env=env)
            if lr.returncode == 0:
                import json
                labels = {o.get("service"): o.get("label") for o in json.loads(lr.stdout)}
            return State(True, password, items, report.records if report.whole_or_torn else None, report.torn,
                         digest, labels)
        return State(True, None, None, None, False, digest)

    def classify(self, state: State) -> str:
        """'old', 'new' or 'neither'. The old state of a damaged vault (salvage) is its exact bytes."""
        if state.key() == self.new.key():
            return "new"
        if self.scenario.old_opens:
            if state.key() == self.old.key():
                return "old"
        elif state.exists == self.old.exists and state.digest == self.old.digest:
            return "old"
        return "neither"

    def usable(self, state: State, label: str) -> str | None:
        """After a crash, the state must not only open but take the next command. Returns an error."""
        kc = self.kc
        if label == "old" and not self.scenario.old_opens:
            # No vault yet (init) or the damaged vault (salvage): running the command again works.
            r = self.run()
            if r.returncode != 0:
                return f"re-running {self.scenario.name} after the crash failed: {r}"
            after = self.observe()
            if after.items != self.new.items:
                return f"re-running {self.scenario.name} after the crash gave {after.items}, expected {self.new.items}"
            return None
        env = self.env_for_password(state.password)
        r = kc.run(["add", "generic", "-s", "probe", "-a", "acct", "--password-stdin"], input="probe", env=env)
        if r.returncode != 0:
            return f"the next write after the crash failed: {r}"
        report = kc.check(env=env)
        if not report.whole:
            return f"after the next write the vault is not whole: {report.raw}"
        items = kc.items(env=env)
        expected = dict(state.items)
        expected[("generic", "probe", "acct")] = "probe"
        if items != expected:
            return f"after the next write the items are {items}, expected {expected}"
        stale = [n for n in os.listdir(kc.vault.parent) if n.endswith(".kc-backup") or ".kc-tmp-" in n]
        if stale:
            return f"the next write left the crashed command's files: {stale}"
        return None
