"""`kc sync reset-device` locks the vault's running agent (Docs/SYNC.md, Device names and device ids): the
agent read the device id when it opened the vault, and would go on writing as the old device."""
from agentsupport import agent_pids, akc, not_unlocked, unlock, wait_until  # noqa: F401  (pytest fixture)


def test_reset_device_locks_the_vaults_agent_and_says_so(akc):
    unlock(akc)
    assert agent_pids(akc)
    result = akc.ok(["sync", "reset-device"])
    assert "locked" in result.stderr and "agent" in result.stderr, result
    assert wait_until(lambda: not agent_pids(akc)), "the agent still runs"
    assert not_unlocked(akc)
    akc.add_generic("after-reset", "me", "x")   # written with the master password, as the new device


def test_reset_device_without_an_agent_says_nothing_of_one(akc):
    result = akc.ok(["sync", "reset-device"])
    assert "agent" not in result.stderr and "now writes as device" in result.stderr, result
