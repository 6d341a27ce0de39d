"""`kc repair --salvage` on a tampered or damaged vault, through the binary: it never brings back
an older secret or a deleted item silently. Authentic records are kept only in increasing sequence
order (copies and replays are left out), records it cannot read are reported as lost with the items
they may have changed, each by name, before the user confirms; afterwards writes work.
"""
from __future__ import annotations

import pexpect

from kcharness import EXIT_DECODE, EXIT_VERIFY_FAILED
from kcformat import FRAME_LENGTH, frames
from vaultkit import Kc, figure, leftovers

X = ("generic", "x.com", "acct")
DEL = ("generic", "del.com", "acct")


def flip_ciphertext(data: bytes, frame) -> bytes:
    """One byte of the record's ciphertext changed (not its frame, nonce or tag)."""
    b = bytearray(data)
    b[frame.offset + FRAME_LENGTH + 24 + 1] ^= 0x01
    return bytes(b)


def salvage(kc: Kc):
    r = kc.run(["repair", "--salvage", "--yes"])
    assert r.returncode == 0, str(r)
    assert "kc: salvaged " in r.stderr, str(r)
    return r


def test_replayed_records_are_left_out(tmp_path):
    """Copies of two adjacent records appended to the file (the second one authenticates, since it
    follows the first one's copy): salvage keeps x's current secret and says what it left out."""
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a.com", "A-secret")
    kc.put("x.com", "OLD-secret")
    kc.put("b.com", "B-secret")
    kc.ok(["update", "generic", "-s", "x.com", "-a", "acct", "--password-stdin"], input="NEW-secret")
    kc.put("c.com", "C-secret")
    before = kc.items()
    data = kc.vault.read_bytes()
    fr = frames(data)
    assert len(fr) == 5
    kc.vault.write_bytes(data + data[fr[0].offset:fr[0].end] + data[fr[1].offset:fr[1].end])
    r = kc.run(["find", "generic", "-s", "x.com", "-w"])
    assert r.returncode == EXIT_DECODE, f"the spliced vault must not read: {r}"

    r = salvage(kc)
    assert kc.items() == before, f"salvage changed the items (x.com must stay NEW-secret): {kc.items()}\n{r}"
    assert f"left out: record 2 at offset {fr[-1].end + (fr[0].end - fr[0].offset)}, an older version of " \
           f"generic item service=x.com account=acct" in r.stderr, r.stderr
    assert "may go back" not in r.stderr and "reappearing" not in r.stderr and "lost:" not in r.stderr, r.stderr
    assert "salvaged 5 record(s)" in r.stderr, r.stderr
    assert kc.check().whole
    kc.put("after.com", "after-secret")
    assert [n for n in leftovers(kc.vault.parent) if ".corrupt-" not in n] == []
    figure("[salvage] salvage of a vault with two records replayed at its end: the replayed older version of "
           "x.com was left out (and named), x.com kept its current secret, a write afterwards worked")


def _lost_update_and_tombstone(kc: Kc) -> bytes:
    """x.com OLD, del.com, x.com updated to NEW, del.com deleted, c.com; then one ciphertext byte of
    the update and one of the tombstone flipped. Returns the damaged bytes (also put in place)."""
    kc.create()
    kc.put("x.com", "OLD-secret")
    kc.put("del.com", "DEL-secret")
    kc.ok(["update", "generic", "-s", "x.com", "-a", "acct", "--password-stdin"], input="NEW-secret")
    kc.ok(["delete", "generic", "-s", "del.com", "-a", "acct"])
    kc.put("c.com", "C-secret")
    data = kc.vault.read_bytes()
    fr = frames(data)
    assert len(fr) == 5
    data = flip_ciphertext(flip_ciphertext(data, fr[2]), fr[3])
    kc.vault.write_bytes(data)
    return data


def test_lost_update_and_tombstone_are_named_before_confirmation(tmp_path):
    """A lost update and a lost tombstone: before asking, salvage names x.com (may go back to an
    older version) and del.com (may reappear), not c.com (written after the loss), and the device
    counters that are missing; answering no changes nothing."""
    kc = Kc(tmp_path)
    data = _lost_update_and_tombstone(kc)
    child = kc.spawn(["repair", "--salvage"])
    child.expect(r"\[y/N\] ")
    shown = child.before
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus != 0, shown
    assert kc.vault.read_bytes() == data, "answering no changed the vault"
    assert "lost: records 3-4 cannot be read (by their size: new items or versions or deletions)" in shown, shown
    for item in ("x.com", "del.com"):
        assert (f"may go back to an older version or be a deleted item reappearing: generic item service={item} "
                f"account=acct (a lost record was written after its current version)") in shown, shown
    assert "c.com" not in shown, f"c.com was written after the loss: {shown}"
    assert "counters 3-4 missing" in shown, shown

    r = salvage(kc)
    items = kc.items()
    assert items[("generic", "c.com", "acct")] == "C-secret"
    assert set(items) == {X, DEL, ("generic", "c.com", "acct")}, items
    figure("[salvage] salvage of a vault whose update and tombstone records were damaged: before confirming it "
           "named x.com (may go back), del.com (may reappear) and the missing device counters 3-4, "
           "not c.com; answering no left the file byte-identical")


