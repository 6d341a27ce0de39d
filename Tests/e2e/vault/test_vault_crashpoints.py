"""Crash at every I/O point through the test-only fault seam.

For each mutating command, for every k until the command completes without reaching its k-th
I/O step (write, fsync, rename or ftruncate, counted together: KC_FAULT=any:k:...), the process
exits immediately before, and immediately after, that step. Afterwards the vault must be in
the old state or the new state (the one a normal run produces), never neither, and it must take
the next command (the next write succeeds and `kc check` finds the vault whole).
"""
from __future__ import annotations

import pytest

from kcharness import SEAM_EXIT
from vaultkit import figure, leftovers
from vaultscenarios import SCENARIOS, Lab

TOTALS = {"points": 0, "old": 0, "new": 0, "scenarios": 0}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_crash_at_every_io_point(tmp_path, scenario):
    lab = Lab(tmp_path, scenario)
    outcomes = {"old": 0, "new": 0, "neither": 0}
    failures = []
    steps = 0
    k = 1
    while True:
        reached = False
        for action in ("exit-before", "exit-after"):
            lab.reset()
            r = lab.run(fault=f"any:{k}:{action}")
            if r.returncode == 0:
                continue            # the command completed without reaching step k
            assert r.returncode == SEAM_EXIT, f"{scenario.name}, step {k} {action}: exit {r.returncode}, not the seam's: {r}"
            reached = True
            state = lab.observe()
            label = lab.classify(state)
            outcomes[label] += 1
            if label == "neither":
                failures.append(f"step {k} {action}: neither old nor new: {state} (old {lab.old}, new {lab.new})")
                continue
            problem = lab.usable(state, label)
            if problem:
                failures.append(f"step {k} {action} ({label}): {problem}")
        if not reached:
            break
        steps = k
        k += 1
        assert k < 200, "the command never completes"
    points = outcomes["old"] + outcomes["new"] + outcomes["neither"]
    assert steps > 0, (f"{scenario.name}: no crash point was reached: is {lab.kc.binary} a build without "
                       f"the fault seam (a release build)?")
    assert not failures, f"{scenario.name}:\n" + "\n".join(failures)
    TOTALS["points"] += points
    TOTALS["old"] += outcomes["old"]
    TOTALS["new"] += outcomes["new"]
    TOTALS["scenarios"] += 1
    figure(f"[crash points] crash points: {scenario.name}: {steps} I/O steps, {points} crashes "
           f"(before and after each): {outcomes['old']} old state, {outcomes['new']} new state, 0 neither")
    if TOTALS["scenarios"] == len(SCENARIOS):
        figure(f"[crash points] crash points: {TOTALS['points']} crashes over {len(SCENARIOS)} mutating commands: "
               f"old or new state opened and took the next write in 100% ({TOTALS['old']} old, {TOTALS['new']} new), never neither")
