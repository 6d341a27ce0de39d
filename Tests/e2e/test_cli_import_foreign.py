"""kc import keepassxc-csv|bitwarden-csv|chrome-csv|firefox-csv through the binary, with export samples
written by hand from each tool's exporter (Tests/e2e/samples): web logins as internet items, the rest as
generic items, TOTP seeds and custom fields as items of their own (secrets, never attributes), duplicates
skipped, a bad row rejected with its line (all or nothing unless --partial), --dry-run writing nothing."""
import json
from pathlib import Path

import pytest

from kcharness import assert_failure, items_with_secrets, only_item

SAMPLES = Path(__file__).parent / "samples"



def imported(kc, fmt, sample, *extra):
    result = kc.ok(["import", fmt, "--partial", *extra, SAMPLES / sample])
    return result, items_with_secrets(kc)


def test_keepassxc_csv(kc_ready):
    result, items = imported(kc_ready, "keepassxc-csv", "keepassxc.csv")
    assert "4 added, 1 skipped as duplicate, 1 rejected" in result.stderr
    assert "skipped row 3 (line 6): GitHub (octocat): already in the keychain" in result.stdout
    assert "rejected row 4 (line 7): no password" in result.stdout
    github = only_item(items, server="github.com")
    assert {k: github.get(k) for k in ("class", "protocol", "path", "account", "label", "description", "comment",
                                       "password", "created", "modified")} == {
        "class": "internet", "protocol": "https", "path": "/login", "account": "octocat", "label": "GitHub",
        "description": "Root", "comment": "Work account", "password": "gh-p@ss,word",
        "created": "2023-01-15T08:00:00Z", "modified": "2024-03-02T10:20:30Z"}
    assert "port" not in github
    totp = only_item(items, service="GitHub (TOTP)")
    assert totp["class"] == "generic" and totp["account"] == "octocat" and totp["description"] == "TOTP"
    assert totp["password"].startswith("otpauth://totp/GitHub:octocat?secret=JBSWY3DPEHPK3PXP")
    mail = only_item(items, server="mail.example.org")
    assert (mail["protocol"], mail["port"], mail["label"], mail["description"], mail["password"]) == (
        "imaps", 993, "Mail Ω", "Root/Email", "pässwörd ✓")
    assert mail["comment"] == 'Line one\nline two, with "quotes"'
    router = only_item(items, service="Router admin")
    assert router["class"] == "generic" and "account" not in router and router["password"] == 'admin"pw'
    assert router["comment"] == "No URL here" and router["description"] == "Root/Servers"
    # The TOTP seed is a secret: find without -w never prints it.
    listing = kc_ready.ok(["find", "--all", "--json"]).stdout
    assert "JBSWY3DPEHPK3PXP" not in listing and "gh-p@ss" not in listing


def test_bitwarden_csv(kc_ready):
    result, items = imported(kc_ready, "bitwarden-csv", "bitwarden.csv")
    assert "7 added, 1 skipped as duplicate, 1 rejected" in result.stderr
    assert "rejected row 3 (line 7): a card entry, which kc does not store" in result.stdout
    twitter = only_item(items, server="twitter.com")
    assert (twitter["protocol"], twitter["account"], twitter["description"], twitter["password"]) == (
        "https", "me@example.com", "Social", "tw-secret")
    bank = only_item(items, server="bank.example.com")
    assert bank["path"] == "/login" and bank["password"] == "bank€pass" and "description" not in bank
    assert bank["comment"] == 'Call 555-0100, ask for "Bob"\n\nOther URLs:\nhttps://m.bank.example.com'
    assert only_item(items, service="Bank (TOTP)")["password"] == "JBSWY3DPEHPK3PXP"
    assert only_item(items, service="Bank (PIN)")["password"] == "pin-1234"
    assert only_item(items, service="Bank (Security answer)", account="jdoe")["password"] == "blue"
    wifi = only_item(items, service="Wi-Fi")
    assert wifi["class"] == "generic" and wifi["password"] == "SSID office\nkey: s3cr3t-wifi" and "comment" not in wifi
    local = only_item(items, service="Local app")
    assert local["class"] == "generic" and local["account"] == "appuser" and local["password"] == "app-pass"
    listing = kc_ready.ok(["find", "--all", "--json"]).stdout
    assert "pin-1234" not in listing and "JBSWY3DPEHPK3PXP" not in listing and "s3cr3t-wifi" not in listing