def test_lost_update_is_reported_with_yes(tmp_path):
    """With --yes the same item-by-item report is printed (for logs), then the salvage is made."""
    kc = Kc(tmp_path)
    _lost_update_and_tombstone(kc)
    r = salvage(kc)
    for item in ("x.com", "del.com"):
        assert f"may go back to an older version or be a deleted item reappearing: generic item service={item} " in r.stderr, r.stderr


def test_writes_work_after_salvage(tmp_path):
    """The last record damaged: the salvaged vault has fewer records from this device than its
    rollback anchor saw. The salvage names the lost counter, then sets the anchor to the salvaged
    vault (the user confirmed the loss): a later write is not refused as a rollback, and a second
    salvage finds nothing to do."""
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a.com", "A-secret")
    kc.put("b.com", "B-secret")
    kc.ok(["update", "generic", "-s", "b.com", "-a", "acct", "--password-stdin"], input="B2-secret")
    data = kc.vault.read_bytes()
    fr = frames(data)
    kc.vault.write_bytes(flip_ciphertext(data, fr[-1]))
    report = salvage(kc)
    r = kc.run(["add", "generic", "-s", "after.com", "-a", "acct", "--password-stdin"], input="after-secret")
    assert r.returncode == 0, f"a write after a confirmed salvage was refused: {r}"
    assert "lost: record 3 cannot be read (by their size: new items or versions)" in report.stderr, report.stderr
    assert "may go back to an older version: generic item service=b.com account=acct" in report.stderr, report.stderr
    assert "counter 3 missing" in report.stderr, report.stderr
    assert kc.items() == {("generic", "a.com", "acct"): "A-secret", ("generic", "b.com", "acct"): "B-secret",
                          ("generic", "after.com", "acct"): "after-secret"}
    report = kc.check()
    assert report.whole and not report.rollback, str(report.raw)
    r = kc.run(["repair", "--salvage", "--yes"])
    assert r.returncode == 0 and "nothing to salvage" in r.stderr, str(r)
    figure("[salvage] after a confirmed salvage that lost the last record (counter 3 of this device, which the rollback "
           "anchor had seen), the next write succeeded and kc check called the vault whole, with no rollback")


def _zero_filled_final_record(kc: Kc) -> tuple[int, bytes, dict]:
    """Two items, then a 5.5 KiB one whose record's bytes from the first page boundary inside it
    (a multiple of 4096) to the end of the file are zeroed, as a power loss can leave a file that
    grew. Returns the offset of that record, the damaged bytes, and the rollback anchor files as
    they were before that add (as they would be had the add never returned)."""
    kc.create()
    kc.put("a.com", "A-secret")
    kc.put("b.com", "B-secret")
    anchors = {p: p.read_bytes() for p in kc.anchor_files()}
    kc.put("large.com", "L" * 5500)
    data = kc.vault.read_bytes()
    last = frames(data)[-1]
    page = (last.offset + FRAME_LENGTH) // 4096 * 4096 + 4096
    assert last.offset + FRAME_LENGTH < page < last.end - 16, (last, page)
    data = data[:page] + bytes(last.end - page)
    kc.vault.write_bytes(data)
    return last.offset, data, anchors


def test_zero_filled_final_record_is_a_torn_tail(tmp_path):
    """A final record whose last page is zero is a torn tail: reads warn and show the items before
    it, `kc check` reports it as a torn tail, plain `kc repair` removes it, and writes continue."""
    kc = Kc(tmp_path)
    offset, data, anchors = _zero_filled_final_record(kc)
    for path, content in anchors.items():
        path.write_bytes(content)
    r = kc.run(["find", "--all", "--json", "-w"])
    assert r.returncode == 0, f"a zero-filled final record must read as a torn tail: {r}"
    assert "incomplete record" in r.stderr and f"at offset {offset}" in r.stderr, r.stderr
    assert kc.items() == {("generic", "a.com", "acct"): "A-secret", ("generic", "b.com", "acct"): "B-secret"}
    report = kc.check()
    assert report.torn and not report.damaged, str(report.raw)
    r = kc.run(["repair", "--yes"])
    assert r.returncode == 0 and f"removed {len(data) - offset} bytes of torn tail" in r.stderr, str(r)
    assert len(kc.vault.read_bytes()) == offset
    kc.put("after.com", "after-secret")
    assert kc.check().whole
    figure(f"[torn tail] a final record of {len(data) - offset} bytes with its last page zero-filled read as a torn tail "
           f"(items before it shown, kc check: torn tail), and plain kc repair removed it")


def test_zero_filled_acknowledged_record_shows_as_rollback(tmp_path):
    """The same damage to a record whose write was acknowledged (the rollback anchor holds its
    counter): removing the torn tail leaves a vault the anchor calls rolled back, so the loss is
    reported and writes are refused until --accept-rollback."""
    kc = Kc(tmp_path)
    _zero_filled_final_record(kc)
    assert kc.run(["repair", "--yes"]).returncode == 0
    r = kc.run(["add", "generic", "-s", "after.com", "-a", "acct", "--password-stdin"], input="after-secret")
    assert r.returncode == EXIT_VERIFY_FAILED and "older than a copy this machine has seen" in r.stderr, str(r)
