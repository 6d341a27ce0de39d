"""Every way of giving a secret: a descriptor that is a terminal is read with echo off."""
import pexpect
import pytest

SECRET = "tty-typed-Secret-42"


def finish(child, timeout: float = 5) -> int:
    """Waits for kc to exit; a kc that reads to end of input gets Ctrl-D once."""
    if child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=timeout) == 1:
        child.sendeof()
        child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


@pytest.mark.parametrize("command", ["add", "update"])
def test_password_stdin_on_a_terminal_is_not_echoed(kc_ready, command):
    kc = kc_ready
    if command == "update":
        kc.add_generic("tty", "a", "old")
    child = kc.spawn([command, "generic", "-s", "tty", "--password-stdin"])
    child.expect(pexpect.TIMEOUT, timeout=1)   # kc waits for the secret
    child.sendline(SECRET)
    status = finish(child)
    seen = child.before or ""
    assert status == 0, seen
    assert SECRET not in seen, f"the secret was echoed: {seen!r}"
    assert kc.ok(["find", "generic", "-s", "tty", "-w"]).stdout == SECRET + "\n"
