"""Zero fill in an interrupted import (one append of several records), through the binary, in
the two shapes Docs/FORMAT.md ("Zero-filled tail") decides apart:

- a lost sector in one of the import's records, and the records after it lost too: a torn tail
  from the import's first record, so the vault shows the state before the import and plain
  `kc repair` removes it;
- a lost sector in the import's first record, the records after it written: damage on purpose
  (the file cannot show that those records belong to the same append), which plain `kc repair`
  refuses and `kc repair --salvage` recovers, naming the lost record and the items it keeps.
"""
from __future__ import annotations

from kcharness import EXIT_DECODE
from kcformat import frames
from vaultkit import Kc, figure

SECTOR = 512
MACHINES = ("one", "two", "three")


def _interrupted_import(kc: Kc) -> tuple[bytes, list, dict]:
    """A vault with one item, then an import of three machines whose secrets are long enough that
    each record spans several sectors; the rollback anchors put back as they were before it (as
    if the import never returned). Returns the vault bytes, the import's frames and the items before."""
    kc.create()
    kc.put("before.com", "before-secret")
    before = kc.items()
    anchors = {p: p.read_bytes() for p in kc.anchor_files()}
    netrc = "".join(f"machine {m}.example login u password {m}-{'x' * 1500}\n" for m in MACHINES)
    kc.write_secret_file(kc.root / "import.netrc", netrc)
    kc.ok(["import", "netrc", str(kc.root / "import.netrc")])
    for path, content in anchors.items():
        path.write_bytes(content)
    data = kc.vault.read_bytes()
    imported = frames(data)[-len(MACHINES):]
    return data, imported, before


def _sector_inside(frame) -> int:
    """A whole sector inside the record's body, clear of its frame and tag."""
    start = (frame.offset + 32 + SECTOR - 1) // SECTOR * SECTOR
    assert start + SECTOR <= frame.end - 16, frame
    return start


def _zeroed(data: bytes, start: int, end: int) -> bytes:
    return data[:start] + bytes(end - start) + data[end:]


def test_lost_sectors_with_nothing_readable_after_them_are_a_torn_tail(tmp_path):
    kc = Kc(tmp_path)
    data, imported, before = _interrupted_import(kc)
    first, second = imported[0], imported[1]
    gap = _sector_inside(first)
    tail_from = _sector_inside(second)      # from inside the second record to the end: zeros
    kc.vault.write_bytes(_zeroed(_zeroed(data, gap, gap + SECTOR), tail_from, len(data)))
    r = kc.run(["find", "--all", "--json", "-w"])
    assert r.returncode == 0 and f"at offset {first.offset}" in r.stderr, r
    assert kc.items() == before
    r = kc.run(["repair", "--yes"])
    assert r.returncode == 0 and f"removed {len(data) - first.offset} bytes of torn tail" in r.stderr, r
    kc.put("after.com", "after-secret")
    assert kc.check().whole
    figure(f"[power loss] an import whose first record lost the sector at {gap} and whose later records "
           f"were zeros from {tail_from}: a torn tail from the import's first record, removed by plain kc repair")


def test_a_lost_sector_before_readable_records_is_damage_that_salvage_recovers(tmp_path):
    kc = Kc(tmp_path)
    data, imported, before = _interrupted_import(kc)
    first = imported[0]
    gap = _sector_inside(first)
    damaged = _zeroed(data, gap, gap + SECTOR)
    kc.vault.write_bytes(damaged)
    r = kc.run(["find", "--all", "--json", "-w"])
    assert r.returncode == EXIT_DECODE and f"at offset {first.offset} failed authentication" in r.stderr, r
    r = kc.run(["repair", "--yes"])
    assert r.returncode == EXIT_DECODE, r
    assert kc.vault.read_bytes() == damaged, "plain repair changed a damaged vault"
    r = kc.run(["repair", "--salvage", "--yes"])
    assert r.returncode == 0 and "kc: salvaged " in r.stderr, r
    sequence = len(frames(data)) - len(MACHINES) + 1
    assert f"damaged: record {sequence} at offset {first.offset} failed authentication" in r.stderr, r
    assert f"lost: record {sequence} cannot be read" in r.stderr, r
    kept = {("internet", f"{m}.example", "u"): f"{m}-{'x' * 1500}" for m in MACHINES[1:]}
    assert kc.items() == {**before, **kept}, "salvage keeps the readable records after the lost one"
    assert kc.check().whole
    kc.put("after.com", "after-secret")
    figure("[power loss] an import whose first record lost a sector, its later records written: damage "
           "(errSecDecode, plain kc repair refuses, nothing written); kc repair --salvage named the lost record "
           "and kept the 2 readable ones")
