"""Device names and `kc sync reset-device` with real git and a local bare repository (the fixtures of
test_sync.py): names given at init and clone are shown by `kc sync status` on both machines, live only
in sealed records (never in git's metadata), and a rename is a newer record; a machine whose state
folder was copied is refused with a hint naming reset-device, which gives it a new device id."""
import shutil

from kcformat import parse_payload, records
from kcharness import EXIT_PARAM, assert_failure
from test_sync import git, machine, remote, services  # noqa: F401  (pytest fixtures)
from test_sync_local import git_bytes

KIND_DEVICE_NAME = 6


def device_lines(kc) -> dict:
    """device id -> the rest of its `kc sync status` line."""
    status = kc.ok(["sync", "status"]).stdout
    lines = [line.split(" ", 3)[2:] for line in status.splitlines() if line.startswith("  ")]
    return {parts[0]: (parts[1] if len(parts) > 1 else "") for parts in lines}


def names(kc) -> set:
    status = kc.ok(["sync", "status"]).stdout
    return {line.split()[1] for line in status.splitlines() if line.startswith("  ") and len(line.split()) >= 3}


def named_pair(kc_bin, tmp_path, remote):
    laptop, desktop = machine(kc_bin, tmp_path, "laptop"), machine(kc_bin, tmp_path, "desktop")
    laptop.init()
    laptop.add_generic("shared", "me", "pw0")
    laptop.ok(["sync", "init", "--remote", remote, "--device-name", "laptop-one"])
    desktop.ok(["sync", "clone", remote, "--device-name", "desk top"])
    for kc in (laptop, desktop, laptop):   # each name goes out with its machine's next sync
        kc.ok(["sync"])
    return laptop, desktop


def test_names_are_shown_on_both_machines_and_only_sealed(kc_bin, tmp_path, remote):
    laptop, desktop = named_pair(kc_bin, tmp_path, remote)
    for kc in (laptop, desktop):
        status = kc.ok(["sync", "status"]).stdout
        assert "\"laptop-one\"" in status and "\"desk top\"" in status, status
    this = [line for line in laptop.ok(["sync", "status"]).stdout.splitlines() if line.endswith("(this machine)")]
    assert len(this) == 1 and "\"laptop-one\"" in this[0]
    metadata = git(remote, "log", "--all", "--format=%an %ae %cn %ce %B")
    assert "laptop" not in metadata and "desk" not in metadata
    blob = git_bytes(remote, "main:login.kc")
    assert b"laptop-one" not in blob and b"desk top" not in blob, "the names are sealed"
    kinds = [parse_payload(plain).kind for _, plain in records(blob, laptop.master_password.encode())]
    assert kinds.count(KIND_DEVICE_NAME) == 2


def test_a_rename_is_a_newer_record_and_wins(kc_bin, tmp_path, remote):
    laptop, desktop = named_pair(kc_bin, tmp_path, remote)
    old = (laptop.home / "state" / "kc" / "device-id").read_text().strip()
    laptop.ok(["sync", "reset-device", "--device-name", "laptop-two"])   # a new id, named
    laptop.add_generic("after", "me", "x")
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    here = laptop.ok(["sync", "status"]).stdout
    assert f"{old} \"laptop-one\"" in here and here.count("(this machine, before reset-device)") == 1, \
        "the former device id stays known as this machine's"
    assert [line for line in here.splitlines() if line.endswith("(this machine, before reset-device)")][0].lstrip().startswith(old)
    status = desktop.ok(["sync", "status"]).stdout
    assert "\"laptop-two\"" in status and "\"laptop-one\"" in status, "the old id keeps its name; the new id has its own"
    assert services(desktop)["after"] == "x"


def test_an_init_that_fails_leaves_the_vault_unnamed_and_untouched(kc_bin, tmp_path):
    laptop = machine(kc_bin, tmp_path, "laptop")
    laptop.init()
    laptop.add_generic("shared", "me", "pw0")
    before = laptop.vault_path.read_bytes()
    result = laptop.run(["sync", "init", "--remote", str(tmp_path / "nowhere.git"), "--device-name", "laptop"])
    assert result.returncode != 0
    assert laptop.vault_path.read_bytes() == before


def test_a_bad_name_is_refused(kc_bin, tmp_path, remote):
    laptop = machine(kc_bin, tmp_path, "laptop")
    laptop.init()
    result = laptop.run(["sync", "init", "--remote", remote, "--device-name", "x" * 65])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "--device-name takes 1 to 64 bytes" in result.stderr