def test_chrome_csv(kc_ready):
    result, items = imported(kc_ready, "chrome-csv", "chrome.csv")
    assert "4 added, 1 skipped as duplicate, 1 rejected" in result.stderr
    assert "rejected row 5 (line 8): no password" in result.stdout
    example = only_item(items, server="example.com")
    assert (example["protocol"], example["account"], example["label"], example["password"]) == (
        "https", "alice", "example.com", "pa,ss")
    assert "path" not in example
    google = only_item(items, server="accounts.google.com")
    assert google["path"] == "/signin" and google["password"] == "gööglé"
    assert google["comment"] == "a note\r\nover two lines"
    router = only_item(items, server="192.168.1.1")
    assert (router["protocol"], router["port"], router["password"]) == ("http", 8080, "router-pw")
    assert "account" not in router
    app = only_item(items, server="com.example.app")
    assert app["protocol"] == "android" and app["account"] == "carol"


def test_firefox_csv(kc_ready):
    result, items = imported(kc_ready, "firefox-csv", "firefox.csv")
    assert "2 added, 1 skipped as duplicate, 1 rejected" in result.stderr
    assert "rejected row 3 (line 5): invalid date 'yesterday'" in result.stdout
    mozilla = only_item(items, server="www.mozilla.org")
    assert (mozilla["account"], mozilla["password"], mozilla["label"]) == ("ffuser", "ff-pass", "www.mozilla.org")
    assert (mozilla["created"], mozilla["modified"]) == ("2023-11-14T22:13:20Z", "2023-11-14T22:18:20Z")
    intranet = only_item(items, server="intranet.example.com")
    assert intranet["securityDomain"] == "Staff Only" and intranet["password"] == 'realm "pass"'
    assert "account" not in intranet


@pytest.mark.parametrize("fmt,sample,line", [("keepassxc-csv", "keepassxc.csv", 7), ("bitwarden-csv", "bitwarden.csv", 7),
                                             ("chrome-csv", "chrome.csv", 8), ("firefox-csv", "firefox.csv", 5),
                                             ("bitwarden-json", "bitwarden.json", 73)])
def test_a_rejected_row_fails_the_import_without_partial(kc_ready, fmt, sample, line):
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", fmt, SAMPLES / sample])
    assert_failure(result, "errSecDecode")
    assert f"kc: error: {SAMPLES / sample}:{line}: " in result.stderr
    assert "--partial" in result.stderr
    assert kc_ready.vault_path.read_bytes() == before


def test_dry_run_reports_and_writes_nothing(kc_ready):
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.ok(["import", "keepassxc-csv", "--dry-run", "--partial", SAMPLES / "keepassxc.csv"])
    assert "4 would be added (dry run, nothing written)" in result.stderr
    assert result.stdout.count("would add") == 4
    assert kc_ready.vault_path.read_bytes() == before


def test_importing_twice_skips_everything(kc_ready):
    kc_ready.ok(["import", "chrome-csv", "--partial", SAMPLES / "chrome.csv"])
    again = kc_ready.ok(["import", "chrome-csv", "--partial", SAMPLES / "chrome.csv"])
    assert "0 added, 5 skipped as duplicate, 1 rejected" in again.stderr


