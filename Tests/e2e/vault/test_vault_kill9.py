"""kill -9 at random moments during add/update/delete/compact/passwd.

Several workers run kc in parallel on one vault; most commands are killed with SIGKILL after a
random delay drawn from the command's own measured duration. Each worker owns its items and
keeps, for each, the set of values it may have (a killed command may or may not have landed;
a command that exited 0 leaves exactly one). After every round: `kc check` finds every record
authentic with contiguous sequence numbers (an unacknowledged torn tail is allowed), the vault
opens, and every item has a value its history allows, so no acknowledged change is lost.
"""
from __future__ import annotations

import random
import signal
import statistics
import subprocess
import threading
import time

import pytest

from kcharness import EXIT_DUPLICATE, EXIT_NOT_FOUND, SEAM_EXIT
from vaultkit import figure, Kc, leftovers, scale

KILLS = scale(1000, 20000)
WORKERS = 4
KEYS_PER_WORKER = 6
OPS = ["add", "add-U", "update", "delete", "compact", "passwd", "passwd-rotate"]
WEIGHTS = [22, 14, 24, 12, 12, 8, 8]
ROUND_OPS = 10          # commands per worker between two verifications (fewer: fewer values a key may have)
KILL_PROBABILITY = 0.8


class Worker:
    def __init__(self, index: int, kc: Kc, seed: int):
        self.index = index
        self.kc = kc
        self.rng = random.Random(seed)
        self.keys = [f"w{index}-k{j}" for j in range(KEYS_PER_WORKER)]
        self.possible = {k: {None} for k in self.keys}    # None: absent
        self.counter = 0
        self.kills = 0
        self.landed_after_kill = 0
        self.from_kills = {k: set() for k in self.keys}   # values only a killed command could have left
        self.acknowledged = 0
        self.clean_failures = 0
        self.errors: list[str] = []
        self.checks = 0           # per-key checks against the model
        self.unambiguous = 0      # of them, checks where the model allowed exactly one value
        self.durations: dict[str, list[float]] = {op: [] for op in OPS}

    def delay_for(self, op: str) -> float:
        d = self.durations[op]
        typical = statistics.median(d[-20:]) if len(d) >= 3 else 0.03
        return self.rng.uniform(0, typical * 1.3)

    def one(self) -> None:
        rng = self.rng
        op = rng.choices(OPS, WEIGHTS)[0]
        key = rng.choice(self.keys)
        self.counter += 1
        secret = f"secret-{self.index}-{self.counter}-{rng.getrandbits(40):x}"
        args, new = self.arguments(op, key, secret)
        kill = rng.random() < KILL_PROBABILITY and len(self.durations[op]) >= 3
        start = time.monotonic()
        p = self.kc.popen(["--lock-timeout", "120", *args])
        try:
            if new is not None:
                p.stdin.write(new.encode())
            p.stdin.close()
        except BrokenPipeError:
            pass
        p.stdin = None
        if kill:
            time.sleep(self.delay_for(op))
            try:
                p.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            out, err = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            p.kill()   # a hung kc fails the test (pytest.ini: thread exceptions are errors), and is not left running
            p.communicate()
            raise
        rc = p.returncode
        self.apply(op, key, new, rc, err.decode("utf-8", "replace"), killed=(rc == -signal.SIGKILL))
        if rc >= 0 and not kill:
            self.durations[op].append(time.monotonic() - start)

    def arguments(self, op: str, key: str, secret: str):
        if op == "add":
            return ["add", "generic", "-s", key, "-a", "acct", "--password-stdin"], secret
        if op == "add-U":
            return ["add", "generic", "-s", key, "-a", "acct", "-U", "--password-stdin"], secret
        if op == "update":
            return ["update", "generic", "-s", key, "-a", "acct", "--password-stdin"], secret
        if op == "delete":
            return ["delete", "generic", "-s", key, "-a", "acct"], None
        if op == "compact":
            return ["compact"], None
        # passwd keeps the same password (so concurrent workers keep opening the vault) but
        # still rewrites the whole file: new salt and wrapped key, or a new vault key.
        extra = ["--rotate-key"] if op == "passwd-rotate" else []
        return ["passwd", *extra, "--new-password-file", str(self.kc.password_file)], None

    def apply(self, op, key, new, rc, err, killed):
        poss = self.possible[key]
        present = {v for v in poss if v is not None}
        if killed:
            # Killed: the change may or may not have landed (never half of it).
            self.kills += 1
            if op == "add-U" or (op == "add" and None in poss) or (op == "update" and present):
                if new not in poss:
                    self.from_kills[key].add(new)
                poss.add(new)
            elif op == "delete" and present:
                if None not in poss:
                    self.from_kills[key].add(None)
                poss.add(None)
            return
        if rc == 0:
            self.acknowledged += 1
            if op in ("add", "add-U", "update"):
                if op == "update" and not present:
                    self.errors.append(f"update of {key} succeeded but the item could not exist: {poss}")
                self.possible[key] = {new}
                self.from_kills[key] = set()
            elif op == "delete":
                if not present:
                    self.errors.append(f"delete of {key} succeeded but the item could not exist: {poss}")
                self.possible[key] = {None}
                self.from_kills[key] = set()
            return
        if rc == EXIT_DUPLICATE and op == "add":
            self.clean_failures += 1
            if not present:
                self.errors.append(f"add {key}: duplicate, but the item cannot exist (possible: {poss}); {err}")
            self.possible[key] = present
            return
        if rc == EXIT_NOT_FOUND and op in ("update", "delete"):
            self.clean_failures += 1
            if None not in poss:
                self.errors.append(f"{op} {key}: not found, but an acknowledged item exists (possible: {poss}); {err}")
            self.possible[key] = {None}
            return
        self.errors.append(f"{op} {key}: unexpected exit {rc}: {err.strip()}")

    def verify(self, items: dict) -> None:
        for key in self.keys:
            actual = items.get(("generic", key, "acct"))
            self.checks += 1
            self.unambiguous += len(self.possible[key]) == 1
            if actual not in self.possible[key]:
                self.errors.append(f"{key}: value {actual!r} is not one its history allows: {self.possible[key]!r}")
            elif actual in self.from_kills[key]:
                self.landed_after_kill += 1
            self.possible[key] = {actual}
            self.from_kills[key] = set()


