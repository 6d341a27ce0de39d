"""Automatic repacking (Docs/FORMAT.md, Writing rules, "Repacking"), through the built binary: once a
write leaves enough records of a version-2 file outside pages, kc rewrites the file with every record
(same order, same payloads less the batch field) sealed into pages; below the threshold the file is
left alone; an agent-served add repacks too and the agent keeps answering; a crash anywhere in the
repack leaves the old or the new file, with the write present once it was acknowledged.

The debug build's KC_TEST_REPACK_THRESHOLD lowers the threshold (512 in kc) to THRESHOLD."""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from agentsupport import NO_SOURCE, akc, unlock  # noqa: E402,F401  (akc: fixture)
from kcformat import frames, header_version, parse_payload, records  # noqa: E402
from kcharness import KC, SEAM_EXIT  # noqa: E402
from test_agent_items import bypassing  # noqa: E402

THRESHOLD = 16
BATCH_FIELD = 17


def repacking(kc: KC) -> KC:
    kc.env["KC_TEST_REPACK_THRESHOLD"] = str(THRESHOLD)
    return kc


def payloads(kc: KC) -> list[bytes]:
    """Every record's payload, in order, less its batch field (which a rewrite drops)."""
    return [without_batch_field(p) for _, p in records(kc.vault_path.read_bytes(), kc.master_password.encode())]


def without_batch_field(payload: bytes) -> bytes:
    if BATCH_FIELD not in parse_payload(payload).fields:
        return payload
    # The batch field is the last field an append writes: tag (1), length (4), value (4).
    assert payload[-9] == BATCH_FIELD, "batch field not last"
    return payload[:-9]


def import_items(kc: KC, tmp_path: Path, count: int, prefix: str = "imp", **kwargs):
    source = tmp_path / f"{prefix}.json"
    source.write_text(json.dumps([{"class": "generic", "service": f"{prefix}{i}.example", "account": "me",
                                   "password": f"pw-{prefix}-{i}"} for i in range(count)]))
    return kc.run(["import", "json", str(source)], **kwargs)


def all_in_pages(kc: KC) -> bool:
    return all(f.is_page for f in frames(kc.vault_path.read_bytes()))


def history(kc: KC) -> str:
    return kc.ok(["history", "generic", "-s", "kept.example", "-a", "me"]).stdout


def test_import_over_the_threshold_repacks_keeping_every_record(kc_ready, tmp_path):
    kc = repacking(kc_ready)
    kc.add_generic("kept.example", "me", "first")
    kc.ok(["update", "generic", "-s", "kept.example", "-a", "me", "--password-stdin"], input="second")
    before, versions = payloads(kc), history(kc)
    assert not all_in_pages(kc)
    assert import_items(kc, tmp_path, THRESHOLD + 4).returncode == 0
    data = kc.vault_path.read_bytes()
    assert header_version(data) == 2
    assert all(f.is_page for f in frames(data)), "records left outside pages"
    after = payloads(kc)
    assert after[:len(before)] == before, "a record before the import changed"
    assert len(after) == len(before) + THRESHOLD + 4, "a record was dropped or added"
    assert history(kc) == versions
    assert kc.ok(["find", "generic", "-s", "kept.example", "-w"]).stdout == "second\n"
    for i in (0, THRESHOLD + 3):
        assert kc.ok(["find", "generic", "-s", f"imp{i}.example", "-w"]).stdout == f"pw-imp-{i}\n"
    check = kc.ok(["check"]).stdout
    assert "status: whole" in check and f"records: {len(after)}" in check, check
    # A later append stands outside pages again; a second repack waits for the threshold again.
    kc.add_generic("later.example", "me", "later")
    assert not frames(kc.vault_path.read_bytes())[-1].is_page


def test_below_the_threshold_the_file_is_not_rewritten(kc_ready, tmp_path):
    kc = repacking(kc_ready)
    inode = kc.vault_path.stat().st_ino
    assert import_items(kc, tmp_path, THRESHOLD - 4).returncode == 0
    kc.add_generic("one.example", "me", "x")
    assert kc.vault_path.stat().st_ino == inode
    assert not any(f.is_page for f in frames(kc.vault_path.read_bytes()))


def test_an_agent_served_add_repacks_and_the_agent_keeps_answering(akc, tmp_path):
    kc = repacking(akc)
    assert import_items(kc, tmp_path, THRESHOLD - 4).returncode == 0
    unlock(kc)
    inode, added = kc.vault_path.stat().st_ino, 0
    while kc.vault_path.stat().st_ino == inode:
        assert added < THRESHOLD, "the agent's adds never repacked the vault"
        r = kc.run(["add", "generic", "-s", f"agent{added}.example", "-a", "me", "--password-stdin"],
                   input=f"agent-pw-{added}", unset=NO_SOURCE)
        assert r.returncode == 0 and "warning" not in r.stderr, r
        added += 1
    assert all_in_pages(kc)
    for name, secret in ((f"agent{added - 1}.example", f"agent-pw-{added - 1}"), ("imp0.example", "pw-imp-0")):
        r = kc.run(["find", "generic", "-s", name, "-w"], unset=NO_SOURCE)
        assert r.returncode == 0 and r.stdout == secret + "\n", r
    r = kc.run(["add", "generic", "-s", "after.example", "-a", "me", "--password-stdin"], input="after", unset=NO_SOURCE)
    assert r.returncode == 0, r
    assert kc.ok(["find", "generic", "-s", "after.example", "-w"]).stdout == "after\n"   # without the agent
    assert "status: whole" in kc.ok(["check"]).stdout


