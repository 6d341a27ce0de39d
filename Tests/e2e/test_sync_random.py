"""Random sync scenarios through the built kc and real git (a local bare repository) against a model that
replays every acknowledged operation (syncmodel.py, reading the records with the independent kcformat
reader): three machines, the third with its clock 2 h ahead (faketime), the second unlocked (its agent serves every
command and the driver: no password source) with its sync copy set to `pull.rebase=true`; adds, edits, deletes, compactions, syncs, syncs that fail at the fetch (the remote
away: exported and committed only) and `git pull` by hand in the sync copy (a rebase on the second).
After every step each machine's vault holds the model's records; after a final round of syncs every
machine's items, histories (`kc history`) and records equal the model's and the remote's.

Each scenario prints its seed; KC_SYNC_E2E_SEED replays its operations (which of two writes made
within a millisecond wins follows the clocks, so a replay can differ), KC_SYNC_E2E_SCENARIOS and
KC_SYNC_E2E_STEPS scale the run (the in-process model check, Tests/KCSyncTests/SyncModelTests.swift,
runs hundreds)."""
import json
import os
import random
import shutil
import subprocess
import time

import pytest

from agentsupport import NO_SOURCE, stop_agents, unlock, with_runtime_folder
from kcharness import EXIT_NOT_FOUND
from syncmodel import SyncModel, read_records
from test_sync import GIT_ENV, machine, remote, sync_folder  # noqa: F401  (pytest fixture)

SCENARIOS = int(os.environ.get("KC_SYNC_E2E_SCENARIOS", "2"))
STEPS = int(os.environ.get("KC_SYNC_E2E_STEPS", "24"))
NAMES = ["a", "b", "c"]
AHEAD = ("faketime", "-f", "+2h")
NOT_SERVED = ("compact", "history")   # commands the unlocked agent does not serve: they need the password

pytestmark = pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is missing: run make test-deps")


def seeds():
    if "KC_SYNC_E2E_SEED" in os.environ:
        return [int(os.environ["KC_SYNC_E2E_SEED"])]
    base = int(time.time() * 1000)
    return [base + 7919 * n for n in range(SCENARIOS)]