BAD_FILES = {
    "another_tools_header": ("keepassxc-csv", (SAMPLES / "chrome.csv").read_bytes(), 1, "no 'Group' column"),
    "row_too_short": ("chrome-csv", b"name,url,username,password\nexample.com,https://example.com/,alice\n", 2,
                      "3 fields where the header has 4"),
    "broken_quote": ("keepassxc-csv", b'"Group","Title","Username","Password","URL","Notes"\n'
                     b'"Root","A","u","p","",""\n"Root","B","u","never closed\n', 3, "truncated"),
    "invalid_utf8": ("bitwarden-csv", b"folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,"
                     b"login_password,login_totp\n,,login,ok,,,0,,u,p,\n,,login,\xff,,,0,,u,p,\n", 3, "UTF-8"),
    "empty": ("chrome-csv", b"", 1, "empty"),
    "truncated_json": ("bitwarden-json", b'{"encrypted": false, "items": [\n{"type": 1, "name": "a", "login": {"password": "x"}},'
                       b'\n{"type": 1, "na', 3, "truncated"),
    "kc_json_as_bitwarden": ("bitwarden-json", b'[\n{"class": "generic", "service": "a", "password": "x"}\n]\n', 1,
                             "an object"),
    "invalid_utf8_json": ("bitwarden-json", b'{"encrypted": false, "items": [\n{"type": 1, "name": "\xff"}]}', 2, "UTF-8"),
    # Security review L5: 200,000 nested arrays crashed kc (stack overflow); beyond 64 levels the
    # file is refused on the line of the first bracket too many (the 63rd "[" of items, line 64).
    "deep_bitwarden_json": ("bitwarden-json", b'{"encrypted": false, "items": ' + b"[\n" * 200_000 + b"]" * 200_000 + b"}",
                            64, "nested more than 64 levels deep"),
    "deep_kc_json": ("json", b'[\n{"class": "generic", "requirePassword": ' + b"[" * 200_000 + b"]" * 200_000 + b"}]",
                     2, "nested more than 64 levels deep"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_a_file_kc_cannot_read_names_its_line_and_writes_nothing(kc_ready, tmp_path, name):
    fmt, contents, line, words = BAD_FILES[name]
    path = tmp_path / "bad.file"
    path.write_bytes(contents)
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", fmt, "--partial", path])
    assert_failure(result, "errSecDecode")
    assert f"kc: error: {path}:{line}: " in result.stderr and words in result.stderr, result
    assert kc_ready.vault_path.read_bytes() == before


def test_a_byte_order_mark_is_read_past(kc_ready, tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbfname,url,username,password\nx,https://x.example/,u,p\n")
    kc_ready.ok(["import", "chrome-csv", path])
    assert only_item(items_with_secrets(kc_ready), server="x.example")["password"] == "p"


def test_bitwarden_json(kc_ready):
    result, items = imported(kc_ready, "bitwarden-json", "bitwarden.json")
    assert "6 added, 1 skipped as duplicate, 1 rejected" in result.stderr
    assert "rejected item 2 (line 73): a card entry, which kc does not store" in result.stdout
    assert "skipped item 4 (line 118): Bank again (jdoe): already in the keychain" in result.stdout
    bank = only_item(items, server="bank.example.com")
    assert {k: bank.get(k) for k in ("protocol", "port", "path", "account", "label", "description", "password",
                                     "created", "modified")} == {
        "protocol": "https", "port": 8443, "path": "/login", "account": "jdoe", "label": "Bank – Online",
        "description": "Finance", "password": 'bänk\\pass"word', "created": "2023-06-01T12:00:00Z",
        "modified": "2024-02-10T09:15:30Z"}
    assert bank["comment"] == 'Branch: Main St, "north"\nCall before 5pm\n\nOther URLs:\nhttps://app.bank.example.com'
    assert only_item(items, service="Bank – Online (TOTP)")["password"].endswith("secret=JBSWY3DPEHPK3PXP&issuer=Bank")
    assert only_item(items, service="Bank – Online (PIN)", account="jdoe")["password"] == "pin-4321"
    assert only_item(items, service="Bank – Online (Customer number)")["password"] == "C-778"
    codes = only_item(items, service="Recovery codes")
    assert codes["class"] == "generic" and codes["password"] == "1111-2222\n3333-4444 🔑"
    mail = only_item(items, service="Mail server")
    assert mail["class"] == "generic" and "account" not in mail and mail["password"] == "imap-secret"
    listing = kc_ready.ok(["find", "--all", "--json"]).stdout
    assert "pin-4321" not in listing and "JBSWY3DPEHPK3PXP" not in listing and "3333-4444" not in listing


def test_an_encrypted_bitwarden_export_is_refused_with_a_hint(kc_ready, tmp_path):
    path = tmp_path / "encrypted.json"
    path.write_text(json.dumps({"encrypted": True, "passwordProtected": True, "salt": "c2FsdA==", "kdfType": 0,
                                "kdfIterations": 600000, "encKeyValidation_DO_NOT_EDIT": "2.aGk=|aGk=|aGk=",
                                "data": "2.aGk=|aGk=|aGk="}, indent=2))
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", "bitwarden-json", path])
    assert_failure(result, "errSecDecode")
    assert f"kc: error: {path}:1: the export is encrypted" in result.stderr
    assert "kc: hint: kc reads unencrypted exports only" in result.stderr
    assert kc_ready.vault_path.read_bytes() == before


def test_a_csv_written_by_the_real_keepassxc_cli(kc_ready, tmp_path):
    """A KeePassXC database made and exported by keepassxc-cli itself (Debian package keepassxc)."""
    import os
    import subprocess
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen", "LANG": "C.UTF-8"}
    db = tmp_path / "real.kdbx"

    def cli(*args, input):
        subprocess.run(["keepassxc-cli", *args], input=input, env=env, check=True, capture_output=True, text=True)
    cli("db-create", "-p", db, input="db-pass\ndb-pass\n")
    cli("mkdir", db, "Email", input="db-pass\n")
    cli("add", "-u", "marie@example.org", "--url", "imaps://mail.example.org:993", "--notes", 'line one\nline two, "quoted"',
        "-p", db, "Email/Mail Ω", input='db-pass\npässwörd, "q"\n')
    cli("add", "-p", db, "Router", input="db-pass\nrouter-pw\n")
    export = subprocess.run(["keepassxc-cli", "export", "-f", "csv", db], input=b"db-pass\n", env=env, check=True,
                            capture_output=True).stdout
    path = tmp_path / "real.csv"
    path.write_bytes(export)
    result = kc_ready.ok(["import", "keepassxc-csv", path])
    assert "2 added, 0 skipped as duplicate, 0 rejected" in result.stderr
    items = items_with_secrets(kc_ready)
    mail = only_item(items, server="mail.example.org")
    assert (mail["protocol"], mail["port"], mail["account"], mail["label"], mail["password"], mail["comment"]) == (
        "imaps", 993, "marie@example.org", "Mail Ω", 'pässwörd, "q"', 'line one\nline two, "quoted"')
    assert mail["description"].endswith("/Email")
    router = only_item(items, service="Router")
    assert router["class"] == "generic" and router["password"] == "router-pw" and "account" not in router


# Each CSV format: its header, a good row (n numbers it), and a row without a password.
CSV_FORMATS = {
    "keepassxc-csv": ('"Group","Title","Username","Password","URL","Notes"', '"Root","T{n}","u","p{n}","https://h{n}.example/",""',
                      '"Root","T9","u","","",""'),
    "bitwarden-csv": ("folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp",
                      ",,login,T{n},,,0,https://h{n}.example/,u,p{n},", ",,login,T9,,,0,,u,,"),
    "chrome-csv": ("name,url,username,password", "T{n},https://h{n}.example/,u,p{n}", "T9,https://h9.example/,u,"),
    "firefox-csv": ('"url","username","password","httpRealm","formActionOrigin","guid","timeCreated","timeLastUsed",'
                    '"timePasswordChanged"', '"https://h{n}.example","u","p{n}","","","{{x}}","1","1","1"',
                    '"https://h9.example","u","","","","{{x}}","1","1","1"'),
}
BAD_KINDS = {
    # kind: (the file from the header, a good row function and the bad row; the line named; words of the error)
    "wrong_columns": (lambda header, good, bad: f"a,b,c\n{good(0)}\n".encode(), 1, "column"),
    "missing_password": (lambda header, good, bad: f"{header}\n{good(0)}\n{bad}\n".encode(), 3, "no password"),
    "truncated": (lambda header, good, bad: f'{header}\n{good(0)}\n"never closed,\n'.encode(), 3, "truncated"),
    "invalid_utf8": (lambda header, good, bad: f"{header}\n{good(0)}\n".encode() + b"\xff" + f"{good(1)}\n".encode(), 3,
                     "UTF-8"),
}


@pytest.mark.parametrize("fmt", sorted(CSV_FORMATS))
@pytest.mark.parametrize("kind", sorted(BAD_KINDS))
def test_bad_input_of_each_csv_format_names_its_line_and_writes_nothing(kc_ready, tmp_path, fmt, kind):
    header, good_row, bad_row = CSV_FORMATS[fmt]
    make, line, words = BAD_KINDS[kind]
    path = tmp_path / "bad.csv"
    path.write_bytes(make(header, lambda n: good_row.format(n=n), bad_row))
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", fmt, path])
    assert_failure(result, "errSecDecode")
    assert f"kc: error: {path}:{line}: " in result.stderr and words in result.stderr, result
    assert kc_ready.vault_path.read_bytes() == before
    good = tmp_path / "good.csv"
    good.write_text(f"{header}\n{good_row.format(n=0)}\n{good_row.format(n=1)}\n")
    assert "2 added" in kc_ready.ok(["import", fmt, good]).stderr     # the same format is read when it is whole


# Bitwarden's reprompt (ask for the master password again): 1 marks the entry's items require-password.
REPROMPT = {
    "bitwarden-csv": ("bitwarden.csv", lambda value: (
        "folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"
        f",,login,Marked,,PIN: pin-1,{value},https://marked.example,u,p1,JBSWY3DPEHPK3PXP\n"
        ",,login,Plain,,,0,https://plain.example,u,p2,JBSWY3DPEHPK3PXQ\n"), 2),
    "bitwarden-json": ("bitwarden.json", lambda value: (
        '{"encrypted": false, "items": [\n'
        '{"type": 1, "name": "Marked", "reprompt": ' + value + ', "fields": [{"name": "PIN", "value": "pin-1"}],\n'
        ' "login": {"username": "u", "password": "p1", "uris": [{"uri": "https://marked.example"}], "totp": "JBSWY3DPEHPK3PXP"}},\n'
        '{"type": 1, "name": "Plain", "reprompt": 0,\n'
        ' "login": {"username": "u", "password": "p2", "uris": [{"uri": "https://plain.example"}], "totp": "JBSWY3DPEHPK3PXQ"}}\n'
        ']}\n'), 2),
}


@pytest.mark.parametrize("fmt", sorted(REPROMPT))
def test_a_bitwarden_reprompt_entry_is_imported_require_password(kc_ready, tmp_path, fmt):
    name, write, _ = REPROMPT[fmt]
    path = tmp_path / name
    path.write_text(write("1"))
    assert "5 added" in kc_ready.ok(["import", fmt, path]).stderr
    items = json.loads(kc_ready.ok(["find", "--all", "--json"]).stdout)
    for marked in (dict(server="marked.example"), dict(service="Marked (TOTP)"), dict(service="Marked (PIN)")):
        assert only_item(items, **marked).get("requirePassword") is True, marked
    for plain in (dict(server="plain.example"), dict(service="Plain (TOTP)")):
        assert "requirePassword" not in only_item(items, **plain), plain


@pytest.mark.parametrize("fmt", sorted(REPROMPT))
@pytest.mark.parametrize("value", ["2", '"yes"'])
def test_a_bad_bitwarden_reprompt_is_a_rejected_row_with_its_line(kc_ready, tmp_path, fmt, value):
    name, write, line = REPROMPT[fmt]
    path = tmp_path / name
    path.write_text(write(value))
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", fmt, path])
    assert_failure(result, "errSecDecode")
    assert f"kc: error: {path}:{line}: " in result.stderr and "reprompt" in result.stderr, result
    assert kc_ready.vault_path.read_bytes() == before