def test_an_agent_follows_a_repack_by_another_process(akc, tmp_path):
    kc = repacking(akc)
    unlock(kc)
    other = bypassing(kc)
    inode = kc.vault_path.stat().st_ino
    assert import_items(other, tmp_path, THRESHOLD + 1).returncode == 0
    assert kc.vault_path.stat().st_ino != inode and all_in_pages(kc)
    r = kc.run(["find", "generic", "-s", f"imp{THRESHOLD}.example", "-w"], unset=NO_SOURCE)   # no password source: the agent
    assert r.returncode == 0 and r.stdout == f"pw-imp-{THRESHOLD}\n", r


def test_a_crash_during_the_repack_leaves_the_old_or_new_file_with_the_write(kc_ready, tmp_path):
    base = repacking(kc_ready)
    base.add_generic("kept.example", "me", "first")
    before = payloads(base)
    count = THRESHOLD + 2
    outcomes = {"old": 0, "written": 0, "repacked": 0}
    k, written_seen = 1, False
    while True:
        reached = False
        for action in ("exit-before", "exit-after"):
            home = tmp_path / f"k{k}-{action}"
            shutil.copytree(base.home, home, symlinks=True)
            kc = KC(base.binary, home)
            kc.env.update({name: value.replace(str(base.home), str(home)) for name, value in base.env.items()})
            r = import_items(kc, tmp_path, count, fault=f"any:{k}:{action}")
            if r.returncode == 0:
                continue
            assert r.returncode == SEAM_EXIT, r
            reached = True
            after = payloads(kc)
            if after == before:
                assert not written_seen, f"step {k} {action}: the import vanished after a later crash kept it"
                outcomes["old"] += 1
            else:
                assert after[:len(before)] == before and len(after) == len(before) + count, f"step {k} {action}: neither"
                written_seen = True
                outcomes["repacked" if all_in_pages(kc) else "written"] += 1
            check = kc.ok(["check"]).stdout
            assert "status: whole" in check, f"step {k} {action}: {check}"
            kc.add_generic("next.example", "me", "next")   # takes the next write
            assert kc.ok(["find", "generic", "-s", "next.example", "-w"]).stdout == "next\n"
        if not reached:
            break
        k += 1
        assert k < 200, "the import never completes"
    assert k > 1, "no crash point was reached: is the binary a build without the fault seam?"
    assert outcomes["old"] and outcomes["written"], outcomes   # crashes before the write and inside the repack


def test_a_failed_repack_is_one_warning_and_the_write_stands(kc_ready, tmp_path):
    """The rename that would put the repacked file in place fails (ENOSPC from the fault seam): the
    import is saved and acknowledged with exit 0, one warning says the repack failed and why, the file
    is the appended one (no pages), and the next write repacks."""
    base = repacking(kc_ready)
    base.add_generic("kept.example", "me", "first")
    count, k, warned = THRESHOLD + 2, 1, None
    while warned is None:
        assert k < 20, "no rename failure gave the repack warning"
        home = tmp_path / f"k{k}"
        shutil.copytree(base.home, home, symlinks=True)
        kc = KC(base.binary, home)
        kc.env.update({name: value.replace(str(base.home), str(home)) for name, value in base.env.items()})
        r = import_items(kc, tmp_path, count, fault=f"rename:{k}:ENOSPC")
        if "pages failed" in r.stderr:
            warned = (kc, r)
        k += 1
    kc, r = warned
    assert r.returncode == 0, r
    lines = [line for line in r.stderr.splitlines() if line.startswith("kc: warning:")]
    assert lines == ["kc: warning: the write is saved, but sealing the vault's records into pages failed "
                     f"(the next write tries again): cannot replace {kc.vault_path}: No space left on device"], r.stderr
    assert not any(f.is_page for f in frames(kc.vault_path.read_bytes()))
    assert "status: whole" in kc.ok(["check"]).stdout
    for i in (0, count - 1):
        assert kc.ok(["find", "generic", "-s", f"imp{i}.example", "-w"]).stdout == f"pw-imp-{i}\n"
    r = kc.run(["add", "generic", "-s", "next.example", "-a", "me", "--password-stdin"], input="next")
    assert r.returncode == 0 and "warning" not in r.stderr, r
    assert all_in_pages(kc), "the next write did not repack"
