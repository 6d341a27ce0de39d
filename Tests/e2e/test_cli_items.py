"""add, find, update, delete, list: Keychain Services semantics through the binary."""
import base64
import json
import re

import pytest

from kcharness import EXIT_DUPLICATE, EXIT_INTERACTION, EXIT_NOT_FOUND, EXIT_PARAM, assert_failure

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def fields(text: str) -> dict:
    """`name: value` lines of one item."""
    return dict(line.split(": ", 1) for line in text.strip().splitlines())


def find_json(kc, *args):
    result = kc.ok(["find", *args, "--json"])
    return json.loads(result.stdout)


def test_add_and_find_generic(kc_ready):
    kc = kc_ready
    kc.ok(["add", "generic", "-s", "github.com", "-a", "me@example.com", "-l", "GitHub", "-D", "token",
           "-j", "work", "-G", "gen", "--password-stdin"], input="hunter2\n")
    assert kc.ok(["find", "generic", "-s", "github.com", "-w"]).stdout_bytes == b"hunter2\n"
    shown = kc.ok(["find", "generic", "-s", "github.com"])
    item = fields(shown.stdout)
    assert item["class"] == "generic"
    assert item["service"] == "github.com" and item["account"] == "me@example.com"
    assert item["label"] == "GitHub" and item["description"] == "token"
    assert item["comment"] == "work" and item["generic"] == "gen"
    assert re.fullmatch(r"[0-9a-f]{32}", item["id"])
    assert ISO.match(item["created"]) and ISO.match(item["modified"])
    assert "hunter2" not in shown.stdout and "hunter2" not in shown.stderr


def test_add_and_find_internet(kc_ready):
    kc = kc_ready
    kc.ok(["add", "internet", "-s", "ftp.example.com", "-r", "ftp", "-P", "21", "-a", "deploy", "-p", "/pub",
           "-d", "realm", "-t", "httpbasic", "-l", "FTP", "--password-stdin"], input="ftp-pw")
    [item] = find_json(kc, "internet", "-s", "ftp.example.com")
    identity = {name: item.pop(name) for name in ("id", "created", "modified")}
    assert re.fullmatch(r"[0-9a-f]{32}", identity["id"]), identity
    assert ISO.match(identity["created"]) and ISO.match(identity["modified"]), identity
    assert item == {
        "class": "internet", "server": "ftp.example.com", "protocol": "ftp", "port": 21,
        "path": "/pub", "securityDomain": "realm", "authenticationType": "httpbasic", "account": "deploy",
        "label": "FTP",
    }
    kc.add_internet("other.example.com", "x")
    [other] = find_json(kc, "internet", "-s", "other.example.com")
    assert other["authenticationType"] == "default"
    assert "port" not in other and "protocol" not in other and "label" not in other


def test_duplicate_is_refused_and_update_existing_upserts(kc_ready):
    kc = kc_ready
    kc.add_generic("svc", "acct", "one")
    assert_failure(kc.run(["add", "generic", "-s", "svc", "-a", "acct", "--password-stdin"], input="two"),
                   "errSecDuplicateItem", EXIT_DUPLICATE)
    assert kc.ok(["find", "generic", "-s", "svc", "-w"]).stdout == "one\n"
    kc.ok(["add", "generic", "-s", "svc", "-a", "acct", "-U", "-l", "new", "--password-stdin"], input="two")
    assert kc.ok(["find", "generic", "-s", "svc", "-w"]).stdout == "two\n"
    assert len(find_json(kc, "--all")) == 1
    # A different account is a different primary key.
    kc.add_generic("svc", "other", "three")
    assert len(find_json(kc, "generic", "-s", "svc", "--all")) == 2


def test_internet_primary_key_includes_protocol_and_port(kc_ready):
    kc = kc_ready
    kc.add_internet("host", "u", "a", "-r", "ftp", "-P", "21")
    kc.add_internet("host", "u", "b", "-r", "ftps", "-P", "21")
    kc.add_internet("host", "u", "c", "-r", "ftp", "-P", "2121")
    assert_failure(kc.run(["add", "internet", "-s", "host", "-a", "u", "-r", "ftp", "-P", "21", "--password-stdin"],
                          input="d"), "errSecDuplicateItem", EXIT_DUPLICATE)
    assert kc.ok(["find", "internet", "-s", "host", "-r", "ftps", "-w"]).stdout == "b\n"