def test_kill9_loop(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    workers = [Worker(i, kc, seed=1000 + i) for i in range(WORKERS)]
    rounds = checks = torn_seen = 0
    start = time.monotonic()
    while sum(w.kills for w in workers) < KILLS:
        threads = [threading.Thread(target=lambda w=w: [w.one() for _ in range(ROUND_OPS)]) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rounds += 1
        report = kc.check()
        checks += 1
        assert report.whole_or_torn, f"after round {rounds}: kc check: {report.raw}"
        torn_seen += report.torn
        items = kc.items()
        assert set(k[1] for k in items) <= {key for w in workers for key in w.keys}, f"unknown items: {items}"
        for w in workers:
            w.verify(items)
        errors = [e for w in workers for e in w.errors]
        assert not errors, f"after round {rounds}:\n" + "\n".join(errors[:20])
    # Finally: the vault is whole after the next write removed any torn tail, or after repair.
    final = kc.check()
    if final.torn:
        kc.ok(["repair", "--yes"])
        final = kc.check()
    assert final.whole, str(final.raw)
    kills = sum(w.kills for w in workers)
    acks = sum(w.acknowledged for w in workers)
    left = leftovers(kc.vault.parent)
    # Killed rewrites may leave NAME.kc-backup (the previous file, old secrets and password) and
    # NAME.kc-tmp-PID-RANDOM; the next write, under the exclusive lock, removes them.
    kc.put("final-write", "final")
    assert leftovers(kc.vault.parent) == [], f"stale files after the next write: {leftovers(kc.vault.parent)}"

    elapsed = time.monotonic() - start
    key_checks = sum(w.checks for w in workers)
    unambiguous = sum(w.unambiguous for w in workers)
    figure(f"[kill -9] kill -9: {kills} kills during add/update/delete/compact/passwd ({WORKERS} parallel writers, "
           f"{acks} acknowledged commands, {rounds} rounds of {ROUND_OPS} commands per writer): 0 lost acknowledged "
           f"changes in {key_checks} per-key checks against the model, {100 * unambiguous // max(key_checks, 1)}% of them "
           f"unambiguous (exactly one value allowed; the rest allowed the values a killed command may or may not have left) "
           f"({sum(w.landed_after_kill for w in workers)} killed changes had landed whole, the rest left no trace), vault opened and "
           f"`kc check` found contiguous authentic records {checks} times out of {checks} "
           f"({torn_seen} unacknowledged torn tails seen; a writer overtaken by a concurrent key rotation with the same "
           f"password wrote as any other; {len(left)} files left by killed rewrites at the end, removed by the next write) "
           f"in {elapsed:.0f} s")


def test_stale_temporary_files_do_not_block_rewrites(tmp_path):
    """A killed compact/passwd leaves a temporary file named after its pid; when the pid comes
    round again the next rewrite must still work. kc runs in a new pid namespace (pid 1, then
    small pids), so every pid it can get has a stale file, whatever the machine's pid_max."""
    if subprocess.run(["unshare", "--pid", "--fork", "true"], capture_output=True).returncode != 0:
        pytest.skip("cannot make a pid namespace (unshare --pid needs root)")
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "x")
    folder = kc.vault.parent
    in_namespace = ["unshare", "--pid", "--fork", "--mount-proc"]
    # A rewrite killed before its rename leaves the temporary file: learn its name for pid 1.
    killed = kc.run(["compact"], fault="rename:1:exit-before", wrapper=in_namespace)
    assert killed.returncode == SEAM_EXIT, killed
    named_by_pid = [name for name in leftovers(folder) if ".kc-tmp-1-" in name]
    assert len(named_by_pid) == 1, f"no one temporary file named after pid 1: {leftovers(folder)}"
    before, after = named_by_pid[0].split(".kc-tmp-1-")
    for pid in range(1, 1001):
        (folder / f"{before}.kc-tmp-{pid}-{after}").touch()
    for args in (["compact"], ["passwd", "--new-password-file", str(kc.password_file)],
                 ["passwd", "--rotate-key", "--new-password-file", str(kc.password_file)]):
        kc.ok(args, wrapper=in_namespace)
    assert kc.items() == {("generic", "a", "acct"): "x"}
