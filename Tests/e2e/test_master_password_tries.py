"""A wrong master password typed at a real terminal (pexpect) is asked again, three tries in all
(find, check, unlock); a password from a file or a descriptor gets one try."""
import pexpect

from kcharness import EXIT_AUTH_FAILED, EXIT_CANCELED, assert_failure

NO_FILE = ("KC_MASTER_PASSWORD_FILE",)
AGAIN = "The master password was wrong; try again ({} of 3)."
HINT = "nothing was opened or changed; run the command again with the vault's master password"


def answer(kc, args, passwords, env=None):
    """Runs kc on a terminal, typing `passwords` at its master password prompts in turn; returns
    (exit status, everything the terminal showed)."""
    child = kc.spawn(args, unset=NO_FILE, env=env)
    seen = ""
    for number, password in enumerate(passwords, start=1):
        child.expect_exact(f"Master password for {kc.vault_path}: ")
        seen += child.before + child.after
        if number > 1:
            assert AGAIN.format(number) in child.before, seen
        child.sendline(password)
    child.expect(pexpect.EOF)
    seen += child.before
    child.close()
    return child.exitstatus, seen


def test_find_takes_a_second_and_a_third_try(kc_ready):
    kc_ready.add_generic("svc", "me", "s1")
    status, seen = answer(kc_ready, ["find", "-s", "svc", "-w"], ["wrong one", "wrong two", kc_ready.master_password])
    assert status == 0, seen
    assert seen.rstrip().endswith("s1"), seen
    assert "errSec" not in seen


def test_three_wrong_passwords_end_the_command_with_one_error(kc_ready):
    kc_ready.add_generic("svc", "me", "s1")
    status, seen = answer(kc_ready, ["find", "-s", "svc", "-w"], ["wrong one", "wrong two", "wrong three"])
    assert status == EXIT_AUTH_FAILED, seen
    assert seen.count("Master password for") == 3
    assert seen.count("wrong master password (errSecAuthFailed)") == 1, seen   # after a coloured "kc: error:"
    assert HINT in seen
    assert "wrong three" not in seen


def test_check_takes_another_try(kc_ready):
    status, seen = answer(kc_ready, ["check"], ["wrong", kc_ready.master_password])
    assert status == 0 and "status: whole" in seen, seen


def test_an_add_after_a_wrong_try_writes_once(kc_ready):
    child = kc_ready.spawn(["add", "generic", "-s", "svc", "-a", "me"], unset=NO_FILE)
    child.expect_exact("Master password for ")
    child.sendline("wrong")
    child.expect_exact(AGAIN.format(2))
    child.expect_exact("Master password for ")
    child.sendline(kc_ready.master_password)
    child.expect_exact("Password for the item")
    child.sendline("s1")
    child.expect_exact("Retype")
    child.sendline("s1")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert kc_ready.ok(["find", "-s", "svc", "-w"]).stdout == "s1\n"
    assert "1 item" in kc_ready.ok(["list"]).stdout or kc_ready.ok(["list"]).stdout.count("svc") == 1


def test_unlock_takes_another_try(kc_ready):
    try:
        status, seen = answer(kc_ready, ["unlock"], ["wrong", kc_ready.master_password])
        assert status == 0, seen
        assert "unlocked" in seen
        assert kc_ready.ok(["status"]).stdout.startswith("state: unlocked"), seen
    finally:
        kc_ready.run(["lock"])


def test_unlock_three_wrong_leaves_it_locked(kc_ready):
    status, seen = answer(kc_ready, ["unlock"], ["one", "two", "three"])
    assert status == EXIT_AUTH_FAILED, seen
    assert HINT in seen
    assert kc_ready.run(["status"]).stdout.startswith("state: not running")


def test_ctrl_c_at_a_second_try_cancels(kc_ready):
    child = kc_ready.spawn(["list"], unset=NO_FILE)
    child.expect_exact("Master password for ")
    child.sendline("wrong")
    child.expect_exact(AGAIN.format(2))
    child.expect_exact("Master password for ")
    child.sendcontrol("c")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == EXIT_CANCELED


def test_a_password_file_gets_one_try_even_at_a_terminal(kc_ready):
    wrong = kc_ready.write_secret_file(kc_ready.home / "wrong", "not the password\n")
    child = kc_ready.spawn(["list"], env={"KC_MASTER_PASSWORD_FILE": str(wrong)})
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == EXIT_AUTH_FAILED, child.before
    assert "Master password for" not in child.before and "try again" not in child.before


def test_a_script_gets_one_try(kc_ready):
    wrong = kc_ready.write_secret_file(kc_ready.home / "wrong", "not the password\n")
    result = kc_ready.run(["unlock"], env={"KC_MASTER_PASSWORD_FILE": str(wrong)})
    assert_failure(result, "errSecAuthFailed")
    assert result.hint == HINT
