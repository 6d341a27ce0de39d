"""Vault damage through the binary (the exhaustive in-process versions live in
Tests/KCVaultTests): truncation, single-bit flips and structural tampering of a vault of ~50
records (~8 KiB). A damaged vault gives an error (errSecDecode 93; errSecAuthFailed 51 for a
header whose checksum was recomputed), never a wrong item, and is byte-identical afterwards;
`kc repair` restores exactly the whole records before a cut.
"""
from __future__ import annotations

import random

import pytest

from kcharness import EXIT_AUTH_FAILED, EXIT_DECODE, EXIT_NOT_FOUND, EXIT_VERIFY_FAILED
from kcformat import HEADER_LENGTH, frames, patch_header, renumber, sha256
from vaultkit import figure, Kc, scale

RECORDS = 50


def build(kc: Kc, seed: int = 7) -> list[dict]:
    """~50 records: adds, updates and deletes; returns the items after each record (index = count)."""
    rng = random.Random(seed)
    kc.create()
    model: dict = {}
    states = [dict(model)]
    live: list[str] = []
    n = 0
    while n < RECORDS:
        roll = rng.random()
        if live and roll < 0.2:
            name = rng.choice(live)
            secret = f"updated-{n}-{rng.getrandbits(32):x}"
            kc.ok(["update", "generic", "-s", name, "-a", "acct", "--password-stdin"], input=secret)
            model[("generic", name, "acct")] = secret
        elif live and roll < 0.3:
            name = live.pop(rng.randrange(len(live)))
            kc.ok(["delete", "generic", "-s", name, "-a", "acct"])
            del model[("generic", name, "acct")]
        else:
            name = f"service-{n:02d}.example.com"
            secret = f"secret-{n}-{rng.getrandbits(64):x}"
            kc.ok(["add", "generic", "-s", name, "-a", "acct", "-l", f"Label {n}", "--password-stdin"], input=secret)
            model[("generic", name, "acct")] = secret
            live.append(name)
        n += 1
        states.append(dict(model))
    return states


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("reference")
    kc = Kc(root)
    states = build(kc)
    data = kc.vault.read_bytes()
    fr = frames(data)
    assert len(fr) == RECORDS and fr[-1].end == len(data)
    assert kc.items() == states[-1]
    return kc, data, fr, states


def place(kc: Kc, data: bytes) -> str:
    """Puts `data` at the vault path (0600) with no rollback anchor; returns its hash."""
    kc.clear_anchors()
    kc.vault.write_bytes(data)
    kc.vault.chmod(0o600)
    return sha256(kc.vault)


def read_and_write_fail(kc: Kc, data: bytes, allowed: set[int], what: str) -> set[int]:
    """A read, a write and a check of the damaged `data` all fail with a code in `allowed`,
    print no item, and leave the file byte-identical; returns the exit codes seen."""
    digest = place(kc, data)
    seen = set()
    for args, stdin in ((("find", "--all", "--json", "-w"), None),
                        (("add", "generic", "-s", "new.example.com", "-a", "acct", "--password-stdin"), "new-secret"),
                        (("check",), None)):
        r = kc.run(args, input=stdin)
        assert r.returncode in allowed, f"{what}: kc {args[0]} exit {r.returncode}, expected one of {allowed}: {r}"
        seen.add(r.returncode)
        if args[0] != "check":
            assert r.stdout_bytes == b"", f"{what}: kc {args[0]} printed something: {r}"
        assert "secret-" not in r.stderr and "updated-" not in r.stderr, f"{what}: a secret on stderr: {r}"
        assert sha256(kc.vault) == digest, f"{what}: kc {args[0]} changed the damaged file"
    folder = kc.folder()
    assert folder == ["login.kc"], f"{what}: files left beside the vault: {folder}"
    return seen


# --- 3. truncation -------------------------------------------------------------------------------