def test_reset_device_lets_a_copied_state_folder_sync_as_its_own_device(kc_bin, tmp_path, remote):
    """A copy that has not written yet (the clash itself: test_sync_scenarios.py): reset-device before its
    first write, and it syncs as a device of its own, named."""
    laptop, desktop = named_pair(kc_bin, tmp_path, remote)
    desktop.add_generic("from-desktop", "me", "d1")
    desktop.ok(["sync"])
    fourth = machine(kc_bin, tmp_path, "fourth")
    for part in ("data", "state"):
        shutil.copytree(desktop.home / part, fourth.home / part, symlinks=True)
    old = (fourth.home / "state" / "kc" / "device-id").read_text().strip()
    notice = fourth.ok(["sync", "reset-device", "--device-name", "fourth"]).stderr
    new = (fourth.home / "state" / "kc" / "device-id").read_text().strip()
    assert new != old and f"now writes as device {new} (it was {old})" in notice
    desktop.add_generic("after-copy", "me", "a1")   # under the id the copy had: no clash after the reset
    desktop.ok(["sync"])
    fourth.add_generic("from-fourth", "me", "f1")
    fourth.ok(["sync"])
    desktop.ok(["sync"])
    assert services(desktop) == {"shared": "pw0", "from-desktop": "d1", "after-copy": "a1", "from-fourth": "f1"}
    assert "\"fourth\"" in desktop.ok(["sync", "status"]).stdout


def test_sync_with_a_device_name_renames_this_machine(kc_bin, tmp_path, remote):
    laptop, desktop = named_pair(kc_bin, tmp_path, remote)
    this = [line for line in laptop.ok(["sync", "status"]).stdout.splitlines() if line.endswith("(this machine)")][0].split()[0]
    laptop.ok(["sync", "--device-name", "laptop-renamed"])
    desktop.ok(["sync"])
    status = desktop.ok(["sync", "status"]).stdout
    line = next(line for line in status.splitlines() if line.strip().startswith(this))
    assert "\"laptop-renamed\"" in line and "laptop-one" not in status, "the newer record of the same device names it"


def test_a_clone_sends_its_device_name_at_once(kc_bin, tmp_path, remote):
    """`sync clone` names the new machine and pushes the name with the clone, as `sync init` does: a
    third machine cloning right after sees it, with no `kc sync` run by the second in between."""
    laptop, desktop, third = (machine(kc_bin, tmp_path, name) for name in ("laptop", "desktop", "third"))
    laptop.init()
    laptop.add_generic("shared", "me", "pw0")
    laptop.ok(["sync", "init", "--remote", remote, "--device-name", "laptop-one"])
    cloned = desktop.ok(["sync", "clone", remote, "--device-name", "desk top"])
    assert "not sent" not in cloned.stderr, cloned
    assert "records: 0 not yet sent" in desktop.ok(["sync", "status"]).stdout
    third.ok(["sync", "clone", remote, "--device-name", "third"])
    status = third.ok(["sync", "status"]).stdout
    assert "\"laptop-one\"" in status and "\"desk top\"" in status and "\"third\"" in status, status
    laptop.ok(["sync"])
    status = laptop.ok(["sync", "status"]).stdout
    assert "\"desk top\"" in status and "\"third\"" in status, status
    assert services(third) == {"shared": "pw0"}


def test_a_clone_at_a_terminal_asks_the_master_password_once(kc_bin, tmp_path, remote):
    """The round that sends the clone's name reuses the password typed for the clone: one prompt."""
    import pexpect
    laptop, desktop = machine(kc_bin, tmp_path, "laptop"), machine(kc_bin, tmp_path, "desktop")
    laptop.init()
    laptop.ok(["sync", "init", "--remote", remote, "--device-name", "laptop-one"])
    child = desktop.spawn(["sync", "clone", remote, "--device-name", "desk top"], unset=("KC_MASTER_PASSWORD_FILE",))
    child.expect_exact(f"Master password for the vault at {remote}: ")
    child.sendline(desktop.master_password)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "Master password" not in child.before and "not sent" not in child.before, child.before
    laptop.ok(["sync"])
    assert "\"desk top\"" in laptop.ok(["sync", "status"]).stdout
