"""Helpers of the agent's end-to-end tests (test_agent_*.py): kc homes whose agents live in a
private runtime folder of the test, the agents' processes, and polling with generous deadlines.

Commands run with `NO_SOURCE` unset have no master password source and no terminal: they can only
succeed when the agent answers them.
"""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from kcharness import EXIT_INTERACTION, KC

# Unset for a run without any master password source (and the harness gives no terminal).
NO_SOURCE = ("KC_MASTER_PASSWORD_FILE",)
# How long a poll waits for something the agent does by itself (a timer, noticing a file): far
# longer than it needs, so a loaded machine passes; the tests never assert how fast it happened.
DEADLINE = 60


def with_runtime_folder(kc: KC, name: str = "run") -> KC:
    """Points the home's XDG_RUNTIME_DIR at a private folder (mode 0700) of the test."""
    folder = kc.home / name
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    kc.env["XDG_RUNTIME_DIR"] = str(folder)
    return kc


def agent_folder(kc: KC) -> Path:
    """The folder of the home's agents' sockets and lock files."""
    return Path(kc.env["XDG_RUNTIME_DIR"]) / "kc"


def agent_pids(kc: KC) -> set[int]:
    """The processes holding a file of the home's agent folder open (an agent holds its lock
    file for its whole life), zombies aside."""
    folder = str(agent_folder(kc)) + "/"
    pids = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or not alive(int(name)):
            continue
        try:
            links = [os.readlink(f"/proc/{name}/fd/{fd}") for fd in os.listdir(f"/proc/{name}/fd")]
        except OSError:
            continue
        if any(link.startswith(folder) for link in links):
            pids.add(int(name))
    return pids


def alive(pid: int) -> bool:
    """True while the process exists and has not exited (a zombie has: its memory is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def status(kc: KC, **kwargs) -> tuple[int, dict]:
    """`kc status --json`: its exit status and the object it printed."""
    result = kc.run(["status", "--json"], **kwargs)
    assert result.stdout.strip(), result
    return result.returncode, json.loads(result.stdout)


def wait_until(condition, timeout: float = DEADLINE, interval: float = 0.1) -> bool:
    """Polls `condition` until it holds or `timeout` seconds pass; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)


def unlock(kc: KC, *extra, **kwargs):
    """`kc unlock` with the home's master password file; asserts success."""
    return kc.ok(["unlock", *extra], **kwargs)


def stop_agents(kc: KC) -> None:
    """Ends every agent of the home (after a test, whatever it left)."""
    for pid in agent_pids(kc):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    wait_until(lambda: not agent_pids(kc), timeout=10)


def not_unlocked(kc: KC) -> bool:
    """True when `kc status` says no agent is unlocked (exit errSecInteractionNotAllowed)."""
    return kc.run(["status"]).returncode == EXIT_INTERACTION


@pytest.fixture
def akc(kc_ready) -> KC:
    """kc with a vault and a private runtime folder; its agents are ended after the test."""
    with_runtime_folder(kc_ready)
    yield kc_ready
    stop_agents(kc_ready)