def test_truncation_sample(tmp_path, reference):
    _, data, fr, states = reference
    kc = Kc(tmp_path)
    kc.create()
    rng = random.Random(3)
    boundaries = [HEADER_LENGTH] + [f.end for f in fr]
    # Every boundary, and near each boundary two (stress: all) of: one byte short, one past, inside
    # the frame, the frame complete but no body; then random cuts (stress: 2,000).
    lengths = {0, 1, 7, 8, 11, 12, 28, 88, 135, 136, 139}
    for b in boundaries:
        near = [b - 1, b + 1, b + 8, b + 15, b + 16, b + 17]
        lengths |= {b, *(near if scale(0, 1) else rng.sample(near, 2))}
    lengths |= {rng.randrange(HEADER_LENGTH, len(data)) for _ in range(scale(20, 2000))}
    if scale(0, 1):
        lengths |= set(range(0, HEADER_LENGTH + 1))
    lengths = sorted(l for l in lengths if 0 <= l < len(data))
    header_errors = torn = clean = repaired = 0
    for length in lengths:
        cut = data[:length]
        digest = place(kc, cut)
        whole = sum(1 for b in boundaries[1:] if b <= length)
        r, items = kc.try_items()
        assert sha256(kc.vault) == digest, f"cut at {length}: reading changed the file"
        if length < HEADER_LENGTH:
            assert r.returncode == EXIT_DECODE and "errSecDecode" in r.stderr, f"header cut at {length}: {r}"
            assert r.stdout_bytes == b""
            r = kc.run(["repair", "--yes"])
            assert r.returncode == EXIT_DECODE, f"repair of a header cut at {length}: {r}"
            assert sha256(kc.vault) == digest, f"repair changed a file cut in its header at {length}"
            header_errors += 1
            continue
        assert items == states[whole], f"cut at {length}: expected the {whole} whole records' items, got {r}"
        at_boundary = length in boundaries
        if at_boundary:
            assert "incomplete" not in r.stderr, f"cut at boundary {length}: {r}"
            clean += 1
        else:
            assert "incomplete record" in r.stderr, f"cut at {length}: no torn-tail warning: {r}"
            torn += 1
        r = kc.run(["repair", "--yes"])
        assert r.returncode == 0, f"repair after a cut at {length}: {r}"
        expected_end = max(b for b in boundaries if b <= length)
        assert kc.vault.read_bytes() == data[:expected_end], \
            f"repair after a cut at {length} did not leave exactly the {whole} whole records"
        report = kc.check()
        assert report.whole and report.records == whole, f"after repair of a cut at {length}: {report.raw}"
        assert kc.folder() == ["login.kc"], kc.folder()
        repaired += not at_boundary
    figure(f"[truncation] truncation through the binary: {len(lengths)} cut lengths of a {len(data)}-byte, {RECORDS}-record vault: "
           f"{header_errors} header cuts -> errSecDecode, {clean} cuts at record boundaries and {torn} mid-record cuts "
           f"-> exactly the items of the whole records before the cut; file byte-identical after reading; "
           f"`kc repair` restored the exact prefix of whole records {repaired}/{torn} times")


def test_cut_at_a_boundary_or_older_copy_is_a_rollback(tmp_path, reference):
    """A cut exactly at a record boundary (or an older copy) looks valid from the file alone; the
    anchor kept outside the vault catches it: read with a warning, writes refused (32)."""
    _, data, fr, states = reference
    kc = Kc(tmp_path)
    kc.create()
    place(kc, data)
    assert kc.items() == states[-1]                          # the anchor now knows all 50 records
    cases = {"cut at the last boundary": data[:fr[-2].end], "an older copy (20 records)": data[:fr[19].end]}
    for what, older in cases.items():
        kc.vault.write_bytes(older)
        digest = sha256(kc.vault)
        r = kc.run(["list"])
        assert r.returncode == 0 and "older than a copy this machine has seen" in r.stderr, f"{what}: {r}"
        r = kc.run(["add", "generic", "-s", "x", "-a", "acct", "--password-stdin"], input="x")
        assert r.returncode == EXIT_VERIFY_FAILED and "errSecVerifyFailed" in r.stderr, f"{what}: write not refused: {r}"
        assert "--accept-rollback" in r.stderr
        r = kc.run(["check"])
        assert r.returncode == EXIT_VERIFY_FAILED and "rollback" in r.stdout, f"{what}: {r}"
        for args in (("compact",), ("passwd", "--new-password-file", str(kc.password_file))):
            r = kc.run(args)
            assert r.returncode == EXIT_VERIFY_FAILED, f"{what}: kc {args[0]} not refused: {r}"
        assert sha256(kc.vault) == digest, f"{what}: the refused writes changed the file"
    r = kc.run(["--accept-rollback", "add", "generic", "-s", "x", "-a", "acct", "--password-stdin"], input="x")
    assert r.returncode == 0, f"--accept-rollback: {r}"
    assert kc.run(["list"]).stderr == "", "after accepting the rollback the anchor should follow the vault"
    figure("[truncation] rollback: a cut exactly at a record boundary and an older copy of the vault were both detected "
           "through the anchor (warning on read; add, compact, passwd refused with errSecVerifyFailed, file unchanged); "
           "--accept-rollback writes")


