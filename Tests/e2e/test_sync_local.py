"""Items marked this-device-only through `kc sync` with real git and a local bare repository (the
fixtures of test_sync.py): their versions never enter any commit of the remote (every committed copy
of the vault file is decrypted with kcformat.py) nor the other machine; marking a synced item deletes
it there, unmarking brings it back; a delete of a marked item stays too; another machine's compaction
leaves the marked item's history here whole."""
import json
import subprocess

from agentsupport import NO_SOURCE, stop_agents, unlock, with_runtime_folder
from kcformat import TAG_THIS_DEVICE_ONLY, parse_payload, records
from test_sync import git, machine, pair, remote, services  # noqa: F401  (pytest fixtures)
from test_sync_scenarios import versions


def committed_plaintexts(remote, password: str) -> list:
    """Every record payload of every version of login.kc committed on the remote."""
    out = []
    for commit in git(remote, "rev-list", "--all").split():
        if "login.kc" not in git(remote, "ls-tree", "--name-only", commit).split():
            continue
        blob = git_bytes(remote, f"{commit}:login.kc")
        out += [plain for _, plain in records(blob, password.encode())]
    assert out, "the remote holds the vault"
    return out


def git_bytes(folder, revision) -> bytes:
    return subprocess.run(["git", "-C", str(folder), "show", revision], capture_output=True, check=True).stdout


def item_id(kc, service) -> bytes:
    return bytes.fromhex(json.loads(kc.ok(["find", "generic", "-s", service, "--json"]).stdout)[0]["id"])


def marked(kc) -> dict:
    return {item["service"]: item.get("thisDeviceOnly", False) for item in json.loads(kc.ok(["list", "--json"]).stdout)}


def assert_never_on_remote(remote, kc, item: bytes, secret: bytes):
    """No committed record names `item`, holds `secret` or carries the mark."""
    for plain in committed_plaintexts(remote, kc.master_password):
        payload = parse_payload(plain)
        assert TAG_THIS_DEVICE_ONLY not in payload.fields, "a marked version was committed"
        assert payload.item_id != item and secret not in plain


def test_a_marked_item_never_reaches_the_remote_nor_the_other_machine(pair, remote):
    laptop, desktop = pair
    laptop.add_generic("vpn.work", "me", "vpn-only-here", "--this-device-only")
    laptop.add_generic("plain.example", "me", "plain-secret")
    laptop.ok(["update", "generic", "-s", "vpn.work", "--password-stdin"], input="vpn-edited-here")
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    assert services(desktop) == {"shared": "pw0", "plain.example": "plain-secret"}
    assert services(laptop)["vpn.work"] == "vpn-edited-here"
    vpn = item_id(laptop, "vpn.work")
    assert_never_on_remote(remote, laptop, vpn, b"vpn-only-here")
    assert_never_on_remote(remote, laptop, vpn, b"vpn-edited-here")
    # A delete of the marked item stays here too: no record of it at all on the remote, also once a
    # compaction here dropped the marked put the delete names (the tombstone carries the mark).
    laptop.ok(["delete", "generic", "-s", "vpn.work"])
    laptop.ok(["sync"])
    assert_never_on_remote(remote, laptop, vpn, b"vpn-only-here")
    laptop.ok(["compact"])
    laptop.ok(["sync"])
    assert_never_on_remote(remote, laptop, vpn, b"vpn-only-here")


def test_an_item_marked_before_sync_init_is_not_in_the_first_commit(kc_bin, tmp_path, remote):
    laptop, desktop = machine(kc_bin, tmp_path, "laptop"), machine(kc_bin, tmp_path, "desktop")
    laptop.init()
    laptop.add_generic("vpn.work", "me", "vpn-only-here", "--this-device-only")
    laptop.add_generic("shared", "me", "pw0")
    laptop.ok(["sync", "init", "--remote", remote])
    desktop.ok(["sync", "clone", remote])
    assert services(desktop) == {"shared": "pw0"}
    assert_never_on_remote(remote, laptop, item_id(laptop, "vpn.work"), b"vpn-only-here")
    assert marked(laptop) == {"vpn.work": True, "shared": False}


