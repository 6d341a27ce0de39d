"""kc unlock, kc lock and kc status through the built binary: the agent's life as a user sees it."""
import os
import subprocess
import threading

import pexpect

from agentsupport import (DEADLINE, NO_SOURCE, agent_folder, agent_pids, akc, alive, not_unlocked,  # noqa: F401
                          status, unlock, wait_until)
from kcharness import (EXIT_AUTH_FAILED, EXIT_CANCELED, EXIT_INTERACTION, EXIT_NO_SUCH_KEYCHAIN, EXIT_PARAM,
                       assert_failure)


def test_status_without_an_agent_starts_none(akc):
    code, state = status(akc)
    assert code == EXIT_INTERACTION
    assert state == {"state": "not running", "vault": str(akc.vault_path)}
    human = akc.run(["status"])
    assert human.returncode == EXIT_INTERACTION and "state: not running" in human.stdout, human
    assert "kc: error" not in human.stderr, human
    assert agent_pids(akc) == set()


def test_unlock_status_lock(akc):
    result = unlock(akc)
    assert "unlocked" in result.stderr and result.stdout == "", result
    code, state = status(akc)
    assert code == 0, state
    assert state["state"] == "unlocked" and state["vault"] == str(akc.vault_path)
    assert 0 < state["idleSecondsLeft"] <= 15 * 60 and 0 < state["maxSecondsLeft"] <= 8 * 3600
    assert agent_pids(akc) == {state["pid"]}
    human = akc.ok(["status"]).stdout
    assert "state: unlocked" in human and f"pid: {state['pid']}" in human and "idle timeout in: " in human, human

    locked = akc.ok(["lock"])
    assert "locked" in locked.stderr
    # kc lock returns only once the agent has wiped the key and exited: no waiting here.
    assert not alive(state["pid"])
    assert status(akc)[1]["state"] == "not running"
    again = akc.ok(["lock"])
    assert "no agent" in again.stderr, again


def test_unlock_from_a_command_substitution_returns(akc):
    """The agent keeps no descriptor of kc unlock's: $(kc unlock) sees end of file at once."""
    script = f'out=$("{akc.binary}" unlock 2>&1); echo "status=$?"'
    done = subprocess.run(["sh", "-c", script], env=akc.environment(), capture_output=True, text=True,
                          timeout=DEADLINE, start_new_session=True)
    assert "status=0" in done.stdout, done
    assert status(akc)[0] == 0


def test_timeouts_from_flags_and_already_unlocked(akc):
    unlock(akc, "--timeout", "1h30m", "--max-ttl", "2h")
    state = status(akc)[1]
    assert 80 * 60 < state["idleSecondsLeft"] <= 90 * 60 and 110 * 60 < state["maxSecondsLeft"] <= 120 * 60, state
    again = unlock(akc, unset=NO_SOURCE)   # no password needed to be told
    assert "already unlocked" in again.stderr, again
    assert status(akc)[1]["pid"] == state["pid"]
    # New timeouts on an unlocked agent: the master password again, then both timers restart.
    unlock(akc, "--timeout", "5m", "--max-ttl", "20m")
    state = status(akc)[1]
    assert state["idleSecondsLeft"] <= 5 * 60 and state["maxSecondsLeft"] <= 20 * 60, state


def test_timeouts_from_the_config_file(akc):
    config = akc.home / "config" / "kc"
    config.mkdir(parents=True, exist_ok=True)
    (config / "agent.conf").write_text("# kc agent\nidle-timeout = 7m\nmax-ttl = 1h\n")
    unlock(akc)
    state = status(akc)[1]
    assert 6 * 60 < state["idleSecondsLeft"] <= 7 * 60 and 59 * 60 < state["maxSecondsLeft"] <= 3600, state
    akc.ok(["lock"])
    unlock(akc, "--timeout", "2m")   # a flag wins over the file
    state = status(akc)[1]
    assert state["idleSecondsLeft"] <= 2 * 60 and state["maxSecondsLeft"] > 30 * 60, state