# --- 4. bit flips --------------------------------------------------------------------------------

def test_bit_flip_sample(tmp_path, reference):
    _, data, fr, _ = reference
    kc = Kc(tmp_path)
    kc.create()
    rng = random.Random(4)
    count = scale(200, 3000)
    positions = [(rng.randrange(HEADER_LENGTH), rng.randrange(8)) for _ in range(count // 5)]
    for f in fr:   # every record gets flips in its frame and in its body
        positions.append((rng.randrange(f.offset, f.offset + 16), rng.randrange(8)))
        positions.append((rng.randrange(f.offset + 16, f.end), rng.randrange(8)))
    while len(positions) < count:
        positions.append((rng.randrange(len(data)), rng.randrange(8)))
    header = as_wrong_password = 0
    for byte, bit in positions:
        flipped = bytearray(data)
        flipped[byte] ^= 1 << bit
        in_header = byte < HEADER_LENGTH
        header += in_header
        seen = read_and_write_fail(kc, bytes(flipped), {EXIT_DECODE, EXIT_AUTH_FAILED} if in_header else {EXIT_DECODE},
                                   f"bit {bit} of byte {byte}")
        as_wrong_password += EXIT_AUTH_FAILED in seen
    figure(f"[bit flips] bit flips through the binary: {len(positions)} single-bit flips of a {len(data)}-byte vault "
           f"({header} in the header, every record's frame and body hit): 100% detected by read, write and check "
           f"({len(positions) - as_wrong_password} as errSecDecode, {as_wrong_password} header flips as errSecAuthFailed), "
           f"no item printed, file byte-identical, nothing left beside it")


# --- 5. structural tampering ---------------------------------------------------------------------

def test_structural_tampering(tmp_path, reference):
    ref_kc, data, fr, _ = reference
    # Another vault with the same master password, for splicing.
    other = Kc(tmp_path / "other", password=ref_kc.master_password)
    build(other, seed=8)
    odata = other.vault.read_bytes()
    ofr = frames(odata)
    kc = Kc(tmp_path / "victim", password=ref_kc.master_password)
    kc.create()

    head = data[:HEADER_LENGTH]
    rec = [data[f.offset:f.end] for f in fr]
    orec = [odata[f.offset:f.end] for f in ofr]

    def join(records, header=head, renumbered=False):
        if renumbered:
            records = [renumber(r, i + 1) for i, r in enumerate(records)]
        return header + b"".join(records)

    cases = {}
    for i in (0, 10, 25, 48):
        swapped = rec[:i] + [rec[i + 1], rec[i]] + rec[i + 2:]
        cases[f"records {i + 1} and {i + 2} swapped"] = join(swapped)
        cases[f"records {i + 1} and {i + 2} swapped, frames renumbered"] = join(swapped, renumbered=True)
    for i in (0, 17, 49):
        duplicated = rec[:i + 1] + [rec[i]] + rec[i + 1:]
        cases[f"record {i + 1} duplicated"] = join(duplicated)
        cases[f"record {i + 1} duplicated, frames renumbered"] = join(duplicated, renumbered=True)
    for i in (0, 1, 30):
        removed = rec[:i] + rec[i + 1:]
        cases[f"record {i + 1} removed"] = join(removed)
        cases[f"record {i + 1} removed, frames renumbered"] = join(removed, renumbered=True)
    cases["records 5 and 40 exchanged, renumbered"] = join(rec[:4] + [rec[39]] + rec[5:39] + [rec[4]] + rec[40:], renumbered=True)
    cases["first and last exchanged, renumbered"] = join([rec[-1]] + rec[1:-1] + [rec[0]], renumbered=True)
    for i in (0, 12, 49):
        cases[f"record {i + 1} replaced by the other vault's record {i + 1}"] = join(rec[:i] + [orec[i]] + rec[i + 1:], renumbered=True)
    cases["the other vault's next record appended"] = join(rec + [orec[RECORDS - 1]], renumbered=True)
    cases["the other vault's record inserted in the middle"] = join(rec[:20] + [orec[20]] + rec[20:], renumbered=True)
    cases["the other vault's header on these records"] = join(rec, header=odata[:HEADER_LENGTH])
    cases["these records after the other vault's records"] = join(orec + rec, header=odata[:HEADER_LENGTH], renumbered=True)
    cases["records in reverse order, renumbered"] = join(list(reversed(rec)), renumbered=True)
    cases["a record's body moved under another frame"] = join(rec[:3] + [rec[3][:16] + rec[4][16:]] + rec[5:])
    for case, tampered in cases.items():
        read_and_write_fail(kc, tampered, {EXIT_DECODE}, case)

    # The header, changed on purpose with its checksum recomputed: the key no longer unwraps
    # (errSecAuthFailed) or the header is refused outright (errSecDecode).
    header_cases = {}
    for name, (start, end) in {"vault id": (12, 28), "salt": (48, 64), "key nonce": (64, 88),
                               "wrapped key": (88, 136)}.items():
        b = bytearray(data)
        b[start + 3] ^= 0x01
        header_cases[f"{name} changed, checksum recomputed"] = patch_header(bytes(b))
    header_cases["KDF passes 1 -> 2, checksum recomputed"] = patch_header(data, ops=2)
    header_cases["KDF memory 8 KiB -> 16 KiB, checksum recomputed"] = patch_header(data, memory=16 << 10)
    assert data[8] == 2, "kc writes format version 2"
    b = bytearray(data); b[8] = 1
    header_cases["format version 2 -> 1 (authenticated), checksum recomputed"] = patch_header(bytes(b))
    b = bytearray(data); b[8] = 3
    header_cases["format version 3, checksum recomputed"] = patch_header(bytes(b))
    b = bytearray(data); b[28] = 9
    header_cases["unknown KDF, checksum recomputed"] = patch_header(bytes(b))
    b = bytearray(data); b[29] = 1
    header_cases["reserved byte set, checksum recomputed"] = patch_header(bytes(b))
    auth = 0
    for case, tampered in header_cases.items():
        read_and_write_fail(kc, tampered, {EXIT_DECODE, EXIT_AUTH_FAILED}, case)
        r = kc.run(["list"])
        auth += r.returncode == EXIT_AUTH_FAILED
    figure(f"[tampering] structural tampering through the binary: {len(cases)} record cases (swapped, duplicated, removed, "
           f"reordered, spliced from another vault with the same password; raw and with frames renumbered) and "
           f"{len(header_cases)} header edits with the checksum recomputed: 100% detected "
           f"({auth} as a wrong password, the rest errSecDecode), file byte-identical; removing the last record "
           f"is the rollback case above")


def test_header_transplant_after_passwd(tmp_path):
    """What `passwd` does and does not protect (documented in SECURITY.md): without --rotate-key
    the vault key stays, so an old header (with the old password) still unlocks the records of
    the new file; after --rotate-key it does not."""
    kc = Kc(tmp_path)
    kc.create()
    kc.put("alpha", "secret-alpha")
    old_header = kc.vault.read_bytes()[:HEADER_LENGTH]
    old_password = kc.master_password
    new_file = kc.password_file_for("second password: quartz lantern", "second")
    kc.ok(["passwd", "--new-password-file", new_file])
    kc.set_password("second password: quartz lantern")
    kc.put("bravo", "secret-bravo")
    transplanted = old_header + kc.vault.read_bytes()[HEADER_LENGTH:]
    world = Kc(tmp_path / "attacker", password=old_password)
    world.create()
    place(world, transplanted)
    r, items = world.try_items()
    assert items == {("generic", "alpha", "acct"): "secret-alpha", ("generic", "bravo", "acct"): "secret-bravo"}, \
        f"expected the old header and old password to open the re-wrapped file's records: {r}"
    third = kc.password_file_for("third password: velvet oyster", "third")
    kc.ok(["passwd", "--rotate-key", "--new-password-file", third])
    kc.set_password("third password: velvet oyster")
    transplanted = old_header + kc.vault.read_bytes()[HEADER_LENGTH:]
    place(world, transplanted)
    r, items = world.try_items()
    assert items is None and r.returncode == EXIT_DECODE, f"after --rotate-key the old key must not open the records: {r}"
    figure("[tampering] passwd vs passwd --rotate-key: after passwd an old header with the old password still opens the new "
           "file's records (same vault key); after passwd --rotate-key it fails (errSecDecode)")
