"""The agent process itself (`kc agent`), driven through its wire protocol (agentwire.py):
unlock, lookups, lock means exit, peers of another user refused, another build stopped, the
vault replaced, signals, and timers."""
import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import agentwire
from kcharness import EXIT_AUTH_FAILED  # noqa: F401  (statuses are named, never bare numbers)


def start_agent(kc, *extra, **popen):
    """Starts `kc agent --foreground` and waits until its socket answers."""
    run = kc.home / "run"
    run.mkdir(mode=0o700, exist_ok=True)
    kc.env["XDG_RUNTIME_DIR"] = str(run)
    kc.env["KC_TEST_BUILD_ID"] = agentwire.TEST_BUILD
    process = kc.popen(["agent", "--foreground", *extra], stdin=subprocess.DEVNULL, **popen)
    path = agentwire.socket_path(run, kc.vault_path)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            agentwire.status(path)
            return process, path
        except (FileNotFoundError, ConnectionRefusedError, EOFError):
            time.sleep(0.02)
    process.kill()
    pytest.fail(f"the agent did not listen: {process.communicate()}")


@contextlib.contextmanager
def running_agent(kc, *extra, unlocked=False, **popen):
    """`kc agent --foreground` for the duration of a with block (unlocked first when asked):
    yields (process, socket path); the agent is killed at the end if still running."""
    process, path = start_agent(kc, *extra, **popen)
    try:
        if unlocked:
            assert agentwire.request(path, "unlock", agentwire.unlock_body(kc.master_password))[0] == "done"
        yield process, path
    finally:
        stop(process)


def stop(process):
    if process.poll() is None:
        process.kill()
    process.wait(5)


def test_unlock_find_lock(kc_ready):
    kc_ready.add_generic("github.com", "me", "hunter2")
    with running_agent(kc_ready) as (process, path):
        assert agentwire.status(path)["unlocked"] is False
        name, _ = agentwire.request(path, "find", agentwire.find_body(agentwire.query("generic", service="github.com")))
        assert name == "locked"
        name, _ = agentwire.request(path, "unlock", agentwire.unlock_body("wrong"))
        assert name == "failure"
        name, _ = agentwire.request(path, "unlock", agentwire.unlock_body(kc_ready.master_password))
        assert name == "done"
        state = agentwire.status(path)
        assert state["unlocked"] and state["pid"] == process.pid
        assert state["vault"] == os.path.realpath(kc_ready.vault_path)
        name, body = agentwire.request(path, "find", agentwire.find_body(agentwire.query("generic", service="github.com")))
        assert name == "items" and agentwire.first_secret(body) == b"hunter2"
        # A write by another process is in the next answer.
        kc_ready.add_generic("gitlab.com", "me", "other")
        name, body = agentwire.request(path, "find", agentwire.find_body(agentwire.query("generic", service="gitlab.com")))
        assert name == "items" and agentwire.first_secret(body) == b"other"
        name, _ = agentwire.request(path, "lock")
        assert name == "done"
        assert process.wait(5) == 0
        assert not path.exists()


def test_a_peer_of_another_user_is_refused(kc_ready):
    with running_agent(kc_ready) as (process, path):
        # Let nobody reach the socket (its mode 0600 and the folder's 0700 would stop it before
        # the agent could): a relative connect from inside the folder, opened up for the test.
        os.chmod(path.parent, 0o711)
        os.chmod(path, 0o666)
        child = os.fork()
        if child == 0:
            try:
                os.chdir(path.parent)
                os.setgid(65534)
                os.setuid(65534)
                agentwire.request(agentwire.Path(path.name), "status")
                os._exit(1)
            except (EOFError, ConnectionResetError, BrokenPipeError):
                os._exit(0)
            except BaseException:
                os._exit(2)
        _, code = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(code) == 0, "the agent answered a peer of another uid"
        assert process.poll() is None


def test_another_build_is_asked_to_stop_and_exits(kc_ready):
    with running_agent(kc_ready) as (process, path):
        connection = agentwire.Connection(path, build="some-other-build")
        assert connection.build == agentwire.TEST_BUILD
        # Anything but Shutdown is ignored by an agent of another build.
        connection.sock.sendall(agentwire.frame(agentwire.REQUEST["status"]))
        with pytest.raises(EOFError):
            connection.read_frame()
        connection.close()
        assert process.poll() is None
        connection = agentwire.Connection(path, build="some-other-build")
        connection.sock.sendall(agentwire.frame(agentwire.SHUTDOWN))
        assert process.wait(5) == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_termination_signal_locks_and_exits(kc_ready, signum):
    with running_agent(kc_ready, unlocked=True) as (process, path):
        process.send_signal(signum)
        assert process.wait(5) == 0
        assert not path.exists()


def test_removing_the_socket_path_ends_the_agent(kc_ready):
    with running_agent(kc_ready) as (process, path):
        path.unlink()
        assert process.wait(10) == 0


def test_the_vault_replaced_by_another_vault_ends_the_agent(kc_ready):
    with running_agent(kc_ready, unlocked=True) as (process, path):
        other = kc_ready.home / "other.kc"
        kc_ready.ok(["init", "--vault", str(other), "--kdf-ops", "1", "--kdf-memory", "8K"])
        os.replace(other, kc_ready.vault_path)
        assert process.wait(10) == 0


def test_the_idle_timer_locks_and_status_does_not_refresh_it(kc_ready):
    with running_agent(kc_ready) as (process, path):
        assert agentwire.request(path, "unlock", agentwire.unlock_body(kc_ready.master_password, idle=1.5))[0] == "done"
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            agentwire.status(path)
            time.sleep(0.1)
        assert process.wait(10) == 0


def test_the_vault_removed_ends_the_agent(kc_ready):
    with running_agent(kc_ready, unlocked=True) as (process, path):
        kc_ready.vault_path.unlink()
        assert process.wait(10) == 0


def test_kc_unlock_starts_a_detached_agent_with_a_minimal_environment(kc_ready):
    run = kc_ready.home / "run"
    run.mkdir(mode=0o700)
    env = {"XDG_RUNTIME_DIR": str(run), "KC_TEST_BUILD_ID": agentwire.TEST_BUILD, "SOME_TOKEN": "do-not-pass"}
    result = kc_ready.run(["unlock"], env=env)
    assert result.returncode == 0, result
    path = agentwire.socket_path(run, kc_ready.vault_path)
    pid = agentwire.status(path)["pid"]
    try:
        names = {entry.split(b"=", 1)[0].decode() for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if entry}
        assert names <= {"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "TMPDIR",
                         "LANG", "LC_ALL", "KC_TEST_BUILD_ID"}, names
        assert "KC_MASTER_PASSWORD_FILE" not in names and "SOME_TOKEN" not in names
        assert os.getsid(pid) == pid, "the agent leads a session of its own"
        for fd in (0, 1, 2):
            assert os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/null"
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
    finally:
        assert agentwire.request(path, "lock")[0] == "done"
