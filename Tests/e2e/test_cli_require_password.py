"""The require-password mark through the kc binary: add and update set and remove it, find, list and
JSON show it, export and import keep it, it lives inside the sealed put record (kcformat.py reads it
there, and a changed byte of it on disk is refused as damage), and reading a marked item without the
agent takes the master password like every command."""
from __future__ import annotations

import json

import pytest

from kcformat import TAG_REQUIRE_PASSWORD, parse_payload, records
from kcharness import EXIT_DECODE, EXIT_PARAM, KC, assert_failure


@pytest.fixture
def marked(kc_ready):
    kc = kc_ready
    kc.add_generic("bank.example", "me", "vault-secret", "-l", "Bank", "--require-password")
    kc.add_internet("ftp.example.com", "deploy", "ftp-secret", "-r", "ftp", "--require-password")
    kc.add_generic("plain.example", "me", "plain-secret")
    return kc


def json_items(kc: KC) -> list:
    return json.loads(kc.ok(["list", "--json"]).stdout)


def marks(kc: KC) -> dict:
    """service or server -> whether the item has the mark, from `list --json`."""
    return {item.get("service", item.get("server")): item.get("requirePassword", False) for item in json_items(kc)}


def test_find_list_and_json_show_the_mark(marked):
    kc = marked
    human = kc.ok(["find", "-s", "bank.example"]).stdout
    assert "requirePassword: yes\n" in human
    assert "requirePassword" not in kc.ok(["find", "-s", "plain.example"]).stdout
    table = kc.ok(["list"]).stdout.splitlines()
    assert table[0].split()[-1] == "REQUIRE-PASSWORD"
    rows = {line.split()[2]: line.split()[-1] for line in table[1:]}
    assert rows == {"bank.example": "yes", "ftp.example.com": "yes", "plain.example": "-"}
    listed = json_items(kc)
    assert [item.get("requirePassword") for item in listed] == [True, True, None]   # only when set
    # Without the agent, the vault is opened with the master password: the secret is printed.
    assert kc.ok(["find", "-s", "bank.example", "-w"]).stdout == "vault-secret\n"


def test_list_without_marks_has_no_extra_column(kc_ready):
    kc_ready.add_generic("plain.example", "me")
    assert kc_ready.ok(["list"]).stdout.splitlines()[0].split() == ["CLASS", "LABEL", "SERVICE/SERVER", "ACCOUNT", "MODIFIED"]


def test_update_sets_removes_and_keeps_the_mark(marked):
    kc = marked
    kc.ok(["update", "generic", "-s", "bank.example", "--set-require-password", "no"])
    kc.ok(["update", "generic", "-s", "plain.example", "--set-require-password", "yes"])
    assert marks(kc) == {"bank.example": False, "ftp.example.com": True, "plain.example": True}
    kc.ok(["update", "internet", "-s", "ftp.example.com", "--set-label", "FTP"])
    kc.ok(["update", "generic", "-s", "plain.example", "--password-stdin"], input="new")
    assert marks(kc) == {"bank.example": False, "ftp.example.com": True, "plain.example": True}, "other changes keep it"
    kc.ok(["add", "generic", "-s", "plain.example", "-a", "me", "-U", "--password-stdin"], input="newer")
    assert marks(kc)["plain.example"] is True, "add -U without the flag keeps the mark"
    kc.ok(["add", "generic", "-s", "bank.example", "-a", "me", "-U", "--require-password", "--password-stdin"], input="x")
    assert marks(kc)["bank.example"] is True


@pytest.mark.parametrize("value", ["maybe", "", "YES", "1"])
def test_a_bad_value_is_a_usage_error_and_changes_nothing(marked, value):
    kc = marked
    before = kc.vault_path.read_bytes()
    result = kc.run(["update", "generic", "-s", "bank.example", "--set-require-password", value])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "--set-require-password takes yes or no" in result.stderr
    assert kc.vault_path.read_bytes() == before


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_export_and_import_keep_the_mark(marked, kc_bin, tmp_path, fmt):
    path = tmp_path / f"export.{fmt}"
    marked.ok(["export", "--format", fmt, "--with-secrets", "-o", path])
    target = KC(kc_bin, tmp_path / "target-home")
    target.init()
    target.ok(["import", fmt, path])
    assert marks(target) == {"bank.example": True, "ftp.example.com": True, "plain.example": False}
    assert json_items(target) == json_items(marked)


def test_import_reads_json_booleans_and_csv_without_the_column(kc_ready, tmp_path):
    kc = kc_ready
    (tmp_path / "items.json").write_text(json.dumps([
        {"class": "generic", "service": "a", "requirePassword": True, "password": "x"},
        {"class": "generic", "service": "b", "requirePassword": False, "password": "y"},
    ]))
    kc.ok(["import", "json", tmp_path / "items.json"])
    old_header = ("id,class,created,modified,createdMs,modifiedMs,service,server,protocol,port,path,securityDomain,"
                  "authenticationType,account,label,description,comment,generic,password,passwordBase64")
    cells = {"class": "generic", "service": "c", "password": "z"}
    row = ",".join(cells.get(name, "") for name in old_header.split(","))
    (tmp_path / "old.csv").write_text(old_header + "\n" + row + "\n")
    kc.ok(["import", "csv", tmp_path / "old.csv"])
    assert marks(kc) == {"a": True, "b": False, "c": False}


def test_the_mark_is_field_18_inside_the_sealed_put_and_cannot_be_changed_on_disk(marked):
    kc = marked
    data = kc.vault_path.read_bytes()
    decrypted = records(data, kc.master_password.encode())
    payloads = [parse_payload(plain) for _, plain in decrypted]
    assert [p.fields.get(TAG_REQUIRE_PASSWORD) for p in payloads] == [b"\x01", b"\x01", None]
    # Flip the ciphertext byte that holds the first item's mark (XChaCha20 is a stream cipher: the
    # plaintext byte would turn 01 into 00). The record no longer authenticates: damage, not "no mark".
    frame, _ = decrypted[0]
    at = frame.offset + 16 + 24 + payloads[0].offsets[TAG_REQUIRE_PASSWORD]
    tampered = bytearray(data)
    tampered[at] ^= 0x01
    kc.vault_path.write_bytes(bytes(tampered))
    for args in (["find", "-s", "bank.example", "-w"], ["list"], ["update", "generic", "-s", "bank.example",
                                                                 "--set-require-password", "no"]):
        result = kc.run(args)
        assert_failure(result, "errSecDecode", EXIT_DECODE)
        assert f"at offset {frame.offset}" in result.stderr, result
    assert kc.vault_path.read_bytes() == bytes(tampered)
