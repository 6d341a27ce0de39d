"""Lookup by name through the binary: `kc get NAME [ACCOUNT]`, `kc show`, `kc ls`, find's warning
for several matches, the picker at a real terminal, the lookup through an unlocked agent, a real
pass store imported then looked up by path, and the names in bash, zsh and fish completion."""
import json
import os
import shutil
import subprocess

import pexpect
import pytest

from agentsupport import NO_SOURCE, akc, unlock  # noqa: F401
from kcharness import EXIT_CANCELED, EXIT_NOT_FOUND, EXIT_PARAM, assert_failure
from test_completion_items import bash, fish, zsh


@pytest.fixture
def filled(kc_ready):
    kc = kc_ready
    kc.add_generic("github.com", "me@example.com", "gh-me", "-l", "GitHub")
    kc.add_generic("github.com", "work@corp.example", "gh-work")
    kc.add_internet("mail.example.com", "me", "mail-pw", "-l", "web/mail", "-r", "imaps", "-P", "993")
    kc.add_generic("wifi", None, "wifi-pw", "-D", "Home", "-j", "the router")
    return kc


def secret_of(kc, *args, **kwargs):
    result = kc.ok(["get", *args], **kwargs)
    return result.stdout_bytes


def test_get_prints_only_the_secret_and_a_newline(filled):
    result = filled.ok(["get", "GitHub"])
    assert result.stdout_bytes == b"gh-me\n"
    assert result.stderr == ""


def test_the_label_comes_first_then_the_service_then_case_then_a_part(filled):
    kc = filled
    kc.add_generic("elsewhere", "z", "by-label", "-l", "wifi")
    assert secret_of(kc, "wifi") == b"by-label\n"               # the label before the service
    assert secret_of(kc, "web/mail") == b"mail-pw\n"            # an internet item's label
    assert secret_of(kc, "mail.example.com") == b"mail-pw\n"    # an internet item's server
    assert secret_of(kc, "github") == b"gh-me\n"                # the label GitHub, ignoring case
    assert secret_of(kc, "MAIL.EXAMPLE.COM") == b"mail-pw\n"    # the server, ignoring case
    result = kc.ok(["get", "mail.ex"])                          # a part of the server: noted
    assert result.stdout_bytes == b"mail-pw\n"
    assert result.stderr == "kc: 'mail.ex' matched the server of the internet item mail.example.com (me)\n"


def test_an_unknown_name_is_not_found_with_a_hint(filled):
    result = filled.run(["get", "nothing-like-it"])
    assert_failure(result, "errSecItemNotFound", EXIT_NOT_FOUND)
    assert "no item is named 'nothing-like-it'" in result.stderr
    assert "kc search nothing-like-it" in result.hint
    assert result.stdout_bytes == b""