def test_marking_a_synced_item_deletes_it_elsewhere_and_unmarking_brings_it_back(pair, remote):
    laptop, desktop = pair
    laptop.ok(["update", "generic", "-s", "shared", "--set-this-device-only", "yes", "--password-stdin"],
              input="changed-while-marked")
    report = laptop.ok(["sync"]).stdout
    assert "sent: 1 item" in report, "the tombstone goes out"
    assert "1 deleted" in desktop.ok(["sync"]).stdout
    assert marked(desktop) == {}
    assert services(laptop) == {"shared": "changed-while-marked"} and marked(laptop) == {"shared": True}
    shared = item_id(laptop, "shared")
    for plain in committed_plaintexts(remote, laptop.master_password):
        assert b"changed-while-marked" not in plain and TAG_THIS_DEVICE_ONLY not in parse_payload(plain).fields
    # Unmarking shares the item again, with what it became while marked.
    laptop.ok(["update", "generic", "-s", "shared", "--set-this-device-only", "no"])
    laptop.ok(["sync"])
    assert "1 added" in desktop.ok(["sync"]).stdout
    assert services(desktop) == {"shared": "changed-while-marked"} and marked(desktop) == {"shared": False}
    assert item_id(desktop, "shared") == shared


def test_a_later_edit_elsewhere_wins_over_the_mark_and_is_listed_as_a_conflict(pair):
    """The desktop edits the item before it received the laptop's delete: its later edit wins on both
    machines (the item is shared again), and both list the conflict; marking it again withdraws it."""
    laptop, desktop = pair
    laptop.ok(["update", "generic", "-s", "shared", "--set-this-device-only", "yes"])
    desktop.ok(["update", "generic", "-s", "shared", "--password-stdin"], input="desktop-edit")
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    assert services(laptop) == services(desktop) == {"shared": "desktop-edit"}
    assert marked(laptop) == {"shared": False}
    for kc in (laptop, desktop):
        assert "shared" in kc.ok(["conflicts"]).stdout
    laptop.ok(["update", "generic", "-s", "shared", "--set-this-device-only", "yes"])
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    assert marked(desktop) == {} and marked(laptop) == {"shared": True}


def test_the_agent_serving_the_sync_export_keeps_marked_items_here_too(pair, remote):
    laptop, desktop = pair
    with_runtime_folder(laptop)
    try:
        laptop.add_generic("vpn.work", "me", "vpn-only-here", "--this-device-only")
        laptop.add_generic("plain.example", "me", "plain-secret")
        unlock(laptop)
        laptop.ok(["sync"], unset=NO_SOURCE)
    finally:
        stop_agents(laptop)
    desktop.ok(["sync"])
    assert services(desktop) == {"shared": "pw0", "plain.example": "plain-secret"}
    assert_never_on_remote(remote, laptop, item_id(laptop, "vpn.work"), b"vpn-only-here")


def test_sync_init_through_the_agent_leaves_marked_items_out(kc_bin, tmp_path, remote):
    laptop, desktop = machine(kc_bin, tmp_path, "laptop"), machine(kc_bin, tmp_path, "desktop")
    laptop.init()
    laptop.add_generic("vpn.work", "me", "vpn-only-here", "--this-device-only")
    laptop.add_generic("shared", "me", "pw0")
    with_runtime_folder(laptop)
    try:
        unlock(laptop)
        laptop.ok(["sync", "init", "--remote", remote], unset=NO_SOURCE)
    finally:
        stop_agents(laptop)
    desktop.ok(["sync", "clone", remote])
    assert services(desktop) == {"shared": "pw0"}
    assert_never_on_remote(remote, laptop, item_id(laptop, "vpn.work"), b"vpn-only-here")


def test_a_compaction_elsewhere_keeps_every_version_of_a_marked_item_here(pair):
    """The desktop's compaction marker covers the counters of the laptop's marked versions (a
    shared record the laptop wrote after them raises its frontier) without having seen them: the
    merge of the laptop's next sync keeps them all."""
    laptop, desktop = pair
    laptop.add_generic("vpn.work", "me", "vpn-1", "--this-device-only")
    for value in ("vpn-2", "vpn-3"):
        laptop.ok(["update", "generic", "-s", "vpn.work", "--password-stdin"], input=value)
    laptop.add_generic("plain.example", "me", "plain-secret")
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    desktop.ok(["compact"])
    desktop.ok(["sync"])
    laptop.ok(["sync"])
    assert versions(laptop, "vpn.work") == ["vpn-1", "vpn-2", "vpn-3"], "the marked item's history stays whole"
    assert services(laptop)["vpn.work"] == "vpn-3"
    assert "vpn.work" not in services(desktop)
