"""The this-device-only mark through the kc binary, on one machine: add and update set and remove
it, find, list and JSON show it, it lives inside the sealed put (field 19, read by kcformat.py),
marking an existing item writes a tombstone then the marked put, export leaves marked items out
unless --include-this-device-only, import marks them again, and the agent carries the mark."""
from __future__ import annotations

import json

from agentsupport import NO_SOURCE, akc, unlock  # noqa: F401
from kcformat import DELETE, PUT, TAG_THIS_DEVICE_ONLY, parse_payload, records
from kcharness import EXIT_PARAM, KC, assert_failure


def marks(kc: KC, **kwargs) -> dict:
    """service or server -> whether the item has the mark, from `list --json`."""
    items = json.loads(kc.ok(["list", "--json"], **kwargs).stdout)
    return {item.get("service", item.get("server")): item.get("thisDeviceOnly", False) for item in items}


def payloads(kc: KC) -> list:
    return [parse_payload(plain) for _, plain in records(kc.vault_path.read_bytes(), kc.master_password.encode())]


def test_add_marks_and_find_list_json_show_it(kc_ready):
    kc = kc_ready
    kc.add_generic("vpn.work", "me", "vpn-secret", "--this-device-only")
    kc.add_internet("ftp.example.com", "deploy", "ftp-secret", "-r", "ftp", "--this-device-only", "--require-password")
    kc.add_generic("plain.example", "me", "plain-secret")
    assert "thisDeviceOnly: yes\n" in kc.ok(["find", "-s", "vpn.work"]).stdout
    assert "thisDeviceOnly" not in kc.ok(["find", "-s", "plain.example"]).stdout
    table = kc.ok(["list"]).stdout.splitlines()
    assert table[0].split()[-2:] == ["REQUIRE-PASSWORD", "THIS-DEVICE-ONLY"]
    rows = {line.split()[2]: line.split()[-2:] for line in table[1:]}
    assert rows == {"vpn.work": ["-", "yes"], "ftp.example.com": ["yes", "yes"], "plain.example": ["-", "-"]}
    assert marks(kc) == {"vpn.work": True, "ftp.example.com": True, "plain.example": False}
    assert [p.fields.get(TAG_THIS_DEVICE_ONLY) for p in payloads(kc)] == [b"\x01", b"\x01", None]


def test_marking_an_item_writes_a_tombstone_then_the_marked_put(kc_ready):
    kc = kc_ready
    kc.add_generic("shared.example", "me", "s1")
    kc.ok(["update", "generic", "-s", "shared.example", "--set-this-device-only", "yes"])
    first, tombstone, marked = payloads(kc)
    assert (tombstone.kind, marked.kind) == (DELETE, PUT)
    assert tombstone.item_id == marked.item_id == first.item_id
    assert marked.fields[TAG_THIS_DEVICE_ONLY] == b"\x01" and TAG_THIS_DEVICE_ONLY not in tombstone.fields
    assert marks(kc) == {"shared.example": True}
    assert kc.ok(["find", "-s", "shared.example", "-w"]).stdout == "s1\n", "the item stays live here"
    # Edits while marked keep the mark and write one put each; so does setting it again.
    kc.ok(["update", "generic", "-s", "shared.example", "--set-label", "L", "--set-this-device-only", "yes"])
    assert len(payloads(kc)) == 4 and marks(kc) == {"shared.example": True}
    kc.ok(["update", "generic", "-s", "shared.example", "--set-this-device-only", "no"])
    assert len(payloads(kc)) == 5 and marks(kc) == {"shared.example": False}
    # add -U with the flag marks an existing item the same way; without it the mark stays.
    kc.add_generic("shared.example", "me", "s2", "-U", "--this-device-only")
    assert [p.kind for p in payloads(kc)][-2:] == [DELETE, PUT] and marks(kc) == {"shared.example": True}
    kc.add_generic("shared.example", "me", "s3", "-U")
    assert marks(kc) == {"shared.example": True}


def test_a_mark_value_other_than_yes_or_no_is_refused(kc_ready):
    kc_ready.add_generic("a", "me", "x")
    result = kc_ready.run(["update", "generic", "-s", "a", "--set-this-device-only", "maybe"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "--set-this-device-only takes yes or no, not 'maybe'" in result.stderr


def test_export_leaves_marked_items_out_unless_asked_and_import_marks_them_again(kc_ready, tmp_path):
    kc = kc_ready
    kc.add_generic("vpn.work", "me", "vpn-secret", "--this-device-only")
    kc.add_generic("plain.example", "me", "plain-secret")
    plain = kc.ok(["export", "--with-secrets", "--yes", "-o", str(tmp_path / "plain.json")])
    assert "left out 1 item marked this-device-only" in plain.stderr
    exported = json.loads((tmp_path / "plain.json").read_text())
    assert [item["service"] for item in exported] == ["plain.example"]
    for fmt in ("json", "csv"):
        path = tmp_path / f"all.{fmt}"
        kc.ok(["export", "--format", fmt, "--with-secrets", "--yes", "--include-this-device-only", "-o", str(path)])
        other = KC(kc.binary, tmp_path / f"other-{fmt}")
        other.init()
        other.ok(["import", fmt, str(path)])
        assert marks(other) == {"vpn.work": True, "plain.example": False}, fmt
        assert other.ok(["find", "-s", "vpn.work", "-w"]).stdout == "vpn-secret\n"
    assert json.loads((tmp_path / "all.json").read_text())[0]["thisDeviceOnly"] is True
    header = (tmp_path / "all.csv").read_text().splitlines()[0]
    assert ",requirePassword,thisDeviceOnly,password," in header


def test_import_reads_exports_from_before_the_mark_and_refuses_a_bad_value(kc_ready, tmp_path):
    kc = kc_ready
    old = tmp_path / "old.csv"
    old.write_text("id,class,created,modified,createdMs,modifiedMs,service,server,protocol,port,path,securityDomain,"
                   "authenticationType,account,label,description,comment,generic,requirePassword,password,passwordBase64\r\n"
                   ",generic,,,,,a,,,,,,,me,,,,,yes,\"x\",\r\n")
    kc.ok(["import", "csv", str(old)])
    assert marks(kc) == {"a": False}
    bad = tmp_path / "bad.json"
    bad.write_text('[{"class": "generic", "service": "b", "thisDeviceOnly": "yes", "password": "y"}]\n')
    result = kc.run(["import", "json", str(bad)])
    assert result.returncode != 0 and "invalid thisDeviceOnly '\"yes\"'" in result.stderr


def test_the_agent_carries_the_mark(akc):
    akc.add_generic("vpn.work", "me", "vpn-secret", "--this-device-only")
    akc.add_generic("plain.example", "me", "plain-secret")
    unlock(akc)
    assert marks(akc, unset=NO_SOURCE) == {"vpn.work": True, "plain.example": False}
    akc.ok(["update", "generic", "-s", "plain.example", "--set-this-device-only", "yes"], unset=NO_SOURCE)
    akc.ok(["update", "generic", "-s", "vpn.work", "--set-this-device-only", "no"], unset=NO_SOURCE)
    assert marks(akc, unset=NO_SOURCE) == {"vpn.work": False, "plain.example": True}
    assert "thisDeviceOnly: yes" in akc.ok(["find", "-s", "plain.example"], unset=NO_SOURCE).stdout