def test_several_matches_without_a_terminal_fail_and_list_them(filled):
    before = filled.vault_path.read_bytes()
    result = filled.run(["get", "github.com"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert result.stdout_bytes == b""
    assert "kc: 2 items match 'github.com':" in result.stderr
    assert "me@example.com" in result.stderr and "work@corp.example" in result.stderr
    assert "gh-me" not in result.stderr and "gh-work" not in result.stderr
    assert "kc get NAME ACCOUNT" in result.hint
    assert filled.vault_path.read_bytes() == before
    # Two substring matches are ambiguous too.
    assert_failure(filled.run(["show", "hub"]), "errSecParam", EXIT_PARAM)


def test_the_account_narrows(filled):
    kc = filled
    assert secret_of(kc, "github.com", "work@corp.example") == b"gh-work\n"
    assert secret_of(kc, "github.com", "-a", "me@example.com") == b"gh-me\n"
    assert_failure(kc.run(["get", "github.com", "WORK@corp.example"]), "errSecItemNotFound", EXIT_NOT_FOUND)
    assert secret_of(kc, "github.com", "WORK@corp.example", "-i") == b"gh-work\n"
    result = kc.run(["get", "github.com", "work@corp.example", "-a", "me@example.com"])
    assert_failure(result, "errSecParam", EXIT_PARAM)


def test_class_and_attribute_flags_still_apply(filled):
    kc = filled
    kc.add_internet("github.com", "me@example.com", "gh-web", "-r", "https")
    assert_failure(kc.run(["get", "github.com", "me@example.com"]), "errSecParam", EXIT_PARAM)
    assert secret_of(kc, "github.com", "me@example.com", "--class", "internet") == b"gh-web\n"
    assert secret_of(kc, "github.com", "me@example.com", "-r", "https") == b"gh-web\n"       # -r: internet items
    assert secret_of(kc, "github.com", "me@example.com", "--class", "generic") == b"gh-me\n"
    assert secret_of(kc, "-s", "mail.example.com") == b"mail-pw\n"                         # no NAME: flags alone
    assert secret_of(kc, "-D", "Home") == b"wifi-pw\n"
    assert_failure(kc.run(["get", "x", "--class", "generic", "-r", "https"]), "errSecParam", EXIT_PARAM)
    assert_failure(kc.run(["get"]), "errSecParam", EXIT_PARAM)
    assert_failure(kc.run(["get", ""]), "errSecParam", EXIT_PARAM)


def test_get_field_prints_one_attribute(filled):
    kc = filled
    assert secret_of(kc, "web/mail", "--field", "account") == b"me\n"
    assert secret_of(kc, "web/mail", "--field", "url") == b"imaps://mail.example.com:993\n"
    assert secret_of(kc, "wifi", "--field", "comment") == b"the router\n"
    assert secret_of(kc, "wifi", "--field", "description") == b"Home\n"
    assert secret_of(kc, "wifi", "--field", "password") == b"wifi-pw\n"
    assert secret_of(kc, "GitHub", "--field", "service") == b"github.com\n"
    result = kc.run(["get", "wifi", "--field", "url"])
    assert_failure(result, "errSecItemNotFound", EXIT_NOT_FOUND)
    assert "has no url" in result.stderr
    assert_failure(kc.run(["get", "wifi", "--field", "colour"]), "errSecParam", EXIT_PARAM)


def test_show_prints_the_attributes_and_the_secret_only_with_w(filled):
    kc = filled
    shown = kc.ok(["show", "GitHub"]).stdout
    assert "service: github.com\n" in shown and "account: me@example.com\n" in shown and "label: GitHub\n" in shown
    assert "gh-me" not in shown
    with_secret = kc.ok(["show", "GitHub", "-w"]).stdout
    assert with_secret.startswith(shown) and with_secret.endswith("password: gh-me\n")
    (item,) = json.loads(kc.ok(["show", "web/mail", "--json", "-w"]).stdout)
    assert (item["server"], item["password"]) == ("mail.example.com", "mail-pw")
    kc.add_generic("multi", "x", "line one\nline two", "--binary")
    assert kc.ok(["show", "multi", "-w"]).stdout.endswith("passwordBase64: bGluZSBvbmUKbGluZSB0d28=\n")


def test_find_warns_when_it_prints_the_first_of_several(filled):
    kc = filled
    result = kc.ok(["find", "-s", "github.com", "-w"])
    assert result.stdout_bytes == b"gh-me\n"
    assert result.stderr == ("kc: warning: 2 items match; printed the first (generic github.com (me@example.com)); "
                             "narrow with -a or use --all\n")
    assert "warning" not in kc.ok(["find", "-s", "github.com", "-a", "work@corp.example", "-w"]).stderr
    assert kc.ok(["find", "-s", "github.com", "--all", "-w"]).stderr == ""
    assert "2 items match" in kc.ok(["find", "generic", "-s", "github.com", "--json"]).stderr
    # macOS security's first match stays silent.
    silent = kc.ok(["security", "find-generic-password", "-s", "github.com", "-w"])
    assert (silent.stdout_bytes, silent.stderr) == (b"gh-me\n", "")


def test_find_w_with_no_attribute_is_a_usage_error(filled):
    for args in (["find", "-w"], ["find", "generic", "-w"], ["find", "--json", "-w"]):
        result = filled.run(args)
        assert_failure(result, "errSecParam", EXIT_PARAM)
        assert result.stdout_bytes == b"", args
    assert len(json.loads(filled.ok(["find", "--all", "--json", "-w"]).stdout)) == 4


def test_ls_draws_a_tree_by_description_and_label_path(filled):
    kc = filled
    kc.add_generic("db", "postgres", "x", "-l", "servers/db/prod")
    assert kc.ok(["ls"]).stdout.splitlines() == [
        "├── GitHub (me@example.com)",
        "├── github.com (work@corp.example)",
        "├── Home",
        "│   └── wifi",
        "├── servers",
        "│   └── db",
        "│       └── prod (postgres)",
        "└── web",
        "    └── mail (me)",
    ]
    assert kc.ok(["ls", "serv"]).stdout.splitlines() == ["└── servers", "    └── db", "        └── prod (postgres)"]
    assert kc.ok(["ls", "--flat"]).stdout.splitlines()[0].startswith("CLASS")
    assert_failure(kc.run(["ls", "nothing"]), "errSecItemNotFound", EXIT_NOT_FOUND)


def test_ls_flat_is_the_table_of_list_and_nested_groups_nest(filled):
    kc = filled
    kc.add_generic("zzz-first-added", "me", "x")            # no label: last in list's order
    kc.add_generic("forum", "me", "x", "-l", "Forum", "-D", "Root/Internet/Social")
    assert kc.ok(["ls", "--flat"]).stdout == kc.ok(["list"]).stdout
    tree = kc.ok(["ls", "Root"]).stdout.splitlines()
    assert tree == ["└── Root", "    └── Internet", "        └── Social", "            └── Forum (me)"], tree


def test_lookup_through_the_unlocked_agent(akc):
    akc.add_generic("github.com", "me", "gh-me", "-l", "GitHub")
    akc.add_generic("github.com", "work", "gh-work")
    akc.add_generic("marked.example", "x", "marked-pw", "--require-password")
    unlock(akc)
    # No master password source: only the agent can answer.
    assert akc.ok(["get", "github"], unset=NO_SOURCE).stdout_bytes == b"gh-me\n"
    assert akc.ok(["get", "github.com", "work"], unset=NO_SOURCE).stdout_bytes == b"gh-work\n"
    assert "account: work" in akc.ok(["show", "github.com", "work"], unset=NO_SOURCE).stdout
    assert_failure(akc.run(["get", "github.com"], unset=NO_SOURCE), "errSecParam", EXIT_PARAM)
    # Showing a marked item's attributes asks nothing; its secret asks again (no terminal here).
    assert "requirePassword: yes" in akc.ok(["show", "marked"], unset=NO_SOURCE).stdout
    assert akc.run(["get", "marked"], unset=NO_SOURCE).returncode != 0


# -- the picker, at a real terminal ---------------------------------------------------------------

def picker(kc, *args):
    child = kc.spawn(["get", *args])
    child.expect_exact("items match 'github.com':")
    child.expect_exact("Pick an item (1-")
    return child


def finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_the_picker_takes_a_number(filled):
    child = picker(filled, "github.com")
    assert "work@corp.example" in child.before
    child.sendline("2")
    assert finish(child) == 0
    assert "gh-work" in child.before


def test_the_picker_narrows_with_text(filled):
    filled.add_generic("github.com", "third@example.com", "gh-third")
    child = picker(filled, "github.com")
    child.sendline("example.com")                 # two of the three contain it
    child.expect_exact("2 items contain 'example.com':")
    child.expect_exact("Pick an item (1-2)")
    child.sendline("third")                       # one left: taken
    assert finish(child) == 0
    assert "gh-third" in child.before
    child = picker(filled, "github.com")
    child.sendline("9")
    child.expect_exact("no item numbered 9")
    child.sendline("1")
    assert finish(child) == 0
    assert "gh-me" in child.before


@pytest.mark.parametrize("key", ["\x1b", "\x03"])
def test_esc_or_ctrl_c_cancels_the_picker(filled, key):
    before = filled.vault_path.read_bytes()
    child = picker(filled, "github.com")
    child.send(key)
    assert finish(child) == EXIT_CANCELED
    assert "errSecUserCanceled" in child.before
    assert "gh-" not in child.before
    assert filled.vault_path.read_bytes() == before


def test_an_arrow_key_does_not_cancel_the_picker(filled):
    child = picker(filled, "github.com")
    child.send("\x1b[A")
    child.sendline("1")
    assert finish(child) == 0
    assert "gh-me" in child.before


# -- a real pass store ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pass_store(tmp_path_factory):
    """A pass store (real gpg key without passphrase): web/github has a url: line, misc/wifi none."""
    if shutil.which("pass") is None or shutil.which("gpg") is None:
        pytest.fail("pass and gpg are needed (make test installs them)")
    root = tmp_path_factory.mktemp("pass")
    gnupg = root / "gnupg"
    gnupg.mkdir(mode=0o700)
    env = {"PATH": os.environ["PATH"], "HOME": str(root), "GNUPGHOME": str(gnupg),
           "PASSWORD_STORE_DIR": str(root / "store"), "LANG": "C.UTF-8"}
    subprocess.run(["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key",
                    "kc test <kc@example.com>", "future-default", "default", "never"], env=env, check=True, capture_output=True)
    listing = subprocess.run(["gpg", "--batch", "--with-colons", "--list-secret-keys"], env=env, check=True,
                             capture_output=True, text=True).stdout
    key = next(line.split(":")[4] for line in listing.splitlines() if line.startswith("sec:"))
    subprocess.run(["pass", "init", key], env=env, check=True, capture_output=True)
    entries = {"web/github": "gh-pass\nlogin: me\nurl: https://github.com\nrecovery: abc\n",
               "misc/wifi": "wifi-pass\n", "web/github.com": "other-pass\n"}
    for name, text in entries.items():
        subprocess.run(["pass", "insert", "-m", name], input=text, env=env, check=True, capture_output=True, text=True)
    yield root / "store", env
    subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=env, capture_output=True)


def test_every_imported_pass_entry_answers_to_its_path(kc_ready, pass_store):
    folder, env = pass_store
    kc_ready.ok(["import", "pass", folder], env={"GNUPGHOME": env["GNUPGHOME"]})
    assert secret_of(kc_ready, "web/github") == b"gh-pass\n"          # had a url: line (an internet item)
    assert secret_of(kc_ready, "misc/wifi") == b"wifi-pass\n"          # had none (a generic item)
    assert secret_of(kc_ready, "web/github.com") == b"other-pass\n"
    assert secret_of(kc_ready, "web/github", "--field", "account") == b"me\n"
    assert secret_of(kc_ready, "web/github (notes)") == b"recovery: abc\n"
    tree = kc_ready.ok(["ls", "web"]).stdout
    assert "github (me)" in tree and "github (notes) (me)" in tree and "github.com" in tree


# -- completion of names --------------------------------------------------------------------------

@pytest.fixture
def named(akc):
    akc.add_generic("github.com", "me@example.com")
    akc.add_generic("github.com", "work@corp.example")
    akc.add_generic("gitlab.com", "ops", "x", "-l", "GitLab")
    unlock(akc)
    return akc


def test_bash_completes_names_then_the_accounts_of_that_name(named, tmp_path):
    assert bash(named, tmp_path, "get", "git") == ["github.com", "gitlab.com"]
    assert "--field" in bash(named, tmp_path, "get", "github.com", "--f")
    assert bash(named, tmp_path, "show", "GitL") == ["GitLab"]
    assert bash(named, tmp_path, "get", "github.com", "") == ["me@example.com", "work@corp.example"]
    assert bash(named, tmp_path, "get", "GitLab", "") == ["ops"]
    # -a after -s completes that service's accounts only (newcomer step 10).
    assert bash(named, tmp_path, "find", "-s", "gitlab.com", "-a", "") == ["ops"]
    assert sorted(bash(named, tmp_path, "find", "-a", "")) == ["me@example.com", "ops", "work@corp.example"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_names_and_accounts(named, tmp_path):
    assert {"github.com", "gitlab.com", "GitLab"} <= zsh(named, tmp_path, "kc get ")
    assert zsh(named, tmp_path, "kc find -s gitlab.com -a ") == {"ops"}


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_names(named, tmp_path):
    assert {"github.com", "gitlab.com", "GitLab"} <= set(fish(named, tmp_path, "kc show "))
    assert fish(named, tmp_path, "kc find -s gitlab.com -a ") == ["ops"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
@pytest.mark.parametrize("command", ["get", "show", "edit"])
def test_fish_completes_the_accounts_of_the_name_typed(named, tmp_path, command):
    """The positional ACCOUNT after NAME, as bash and zsh complete it: the accounts of that name only."""
    assert fish(named, tmp_path, f"kc {command} github.com ") == ["me@example.com", "work@corp.example"]
    assert fish(named, tmp_path, f"kc {command} GitLab ") == ["ops"]
    assert fish(named, tmp_path, f"kc {command} github.com w") == ["work@corp.example"]
    assert fish(named, tmp_path, f"kc {command} -q github.com ") == ["me@example.com", "work@corp.example"]
    assert fish(named, tmp_path, f"kc {command} github.com me@example.com ") == []   # nothing after ACCOUNT


def test_find_through_the_agent_reveals_only_the_first_of_several(akc):
    """Counting the matches for the warning never reveals the others: a marked second match does
    not make the agent ask for the master password again (no terminal, no password source here)."""
    akc.add_generic("shared.example", "first", "first-pw")
    akc.add_generic("shared.example", "second", "second-pw", "--require-password")
    unlock(akc)
    result = akc.run(["find", "-s", "shared.example", "-w"], unset=NO_SOURCE)
    assert result.returncode == 0, result
    assert result.stdout_bytes == b"first-pw\n"
    assert "2 items match; printed the first" in result.stderr