def test_bad_durations_and_config_fail_before_any_prompt(akc):
    assert_failure(akc.run(["unlock", "--timeout", "15"]), "errSecParam", EXIT_PARAM)
    assert_failure(akc.run(["unlock", "--max-ttl", "1x"]), "errSecParam", EXIT_PARAM)
    config = akc.home / "config" / "kc"
    config.mkdir(parents=True, exist_ok=True)
    (config / "agent.conf").write_text("idle-timeout = 5m\nttl = 8h\n")
    result = akc.run(["unlock"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "agent.conf:2:" in result.stderr, result
    assert agent_pids(akc) == set()


def test_wrong_password_leaves_no_unlocked_agent(akc):
    akc.write_secret_file(akc.password_file, "not the password\n")
    result = akc.run(["unlock"])
    assert_failure(result, "errSecAuthFailed", EXIT_AUTH_FAILED)
    # The agent started for it has exited by the time kc does: no locked agent lingers.
    assert agent_pids(akc) == set()
    assert not_unlocked(akc)


def test_unlock_without_terminal_or_source(akc):
    result = akc.run(["unlock"], unset=NO_SOURCE)
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert not_unlocked(akc)


def test_unlock_of_a_missing_vault_fails_before_any_prompt(kc):
    from agentsupport import with_runtime_folder
    with_runtime_folder(kc)
    child = kc.spawn(["unlock"], unset=NO_SOURCE)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == EXIT_NO_SUCH_KEYCHAIN
    assert "password" not in child.before.lower(), child.before
    assert agent_pids(kc) == set()


def test_unlock_asks_on_the_terminal_without_echo(akc):
    child = akc.spawn(["unlock"], unset=NO_SOURCE)
    child.expect_exact(f"Master password for {akc.vault_path}: ")
    child.sendline(akc.master_password)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert akc.master_password not in child.before
    assert status(akc)[0] == 0
    # Ctrl-C at the prompt: canceled, nothing else changes.
    akc.ok(["lock"])
    child = akc.spawn(["unlock"], unset=NO_SOURCE)
    child.expect_exact("Master password for ")
    child.sendcontrol("c")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == EXIT_CANCELED
    assert not_unlocked(akc)


def test_two_unlocks_racing_leave_one_agent(akc):
    results = []
    barrier = threading.Barrier(3)

    def run():
        barrier.wait()
        results.append(akc.run(["unlock"]))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [r.returncode for r in results] == [0, 0, 0], results
    pids = agent_pids(akc)
    assert len(pids) == 1, pids
    assert status(akc)[1]["pid"] in pids


def test_idle_timeout_locks_and_status_does_not_push_it_back(akc):
    unlock(akc, "--timeout", "3s")
    # Polling status all along: were status to refresh the idle timer, the agent would never lock.
    assert wait_until(lambda: not_unlocked(akc), interval=0.2), "the agent did not lock on its idle timeout"
    assert wait_until(lambda: not agent_pids(akc)), "the agent locked but did not exit"
    assert_failure(akc.run(["find", "-s", "x", "-w"], unset=NO_SOURCE), "errSecInteractionNotAllowed", EXIT_INTERACTION)


def test_max_ttl_locks_even_while_secrets_are_read(akc):
    akc.add_generic("svc", "me", "pw-ttl")
    unlock(akc, "--timeout", "1h", "--max-ttl", "3s")
    assert status(akc)[1].get("maxSecondsLeft", 0) <= 3

    def locked():
        # Each read of a secret pushes the idle timer back; only the max TTL can lock the agent.
        return akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE).returncode == EXIT_INTERACTION

    assert wait_until(locked, interval=0.2), "the agent outlived its max TTL"


def test_the_agent_is_detached_from_unlock(akc):
    """Its own session, standard descriptors on /dev/null: nothing ties it to kc unlock's terminal or pipes."""
    unlock(akc)
    pid = status(akc)[1]["pid"]
    with open(f"/proc/{pid}/stat", "rb") as f:
        session = int(f.read().rsplit(b")", 1)[1].split()[3])
    assert session == pid, "the agent leads its own session (setsid)"
    assert [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in (0, 1, 2)] == ["/dev/null"] * 3


def test_a_foreground_agent_waits_locked_for_kc_unlock(akc):
    """As the systemd user unit runs it: kc agent --foreground, locked until kc unlock."""
    akc.add_generic("svc", "me", "pw")
    agent = akc.popen(["agent", "--foreground"], stdin=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: status(akc)[1]["state"] == "locked"), "the agent did not listen"
        code, state = status(akc)
        assert code == EXIT_INTERACTION and state["pid"] == agent.pid, state
        # A locked agent: item commands go the slow way, silently.
        found = akc.run(["find", "-s", "svc", "-w"])
        assert found.returncode == 0 and found.stdout == "pw\n" and found.stderr == "", found
        assert_failure(akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE), "errSecInteractionNotAllowed", EXIT_INTERACTION)
        answer = akc.run(["git-credential", "get"], input="protocol=https\nhost=svc\n\n", unset=NO_SOURCE)
        assert answer.returncode == 0 and answer.stdout == "", answer
        # kc unlock unlocks this agent (it starts no other); kc lock ends it.
        unlock(akc)
        after = status(akc)[1]
        assert after["state"] == "unlocked" and after["pid"] == agent.pid, after
        assert akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE).stdout == "pw\n"
        assert agent_pids(akc) == {agent.pid}
        akc.ok(["lock"])
        assert agent.wait(DEADLINE) == 0
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()


def test_new_timeouts_for_an_agent_that_locks_while_the_password_is_typed(akc):
    """`kc unlock --timeout` for an unlocked agent whose timer runs out while the master password is
    typed: the agent is gone when the unlock is sent, so kc unlock starts one, as when none ran
    (not "the agent is locked; run kc unlock")."""
    unlock(akc, "--timeout", "3s")
    child = akc.spawn(["unlock", "--timeout", "1h"], unset=NO_SOURCE, timeout=60)
    child.expect_exact("Master password for ")
    assert wait_until(lambda: not_unlocked(akc)), "the agent did not lock after 3 s idle"
    child.sendline(akc.master_password)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    code, state = status(akc)
    assert code == 0 and state["idleSecondsLeft"] > 60, state
