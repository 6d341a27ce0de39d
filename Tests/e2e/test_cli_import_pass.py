"""kc import pass through the binary, against a real pass store made by `pass` with a real gpg key
(no passphrase) in a temporary GNUPGHOME: nested folders, multi-line entries, login/url lines, a pass-otp
seed and the other lines (notes) kept as secrets of their own, a file gpg cannot decrypt rejected by name, --partial, --dry-run, the default
folder from PASSWORD_STORE_DIR, gpg run with the documented arguments and no secret on them."""
import json
import os
import shutil
import subprocess

import pytest

from agentsupport import NO_SOURCE, akc, unlock  # noqa: F401
from kcharness import EXIT_IO, EXIT_NOT_AVAILABLE, EXIT_NOT_FOUND, assert_failure, items_with_secrets, only_item

ENTRIES = {
    "email/work": "w0rk-p@ss\nlogin: marie@example.org\nurl: https://mail.example.org/owa\nRecovery hint: the blue one\n"
                  "second, \"quoted\" line\n",
    "servers/db/prod": "db-sëcret ✓\nuser: postgres\nport 5432 on the bastion\n",
    "simple": "only-a-password\n",
    "totp-site": "site-pw\nUsername: bob\notpauth://totp/Site:bob?secret=JBSWY3DPEHPK3PXP&issuer=Site\nurl: site.example.com\n",
    "finance/bank": "b4nk-pw\n\nRecovery codes:\n  1111-2222  \n\n\n  3333-4444\nlogin: anna\nPIN: 9876\n"
            "security answer: Fluffy ✓\t\"tab\"\nURL: https://bank.example/login\nurl: https://second.example\n\n\n",
    "trailing-blank": "tail-pw\n\n\n",
}
# The notes items' secrets: every other line byte for byte, in order, the empty lines at the end dropped.
NOTES = {
    "email/work": 'Recovery hint: the blue one\nsecond, "quoted" line',
    "servers/db/prod": "port 5432 on the bastion",
    "finance/bank": "\nRecovery codes:\n  1111-2222  \n\n\n  3333-4444\nPIN: 9876\nsecurity answer: Fluffy ✓\t\"tab\"\n"
            "url: https://second.example",
}
# Words of the notes that no id, date or attribute holds (digits alone could be part of an id or a time).
NOTE_WORDS = ("Recovery", "quoted", "bastion", "1111-2222", "3333-4444", "PIN: 9876", "Fluffy", "second.example")
ADDED = len(ENTRIES) + len(NOTES) + 1                    # with the TOTP seed of totp-site


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A pass store encrypted to a fresh ed25519 key without passphrase, plus one broken file."""
    root = tmp_path_factory.mktemp("pass")
    gnupg = root / "gnupg"
    gnupg.mkdir(mode=0o700)
    env = {"PATH": os.environ["PATH"], "HOME": str(root), "GNUPGHOME": str(gnupg),
           "PASSWORD_STORE_DIR": str(root / "store"), "LANG": "C.UTF-8"}
    subprocess.run(["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key",
                    "kc test <kc@example.com>", "future-default", "default", "never"],
                   env=env, check=True, capture_output=True)
    listing = subprocess.run(["gpg", "--batch", "--with-colons", "--list-secret-keys"], env=env, check=True,
                             capture_output=True, text=True).stdout
    key = next(line.split(":")[4] for line in listing.splitlines() if line.startswith("sec:"))
    subprocess.run(["pass", "init", key], env=env, check=True, capture_output=True)
    for name, text in ENTRIES.items():
        subprocess.run(["pass", "insert", "-m", name], input=text, env=env, check=True, capture_output=True, text=True)
    store = root / "store"
    (store / "broken.gpg").write_bytes(b"this is not OpenPGP data\n")
    (store / ".hidden").mkdir()
    (store / ".hidden" / "ignored.gpg").write_bytes(b"never read\n")
    yield store, env
    subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=env, capture_output=True)



def gpg_env(env):
    return {"GNUPGHOME": env["GNUPGHOME"]}


def test_every_entry_is_imported_with_its_attributes_and_secret(kc_ready, store):
    folder, env = store
    result = kc_ready.ok(["import", "pass", "--partial", folder], env=gpg_env(env))
    assert f"{ADDED} added, 0 skipped as duplicate, 1 rejected" in result.stderr
    assert "rejected entry 0 (broken.gpg): gpg could not decrypt it (exit status 2): gpg: no valid OpenPGP data found" \
        in result.stdout
    items = items_with_secrets(kc_ready)
    work = only_item(items, server="mail.example.org")
    assert {k: work.get(k) for k in ("class", "protocol", "path", "account", "label", "comment", "password")} == {
        "class": "internet", "protocol": "https", "path": "/owa", "account": "marie@example.org",
        "label": "email/work", "comment": None, "password": "w0rk-p@ss"}
    prod = only_item(items, service="servers/db/prod")
    assert (prod["class"], prod["account"], prod.get("comment"), prod["password"]) == (
        "generic", "postgres", None, "db-sëcret ✓")
    for title, notes in NOTES.items():
        item = only_item(items, service=f"{title} (notes)")
        assert (item["label"], item["description"], item["password"]) == (f"{title} (notes)", "notes", notes)
    simple = only_item(items, service="simple")
    assert simple["password"] == "only-a-password" and "account" not in simple and "comment" not in simple
    site = only_item(items, service="totp-site")
    assert site["account"] == "bob" and site["comment"] == "URL: site.example.com" and site["password"] == "site-pw"
    seed = only_item(items, service="totp-site (TOTP)")
    assert seed["password"] == "otpauth://totp/Site:bob?secret=JBSWY3DPEHPK3PXP&issuer=Site"
    assert "JBSWY3DPEHPK3PXP" not in kc_ready.ok(["find", "--all", "--json"]).stdout
    assert "ignored" not in result.stdout            # hidden folders (.git, .extensions) are left out
    again = kc_ready.ok(["import", "pass", "--partial", folder], env=gpg_env(env))
    assert f"0 added, {ADDED} skipped as duplicate, 1 rejected" in again.stderr


def test_the_other_lines_are_shown_only_by_find_w_of_the_notes_item(kc_ready, store):
    """pass keeps the whole file encrypted: the lines besides the secret, login and url are revealed only as
    the notes item's secret, never by an attribute (find without -w, search, list, export without secrets)."""
    folder, env = store
    kc_ready.ok(["import", "pass", "--partial", folder], env=gpg_env(env))
    assert all(kc_ready.run(["find", "-s", f"{title} (notes)"]).returncode == EXIT_NOT_FOUND
               for title in ENTRIES if title not in NOTES)   # only a password, or empty lines after it: no notes item
    bank = json.loads(kc_ready.ok(["find", "-s", "bank.example", "--json"]).stdout)[0]
    assert (bank["class"], bank["account"], bank["path"], "comment" in bank) == ("internet", "anna", "/login", False)
    assert kc_ready.ok(["find", "-s", "bank.example", "-w"]).stdout_bytes == b"b4nk-pw\n"
    assert kc_ready.ok(["find", "-s", "servers/db/prod", "-w"]).stdout_bytes == "db-sëcret ✓\n".encode()
    for title, notes in NOTES.items():
        shown = kc_ready.ok(["find", "-s", f"{title} (notes)", "-w"]).stdout_bytes
        assert shown == (notes + "\n").encode()
    notes_item = json.loads(kc_ready.ok(["find", "-s", "finance/bank (notes)", "--json"]).stdout)[0]
    assert (notes_item["account"], notes_item["description"], "comment" in notes_item) == ("anna", "notes", False)
    for args in (["find", "--all"], ["find", "--all", "--json"], ["find", "-s", "bank.example"],
                 ["find", "-s", "finance/bank (notes)"], ["list", "--json"], ["search", "--json", "bank"],
                 ["export"], ["export", "--format", "csv"]):
        shown = kc_ready.ok(args).stdout
        assert not [word for word in NOTE_WORDS if word in shown], args
    for word in NOTE_WORDS:
        assert_failure(kc_ready.run(["search", word]), "errSecItemNotFound", EXIT_NOT_FOUND)
    simple = only_item(items_with_secrets(kc_ready), service="trailing-blank")
    assert simple["password"] == "tail-pw" and "comment" not in simple


