"""The agent's edges through kc's commands: a stale socket, an unsafe socket folder, an agent of
another build or of another vault, and no secret in any process's argv or environment while the
agent serves."""
import os
import socket
import subprocess
import sys
from pathlib import Path

from agentsupport import (NO_SOURCE, agent_folder, agent_pids, akc, alive, not_unlocked, status, unlock,  # noqa: F401
                          wait_until)
from kcharness import EXIT_INTERACTION, EXIT_PARAM, FAST_KDF, MASTER_PASSWORD, assert_failure
from procsampler import Sampler

OTHER_BUILD = {"KC_TEST_BUILD_ID": "an-older-kc"}   # honoured by debug builds only
STOPPED = "kc: the agent was from another build of kc and was stopped; run kc unlock"


def socket_path(kc):
    """The socket of the home's only agent (found by unlocking once, then locking)."""
    unlock(kc)
    sockets = [p for p in agent_folder(kc).iterdir() if p.suffix == ".sock"]
    kc.ok(["lock"])
    assert len(sockets) == 1, sockets
    return sockets[0]


def test_a_stale_socket_is_replaced(akc):
    akc.add_generic("svc", "me", "pw")
    path = socket_path(akc)
    # A socket file nobody listens on, as a killed agent leaves.
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(path))
    stale.close()
    assert path.exists()
    assert akc.ok(["find", "-s", "svc", "-w"]).stdout == "pw\n"      # the slow path, silently
    assert akc.run(["status"]).returncode == EXIT_INTERACTION
    unlock(akc)
    assert akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE).stdout == "pw\n"


def test_a_socket_folder_open_to_others_is_refused(akc):
    folder = agent_folder(akc)
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    result = akc.run(["unlock"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert str(folder) in result.stderr and result.hint, result
    assert agent_pids(akc) == set()
    # Item commands do not use such a folder; with a password source they go on, saying why.
    akc.add_generic("svc", "me", "pw")
    assert akc.ok(["find", "-s", "svc", "-w"]).stdout == "pw\n"


def test_a_socket_folder_of_another_user_is_refused(akc):
    folder = agent_folder(akc)
    folder.mkdir(mode=0o700)
    os.chown(folder, 65534, 65534)    # nobody; the tests run as root
    assert os.stat(folder).st_uid != os.getuid()
    result = akc.run(["unlock"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "uid 65534" in result.stderr, result
    assert agent_pids(akc) == set()


def test_an_agent_of_another_build_is_stopped(akc):
    akc.add_generic("svc", "me", "pw")
    unlock(akc, env=OTHER_BUILD)
    old = status(akc, env=OTHER_BUILD)[1]["pid"]
    assert alive(old)
    # A command of this build without a password source: the old agent is stopped, the command fails.
    result = akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE)
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert STOPPED in result.stderr.splitlines(), result
    assert not alive(old), "kc reported the agent stopped before it had exited"

    # With a password source the command goes on the slow path, with a warning.
    unlock(akc, env=OTHER_BUILD)
    old = status(akc, env=OTHER_BUILD)[1]["pid"]
    result = akc.ok(["find", "-s", "svc", "-w"])
    assert result.stdout == "pw\n"
    assert result.stderr.splitlines() == [STOPPED], result
    assert not alive(old)

    # status and lock stop it too, and say so; unlock starts one of this build.
    unlock(akc, env=OTHER_BUILD)
    result = akc.run(["status", "--json"])
    assert result.returncode == EXIT_INTERACTION and '"state": "not running"' in result.stdout, result
    assert result.stderr.splitlines() == [STOPPED], result
    unlock(akc, env=OTHER_BUILD)
    assert STOPPED in akc.ok(["lock"]).stderr.splitlines()
    unlock(akc, env=OTHER_BUILD)
    unlock(akc)
    assert akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE).stdout == "pw\n"


def test_an_agent_on_a_socket_named_for_another_vault_is_refused(akc):
    """Security review I2: the agent of another vault answering on this vault's socket (a name
    that collides, or a link planted there) is asked nothing: its hello names its vault."""
    other = {"KC_VAULT": str(akc.home / "other.kc")}
    akc.ok(["init", *FAST_KDF], env=other)
    akc.ok(["add", "generic", "-s", "svc", "--password-stdin"], input="the other vault's secret", env=other)
    akc.add_generic("svc", "me", "this vault's secret")
    own = socket_path(akc)
    unlock(akc, env=other)
    [theirs] = [p for p in agent_folder(akc).iterdir() if p.suffix == ".sock"]
    os.link(theirs, own)   # the other agent keeps its own path, so it stays up
    result = akc.ok(["find", "-s", "svc", "-w"])
    assert result.stdout == "this vault's secret\n", result
    assert f"the agent at {own} serves another vault; kc sent it nothing" in result.stderr, result
    result = akc.run(["status"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "serves another vault" in result.stderr and result.hint, result
    # kc unlock starts this vault's agent, which replaces the socket; the other agent is left alone.
    unlock(akc)
    assert akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE).stdout == "this vault's secret\n"
    assert akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE, env=other).stdout == "the other vault's secret\n"


def test_no_secret_in_any_argv_or_environment_while_the_agent_serves(akc):
    item_secret = "agent-served-item-secret"
    akc.add_generic("svc", "me", item_secret)
    sampler = Sampler(None, [MASTER_PASSWORD.encode(), item_secret.encode()])   # every process
    try:
        # Positive control: the sampler finds a secret placed in an argv and in an environment.
        control = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", item_secret],
                                   env=dict(os.environ, CONTROL=MASTER_PASSWORD))
        try:
            wait_until(lambda: {place for place, _ in sampler.hits} >= {"cmdline", "environ"}, timeout=20)
        finally:
            control.kill()
            control.wait()
        assert {place for place, _ in sampler.hits} >= {"cmdline", "environ"}, "the sampler cannot see secrets"
        after_control = sampler.samples
        wait_until(lambda: sampler.samples >= after_control + 2, timeout=20)
        sampler.hits.clear()

        unlock(akc)
        for _ in range(20):
            assert akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE).stdout == item_secret + "\n"
        seen = sampler.samples
        wait_until(lambda: sampler.samples >= seen + 5, timeout=20)
        akc.ok(["lock"])
    finally:
        sampler.stop()
    assert sampler.hits == [], f"secrets found in {Sampler.PLACES}: {sampler.hits}"
    agent_commands = [c for c in sampler.commands if " agent --readiness-fd " in c]
    assert agent_commands, sampler.commands   # the agent was sampled


