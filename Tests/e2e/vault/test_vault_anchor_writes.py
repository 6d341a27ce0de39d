"""What a write takes from the rollback anchor and `vault-paths` (Docs/FORMAT.md, "What the file alone
cannot show"): the anchor read under the write's lock gives the device counter, even when a rolled
back copy is written with --accept-rollback; a path's vault id is stored once and kept."""
from __future__ import annotations

import os

from kcformat import anchor_vector
from vaultkit import Kc


def anchor_lines(kc: Kc) -> dict[str, int]:
    [anchor] = kc.anchor_files()
    return anchor_vector(anchor.read_bytes())


def test_accepted_rollback_write_never_reuses_a_counter_of_the_anchor(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    older = kc.vault.read_bytes()
    kc.put("b", "2")
    kc.put("c", "3")
    [(device, counter)] = anchor_lines(kc).items()
    kc.vault.write_bytes(older)                        # this device's records 2 and 3 are gone
    kc.ok(["--accept-rollback", "add", "generic", "-s", "d", "-a", "acct", "--password-stdin"], input="4")
    # The accepted write sets the anchor to the vault's vector: its counter is the new record's.
    assert anchor_lines(kc) == {device: counter + 1}, "the write reused a counter the anchor held"
    assert set(kc.items()) == {("generic", "a", "acct"), ("generic", "d", "acct")}
    assert kc.ok(["list"]).stderr == ""


def test_a_paths_vault_id_is_stored_by_the_first_write_and_then_left_alone(tmp_path):
    kc = Kc(tmp_path)
    kc.create()
    kc.put("a", "1")
    paths = kc.state / "kc" / "vault-paths"
    paths.unlink()
    kc.put("b", "2")                                   # the open stores it; the write finds it stored
    stored = paths.read_bytes()
    assert stored.split(b" ")[1].strip() == os.path.realpath(kc.vault).encode().hex().encode(), stored
    inode = paths.stat().st_ino
    kc.put("c", "3")
    assert paths.stat().st_ino == inode and paths.read_bytes() == stored, "vault-paths was rewritten unchanged"
