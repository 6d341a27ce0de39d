"""Terminal prompts: editing keys and control characters with signals off, answers that are too
long, and the terminal settings after a signal ends or stops kc during a prompt."""
import os
import signal
import sys
import termios
import time

import pexpect

from kcharness import EXIT_PARAM

NO_FILE = ("KC_MASTER_PASSWORD_FILE",)


def default_signals():
    """As a shell starts a command: every signal at its default (Python ignores SIGPIPE)."""
    for number in (signal.SIGPIPE, signal.SIGHUP, signal.SIGALRM, signal.SIGUSR1):
        signal.signal(number, signal.SIG_DFL)


def master_prompt(kc, preexec_fn=default_signals):
    """`kc list` on a pseudo-terminal, waiting at the master password prompt."""
    child = pexpect.spawn(kc.binary, ["list"], env=kc.environment(unset=NO_FILE), encoding="utf-8", timeout=20,
                          cwd=str(kc.home), preexec_fn=preexec_fn)
    child.expect_exact("Master password for ")
    child.expect_exact(": ")
    return child


def finish(child):
    """Waits for kc to end; returns (exit status, signal) and whether echo was on afterwards."""
    child.expect(pexpect.EOF)
    echo = echo_on(child)
    child.close()
    return child.exitstatus, child.signalstatus, echo


def echo_on(child):
    return bool(termios.tcgetattr(child.child_fd)[3] & termios.ECHO)


def wait_for(condition, timeout=10):
    deadline = time.time() + timeout
    while not condition() and time.time() < deadline:
        time.sleep(0.02)
    return condition()


def test_ctrl_w_erases_a_word_and_ctrl_z_is_not_stored(kc_ready):
    kc = kc_ready
    child = master_prompt(kc)
    child.send(kc.master_password + " junk\x17\x7f\r")
    assert finish(child)[:2] == (0, None), "Ctrl-W erased ' junk'"
    child = master_prompt(kc)
    half = len(kc.master_password) // 2
    child.send(kc.master_password[:half] + "\x1a" + kc.master_password[half:] + "\r")
    assert finish(child)[:2] == (0, None), "Ctrl-Z was not stored in the password"


def test_an_answer_longer_than_the_limit_is_refused_not_cut(kc_ready):
    kc = kc_ready
    child = master_prompt(kc)
    child.send(kc.master_password + "x" * 5000 + "\r")
    child.expect(pexpect.EOF)
    assert "the answer is longer than 4096 bytes" in child.before
    child.close()
    assert child.exitstatus == EXIT_PARAM


def test_terminal_restored_when_a_signal_ends_kc_at_a_prompt(kc_ready):
    for number in (signal.SIGUSR1, signal.SIGPIPE, signal.SIGALRM):
        child = master_prompt(kc_ready)
        assert not echo_on(child), "the prompt turned echo off"
        child.kill(number)
        assert finish(child) == (None, number, True), f"echo left off after {signal.Signals(number).name}"


# A job-control parent: kc runs in its own process group, in the foreground of the terminal, under
# a parent in the same session (so a stop signal really stops it); the parent reports stops.
JOB_SHELL = """
import os, signal, sys, time
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    while os.tcgetpgrp(0) != os.getpid():   # kc starts only once it is the foreground job, as a shell's
        time.sleep(0.005)
    os.execv(sys.argv[1], sys.argv[1:])
os.setpgid(pid, pid)
os.tcsetpgrp(0, pid)
print("job", pid, flush=True)
while True:
    _, status = os.waitpid(pid, os.WUNTRACED | os.WCONTINUED)
    if os.WIFSTOPPED(status):
        print("stopped", flush=True)
    elif not os.WIFCONTINUED(status):
        sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
"""


def test_a_stopped_prompt_restores_the_terminal_and_continues_without_echo(kc_ready):
    kc = kc_ready
    child = pexpect.spawn(sys.executable, ["-c", JOB_SHELL, kc.binary, "list"], env=kc.environment(unset=NO_FILE),
                          encoding="utf-8", timeout=20, cwd=str(kc.home))
    child.expect(r"job (\d+)")
    pid = int(child.match.group(1))
    child.expect_exact("Master password for ")
    child.expect_exact(": ")
    assert not echo_on(child)
    os.kill(pid, signal.SIGTSTP)
    child.expect_exact("stopped")
    assert echo_on(child), "echo left off while kc is stopped"
    os.kill(pid, signal.SIGCONT)
    assert wait_for(lambda: not echo_on(child)), "echo not turned off again when kc continues"
    child.send(kc.master_password + "\r")
    child.expect(pexpect.EOF)
    assert kc.master_password not in child.before
    child.close()
    assert child.exitstatus == 0


def test_an_ignored_signal_stays_ignored_during_a_prompt(kc_ready):
    kc = kc_ready
    child = master_prompt(kc, preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    child.kill(signal.SIGHUP)   # as under nohup: ignored
    child.expect(pexpect.TIMEOUT, timeout=0.5)
    assert child.isalive(), "an ignored SIGHUP ended kc"
    child.send(kc.master_password + "\r")
    assert finish(child) == (0, None, True)
