"""`kc compact` keeps each device's newest device-name record only (Docs/FORMAT.md, "Device names" and the
compaction rule): renames leave one record per device, the names `kc sync status` shows are unchanged."""
from kcformat import DEVICE_NAME, device_names, parse_payload, records
from test_sync import machine, remote  # noqa: F401  (pytest fixtures)


def name_records(kc) -> list[str]:
    """The device ids (hex) of the vault's device-name records, one per record."""
    return [plain[18:34].hex() for _, plain in records(kc.vault_path.read_bytes(), kc.master_password.encode())
            if parse_payload(plain).kind == DEVICE_NAME]


def test_compact_keeps_only_each_devices_newest_name(kc_bin, tmp_path, remote):
    laptop, desktop = machine(kc_bin, tmp_path, "laptop"), machine(kc_bin, tmp_path, "desktop")
    laptop.init()
    laptop.add_generic("shared", "me", "pw0")
    laptop.ok(["sync", "init", "--remote", remote, "--device-name", "one"])
    laptop.ok(["sync", "--device-name", "two"])
    laptop.ok(["sync", "--device-name", "three"])
    desktop.ok(["sync", "clone", remote, "--device-name", "desk"])
    desktop.ok(["sync", "--device-name", "desk2"])
    laptop.ok(["sync"])
    before = device_names(laptop.vault_path.read_bytes(), laptop.master_password.encode())
    assert sorted(before.values()) == ["desk2", "three"]
    assert len(name_records(laptop)) == 5
    laptop.ok(["compact"])
    kept = name_records(laptop)
    assert sorted(kept) == sorted(before), "one record per device"
    assert device_names(laptop.vault_path.read_bytes(), laptop.master_password.encode()) == before
    status = laptop.ok(["sync", "status"]).stdout
    assert "\"three\"" in status and "\"desk2\"" in status and "\"two\"" not in status
    # The compacted vault still syncs: the desktop keeps its names (its own older record stays there).
    laptop.ok(["sync"])
    desktop.ok(["sync"])
    assert device_names(desktop.vault_path.read_bytes(), desktop.master_password.encode()) == before
