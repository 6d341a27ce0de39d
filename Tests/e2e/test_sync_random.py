"""Random sync scenarios on three simulated machines (real git, a local bare repository): adds, edits
and deletes on whichever machine, syncs in random order, then a final round of syncs. Checked: every
machine ends with the same items and secrets, and nothing acknowledged is lost: every item no one
deleted is on every machine, its secret one that was written for it, and every secret written for
it in its history. Each scenario prints its seed; KC_SYNC_E2E_SEED replays one, KC_SYNC_E2E_SCENARIOS
and KC_SYNC_E2E_STEPS scale the run."""
import json
import os
import random
import time

import pytest

from kcharness import EXIT_NOT_FOUND

from test_sync import machine, remote  # noqa: F401  (pytest fixture)

SCENARIOS = int(os.environ.get("KC_SYNC_E2E_SCENARIOS", "2"))
STEPS = int(os.environ.get("KC_SYNC_E2E_STEPS", "24"))


def seeds():
    if "KC_SYNC_E2E_SEED" in os.environ:
        return [int(os.environ["KC_SYNC_E2E_SEED"])]
    base = int(time.time() * 1000)
    return [base + 7919 * n for n in range(SCENARIOS)]


def state(kc) -> dict:
    result = kc.run(["find", "--all", "--json", "-w"])
    assert result.returncode in (0, EXIT_NOT_FOUND), result   # an empty vault: [] and errSecItemNotFound
    items = json.loads(result.stdout)
    return {item["service"]: item["password"] for item in items}


@pytest.mark.parametrize("seed", seeds())
def test_random_scenarios_converge_and_lose_nothing(kc_bin, tmp_path, remote, seed):  # noqa: F811
    print(f"seed {seed} (replay with KC_SYNC_E2E_SEED={seed})")
    rng = random.Random(seed)
    names = ["a", "b", "c"]
    kcs = {name: machine(kc_bin, tmp_path, name) for name in names}
    kcs["a"].init()
    kcs["a"].add_generic("a0", "me", "a0-v0")
    kcs["a"].ok(["sync", "init", "--remote", remote])
    for name in names[1:]:
        kcs[name].ok(["sync", "clone", remote])
    written = {"a0": {"a0-v0"}}    # every secret acknowledged for each service
    deleted = set()                # services someone deleted (their state depends on the clocks)
    counter = 0
    for step in range(STEPS):
        name = rng.choice(names)
        kc = kcs[name]
        here = state(kc)
        action = rng.choice(["add", "add", "edit", "edit", "delete", "sync", "sync"])
        counter += 1
        if action == "add" or (action in ("edit", "delete") and not here):
            service = f"{name}{counter}"
            kc.add_generic(service, "me", f"{service}-v0")
            written[service] = {f"{service}-v0"}
        elif action == "edit":
            service = rng.choice(sorted(here))
            value = f"{service}-v{counter}-{name}"
            kc.ok(["update", "generic", "-s", service, "--password-stdin"], input=value)
            written[service].add(value)
        elif action == "delete":
            service = rng.choice(sorted(here))
            kc.ok(["delete", "generic", "-s", service])
            deleted.add(service)
        else:
            kc.ok(["sync"])
    for name in names + names:   # a final round, twice: everything reaches everyone
        kcs[name].ok(["sync"])
    states = {name: state(kcs[name]) for name in names}
    assert states["a"] == states["b"] == states["c"], f"seed {seed}: the machines differ"
    final = states["a"]
    for service, secrets in written.items():
        if service in deleted:
            continue
        assert service in final, f"seed {seed}: {service} was lost"
        assert final[service] in secrets, f"seed {seed}: {service} holds a secret never written for it"
        for name in names:
            history = kcs[name].ok(["history", "generic", "-s", service, "-w"]).stdout
            for value in secrets:
                assert f"password: {value}\n" in history, f"seed {seed}: {value} missing from {name}'s history"
