"""The limits of the rollback anchor file, through the binary: a file larger than kc reads (16 MiB)
is damaged and --accept-rollback replaces it; a slot of the last generation (2**64 - 1) is followed
by a new file; a salvage replaces a damaged anchor, as it says it will."""
from __future__ import annotations

import struct

from kcformat import ANCHOR_MAGIC, anchor_file, anchor_vector, crc32c, frames
from kcharness import EXIT_VERIFY_FAILED
from vaultkit import Kc


def the_anchor(kc: Kc):
    [anchor] = kc.anchor_files()
    return anchor


def add(kc: Kc, service: str, *flags, env=None):
    return kc.run([*flags, "add", "generic", "-s", service, "-a", "acct", "--password-stdin"], input="x", env=env)

def test_an_oversized_anchor_is_damaged_and_accept_rollback_replaces_it(tmp_path):
    """FORMAT.md: an anchor file larger than 16 MiB is damaged: reads go on, and writes are refused
    until --accept-rollback, which replaces it (not an error of every command)."""
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    anchor = the_anchor(kc)
    [(device, counter)] = anchor_vector(anchor.read_bytes()).items()
    body = ANCHOR_MAGIC + struct.pack("<QI", 1, 1) + bytes.fromhex(device) + struct.pack("<Q", counter)
    body += struct.pack("<I", crc32c(body))
    region = (1 << 23) + 4096
    anchor.write_bytes(body + bytes(2 * region - len(body)))
    r = kc.run(["find", "generic", "-s", "a", "-w"])
    assert r.returncode == 0 and r.stdout.strip() == "1", f"a read failed on an oversized anchor: {r}"
    r = add(kc, "b")
    assert r.returncode == EXIT_VERIFY_FAILED and "damaged" in r.stderr, r
    r = add(kc, "b", "--accept-rollback")
    assert r.returncode == 0, f"--accept-rollback did not replace the oversized anchor: {r}"
    assert anchor.stat().st_size <= 1 << 24

def test_a_slot_of_the_highest_generation_is_no_crash(tmp_path):
    """A valid file whose newest slot has generation 2**64 - 1: the next raise writes a new file
    starting again at generation 1 (generation + 1 would overflow)."""
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    anchor = the_anchor(kc)
    [(device, counter)] = anchor_vector(anchor.read_bytes()).items()
    anchor.write_bytes(anchor_file({device: counter}, generation=2**64 - 1))
    r = add(kc, "b")
    assert r.returncode == 0, r
    assert kc.ok(["find", "generic", "-s", "b", "-w"]).stdout.strip() == "x"

def test_a_salvage_replaces_a_damaged_anchor(tmp_path):
    """SECURITY.md: after a salvage 'the rollback anchor is set to the salvaged vault (the user
    accepted its losses), so writes are not refused', and kc says so before asking: a damaged
    anchor is replaced."""
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    kc.put("b", "2")
    kc.put("c", "3")
    data = bytearray(kc.vault.read_bytes())
    data[frames(bytes(data))[1].offset + 16 + 24 + 1] ^= 0x01      # one record's ciphertext damaged
    kc.vault.write_bytes(bytes(data))
    the_anchor(kc).write_bytes(b"not an anchor\n")
    r = kc.run(["repair", "--salvage", "--yes"])
    assert r.returncode == 0 and "kc: salvaged " in r.stderr, r
    assert "writes are not refused as a rollback" in r.stderr, r
    assert "could not record the salvaged vault" not in r.stderr, r
    r = add(kc, "d")
    assert r.returncode == 0, f"a write after the salvage was refused: {r}"
