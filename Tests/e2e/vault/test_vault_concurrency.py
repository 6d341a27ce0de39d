"""Concurrent writers and readers, and the lock timeout."""
from __future__ import annotations

import json
import re
import pytest
import subprocess
import sys
import threading
import time

from kcharness import EXIT_NOT_AVAILABLE
from vaultkit import figure, Kc, scale

WRITERS = 16
ADDS = scale(100, 200)
READERS = 3


def test_concurrent_adds_with_readers(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("seed", "seed-secret")
    writer_errors: list = []
    reader_errors: list = []
    reads = [0] * READERS
    longest = [0.0] * WRITERS
    done = threading.Event()

    def writer(w: int) -> None:
        # The lock timeout is not what this test checks (test_lock_timeout_and_release does): a
        # generous one, so only a lost or refused write fails it.
        for i in range(ADDS):
            r = kc.run(["--lock-timeout", "120", "-q", "add", "generic", "-s", f"writer-{w:02d}", "-a", f"item-{i:03d}",
                        "--password-stdin"], input=f"secret-{w}-{i}")
            longest[w] = max(longest[w], r.seconds)
            if r.returncode != 0 or r.stderr:
                writer_errors.append(str(r))

    def reader(n: int) -> None:
        last = 0
        while not done.is_set():
            if n % 2 == 0:
                r = kc.run(["--lock-timeout", "120", "list", "--json"])
                if r.returncode != 0 or r.stderr:
                    reader_errors.append(str(r))
                    continue
                count = len(json.loads(r.stdout))
                if count < last:
                    reader_errors.append(f"reader {n} saw {count} items after {last}")
                last = count
            else:
                r = kc.run(["--lock-timeout", "120", "find", "generic", "-s", "seed", "-a", "acct", "-w"])
                if r.returncode != 0 or r.stderr or r.stdout_bytes != b"seed-secret\n":
                    reader_errors.append(str(r))
            reads[n] += 1
            time.sleep(0.05)   # readers keep reading throughout without taking both cores from the writers

    start = time.monotonic()
    writers = [threading.Thread(target=writer, args=(w,)) for w in range(WRITERS)]
    readers = [threading.Thread(target=reader, args=(n,)) for n in range(READERS)]
    for t in writers + readers:
        t.start()
    for t in writers:
        t.join()
    done.set()
    for t in readers:
        t.join()
    elapsed = time.monotonic() - start
    assert not writer_errors, f"{len(writer_errors)} writer failures, e.g.:\n" + "\n".join(writer_errors[:5])
    assert not reader_errors, f"{len(reader_errors)} reader failures, e.g.:\n" + "\n".join(reader_errors[:5])
    assert min(reads) > 0, f"a reader never finished a read: {reads}"
    items = kc.items()
    expected = {("generic", f"writer-{w:02d}", f"item-{i:03d}"): f"secret-{w}-{i}" for w in range(WRITERS) for i in range(ADDS)}
    expected[("generic", "seed", "acct")] = "seed-secret"
    missing = set(expected) - set(items)
    assert not missing, f"{len(missing)} acknowledged items missing, e.g. {sorted(missing)[:5]}"
    assert items == expected
    report = kc.check()
    assert report.whole and report.records == WRITERS * ADDS + 1, str(report.raw)
    figure(f"[concurrency] concurrency: {WRITERS} processes x {ADDS} concurrent `kc add` with {READERS} readers: "
           f"exactly {WRITERS * ADDS} items (each with its secret), {sum(reads)} reads with 0 reader errors "
           f"and counts never going down, {report.records} contiguous records, in {elapsed:.0f} s; the longest "
           f"`kc add` (its lock wait included) took {max(longest):.1f} s")


HOLDER = r"""
import fcntl, os, sys, time
f = open(sys.argv[1], "rb")
fcntl.flock(f, fcntl.LOCK_EX if sys.argv[2] == "ex" else fcntl.LOCK_SH)
print("locked", flush=True)
time.sleep(float(sys.argv[3]))
"""


def hold(kc: Kc, kind: str, seconds: float = 120) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(kc.vault), kind, str(seconds)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "locked"
    return p


def test_lock_timeout_and_release(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("seed", "seed-secret")
    digest = kc.digest()
    holder = hold(kc, "ex")
    try:
        r = kc.run(["--lock-timeout", "1", "add", "generic", "-s", "x", "-a", "acct", "--password-stdin"], input="x")
        assert r.returncode == EXIT_NOT_AVAILABLE, str(r)
        assert "errSecNotAvailable" in r.stderr and "lock" in r.stderr.lower(), f"unclear message: {r.stderr}"
        assert 1.0 <= r.seconds < 5, f"--lock-timeout 1 gave up after {r.seconds:.2f} s"
        writer_message = r.stderr.strip().splitlines()[0]
        r = kc.run(["--lock-timeout", "1", "list"])
        assert r.returncode == EXIT_NOT_AVAILABLE and "errSecNotAvailable" in r.stderr, f"a reader under an exclusive lock: {r}"
        r = kc.run(["add", "generic", "-s", "y", "-a", "acct", "--password-stdin"], input="y")
        assert r.returncode == EXIT_NOT_AVAILABLE, f"default timeout: {r}"
        assert 9.5 <= r.seconds < 15, f"the default lock timeout should be 10 s, gave up after {r.seconds:.1f} s"
        default_seconds = r.seconds
        assert kc.digest() == digest
        # A writer waiting (default timeout) gets the lock as soon as the holder is killed.
        waiting = kc.popen(["add", "generic", "-s", "z", "-a", "acct", "--password-stdin"])
        waiting.stdin.write(b"z-secret")
        waiting.stdin.close()
        time.sleep(0.5)
        assert waiting.poll() is None, "the writer should still be waiting for the lock"
        killed_at = time.monotonic()
        holder.kill()
        holder.wait()
        assert waiting.wait(timeout=10) == 0, waiting.stderr.read()
        freed = time.monotonic() - killed_at
    finally:
        holder.kill()
        holder.wait()
    assert kc.items() == {("generic", "seed", "acct"): "seed-secret", ("generic", "z", "acct"): "z-secret"}
    # A shared holder (a reader) lets readers in and keeps writers out.
    reader = hold(kc, "sh")
    try:
        assert kc.run(["--lock-timeout", "1", "list"]).returncode == 0
        r = kc.run(["--lock-timeout", "1", "delete", "generic", "-s", "z", "-a", "acct"])
        assert r.returncode == EXIT_NOT_AVAILABLE, str(r)
    finally:
        reader.kill()
        reader.wait()
    kc.ok(["delete", "generic", "-s", "z", "-a", "acct"])
    figure(f"[concurrency] lock timeout: with the lock held elsewhere a writer with --lock-timeout 1 failed after ~1 s with "
           f"errSecNotAvailable (exit 53: \"{writer_message}\"), the default gave up after {default_seconds:.1f} s, "
           f"readers wait for writers and writers for readers; killing the holder let the waiting writer "
           f"finish {freed:.2f} s later")



def test_write_during_salvage_is_not_lost(tmp_path):
    """`kc repair --salvage` on a vault whose only damage is a torn tail (which writers handle):
    a write acknowledged while the salvage is under way must still be there afterwards. The
    salvage is slowed down at its first fsync (of the new file, under the vault's lock: its report
    is written to stderr before) with strace's delay injection, and a writer adds an item
    meanwhile; then it must either wait for the salvage or be kept by it."""
    import shutil
    from vaultscenarios import _torn
    if not shutil.which("strace"):
        pytest.skip("strace is not installed: cannot pause kc repair --salvage at its first fsync")
    kc = Kc(tmp_path)
    _torn(kc)
    salvage = kc.popen(["repair", "--salvage", "--yes"], stdin=subprocess.DEVNULL,
                       wrapper=["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync",
                                "-e", "inject=fsync:delay_enter=1500000:when=1"])
    assert wait_for_lock_held(kc.vault, salvage), "repair --salvage never held the vault's lock"
    r = kc.run(["--lock-timeout", "30", "add", "generic", "-s", "during", "-a", "acct", "--password-stdin"],
               input="acknowledged-during-salvage")
    out, err = salvage.communicate(timeout=30)
    assert salvage.returncode == 0, err.decode()
    assert r.returncode == 0, f"a write during salvage should wait for it and succeed: {r}"
    items = kc.items()
    assert items.get(("generic", "during", "acct")) == "acknowledged-during-salvage", \
        f"repair --salvage lost a write acknowledged while it ran: {sorted(items)}"
    assert kc.check().whole
    figure(f"[concurrency] repair --salvage vs a concurrent writer: a write started while salvage held the vault's lock "
           f"(paused at its first write) waited {r.seconds:.1f} s and was kept")


def wait_for_lock_held(vault, process, timeout: float = 30) -> bool:
    """Polls until some process holds the vault's lock (a shared flock cannot be taken) while
    `process` runs; False when it ended or the time ran out first."""
    import fcntl
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        with open(vault, "rb") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
        time.sleep(0.01)
    return False


def test_write_during_salvage_confirmation_is_not_lost(tmp_path):
    """`kc repair --salvage` inspects, asks for confirmation, then rebuilds the vault. A write
    acknowledged while it waits at the question (possible when the only damage is a torn tail)
    must still be there afterwards: the rebuild must not be made from the stale inspection."""
    import pexpect
    from vaultscenarios import _torn
    kc = Kc(tmp_path)
    _torn(kc)
    child = pexpect.spawn(kc.binary, ["repair", "--salvage"], env=kc.environment(), cwd=str(kc.home), timeout=20)
    child.expect(r"\[y/N\] ")
    r = kc.run(["add", "generic", "-s", "during", "-a", "acct", "--password-stdin"], input="acknowledged-during-salvage")
    assert r.returncode == 0, f"a write while salvage waits for confirmation: {r}"
    child.sendline("y")
    child.expect(pexpect.EOF)
    output = child.before.decode("utf-8", "replace")
    child.close()
    assert child.exitstatus == 0, f"repair --salvage after confirmation: exit {child.exitstatus}: {output}"
    assert re.search(r"kc: salvaged \d+ record", output), output
    items = kc.items()
    assert items.get(("generic", "during", "acct")) == "acknowledged-during-salvage", \
        f"an acknowledged write was lost by repair --salvage: {sorted(items)}"
    assert kc.check().whole
    figure("[concurrency] repair --salvage vs a concurrent writer: a write acknowledged while salvage waited for confirmation "
           "was kept, and the salvage then succeeded (exit 0, \"salvaged\")")
