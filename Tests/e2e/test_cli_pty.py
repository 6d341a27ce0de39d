"""Prompts through a real pseudo-terminal (pexpect): no echo, confirmation, cancel, restore."""
import re
import shlex

import pexpect
import pytest

from kcharness import (EXIT_AUTH_FAILED, EXIT_CANCELED, EXIT_NO_SUCH_KEYCHAIN, EXIT_NOT_FOUND, EXIT_PARAM,
                       FAST_KDF, assert_failure)

NO_FILE = ("KC_MASTER_PASSWORD_FILE",)
MASTER = "tty-Master-Pässword"


def finish(child) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def init_on_tty(kc, first=MASTER, second=MASTER):
    child = kc.spawn(["init", *FAST_KDF], unset=NO_FILE)
    child.expect_exact(f"New master password for {kc.vault_path}: ")
    child.sendline(first)
    child.expect_exact("Retype the new master password: ")
    seen = child.before
    child.sendline(second)
    status = finish(child)
    return status, seen + child.before


def test_prompt_is_the_last_thing_written_without_colour(kc):
    child = kc.spawn(["init", *FAST_KDF], unset=NO_FILE)
    child.expect_exact(f"New master password for {kc.vault_path}: ")
    assert "\x1b" not in child.before + child.after
    child.expect(pexpect.TIMEOUT, timeout=0.5)   # nothing follows the prompt until we answer
    assert child.before == ""
    child.sendcontrol("c")
    assert finish(child) == EXIT_CANCELED


def test_init_asks_twice_without_echo(kc):
    status, seen = init_on_tty(kc)
    assert status == 0, seen
    assert MASTER not in seen
    assert kc.vault_path.exists()
    # The typed password opens the vault (given through a file now).
    kc.write_secret_file(kc.password_file, MASTER + "\n")
    kc.ok(["list"])


def test_init_mismatch_creates_nothing(kc):
    status, seen = init_on_tty(kc, MASTER, MASTER + "x")
    assert status == EXIT_PARAM
    assert "do not match" in seen
    assert not kc.vault_path.exists()


@pytest.mark.parametrize("key", ["c", "d"])
def test_control_key_at_prompt_cancels_with_128(kc, key):
    child = kc.spawn(["init", *FAST_KDF], unset=NO_FILE)
    child.expect_exact("New master password for")
    child.expect_exact(": ")
    child.sendcontrol(key)
    assert finish(child) == EXIT_CANCELED
    assert "errSecUserCanceled" in child.before
    assert not kc.vault_path.exists()


def test_empty_answer_cancels(kc):
    child = kc.spawn(["init", *FAST_KDF], unset=NO_FILE)
    child.expect_exact(": ")
    child.sendline("")
    assert finish(child) == EXIT_CANCELED
    assert not kc.vault_path.exists()


def test_terminal_settings_restored_after_cancel(kc):
    command = f"{shlex.quote(kc.binary)} init {' '.join(FAST_KDF)}; echo status=$?; stty -a"
    shell = pexpect.spawn("/bin/sh", ["-c", command], env=kc.environment(unset=NO_FILE), encoding="utf-8", timeout=20)
    shell.expect_exact("New master password for")
    shell.expect_exact(": ")
    shell.sendcontrol("c")
    shell.expect(r"status=(\d+)")
    assert shell.match.group(1) == "128"
    shell.expect(pexpect.EOF)
    settings = shell.before
    assert re.search(r"(?<![-\w])echo(?![\w])", settings), settings
    assert re.search(r"(?<![-\w])icanon(?![\w])", settings), settings
    assert re.search(r"(?<![-\w])isig(?![\w])", settings), settings


def test_master_password_prompt_for_find(kc):
    kc.init()
    kc.add_generic("svc", "a", "item-secret")
    kc.write_secret_file(kc.password_file, kc.master_password + "\n")
    child = kc.spawn(["find", "generic", "-s", "svc", "-w"], unset=NO_FILE)
    child.expect_exact(f"Master password for {kc.vault_path}: ")
    child.sendline(kc.master_password)
    child.expect_exact("item-secret")
    assert kc.master_password not in child.before
    assert finish(child) == 0


