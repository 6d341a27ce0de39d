"""Power-loss states of the rollback anchor across several commands, through the binary. FORMAT.md
("Anchor file"): a raise is not fsynced, and a power loss that loses or tears its slot write
leaves the other slot, the previous anchor, which only lags (never a false alarm). That needs the
other slot's own write to be durable: a slot longer than a sector is written only after an fsync.

The commands run with KC_FAULT_TRACE; powerloss.Model replays their trace. For the anchor file,
the states built here are those of powerloss.py's model (unsynced writes lost in any subset, a
write torn at a 512-byte sector boundary) in the combination test_vault_powerloss.py does not
build, since it traces one command at a time: an earlier raise lost and a later one torn. Each
state must take the next write.
"""
from __future__ import annotations

import itertools

from powerloss import SECTOR, Model, Write, apply_changes, materialize, parse_trace, torn_write
from vaultkit import Kc

ROLLED_BACK = "older than a copy this machine has seen"


def the_anchor(kc: Kc):
    [anchor] = kc.anchor_files()
    return anchor


def add(kc: Kc, service: str, *flags, env=None):
    return kc.run([*flags, "-q", "add", "generic", "-s", service, "-a", "acct", "--password-stdin"], input="x", env=env)


def synced_vault(kc: Kc, tmp_path) -> None:
    """A vault 24 other machines (each its own state folder, so its own device id) wrote to, as a
    synced vault: 25 devices, so an anchor slot (24 + 24 x 25 = 624 bytes) spans two sectors."""
    kc.create()
    for i in range(24):
        assert add(kc, f"other-{i}", env=other(tmp_path, i)).returncode == 0


def other(tmp_path, i: int) -> dict:
    return {"XDG_STATE_HOME": str(tmp_path / f"other-state-{i}")}


def traced(kc: Kc, tmp_path, commands) -> tuple[Model, list]:
    """Runs `commands` (lists of add arguments) with the trace on, from a model taking everything
    on disk now as durable. Returns the model (before the trace is applied) and the operations."""
    model = Model(kc.home)
    path = tmp_path / "trace"
    for service, *flags in commands:
        r = add(kc, service, *flags, env={"KC_FAULT_TRACE": str(path)})
        assert r.returncode == 0 and r.stderr == "", r
    ops = parse_trace(path.read_text())
    assert any(op[0] == "fsync" for op in ops), "no fsync traced: a build without the fault seam?"
    return model, ops


def anchor_states(kc: Kc, model: Model, ops: list):
    """Every tree in which the anchor file holds what a power loss at the end of `ops` may leave
    with an earlier pending write lost (any subset) and a later one torn at a sector boundary; the
    other files as written. Yields (description, tree)."""
    for op in ops:
        model.apply(op)
    folder, name = model._parent(str(the_anchor(kc)))
    node = folder.entries[name]
    anchor = model.nodes[node]
    pending = anchor.pending
    assert all(isinstance(w, Write) for w in pending)
    seen = set()
    for i, w in enumerate(pending):
        span = list(range(w.offset // SECTOR, (w.offset + len(w.data) - 1) // SECTOR + 1))
        for k in range(i + 1):
            for kept in itertools.combinations(range(i), k):
                before = apply_changes(anchor.synced, [pending[j] for j in kept])
                for cut in range(1, len(span)):
                    content = torn_write(before, w, set(span[:cut]), keep_size=True)
                    if content not in seen:
                        seen.add(content)
                        yield (f"pending anchor writes {len(pending)}: {sorted(set(range(i)) - set(kept))} lost, "
                               f"{i} torn after {cut} sector(s)"), model.tree({node: content})


def check_states(kc: Kc, model: Model, ops: list) -> None:
    failures, checked = [], 0
    for what, tree in anchor_states(kc, model, ops):
        checked += 1
        materialize(kc.home, tree)
        r = add(kc, f"probe-{checked}")
        if r.returncode != 0:
            failures.append(f"{what}: the next write failed: {r.stderr.strip()}")
    assert checked > 0, "no torn state: the slot fits one sector"
    assert not failures, f"{len(failures)} of {checked} power-loss states refuse the next write:\n" + "\n".join(failures)


def test_two_raises_after_an_accepted_rollback_survive_a_power_loss(tmp_path):
    """After an accepted rollback (fsynced), the other slot still holds the anchor it replaced.
    Two adds later, a power loss losing the first raise and tearing the second brings it back: the
    accepted vault (and the two adds) reads as a rollback."""
    kc = Kc(tmp_path)
    synced_vault(kc, tmp_path)
    kc.put("a", "1")
    backup = kc.vault.read_bytes()
    assert add(kc, "other-0-again", env=other(tmp_path, 0)).returncode == 0
    kc.put("b", "2")                          # this machine's anchor: 2 records of other-0
    kc.vault.write_bytes(backup)              # the backup restored...
    r = add(kc, "c", "--accept-rollback")     # ...and accepted (not traced: its fsync makes it durable)
    assert r.returncode == 0 and ROLLED_BACK in r.stderr, r
    model, ops = traced(kc, tmp_path, [["d"], ["e"]])
    check_states(kc, model, ops)


def test_two_raises_of_a_new_anchor_file_survive_a_power_loss(tmp_path):
    """A new anchor file holds zeros in slot 1. Two raises later, a power loss losing the first and
    tearing the second leaves no valid slot: the anchor is damaged and writes are refused."""
    kc = Kc(tmp_path)
    synced_vault(kc, tmp_path)
    kc.clear_anchors()
    model, ops = traced(kc, tmp_path, [["a"], ["b"], ["c"]])
    check_states(kc, model, ops)