class World:
    def __init__(self, kc_bin, tmp_path, remote_path):
        self.kcs = {name: machine(kc_bin, tmp_path, name) for name in NAMES}
        self.remote, self.away = remote_path, tmp_path / "away.git"
        self.model = SyncModel()
        self.serial = 0
        self.unlocked = False

    def run(self, name, args, **kwargs):
        """kc on `name`: on c with its clock ahead; on b with no password source once its agent is unlocked
        (but for the commands the agent does not serve)."""
        unset = NO_SOURCE if name == "b" and self.unlocked and args[0] not in NOT_SERVED else ()
        return self.kcs[name].run(args, wrapper=AHEAD if name == "c" else (), unset=unset, **kwargs)

    def ok(self, name, args, **kwargs):
        result = self.run(name, args, **kwargs)
        assert result.returncode == 0, result
        return result

    def held(self, path):
        return read_records(path.read_bytes(), self.kcs["a"].master_password.encode())

    def check(self, name):
        held = set(self.held(self.kcs[name].vault_path))
        expected = self.model.places[name]
        assert held == expected, f"{name} holds other records than the model: missing {len(expected - held)}, extra {len(held - expected)}"

    def write(self, name, args, **kwargs):
        before = set(self.model.places.get(name, set()))
        self.ok(name, args, **kwargs)
        records = self.held(self.kcs[name].vault_path)
        problem = self.model.write(name, [r for i, r in records.items() if i not in before])
        assert problem is None, f"{name}: {problem}"
        self.check(name)

    def name_device(self, name, args):
        """`kc sync init` or `clone`, which names the device (the host name) in its live vault, not in the copy."""
        before = set(self.model.places.get(name, set()))
        self.ok(name, args)
        records = self.held(self.kcs[name].vault_path)
        problem = self.model.name_device(name, [r for i, r in records.items() if i not in before])
        assert problem is None, f"{name}: {problem}"
        self.check(name)

    def compact(self, name):
        before = set(self.model.places[name])
        self.ok(name, ["compact"])
        records = self.held(self.kcs[name].vault_path)
        problem = self.model.compact(name, [r for i, r in records.items() if i not in before])
        assert problem is None, f"{name}: {problem}"
        self.check(name)

    def sync(self, name):
        self.ok(name, ["sync"])
        copy = f"{name}.copy"
        self.model.merge(copy, name)
        self.model.merge(copy, "remote")
        self.model.places["remote"] = set(self.model.places[copy])
        self.model.merge(name, copy)
        self.check(name)

    def offline_sync(self, name):
        """A sync whose fetch fails: the live vault exported and committed in the sync copy, nothing more."""
        self.remote.rename(self.away)
        try:
            assert self.run(name, ["sync"]).returncode != 0
        finally:
            self.away.rename(self.remote)
        self.model.merge(f"{name}.copy", name)
        self.check(name)

    def pull_by_hand(self, name):
        """`git pull` in the sync copy (the driver configured by kc; a rebase on b)."""
        kc = self.kcs[name]
        env = {**os.environ, **kc.environment(unset=NO_SOURCE if name == "b" else ()), **GIT_ENV, "GIT_TERMINAL_PROMPT": "0"}
        if name == "b":
            env.pop("KC_MASTER_PASSWORD_FILE", None)
        command = [*(AHEAD if name == "c" else ()), "git", "-C", str(sync_folder(kc)), "-c", "user.name=t",
                   "-c", "user.email=t@example.invalid", "pull", "-q", "--no-edit", "origin", "main"]
        pulled = subprocess.run(command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        assert pulled.returncode == 0, pulled.stderr
        self.model.merge(f"{name}.copy", "remote")

    def items(self, name) -> dict:
        result = self.run(name, ["find", "--all", "--json", "-w"])
        assert result.returncode in (0, EXIT_NOT_FOUND), result
        return {item["service"]: item["password"] for item in json.loads(result.stdout)}

    def history(self, name, service) -> list:
        text = self.ok(name, ["history", "generic", "-s", service, "-w"]).stdout
        return [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("password: ")]


@pytest.mark.parametrize("seed", seeds())
def test_random_scenarios_equal_the_model(kc_bin, tmp_path, remote, seed):  # noqa: F811
    print(f"seed {seed} (replay with KC_SYNC_E2E_SEED={seed})")
    rng = random.Random(seed)
    world = World(kc_bin, tmp_path, remote)
    world.kcs["a"].init()
    world.write("a", ["add", "generic", "-s", "a0", "-a", "me", "--password-stdin"], input="a0-v0")
    world.model.places["remote"] = set(world.model.places["a"])
    world.model.places["a.copy"] = set(world.model.places["a"])
    world.name_device("a", ["sync", "init", "--remote", remote])
    # init's own sync round sent the device name: the remote and a's copy hold what a holds
    world.model.places["remote"] = set(world.model.places["a"])
    world.model.places["a.copy"] = set(world.model.places["a"])
    for name in NAMES[1:]:
        world.model.places[name] = set(world.model.places["remote"])
        world.model.places[f"{name}.copy"] = set(world.model.places["remote"])
        world.name_device(name, ["sync", "clone", remote])
        # the clone's own sync round sent its device name at once: the remote and its copy hold it
        world.model.places["remote"] = set(world.model.places[name])
        world.model.places[f"{name}.copy"] = set(world.model.places[name])
    subprocess.run(["git", "-C", str(sync_folder(world.kcs["b"])), "config", "pull.rebase", "true"], check=True)
    with_runtime_folder(world.kcs["b"])
    unlock(world.kcs["b"])
    world.unlocked = True
    try:
        run_steps(world, rng, seed)
    finally:
        stop_agents(world.kcs["b"])


def run_steps(world: World, rng: random.Random, seed: int) -> None:
    for step in range(STEPS):
        name = rng.choice(NAMES)
        live = sorted(world.model.items(name))
        action = rng.choice(["add", "add", "edit", "edit", "edit", "delete", "compact", "sync", "sync", "sync",
                             "offline", "pull"])
        world.serial += 1
        value = f"{name}-{world.serial}"
        if action == "add" or (action in ("edit", "delete") and not live):
            world.write(name, ["add", "generic", "-s", value, "-a", "me", "--password-stdin"], input=value)
        elif action == "edit":
            world.write(name, ["update", "generic", "-s", rng.choice(live), "--password-stdin"], input=value)
        elif action == "delete":
            world.write(name, ["delete", "generic", "-s", rng.choice(live)])
        elif action == "compact":
            world.compact(name)
        elif action == "offline":
            world.offline_sync(name)
        elif action == "pull":
            world.pull_by_hand(name)
        else:
            world.sync(name)
    for name in NAMES + NAMES:      # a final round, twice: everything reaches everyone
        world.sync(name)
    remote_held = world.model.places["remote"]
    for name in NAMES:
        assert world.model.places[name] == remote_held, f"seed {seed}: {name} did not converge in the model"
        world.check(name)
        items = world.items(name)
        assert items == world.model.items(name), f"seed {seed}: {name}'s items differ from the model's"
        for service in items:
            assert world.history(name, service) == world.model.history(service, name), \
                f"seed {seed}: {name}'s history of {service} differs from the model's"
