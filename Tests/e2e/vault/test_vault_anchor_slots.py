"""The rollback anchor's two slots (Docs/FORMAT.md, "Anchor file"), through the binary: a raise
rewrites the slot not holding the anchor, in place; a torn slot leaves the other one, which only
lags; both torn is a damaged anchor; the first format is read and converted; concurrent raises
keep the join; a rollback is seen whichever slot holds the anchor."""
from __future__ import annotations

import os
import struct
import threading

from kcformat import anchor_file, anchor_slots, anchor_vector, merge_order, records
from kcharness import EXIT_VERIFY_FAILED
from vaultkit import Kc

ROLLED_BACK = "older than a copy this machine has seen"


def the_anchor(kc: Kc):
    [anchor] = kc.anchor_files()
    return anchor


def vault_vector(kc: Kc) -> dict[str, int]:
    """Each device's highest record counter in the vault (compaction frontiers left aside)."""
    vector: dict[str, int] = {}
    for _, plain in records(kc.vault.read_bytes(), kc.password):
        _, device, counter = merge_order(plain)
        vector[device.hex()] = max(vector.get(device.hex(), 0), counter)
    return vector


def spoil_slot(anchor, index: int) -> None:
    """Changes one byte of slot `index`'s first entry (its checksum no longer holds)."""
    data = bytearray(anchor.read_bytes())
    data[len(data) // 2 * index + 20] ^= 0xFF
    anchor.write_bytes(bytes(data))


def newest_index(anchor) -> int:
    slots = anchor_slots(anchor.read_bytes())
    return max((i for i, s in enumerate(slots) if s), key=lambda i: slots[i][0])


def test_a_write_raises_the_anchor_in_place_one_slot_after_the_other(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    anchor = the_anchor(kc)
    inode, size = anchor.stat().st_ino, anchor.stat().st_size
    assert size == 8192 and oct(anchor.stat().st_mode & 0o777) == "0o600", anchor.stat()
    seen = []
    for name in ("b", "c", "d"):
        kc.put(name, "x")
        slots = anchor_slots(anchor.read_bytes())
        assert all(slots), f"after {name}: a slot does not pass its checks: {slots}"
        seen.append(newest_index(anchor))
        assert anchor_vector(anchor.read_bytes()) == vault_vector(kc), f"after {name}: the anchor is not the vault's vector"
    assert seen in ([0, 1, 0], [1, 0, 1]), f"writes did not alternate between the slots: {seen}"
    assert (anchor.stat().st_ino, anchor.stat().st_size) == (inode, size), "a raise replaced the anchor file"
    assert os.listdir(anchor.parent) == [anchor.name], f"left in the anchors folder: {os.listdir(anchor.parent)}"
    written = anchor.stat().st_mtime_ns
    kc.ok(["find", "generic", "-s", "a", "-w"])      # a read at the anchor writes nothing
    assert anchor.stat().st_mtime_ns == written and anchor_slots(anchor.read_bytes()) == slots


def test_a_torn_newest_slot_leaves_the_older_anchor_and_no_alarm(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    kc.put("b", "2")
    anchor = the_anchor(kc)
    before = vault_vector(kc)
    spoil_slot(anchor, newest_index(anchor))          # a power loss tore the last raise
    lagging = anchor_vector(anchor.read_bytes())
    assert lagging is not None and lagging != before, "the spoiled slot was not the newest"
    r = kc.ok(["find", "generic", "-s", "a", "-w"])
    assert r.stdout.strip() == "1" and r.stderr == "", r
    kc.put("c", "3")
    assert kc.ok(["check"]).returncode == 0
    assert all(anchor_slots(anchor.read_bytes())) and anchor_vector(anchor.read_bytes()) == vault_vector(kc)


def test_both_slots_torn_is_a_damaged_anchor(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    kc.put("b", "2")
    anchor = the_anchor(kc)
    spoil_slot(anchor, 0)
    spoil_slot(anchor, 1)
    spoiled, vault = anchor.read_bytes(), kc.vault.read_bytes()
    r = kc.run(["add", "generic", "-s", "c", "-a", "acct", "--password-stdin"], input="3")
    assert r.returncode == EXIT_VERIFY_FAILED and "damaged" in r.stderr, r
    check = kc.run(["check"])        # the format review: check said "status: whole"
    assert check.returncode == EXIT_VERIFY_FAILED and "rollback anchor" in check.stderr, check
    assert "anchor: the rollback anchor" in check.stdout and "status: NOT whole\n" in check.stdout, check
    assert anchor.read_bytes() == spoiled and kc.vault.read_bytes() == vault, "a refused write changed a file"
    kc.ok(["--accept-rollback", "add", "generic", "-s", "c", "-a", "acct", "--password-stdin"], input="3")
    assert anchor_vector(anchor.read_bytes()) == vault_vector(kc)
    assert kc.ok(["-q", "add", "generic", "-s", "d", "-a", "acct", "--password-stdin"], input="4").stderr == ""   # no warning


def test_an_anchor_of_the_first_format_is_read_and_converted_by_the_next_write(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    kc.put("b", "2")
    anchor = the_anchor(kc)
    [(device, counter)] = vault_vector(kc).items()
    anchor.write_bytes(f"{device} {counter + 5}\n".encode())     # as an older kc wrote it: ahead
    r = kc.run(["add", "generic", "-s", "c", "-a", "acct", "--password-stdin"], input="3")
    assert r.returncode == EXIT_VERIFY_FAILED and ROLLED_BACK in r.stderr, r
    anchor.write_bytes(f"{device} {counter}\n".encode())
    kc.put("c", "3")
    slots = anchor_slots(anchor.read_bytes())
    assert slots is not None and any(slots), f"not converted to the slot format: {anchor.read_bytes()[:80]!r}"
    assert anchor_vector(anchor.read_bytes()) == {device: counter + 1}


def test_the_first_format_is_read_strictly(tmp_path):
    """FORMAT.md describes the first format exactly; a file breaking it is damaged (format review D2)."""
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    anchor = the_anchor(kc)
    [(device, counter)] = vault_vector(kc).items()
    other = "ff" * 16
    for spelling in (f"{other} 1\n{device} {counter}\n", f"{device.upper()} {counter}\n", f"{device} {counter}"):
        anchor.write_bytes(spelling.encode())
        assert anchor_vector(anchor.read_bytes()) is None, spelling
        r = kc.run(["add", "generic", "-s", "c", "-a", "acct", "--password-stdin"], input="3")
        assert r.returncode == EXIT_VERIFY_FAILED and "damaged" in r.stderr, (spelling, r)
    anchor.write_bytes(f"{device} {counter}\n".encode())     # exactly as an older kc wrote it
    kc.put("c", "3")


def test_a_rollback_is_seen_through_either_slot(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    older = kc.vault.read_bytes()
    kc.put("b", "2")
    kc.put("c", "3")
    anchor = the_anchor(kc)
    newer = anchor.read_bytes()
    kc.vault.write_bytes(older)
    for spoiled in (None, newest_index(anchor)):
        anchor.write_bytes(newer)
        if spoiled is not None:
            spoil_slot(anchor, spoiled)               # only the older slot is left: still ahead of the copy
        r = kc.run(["add", "generic", "-s", "d", "-a", "acct", "--password-stdin"], input="4")
        assert r.returncode == EXIT_VERIFY_FAILED and ROLLED_BACK in r.stderr, (spoiled, r)
        assert kc.vault.read_bytes() == older


def test_a_slot_written_by_another_implementation_is_read(tmp_path):
    """The Python writer (Tests/e2e/kcformat.py) and kc agree on the bytes."""
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    [(device, counter)] = vault_vector(kc).items()
    anchor = the_anchor(kc)
    anchor.write_bytes(anchor_file({device: counter, "ff" * 16: 7}, generation=40))   # another device ahead
    r = kc.run(["add", "generic", "-s", "b", "-a", "acct", "--password-stdin"], input="2")
    assert r.returncode == EXIT_VERIFY_FAILED and "device " + "ff" * 16 in r.stderr, r
    anchor.write_bytes(anchor_file({device: counter}, generation=40))
    kc.put("b", "2")
    slots = anchor_slots(anchor.read_bytes())
    assert slots[0] == (40, {device: counter}) and slots[1] == (41, {device: counter + 1}), slots
    assert struct.unpack_from("<Q", anchor.read_bytes(), 4096 + 8)[0] == 41


def test_concurrent_reads_and_writes_leave_the_anchor_at_the_vault(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("seed", "0")
    failures = []

    def worker(index: int) -> None:
        for round in range(6):
            r = kc.run(["-q", "add", "generic", "-s", f"w{index}-{round}", "-a", "acct", "--password-stdin"], input="s") \
                if index % 2 else kc.run(["find", "generic", "-s", "seed", "-w"])
            if r.returncode != 0 or r.stderr:
                failures.append(r)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]
    anchor = the_anchor(kc)
    assert all(anchor_slots(anchor.read_bytes())), anchor_slots(anchor.read_bytes())
    assert anchor_vector(anchor.read_bytes()) == vault_vector(kc)
    assert len(kc.items()) == 1 + 3 * 6