def test_the_agent_serves_the_notes_only_as_a_secret(akc, store):
    folder, env = store
    akc.ok(["import", "pass", "--partial", folder], env=gpg_env(env))
    unlock(akc)
    for args in (["find", "--all", "--json"], ["list", "--json"], ["search", "--json", "bank"], ["export"]):
        shown = akc.run(args, unset=NO_SOURCE)
        assert shown.returncode == 0 and not [word for word in NOTE_WORDS if word in shown.stdout], (args, shown)
    revealed = akc.run(["find", "-s", "finance/bank (notes)", "-w"], unset=NO_SOURCE)
    assert revealed.stdout_bytes == (NOTES["finance/bank"] + "\n").encode(), revealed


def test_a_file_gpg_cannot_decrypt_fails_the_import_by_name(kc_ready, store):
    folder, env = store
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", "pass", folder], env=gpg_env(env))
    assert_failure(result, "errSecDecode")
    assert f"kc: error: {folder}/broken.gpg: entry 0 (broken.gpg): gpg could not decrypt it" in result.stderr
    assert result.hint == "nothing was imported; --partial imports the rest"
    assert kc_ready.vault_path.read_bytes() == before


def test_dry_run_and_the_default_folder(kc_ready, store):
    folder, env = store
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.ok(["import", "pass", "--dry-run", "--partial"],
                         env={**gpg_env(env), "PASSWORD_STORE_DIR": str(folder)})
    assert f"{ADDED} would be added (dry run, nothing written)" in result.stderr
    assert result.stdout.count("(notes)") == len(NOTES)
    assert kc_ready.vault_path.read_bytes() == before
    missing = kc_ready.run(["import", "pass"], env=gpg_env(env))        # ~/.password-store of the test home
    assert_failure(missing, "errSecIO", EXIT_IO)
    assert ".password-store" in missing.stderr


