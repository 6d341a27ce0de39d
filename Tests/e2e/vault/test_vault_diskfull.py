"""Disk full and I/O errors.

A real full disk (a small tmpfs holding the vault and the state folder), and the fault seam
failing each write and fsync of every mutating command with ENOSPC or EIO. Every failure must
give a clear error and a non-zero exit, never a success message after a failed write or fsync of
the vault, and leave the vault unchanged (or with a torn tail that reading handles).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from kcharness import SEAM_EXIT
from kcformat import sha256
from vaultkit import figure, Kc, leftovers, scale
from vaultscenarios import SCENARIOS, Lab

SUCCESS = re.compile(r"kc: (created|updated|deleted|compacted|changed the master password|removed|salvaged)")


@pytest.fixture
def small_tmpfs(tmp_path):
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (mount exit {r.returncode}: {r.stderr.strip()}); "
                    f"the disk-full half of these tests did not run (the fault-seam half still does)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(path) -> int:
    """Fills the file system holding `path` completely; returns the bytes written."""
    written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 512, 1):
            while True:
                try:
                    written += os.write(fd, b"\0" * size)
                except OSError:
                    break
    finally:
        os.close(fd)
    return written


def test_disk_full_on_a_small_tmpfs(tmp_path, small_tmpfs):
    kc = Kc(tmp_path)
    kc.env["XDG_DATA_HOME"] = str(small_tmpfs / "data")
    kc.env["XDG_STATE_HOME"] = str(small_tmpfs / "state")
    kc.data, kc.state = small_tmpfs / "data", small_tmpfs / "state"
    kc.vault = kc.data / "kc" / "login.kc"
    kc.create()
    acknowledged = {}
    for i in range(5):
        kc.put(f"before-{i}", f"secret-before-{i}")
        acknowledged[("generic", f"before-{i}", "acct")] = f"secret-before-{i}"
    filler = small_tmpfs / "filler"
    fill(filler)
    successes = failures = unchanged = torn = 0
    messages = set()
    for i in range(40):
        digest = kc.digest()
        secret = f"secret-{i}-" + "x" * 300
        r = kc.run(["add", "generic", "-s", f"full-{i}", "-a", "acct", "--password-stdin"], input=secret)
        if r.returncode == 0:
            successes += 1
            acknowledged[("generic", f"full-{i}", "acct")] = secret
            continue
        failures += 1
        assert "kc: error:" in r.stderr and not SUCCESS.search(r.stderr), f"unclear failure: {r}"
        assert "No space left" in r.stderr or "ENOSPC" in r.stderr, f"the error does not say the disk is full: {r}"
        messages.add(re.sub(r"/\S+/", ".../", error_line(r)))
        if sha256(kc.vault) == digest:
            unchanged += 1
        else:   # only bytes never acknowledged: a torn tail that the next write or repair removes
            report = kc.check()
            assert report.torn and not report.damaged, f"a failed add changed the vault: {report.raw}"
            torn += 1
        assert kc.items() == acknowledged
        if failures >= 5:
            break
    assert failures > 0, "the disk never filled up: the test proves nothing"
    for args in (("compact",), ("passwd", "--new-password-file", str(kc.password_file)),
                 ("passwd", "--rotate-key", "--new-password-file", str(kc.password_file))):
        digest = kc.digest()
        r = kc.run(args)
        assert r.returncode != 0 and "kc: error:" in r.stderr and not SUCCESS.search(r.stderr), f"kc {args[0]} on a full disk: {r}"
        messages.add(re.sub(r"/\S+/", ".../", error_line(r)))
        assert kc.digest() == digest, f"kc {args[0]} on a full disk changed the vault"
        assert leftovers(kc.vault.parent) == [], f"kc {args[0]} left {leftovers(kc.vault.parent)}"
        assert kc.items() == acknowledged
    filler.unlink()
    kc.put("after", "secret-after")
    acknowledged[("generic", "after", "acct")] = "secret-after"
    kc.ok(["compact"])
    assert kc.check().whole
    assert kc.items() == acknowledged
    figure(f"[disk full] disk full (64 KiB tmpfs holding the vault and state): {successes} adds still fitted, {failures} adds and "
           f"compact/passwd/passwd --rotate-key failed with a clear error (e.g. \"{sorted(messages)[0]}\"), "
           f"no success message; the failed adds left the vault byte-identical {unchanged} times and with only an "
           f"unacknowledged torn tail {torn} times (items unchanged), compact and passwd left it byte-identical and "
           f"nothing beside it; after freeing space every acknowledged item was there")


def seam_labels(lab: Lab) -> dict:
    """For each I/O step kind, the file each successive step touches (via strace)."""
    lab.reset()
    trace = lab.kc.root / "strace.txt"
    # The seam counts a positioned write (pwrite: the rollback anchor's slot) as a write.
    lab.kc.run(lab.scenario.command(lab.kc), input=lab.scenario.input,
               wrapper=["strace", "-f", "-y", "-qq", "-o", trace, "-e", "trace=write,pwrite64,fsync,ftruncate,rename"])
    labels = {"write": [], "fsync": []}
    for line in trace.read_text().splitlines():
        m = re.match(r"\d+\s+(write|pwrite64|fsync)\((\d+)<([^>]*)>", line)
        if m:
            labels["fsync" if m.group(1) == "fsync" else "write"].append(m.group(3))
    lab.reset()
    return labels


def is_vault_target(lab: Lab, target: str) -> bool:
    vault = str(lab.kc.vault)
    return target == vault or target.startswith(vault + ".") or target == str(lab.kc.vault.parent)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_injected_enospc_and_eio(tmp_path, scenario):
    if not shutil.which("strace"):
        pytest.skip("strace is not installed: cannot tell which file each injected step touches")
    lab = Lab(tmp_path, scenario)
    labels = seam_labels(lab)
    counts = {"failed cleanly": 0, "succeeded (step outside the vault)": 0}
    problems = []
    for step in ("write", "fsync"):
        k = 1
        while True:
            lab.reset()
            probe = lab.run(fault=f"{step}:{k}:exit-before")
            assert probe.returncode in (0, SEAM_EXIT), f"{step} {k}: the probe neither finished nor stopped at the seam: {probe}"
            if probe.returncode == 0:
                break
            assert k <= len(labels[step]), f"the seam counts more {step}s than strace saw: {labels}"
            target = labels[step][k - 1]
            vault_step = is_vault_target(lab, target)
            for error in ("ENOSPC", "EIO"):
                lab.reset()
                r = lab.run(fault=f"{step}:{k}:{error}")
                state = lab.observe()
                label = lab.classify(state)
                where = f"{error} on {step} {k} ({target})"
                if r.returncode != 0:
                    counts["failed cleanly"] += 1
                    if "kc: error:" not in r.stderr:
                        problems.append(f"{where}: exit {r.returncode} without an error line: {r}")
                    if SUCCESS.search(r.stderr) or (r.stdout_bytes and scenario.name.startswith("repair")):
                        problems.append(f"{where}: a success message after the failure: {r}")
                    if label == "new" and scenario.name == "repair" and state.items == lab.old.items:
                        # repair's truncation of an unacknowledged torn tail happened before its
                        # fsync failed: the same items, only bytes never acknowledged are gone.
                        counts["repair: tail already cut when its fsync failed"] = counts.get("repair: tail already cut when its fsync failed", 0) + 1
                    elif label != "old" and not (state.torn and state.items == lab.old.items):
                        problems.append(f"{where}: failed (exit {r.returncode}) but the vault is {label}: {state}; {r.stderr.strip()}")
                else:
                    counts["succeeded (step outside the vault)"] += 1
                    if vault_step:
                        problems.append(f"{where}: a failed {step} of the vault reported success: {r}")
                    if label != "new":
                        problems.append(f"{where}: success but the vault is {label}: {state}")
            k += 1
        assert k - 1 == len(labels[step]), f"the seam counted {k - 1} {step}s, strace saw {len(labels[step])}: {labels}"
    assert sum(counts.values()) > 0, "no step was reached: a build without the fault seam?"
    assert not problems, f"{scenario.name}:\n" + "\n".join(problems)
    cut = counts.get("repair: tail already cut when its fsync failed", 0)
    figure(f"[disk full] injected I/O errors: {scenario.name}: ENOSPC and EIO on each of its writes and fsyncs: "
           f"{counts['failed cleanly']} failed with an error and the vault unchanged"
           f"{f' (in {cut} of them only the unacknowledged torn tail was already cut)' if cut else ''}, "
           f"{counts['succeeded (step outside the vault)']} succeeded because the failed step was outside the vault "
           f"(rollback anchor, output)")


def error_line(r) -> str:
    """The `kc: error:` line (a warning, such as an anchor that could not be stored, may come first)."""
    return next(line for line in r.stderr.splitlines() if line.startswith("kc: error:"))
