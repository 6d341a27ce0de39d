"""An agent-served `kc sync init` makes the sync copy with the agent, pushes it, and then names the
device. Sync requests do not push the idle deadline back, so an agent whose timer runs out during a
slow push is gone by then: the naming goes on with the master password, as the item commands and
`kc sync` do (not "the agent is locked; run kc unlock" after the copy was made and pushed)."""
import os

from agentsupport import stop_agents, unlock, with_runtime_folder
from test_sync import machine, remote  # noqa: F401  (pytest fixtures)


def test_sync_init_names_the_device_when_the_agent_locked_during_the_push(kc_bin, tmp_path, remote):
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nsleep 4\n")
    os.chmod(hook, 0o755)
    kc = with_runtime_folder(machine(kc_bin, tmp_path, "laptop"))
    kc.init()
    kc.add_generic("shared", "me", "pw0")
    try:
        unlock(kc, "--timeout", "2s")
        result = kc.run(["sync", "init", "--remote", remote, "--device-name", "laptop"])   # a password file is given
        assert result.returncode == 0, result
        assert "\"laptop\"" in kc.ok(["sync", "status"]).stdout
    finally:
        stop_agents(kc)