def test_a_stopped_agent_does_not_hold_commands(akc):
    """An agent that cannot answer (stopped with SIGSTOP, say Ctrl-Z of `kc agent --foreground`)
    leaves commands waiting for its hello only briefly, not for the two minutes an unlock may take:
    with a master password source the command goes on without it."""
    import signal
    akc.add_generic("site", "me", "secret")
    unlock(akc)
    [pid] = agent_pids(akc)
    os.kill(pid, signal.SIGSTOP)
    try:
        result = akc.run(["find", "-s", "site", "-w"], timeout=60)
        assert result.returncode == 0 and result.stdout == "secret\n", result
        assert "did not use the agent: the agent did not answer" in result.stderr, result.stderr
    finally:
        os.kill(pid, signal.SIGCONT)


def test_lock_and_spawn_files_planted_as_links_are_not_followed(akc, tmp_path):
    """Security review I5: the agent's lock file and the spawn lock are opened with O_NOFOLLOW, so a
    symbolic link planted in their place (only the user or root can, the folder is private) is
    refused, and the file it points to is neither created nor opened."""
    akc.add_generic("svc", "me", "pw")
    sock = socket_path(akc)
    assert wait_until(lambda: not agent_pids(akc)), "the agent did not end after kc lock"
    for suffix in (".spawn", ".lock"):
        planted = sock.with_suffix(suffix)
        target = tmp_path / f"target{suffix}"
        planted.unlink(missing_ok=True)
        planted.symlink_to(target)
        result = akc.run(["unlock"], timeout=30)
        assert result.returncode != 0 and not agent_pids(akc), result
        if suffix == ".spawn":      # refused by kc unlock itself
            assert f"{planted}" in result.stderr and "Too many levels of symbolic links" in result.stderr, result
        else:                       # by the agent it started, which exits at once
            assert "cannot start the agent: it exited at once" in result.stderr, result
        assert not target.exists(), f"{suffix}: the link was followed"
        planted.unlink()
    unlock(akc)                                 # with the links gone, as before
    assert akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE).stdout == "pw\n"