def test_wrong_master_password_on_tty(kc):
    kc.init()
    child = kc.spawn(["list"], unset=NO_FILE)
    for _ in range(3):   # three tries at a terminal (test_master_password_tries.py)
        child.expect_exact("Master password for")
        child.expect_exact(": ")
        child.sendline("wrong")
    assert finish(child) == EXIT_AUTH_FAILED
    assert "errSecAuthFailed" in child.before


def test_add_secret_prompt_twice_without_echo(kc):
    kc.init()
    secret = "prompted s3cret ✓"
    child = kc.spawn(["add", "internet", "-s", "ftp.example.com", "-r", "ftp", "-P", "21", "-a", "deploy"])
    child.expect_exact("Password for the item: ")
    child.sendline(secret)
    child.expect_exact("Retype the password: ")
    child.sendline(secret)
    status = finish(child)
    assert status == 0, child.before
    assert secret not in child.before
    assert kc.ok(["find", "internet", "-s", "ftp.example.com", "-w"]).stdout == secret + "\n"


def test_add_secret_prompt_mismatch_and_cancel(kc):
    kc.init()
    child = kc.spawn(["add", "generic", "-s", "x", "-w"])
    child.expect_exact("Password for the item: ")
    child.sendline("one")
    child.expect_exact("Retype the password: ")
    child.sendline("two")
    assert finish(child) == EXIT_PARAM
    child = kc.spawn(["add", "generic", "-s", "x"])
    child.expect_exact("Password for the item: ")
    child.sendcontrol("c")
    assert finish(child) == EXIT_CANCELED
    assert_failure(kc.run(["find", "-s", "x"]), "errSecItemNotFound", EXIT_NOT_FOUND)


def test_update_password_prompt(kc):
    kc.init()
    kc.add_generic("svc", "a", "old")
    child = kc.spawn(["update", "generic", "-s", "svc", "--password"])
    child.expect_exact("Password for the item: ")
    child.sendline("new")
    child.expect_exact("Retype the password: ")
    child.sendline("new")
    assert finish(child) == 0
    assert kc.ok(["find", "-s", "svc", "-w"]).stdout == "new\n"


def test_backspace_edits_the_secret(kc):
    kc.init()
    child = kc.spawn(["add", "generic", "-s", "bs"])
    child.expect_exact("Password for the item: ")
    child.send("abx\x7fc\r")
    child.expect_exact("Retype the password: ")
    child.send("abc\r")
    assert finish(child) == 0
    assert kc.ok(["find", "-s", "bs", "-w"]).stdout == "abc\n"


def test_missing_vault_never_prompts_on_tty(kc):
    child = kc.spawn(["list"], unset=NO_FILE)
    index = child.expect([pexpect.EOF, "password"])
    assert index == 0
    child.close()
    assert child.exitstatus == EXIT_NO_SUCH_KEYCHAIN


def _child_kc_pid(shell_pid: int, binary: str) -> int | None:
    import os
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
            exe = os.readlink(f"/proc/{entry}/exe")
        except OSError:
            continue
        if parent == shell_pid and exe == os.path.realpath(binary):
            return int(entry)
    return None


def test_terminal_settings_restored_when_killed_at_prompt(kc):
    import os
    import signal
    import time
    command = f"{shlex.quote(kc.binary)} init {' '.join(FAST_KDF)}; echo status=$?; stty -a"
    shell = pexpect.spawn("/bin/sh", ["-c", command], env=kc.environment(unset=NO_FILE), encoding="utf-8", timeout=20)
    shell.expect_exact("New master password for")
    shell.expect_exact(": ")
    pid = None
    for _ in range(50):
        pid = _child_kc_pid(shell.pid, kc.binary)
        if pid:
            break
        time.sleep(0.05)
    assert pid, "kc process not found"
    os.kill(pid, signal.SIGTERM)
    shell.expect(r"status=(\d+)")
    assert shell.match.group(1) == str(128 + signal.SIGTERM)
    shell.expect(pexpect.EOF)
    settings = shell.before
    assert re.search(r"(?<![-\w])echo(?![\w])", settings), settings
    assert re.search(r"(?<![-\w])icanon(?![\w])", settings), settings
    assert not kc.vault_path.exists()
