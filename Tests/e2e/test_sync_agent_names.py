"""Device names through the unlocked agent (Docs/SYNC.md, Device names and device ids): an agent-served
`kc sync init` writes the default name (the host name) and `kc sync --device-name` renames, neither asking
the master password; an empty or invalid host name writes no name, without an error."""
import socket
import subprocess
import sys

import pytest

from agentsupport import NO_SOURCE, stop_agents, unlock, with_runtime_folder
from kcformat import device_names
from kcharness import MASTER_PASSWORD
from test_sync import machine, remote  # noqa: F401  (pytest fixtures)


def host_named(name: str) -> tuple:
    """A wrapper running kc in a UTS namespace of its own whose host name is `name`."""
    code = "import socket,sys; socket.sethostname(sys.argv[1].encode('utf-8', 'surrogateescape'))"
    script = f'{sys.executable} -c "{code}" "$0" && exec "$@"'
    return ("/usr/bin/unshare", "-u", "/bin/sh", "-c", script, name)


def names(kc) -> list[str]:
    return sorted(device_names(kc.vault_path.read_bytes(), kc.master_password.encode()).values())


@pytest.fixture
def unlocked(kc_bin, tmp_path):
    kc = with_runtime_folder(machine(kc_bin, tmp_path, "laptop"))
    kc.init()
    kc.add_generic("shared", "me", "pw0")
    unlock(kc)
    yield kc
    stop_agents(kc)


def test_an_agent_served_init_names_the_machine_by_its_host_name(unlocked, remote):
    unlocked.ok(["sync", "init", "--remote", remote], unset=NO_SOURCE)
    assert names(unlocked) == [socket.gethostname()]
    assert f"\"{socket.gethostname()}\"" in unlocked.ok(["sync", "status"], unset=NO_SOURCE).stdout


def test_an_agent_served_init_takes_a_device_name_without_a_password(unlocked, remote):
    unlocked.ok(["sync", "init", "--remote", remote, "--device-name", "laptop"], unset=NO_SOURCE)
    assert names(unlocked) == ["laptop"]


def test_sync_with_a_device_name_renames_through_the_agent(unlocked, remote):
    unlocked.ok(["sync", "init", "--remote", remote, "--device-name", "one"], unset=NO_SOURCE)
    unlocked.ok(["sync", "--device-name", "two"], unset=NO_SOURCE)
    assert "\"two\"" in unlocked.ok(["sync", "status"], unset=NO_SOURCE).stdout
    blob = subprocess.run(["git", "-C", str(remote), "show", "main:login.kc"], capture_output=True, check=True).stdout
    assert list(device_names(blob, MASTER_PASSWORD.encode()).values()) == ["two"], "the sync sent the rename"


@pytest.mark.parametrize("host", ["", "a\x01b", "caf\udcff"])   # empty, a control character, not UTF-8
@pytest.mark.parametrize("served", ["agent", "password"])
def test_an_empty_or_invalid_host_name_writes_no_name(kc_bin, tmp_path, remote, host, served):
    kc = with_runtime_folder(machine(kc_bin, tmp_path, "laptop"))
    kc.init()
    try:
        if served == "agent":
            unlock(kc)
        result = kc.run(["sync", "init", "--remote", remote], unset=NO_SOURCE if served == "agent" else (),
                        wrapper=host_named(host))
        assert result.returncode == 0 and "error" not in result.stderr and "warning" not in result.stderr, result
        assert names(kc) == []
    finally:
        stop_agents(kc)