def fill_backlog(path) -> list[socket.socket]:
    """Connections that wait in the listen backlog of the socket at `path` until it is full."""
    queued = []
    while len(queued) < 100:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(str(path))
        except BlockingIOError:   # EAGAIN: the backlog is full
            sock.close()
            return queued
        queued.append(sock)
    raise AssertionError("the backlog never filled")


def test_a_stopped_agent_with_a_full_backlog_does_not_hold_commands(akc):
    """A stopped agent accepts nothing: once its listen backlog is full, a client's connect
    waits; it gives up after a bounded wait, and does not call the agent busy."""
    import signal
    akc.add_generic("site", "me", "secret")
    unlock(akc)
    [pid] = agent_pids(akc)
    [path] = [p for p in agent_folder(akc).iterdir() if p.suffix == ".sock"]
    os.kill(pid, signal.SIGSTOP)
    queued = []
    try:
        queued = fill_backlog(path)
        result = akc.run(["find", "-s", "site", "-w"], timeout=60)
        assert result.returncode == 0 and result.stdout == "secret\n", result
        assert "did not use the agent: the agent did not answer" in result.stderr, result.stderr
        assert "busy" not in result.stderr, result.stderr
    finally:
        for sock in queued:
            sock.close()
        os.kill(pid, signal.SIGCONT)


def test_a_squatted_temporary_folder_is_passed_over_for_a_private_one(akc):
    """Security review I3: without XDG_RUNTIME_DIR and /run/user/UID the agent's folder is
    $TMPDIR/kc-UID, which another user can make first (a folder of theirs, or a link). kc warns,
    uses a private folder of a random name recorded in the state folder, and every later command
    finds the agent there."""
    if os.path.isdir(f"/run/user/{os.getuid()}"):
        import pytest
        pytest.skip("/run/user/UID exists here, so the temporary folder is never used")
    import shutil
    import tempfile
    temporary = tempfile.mkdtemp(prefix="kc-i3-", dir="/tmp")   # short: the socket path must fit
    os.chmod(temporary, 0o1777)
    try:
        squatted_temporary_folder(akc, {"XDG_RUNTIME_DIR": None, "TMPDIR": temporary}, Path(temporary) / f"kc-{os.getuid()}")
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def squatted_temporary_folder(akc, no_runtime, squatted):
    squatted.mkdir(mode=0o700)
    os.chown(squatted, 65534, 65534)    # nobody's; the tests run as root
    akc.add_generic("svc", "me", "pw")
    warning = f"kc: warning: {squatted} is not a folder of yours (owner uid 65534), made by someone else; " \
              "the agent's files are in "
    result = unlock(akc, env=no_runtime)
    assert any(line.startswith(warning) for line in result.stderr.splitlines()), result
    folder = result.stderr.split(warning, 1)[1].split(" instead")[0]
    assert folder.startswith(str(squatted) + "-") and os.stat(folder).st_mode & 0o777 == 0o700
    assert os.listdir(squatted) == []
    try:
        found = akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE, env=no_runtime)
        assert found.returncode == 0 and found.stdout == "pw\n", found
        assert status(akc, env=no_runtime)[1]["state"] == "unlocked"
    finally:
        akc.ok(["lock"], env=no_runtime)
    # A link in its place is passed over the same way, for the folder already recorded.
    os.rmdir(squatted)
    os.symlink("/", squatted)
    result = unlock(akc, env=no_runtime)
    assert f"kc: warning: {squatted} is a symbolic link, made by someone else; the agent's files are in {folder} instead" \
        in result.stderr.splitlines(), result
    akc.ok(["lock"], env=no_runtime)