def test_not_found(kc_ready):
    result = kc_ready.run(["find", "generic", "-s", "nothing"])
    assert_failure(result, "errSecItemNotFound", EXIT_NOT_FOUND)
    assert result.stdout == ""
    assert result.stderr == "kc: error: The specified item could not be found in the keychain (errSecItemNotFound)\n"
    json_result = kc_ready.run(["find", "-s", "nothing", "--json"])
    assert_failure(json_result, "errSecItemNotFound", EXIT_NOT_FOUND)
    assert json_result.stdout == "[]\n"


def test_find_is_exact_unless_ignore_case(kc_ready):
    kc = kc_ready
    kc.add_internet("ftp.example.com", "deploy")
    assert_failure(kc.run(["find", "internet", "-s", "FTP.example.com"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    assert_failure(kc.run(["find", "internet", "-s", "ftp.example"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    item = fields(kc.ok(["find", "internet", "-s", "FTP.example.com", "-i"]).stdout)
    assert item["server"] == "ftp.example.com"
    assert fields(kc.ok(["find", "-s", "FTP.EXAMPLE.COM", "-a", "DEPLOY", "-i"]).stdout)["account"] == "deploy"


def test_find_without_class_searches_both(kc_ready):
    kc = kc_ready
    kc.add_generic("shared.example.com", "g", "generic-secret")
    kc.add_internet("shared.example.com", "i", "internet-secret")
    both = find_json(kc, "-s", "shared.example.com", "--all")
    assert [item["class"] for item in both] == ["generic", "internet"]
    assert kc.ok(["find", "--server", "shared.example.com", "-w"]).stdout == "generic-secret\n"  # first created
    assert kc.ok(["find", "-a", "i", "-w"]).stdout == "internet-secret\n"
    assert len(find_json(kc, "--all")) == 2


def test_match_limit_one_returns_first_created(kc_ready):
    kc = kc_ready
    for account in ["first", "second", "third"]:
        kc.add_generic("svc", account, account + "-pw")
    assert kc.ok(["find", "generic", "-s", "svc", "-w"]).stdout == "first-pw\n"
    assert kc.ok(["find", "generic", "-s", "svc", "-w", "--all"]).stdout == "first-pw\nsecond-pw\nthird-pw\n"
    human = kc.ok(["find", "generic", "-s", "svc", "--all"]).stdout
    assert human.count("id: ") == 3 and "\n\nid: " in human


def test_find_password_prints_raw_bytes(kc_ready):
    kc = kc_ready
    secret = bytes(range(256)) + b"\n\n"
    kc.ok(["add", "generic", "-s", "bin", "--password-stdin", "--binary"], input=secret)
    assert kc.ok(["find", "generic", "-s", "bin", "-w"]).stdout_bytes == secret + b"\n"
    [item] = find_json(kc, "generic", "-s", "bin", "-w")
    assert "password" not in item
    assert base64.b64decode(item["passwordBase64"]) == secret


def test_json_password_field_for_utf8(kc_ready):
    kc = kc_ready
    secret = 'pä"ss\\wörd\ttab\u0001'
    kc.add_generic("utf", "a", secret)
    [item] = find_json(kc, "generic", "-s", "utf", "-w")
    assert item["password"] == secret and "passwordBase64" not in item
    [without] = find_json(kc, "generic", "-s", "utf")
    assert "password" not in without and "passwordBase64" not in without


def test_json_escapes_attributes(kc_ready):
    kc = kc_ready
    label = 'quote " backslash \\ newline \n tab \t bell \u0007 ✓'
    kc.add_generic("esc", "a", "pw", "-l", label)
    [item] = find_json(kc, "-s", "esc")
    assert item["label"] == label
    # Human output escapes control characters instead of printing them raw.
    human = kc.ok(["find", "-s", "esc"]).stdout
    assert "\u0007" not in human and "\\x07" in human


def test_password_stdin_newline_handling(kc_ready):
    kc = kc_ready
    cases = {"one": ("pw\n", "pw"), "two": ("pw\n\n", "pw\n"), "none": ("pw", "pw"), "inner": ("a\nb\n", "a\nb")}
    for service, (given, stored) in cases.items():
        kc.ok(["add", "generic", "-s", service, "--password-stdin"], input=given)
        assert kc.ok(["find", "generic", "-s", service, "-w"]).stdout == stored + "\n", service
    kc.ok(["add", "generic", "-s", "binary", "--password-stdin", "--binary"], input="pw\n")
    assert kc.ok(["find", "generic", "-s", "binary", "-w"]).stdout == "pw\n\n"


def test_empty_stdin_secret_is_refused(kc_ready):
    result = kc_ready.run(["add", "generic", "-s", "x", "--password-stdin"], input="\n")
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert_failure(kc_ready.run(["find", "-s", "x"]), "errSecItemNotFound", EXIT_NOT_FOUND)


def test_binary_needs_password_stdin(kc_ready):
    assert_failure(kc_ready.run(["add", "generic", "-s", "x", "--binary"]), "errSecParam", EXIT_PARAM)


def test_add_without_secret_source_and_no_terminal(kc_ready):
    result = kc_ready.run(["add", "generic", "-s", "x"])
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert "--password-stdin" in (result.hint or "")


def test_add_needs_service(kc_ready):
    result = kc_ready.run(["add", "generic", "-a", "x", "--password-stdin"], input="p")
    assert_failure(result, "errSecParam", EXIT_PARAM)


@pytest.mark.parametrize("port", ["0", "65536", "http", "-1", "21x"])
def test_bad_port(kc_ready, port):
    result = kc_ready.run(["add", "internet", "-s", "h", f"--port={port}", "--password-stdin"], input="p")
    assert_failure(result, "errSecParam", EXIT_PARAM)


def test_update_attributes_and_secret(kc_ready):
    kc = kc_ready
    kc.add_generic("github.com", "me", "old", "-l", "GitHub", "-j", "note")
    [before] = find_json(kc, "-s", "github.com")
    kc.ok(["update", "generic", "-s", "github.com", "-a", "me", "--set-label", "Work", "--set-comment", "",
           "--password-stdin"], input="new\n")
    [after] = find_json(kc, "-s", "github.com")
    assert after["label"] == "Work" and "comment" not in after
    assert after["id"] == before["id"] and after["created"] == before["created"]
    assert kc.ok(["find", "generic", "-s", "github.com", "-w"]).stdout == "new\n"
    # Attributes only: the secret stays.
    kc.ok(["update", "generic", "-s", "github.com", "--set-account", "you"])
    assert kc.ok(["find", "generic", "-a", "you", "-w"]).stdout == "new\n"


def test_update_internet_set_flags(kc_ready):
    kc = kc_ready
    kc.add_internet("old.example.com", "u", "pw", "-r", "ftp", "-P", "21")
    kc.ok(["update", "internet", "-s", "old.example.com", "--set-server", "new.example.com", "--set-port", "2121",
           "--set-protocol", "ftps", "--set-path", "/x", "--set-security-domain", "d", "--set-auth-type", "ntlm"])
    [item] = find_json(kc, "internet", "-s", "new.example.com")
    assert (item["port"], item["protocol"], item["path"], item["securityDomain"], item["authenticationType"]) == \
        (2121, "ftps", "/x", "d", "ntlm")
    assert_failure(kc.run(["update", "internet", "-s", "new.example.com", "--set-port", "99999"]), "errSecParam", EXIT_PARAM)


def test_update_collision_is_duplicate(kc_ready):
    kc = kc_ready
    kc.add_generic("svc", "a")
    kc.add_generic("svc", "b")
    before = kc.vault_path.read_bytes()
    assert_failure(kc.run(["update", "generic", "-s", "svc", "-a", "b", "--set-account", "a"]), "errSecDuplicateItem", EXIT_DUPLICATE)
    assert kc.vault_path.read_bytes() == before


def test_update_several_matches_needs_all(kc_ready):
    kc = kc_ready
    kc.add_generic("svc", "a", "1")
    kc.add_generic("svc", "b", "2")
    before = kc.vault_path.read_bytes()
    result = kc.run(["update", "generic", "-s", "svc", "--set-label", "L"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "2 items match" in result.stderr and "--all" in (result.hint or "")
    assert " a " in result.stderr and " b " in result.stderr   # the matches are listed
    assert kc.vault_path.read_bytes() == before
    kc.ok(["update", "generic", "-s", "svc", "--set-label", "L", "--all"])
    assert [item["label"] for item in find_json(kc, "-s", "svc", "--all")] == ["L", "L"]


def test_update_not_found_and_nothing_to_change(kc_ready):
    kc = kc_ready
    assert_failure(kc.run(["update", "generic", "-s", "none", "--set-label", "x"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    kc.add_generic("svc")
    assert_failure(kc.run(["update", "generic", "-s", "svc"]), "errSecParam", EXIT_PARAM)
    assert_failure(kc.run(["update", "generic", "--set-label", "x"]), "errSecParam", EXIT_PARAM)   # no selection


def test_delete(kc_ready):
    kc = kc_ready
    kc.add_internet("ftp.example.com", "deploy")
    kc.add_internet("ftp.example.com", "other")
    result = kc.ok(["delete", "internet", "-s", "ftp.example.com", "-a", "deploy"])
    assert "deleted 1 item" in result.stderr
    assert [i["account"] for i in find_json(kc, "--all")] == ["other"]
    assert_failure(kc.run(["delete", "internet", "-s", "ftp.example.com", "-a", "deploy"]), "errSecItemNotFound", EXIT_NOT_FOUND)


def test_delete_several_matches_needs_all(kc_ready):
    kc = kc_ready
    kc.add_generic("svc", "a")
    kc.add_generic("svc", "b")
    kc.add_generic("keep", "c")
    before = kc.vault_path.read_bytes()
    result = kc.run(["delete", "generic", "-s", "svc"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "2 items match" in result.stderr
    assert kc.vault_path.read_bytes() == before
    kc.ok(["delete", "generic", "-s", "svc", "--all"])
    assert [i["service"] for i in find_json(kc, "--all")] == ["keep"]
    # --all never selects every item by itself (issue 19).
    assert_failure(kc.run(["delete", "generic", "--all"]), "errSecParam", EXIT_PARAM)
    kc.ok(["delete", "generic", "-s", "keep", "--all"])
    assert_failure(kc.run(["find", "--all"]), "errSecItemNotFound", EXIT_NOT_FOUND)


def test_list(kc_ready):
    kc = kc_ready
    empty = kc.ok(["list"])
    assert empty.stdout == ""
    assert kc.ok(["list", "--json"]).stdout == "[]\n"
    kc.add_generic("github.com", "me@example.com", "top-secret", "-l", "GitHub")
    kc.add_internet("ftp.example.com", "deploy", "top-secret-2")
    table = kc.ok(["list"]).stdout.splitlines()
    assert table[0].split() == ["CLASS", "LABEL", "SERVICE/SERVER", "ACCOUNT", "MODIFIED"]
    assert table[1].split()[:4] == ["generic", "GitHub", "github.com", "me@example.com"]
    assert table[2].split()[:4] == ["internet", "-", "ftp.example.com", "deploy"]
    assert ISO.match(table[1].split()[4])
    listed = json.loads(kc.ok(["list", "--json"]).stdout)
    assert [item["class"] for item in listed] == ["generic", "internet"]
    everything = kc.ok(["list", "--json"]).stdout + kc.ok(["list"]).stdout
    assert "top-secret" not in everything


def test_json_field_names_are_the_documented_ones(kc_ready):
    kc = kc_ready
    kc.add_generic("s", "a", "p", "-l", "l", "-D", "d", "-j", "c", "-G", "g")
    kc.add_internet("h", "a", "p", "-r", "ftp", "-P", "21", "-p", "/p", "-d", "dom", "-t", "ntlm", "-l", "l", "-D", "d", "-j", "c")
    documented = {"id", "class", "service", "account", "label", "description", "comment", "generic", "server",
                  "protocol", "port", "path", "securityDomain", "authenticationType", "created", "modified"}
    items = find_json(kc, "--all")
    assert set(items[0]) | set(items[1]) == documented
    with_secrets = find_json(kc, "--all", "-w")
    assert all(set(item) - documented == {"password"} for item in with_secrets)
