"""kc search through the binary: every term in one of the readable attributes, ignoring case,
ordered by label, never the secret; errSecItemNotFound when nothing matches."""
import json

import pytest

from kcharness import EXIT_NOT_FOUND, EXIT_PARAM, assert_failure

SECRET = "hunter2-Needle"


@pytest.fixture
def kc_items(kc_ready):
    kc = kc_ready
    kc.add_generic("github.com", "me@example.com", SECRET, "-l", "GitHub", "-j", "personal")
    kc.add_generic("mail.example.org", "postmaster", SECRET, "-l", "Mail", "-D", "smtp relay")
    kc.add_internet("git.corp.example", "deploy", SECRET, "-l", "corp git", "-p", "/srv/ProjectX")
    kc.add_generic("vpn", "ops", SECRET, "-l", "Été VPN", "-j", "Ворота")
    kc.add_generic("nolabel.example", "anon", SECRET)
    return kc


def labels(result) -> list:
    """The LABEL column of the table search prints (the header dropped)."""
    lines = result.stdout.splitlines()
    start = lines[0].index("LABEL")
    end = lines[0].index("SERVICE/SERVER")
    return [line[start:end].strip() for line in lines[1:]]


def test_results_are_ordered_by_label_ignoring_case(kc_items):
    """Lower-cased labels by code point (so "Été" after "Mail"), unlabelled items last."""
    result = kc_items.ok(["search", "O"])
    assert result.stdout.splitlines()[0].split() == ["CLASS", "LABEL", "SERVICE/SERVER", "ACCOUNT", "MODIFIED"]
    assert labels(result) == ["corp git", "GitHub", "Mail", "Été VPN", "-"]


def test_every_term_must_occur(kc_items):
    assert labels(kc_items.ok(["search", "git", "me@"])) == ["GitHub"]          # label and account
    assert labels(kc_items.ok(["search", "GIT", "deploy"])) == ["corp git"]
    assert_failure(kc_items.run(["search", "github", "deploy"]), "errSecItemNotFound", EXIT_NOT_FOUND)


@pytest.mark.parametrize("term,label", [
    ("gItHuB", "GitHub"),            # label (and service)
    ("MAIL.EXAMPLE", "Mail"),        # service
    ("CORP.example", "corp git"),    # server
    ("POSTMASTER", "Mail"),          # account
    ("Relay", "Mail"),               # description
    ("PERSONAL", "GitHub"),          # comment
    ("projectx", "corp git"),        # path
    ("été", "Été VPN"),              # label, non-ASCII case
    ("ворота", "Été VPN"),           # comment, Cyrillic case
])
def test_each_attribute_is_searched(kc_items, term, label):
    assert labels(kc_items.ok(["search", term])) == [label]


def test_class_filter(kc_items):
    assert labels(kc_items.ok(["search", "git", "--class", "internet"])) == ["corp git"]
    assert labels(kc_items.ok(["search", "git", "--class", "generic"])) == ["GitHub"]
    assert_failure(kc_items.run(["search", "deploy", "--class", "generic"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    result = kc_items.run(["search", "git", "--class", "certificate"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert result.hint == "choose generic or internet"


def test_json_is_the_find_shape(kc_items):
    items = json.loads(kc_items.ok(["search", "git", "--json"]).stdout)
    assert [item["label"] for item in items] == ["corp git", "GitHub"]
    found = json.loads(kc_items.ok(["find", "-s", "github.com", "--json"]).stdout)
    assert items[1] == found[0]
    assert items[0]["class"] == "internet" and items[0]["path"] == "/srv/ProjectX"
    assert all("password" not in item and "passwordBase64" not in item for item in items)


def test_never_searches_or_prints_the_secret(kc_items):
    for args in (["search", SECRET], ["search", SECRET, "--json"], ["search", "needle"]):
        result = kc_items.run(args)
        assert_failure(result, "errSecItemNotFound", EXIT_NOT_FOUND)
        assert SECRET not in result.stdout + result.stderr
    for args in (["search", "e"], ["search", "e", "--json"]):
        output = kc_items.ok(args)
        assert SECRET not in output.stdout + output.stderr and "hunter2" not in output.stdout


def test_nothing_found(kc_items):
    result = kc_items.run(["search", "no-such-text"])
    assert_failure(result, "errSecItemNotFound", EXIT_NOT_FOUND)
    assert result.stdout == ""
    result = kc_items.run(["search", "no-such-text", "--json"])
    assert_failure(result, "errSecItemNotFound", EXIT_NOT_FOUND)
    assert result.stdout == "[]\n"


def test_usage_errors_need_no_vault(kc):
    assert_failure(kc.run(["search"]), "errSecParam", EXIT_PARAM)
    result = kc.run(["search", "git", ""])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "empty" in result.stderr
    assert_failure(kc.run(["search", "x", "--class", "bogus"]), "errSecParam", EXIT_PARAM)


def test_find_keeps_exact_matching(kc_items):
    assert_failure(kc_items.run(["find", "-s", "github"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    assert_failure(kc_items.run(["find", "-s", "GITHUB.COM"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    kc_items.ok(["find", "-s", "GITHUB.COM", "-i"])
