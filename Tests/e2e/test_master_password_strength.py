"""The new master password's strength (zxcvbn) at init, keychain create and passwd: shown in bits;
below 50 bits refused without a terminal unless --allow-weak-password, confirmed on a real terminal."""
import re

import pexpect

from kcharness import EXIT_CANCELED, FAST_KDF, KC, assert_failure

NO_FILE = ("KC_MASTER_PASSWORD_FILE",)
WEAK = "letmein"
STRENGTH = re.compile(r"^kc: strength: (\d+) bits \(zxcvbn's estimate\)$", re.M)


def bits(result) -> int:
    match = STRENGTH.search(result.stderr)
    assert match, result
    return int(match.group(1))


def test_init_shows_the_strength_of_a_strong_password(kc):
    result = kc.init()
    assert bits(result) >= 50
    assert "weak" not in result.stderr


def test_weak_password_refused_without_a_terminal(kc):
    kc.write_secret_file(kc.password_file, WEAK + "\n")
    result = kc.run(["init", *FAST_KDF])
    assert_failure(result, "errSecParam")
    assert "the new master password is weak" in result.stderr and "nothing was changed" in result.stderr
    assert "--allow-weak-password" in result.hint
    assert bits(result) < 50
    assert not kc.vault_path.exists()
    assert WEAK not in result.stderr


def test_allow_weak_password_accepts_it_with_a_warning(kc):
    kc.write_secret_file(kc.password_file, WEAK + "\n")
    result = kc.ok(["init", *FAST_KDF, "--allow-weak-password"])
    assert "kc: warning: the new master password is weak" in result.stderr
    assert kc.vault_path.exists()
    kc.ok(["list"])


def test_keychain_create_checks_the_strength(kc):
    kc.write_secret_file(kc.password_file, WEAK + "\n")
    assert_failure(kc.run(["keychain", "create", "work", *FAST_KDF]), "errSecParam")
    assert not (kc.home / "data" / "kc" / "work.kc").exists()
    kc.ok(["keychain", "create", "work", *FAST_KDF, "--allow-weak-password"])


def test_passwd_refuses_a_weak_new_password_and_keeps_the_old(kc_ready):
    kc = kc_ready
    kc.add_generic("svc", "me", "s1")
    before = kc.vault_path.read_bytes()
    weak = kc.write_secret_file(kc.home / "weak", WEAK + "\n")
    result = kc.run(["passwd", "--new-password-file", weak])
    assert_failure(result, "errSecParam")
    assert kc.vault_path.read_bytes() == before
    assert kc.ok(["find", "-s", "svc", "-w"]).stdout == "s1\n"
    kc.ok(["passwd", "--new-password-file", weak, "--allow-weak-password"])
    kc.write_secret_file(kc.password_file, WEAK + "\n")
    assert kc.ok(["find", "-s", "svc", "-w"]).stdout == "s1\n"


def init_weak_on_tty(kc: KC, answer: str):
    child = kc.spawn(["init", *FAST_KDF], unset=NO_FILE)
    child.expect_exact(f"New master password for {kc.vault_path}: ")
    child.sendline(WEAK)
    child.expect_exact("Retype the new master password: ")
    child.sendline(WEAK)
    child.expect(r"kc: strength: \d+ bits \(zxcvbn's estimate\)")
    child.expect_exact("the new master password is weak (about ")   # after a coloured "kc: warning:"
    child.expect_exact("Use this weak master password anyway? [y/N] ")
    child.sendline(answer)
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, child.before


def test_weak_password_at_a_terminal_is_confirmed(kc):
    status, seen = init_weak_on_tty(kc, "y")
    assert status == 0, seen
    assert "created the vault" in seen
    kc.write_secret_file(kc.password_file, WEAK + "\n")
    kc.ok(["list"])


def test_weak_password_at_a_terminal_declined_creates_nothing(kc):
    status, seen = init_weak_on_tty(kc, "n")
    assert status == EXIT_CANCELED, seen
    assert "nothing was changed" in seen
    assert not kc.vault_path.exists()


def test_strong_password_at_a_terminal_is_not_questioned(kc):
    child = kc.spawn(["init", *FAST_KDF], unset=NO_FILE)
    for prompt in (f"New master password for {kc.vault_path}: ", "Retype the new master password: "):
        child.expect_exact(prompt)
        child.sendline(kc.master_password)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "weak" not in child.before and "[y/N]" not in child.before
