"""Every pipe kc makes and every connection its agent accepts is close-on-exec from the system call that
creates it (pipe2 with O_CLOEXEC, accept4 with SOCK_CLOEXEC), never in a second step: a child started by
another thread between the two would inherit it. Watched with strace on kc's own process (not its children)."""
import subprocess

from agentsupport import DEADLINE, akc, status, wait_until  # noqa: F401
from test_cli_import_pass_gpg_output import make_store

CALLS = "pipe,pipe2,accept,accept4,fcntl"


def traced(log):
    return ["strace", "-qq", "-e", f"trace={CALLS}", "-o", str(log)]


def test_the_pipes_to_gpg_are_made_close_on_exec(kc_ready, tmp_path):
    store, env = make_store(tmp_path, {"plain": "plain-pw\n", "other": "other-pw\n"})
    log = tmp_path / "strace.log"
    kc_ready.ok(["import", "pass", str(store)], env=env, wrapper=traced(log))
    calls = log.read_text().splitlines()
    pipes = [call for call in calls if call.startswith(("pipe(", "pipe2("))]
    assert len(pipes) == 4 and all(call.startswith("pipe2(") and "O_CLOEXEC" in call for call in pipes), calls
    assert not [call for call in calls if "F_SETFD" in call], calls


def test_the_agent_accepts_connections_close_on_exec(akc, tmp_path):
    log = tmp_path / "strace.log"
    agent = akc.popen(["agent", "--foreground"], stdin=subprocess.DEVNULL, wrapper=traced(log))
    try:
        assert wait_until(lambda: status(akc)[1]["state"] == "locked"), "the agent did not listen"
        akc.ok(["lock"])
        assert agent.wait(DEADLINE) == 0
    finally:
        if agent.poll() is None:
            agent.kill()
    calls = log.read_text().splitlines()
    accepts = [call for call in calls if call.startswith(("accept(", "accept4(")) and "= -1" not in call]
    assert accepts and all(call.startswith("accept4(") and "SOCK_CLOEXEC" in call for call in accepts), calls
    assert not [call for call in calls if "F_SETFD" in call], calls