def test_gpg_gets_no_secret_on_its_command_line(kc_ready, store, tmp_path):
    """A gpg wrapper first on PATH records its arguments, then runs the real gpg."""
    folder, env = store
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "gpg-calls"
    wrapper = bin_dir / "gpg"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec /usr/bin/gpg "$@"\n')
    wrapper.chmod(0o755)
    kc_ready.ok(["import", "pass", "--partial", folder],
                env={**gpg_env(env), "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    calls = log.read_text().splitlines()
    # `--` before the path: a store folder named like an option (-x) is never read by gpg as one.
    assert sorted(calls) == sorted(f"--quiet --batch --decrypt -- {folder}/{name}.gpg"
                                   for name in ["broken", *ENTRIES])
    assert not any(secret in log.read_text() for secret in ("w0rk-p@ss", "only-a-password", "site-pw"))


def test_without_gpg_the_import_is_not_available(kc_ready, store, tmp_path):
    folder, env = store
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["import", "pass", folder], env={**gpg_env(env), "PATH": str(empty)})
    assert_failure(result, "errSecNotAvailable", EXIT_NOT_AVAILABLE)
    assert result.hint == "install gnupg (Debian: apt-get install gnupg)"
    assert kc_ready.vault_path.read_bytes() == before


def test_decrypting_shows_progress_on_a_terminal_and_erases_it(kc_ready, store):
    from test_cli_terminal_output import on_terminal, progress_draws, screen
    folder, env = store
    status, stdout, received = on_terminal(kc_ready, ["import", "pass", "--partial", folder], env=gpg_env(env))
    assert status == 0, received
    assert any("decrypting entries" in draw for draw in progress_draws(received, "import")), received
    assert screen(received) == [f"kc: import: {ADDED} added, 0 skipped as duplicate, 1 rejected"], received
    assert b"rejected entry 0 (broken.gpg)" in stdout


def test_symbolic_links_never_lead_out_of_the_store_nor_round_in_loops(kc_ready, store, tmp_path):
    """Security review L4: the walk followed every link, so two links to '.' never ended, one made ~40
    copies of every entry, and a NAME.gpg link to a file outside the store was decrypted and imported.
    Now links to folders are never followed, a link to a file is read only when its target is inside
    the store and not read already, and each link left out is reported on standard error."""
    folder, env = store
    linked = tmp_path / "linked"
    (linked / "web").mkdir(parents=True)
    (linked / ".hidden").mkdir()
    shutil.copyfile(folder / "simple.gpg", linked / "web" / "site.gpg")
    shutil.copyfile(folder / "simple.gpg", linked / ".hidden" / "kept.gpg")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copyfile(folder / "totp-site.gpg", outside / "x.gpg")
    (linked / "web" / "out.gpg").symlink_to(outside / "x.gpg")          # out of the store
    (linked / "up.gpg").symlink_to("../elsewhere/x.gpg")                  # out, relatively
    (linked / "loop").symlink_to(".")
    (linked / "loop2").symlink_to(".")
    (linked / "folder").symlink_to("web")                                 # a folder inside: not followed either
    (linked / "alias.gpg").symlink_to("web/site.gpg")                     # read already as web/site
    (linked / "shown.gpg").symlink_to(".hidden/kept.gpg")                 # inside, read once as "shown"
    (linked / "dangling.gpg").symlink_to("missing.gpg")
    log = tmp_path / "gpg-calls"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gpg").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec /usr/bin/gpg "$@"\n')
    (bin_dir / "gpg").chmod(0o755)
    result = kc_ready.run(["import", "pass", linked], timeout=30,
                          env={**gpg_env(env), "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert result.returncode == 0, result
    assert "2 added, 0 skipped as duplicate, 0 rejected" in result.stderr, result
    warnings = sorted(line for line in result.stderr.splitlines() if line.startswith("kc: warning: "))
    assert warnings == sorted([
        f"kc: warning: {linked}/alias.gpg: a symbolic link to an entry read already; not read twice",
        f"kc: warning: {linked}/dangling.gpg: a symbolic link to no regular file; not followed",
        f"kc: warning: {linked}/folder: a symbolic link to a folder; not followed",
        f"kc: warning: {linked}/loop: a symbolic link to a folder; not followed",
        f"kc: warning: {linked}/loop2: a symbolic link to a folder; not followed",
        f"kc: warning: {linked}/up.gpg: a symbolic link out of the store; not followed",
        f"kc: warning: {linked}/web/out.gpg: a symbolic link out of the store; not followed",
    ]), result.stderr
    services = sorted(item.get("service") for item in items_with_secrets(kc_ready))
    assert services == ["shown", "web/site"]
    assert "elsewhere" not in log.read_text() and "site-pw" not in kc_ready.ok(["find", "--all", "-w"]).stdout
