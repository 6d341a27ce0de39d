"""KDF bounds.

A wrong password costs the full Argon2id derivation every time (no shortcut that would make
guessing cheaper); a header asking for more than opslimit 20 or 4 GiB (or less than the minimum)
is refused with errSecDecode before any derivation and before asking for a password.
"""
from __future__ import annotations

import statistics

from kcharness import EXIT_AUTH_FAILED, EXIT_DECODE
from kcformat import HEADER_LENGTH, header_kdf, patch_header, sha256
from vaultkit import figure, Kc

RUNS = 5


def median_seconds(kc: Kc, env=None, expect=0, runs=RUNS) -> float:
    times = []
    for _ in range(runs):
        r = kc.run(["list"], env=env)
        assert r.returncode == expect, str(r)
        times.append(r.seconds)
    return statistics.median(times)


def test_wrong_password_costs_the_full_derivation(tmp_path):
    slow = Kc(tmp_path / "slow")
    slow.ok(["init", "--kdf-ops", "3", "--kdf-memory", "64M"])
    slow.put("alpha", "secret-alpha")
    fast = Kc(tmp_path / "fast")
    fast.create()
    fast.put("alpha", "secret-alpha")
    wrong_slow = {"KC_MASTER_PASSWORD_FILE": str(slow.password_file_for("wrong", "wrong"))}
    wrong_fast = {"KC_MASTER_PASSWORD_FILE": str(fast.password_file_for("wrong", "wrong"))}
    # Interleaved, so that load on the machine affects both alike.
    rights, wrongs = [], []
    for _ in range(RUNS):
        rights.append(median_seconds(slow, runs=1))
        wrongs.append(median_seconds(slow, wrong_slow, EXIT_AUTH_FAILED, runs=1))
    right, wrong = statistics.median(rights), statistics.median(wrongs)
    baseline = median_seconds(fast, wrong_fast, EXIT_AUTH_FAILED)
    # The derivation dominates: a right and a wrong password cost about the same, far above a
    # vault whose KDF costs nothing.
    assert right > baseline + 0.05, f"ops 3 / 64 MiB should be measurable: right {right:.3f} s, baseline {baseline:.3f} s"
    assert wrong >= 0.6 * right, f"a wrong password was cheaper than a right one: {wrong:.3f} s vs {right:.3f} s"
    figure(f"[kdf] KDF cost: Argon2id ops 3 / 64 MiB, median of {RUNS}: right password {right * 1000:.0f} ms, wrong password "
           f"{wrong * 1000:.0f} ms (ratio {wrong / right:.2f}), against {baseline * 1000:.0f} ms for a vault with the minimum KDF")


def test_out_of_bounds_header_is_refused_before_deriving(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("alpha", "secret-alpha")
    good = kc.vault.read_bytes()
    assert header_kdf(good) == (1, 8 << 10)
    cases = {
        "opslimit 21": patch_header(good, ops=21),
        "opslimit 2^63": patch_header(good, ops=1 << 63),
        "opslimit 0": patch_header(good, ops=0),
        "memory 4 GiB + 1 KiB": patch_header(good, memory=(4 << 30) + 1024),
        "memory 2^62": patch_header(good, memory=1 << 62),
        "memory 4 KiB": patch_header(good, memory=4 << 10),
        "opslimit 20 and memory 8 GiB": patch_header(good, ops=20, memory=8 << 30),
    }
    slowest = 0.0
    for what, data in cases.items():
        kc.vault.write_bytes(data)
        digest = sha256(kc.vault)
        # With a password source: refused before deriving (fast, errSecDecode).
        r = kc.run(["list"])
        assert r.returncode == EXIT_DECODE and "errSecDecode" in r.stderr, f"{what}: {r}"
        assert r.seconds < 1.0, f"{what}: took {r.seconds:.2f} s: did it derive?"
        slowest = max(slowest, r.seconds)
        # Without any password source: still errSecDecode, so no prompt was needed to refuse it.
        r = kc.run(["list"], env={"KC_MASTER_PASSWORD_FILE": None})
        assert r.returncode == EXIT_DECODE, f"{what}: the bounds must be checked before asking for a password: {r}"
        r = kc.run(["add", "generic", "-s", "x", "-a", "acct", "--password-stdin"], input="x")
        assert r.returncode == EXIT_DECODE and sha256(kc.vault) == digest, f"{what}: {r}"
    # Within bounds but not the vault's own parameters: a full derivation of the wrong key.
    kc.vault.write_bytes(patch_header(good, ops=2))
    r = kc.run(["list"])
    assert r.returncode == EXIT_AUTH_FAILED, str(r)
    figure(f"[kdf] KDF bounds: {len(cases)} headers asking for opslimit > 20, < 1, memory > 4 GiB or < 8 KiB (checksum "
           f"recomputed) refused with errSecDecode before any prompt or derivation (slowest {slowest * 1000:.0f} ms), "
           f"file unchanged")
