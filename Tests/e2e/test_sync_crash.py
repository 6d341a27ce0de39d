"""kill -9 at every step of `kc sync` (Docs/SYNC.md, `kc sync`): export, commit, fetch, merge, push,
import and the anchor's update. The desktop has an item the remote lacks and the remote has one the
desktop lacks; its `kc sync` is stopped at one step, then:

- the live vault reads whole (`kc check`) and holds the old items or the new ones, never anything else,
  and every acknowledged item is in it;
- the next `kc sync` completes, and after the laptop syncs too both machines hold the same items.

git's steps are each git command kc runs (found by a `git` first on PATH that logs them), killed with
SIGKILL just before it starts and just after it ends; kc's own file steps (every write, fsync, rename
and ftruncate of the sync copy's file, the live vault and the anchor) are ended by the debug build's
fault seam (KC_FAULT=any:k:exit-before / exit-after, `_exit` at that point, as a kill would). One pair
of machines goes through every point in turn, a new item on each side for each.

At `make test` scale: before and after each of git's add, commit, fetch, merge and push, and before each
file step; with KC_STRESS=1 (`make stress`): before and after every git command and every file step."""
import json
import os
import shutil
import signal

from kcharness import EXIT_NOT_FOUND, SEAM_EXIT

from test_sync import machine, pair, remote  # noqa: F401  (pytest fixtures)

STRESS = os.environ.get("KC_STRESS") == "1"
# The git commands killed around at `make test` scale (each one's first run in a sync).
CHANGING = ("add", "commit", "fetch", "merge", "push")

# A git that logs the commands kc runs, and kills kc (SIGKILL) before or after the one numbered $SYNC_KILL_AT.
GIT_WRAPPER = r"""#!/bin/sh
[ "$(cat /proc/$PPID/comm 2>/dev/null)" = kc ] || exec {git} "$@"
sub=""; skip=0
for a in "$@"; do
  if [ $skip = 1 ]; then skip=0; continue; fi
  case "$a" in -C|-c) skip=1;; -*) ;; *) sub=$a; break;; esac
done
n=$(( $(cat "$SYNC_GIT_COUNT" 2>/dev/null || echo 0) + 1 )); echo $n > "$SYNC_GIT_COUNT"
echo "$sub" >> "$SYNC_GIT_LOG"
if [ "$n" = "$SYNC_KILL_AT" ] && [ "$SYNC_KILL_WHEN" = before ]; then kill -9 $PPID; exit 1; fi
{git} "$@"; status=$?
if [ "$n" = "$SYNC_KILL_AT" ] && [ "$SYNC_KILL_WHEN" = after ]; then kill -9 $PPID; fi
exit $status
"""


def state(kc) -> dict:
    result = kc.run(["find", "--all", "--json", "-w"])
    assert result.returncode in (0, EXIT_NOT_FOUND), result
    return {item["service"]: item["password"] for item in json.loads(result.stdout)}


class Crashes:
    """The pair, a counter of new items, and the checks after each crash."""

    def __init__(self, pair, tmp_path):
        self.laptop, self.desktop = pair
        self.tmp = tmp_path
        self.serial = 0
        self.outcomes = {"old": 0, "new": 0}

    def diverge(self) -> tuple[dict, dict]:
        """A new item on each side (the laptop's pushed); returns the desktop's items before and after a whole sync."""
        self.serial += 1
        self.laptop.add_generic(f"laptop-{self.serial}", "me", f"l{self.serial}")
        self.laptop.ok(["sync"])
        self.desktop.add_generic(f"desktop-{self.serial}", "me", f"d{self.serial}")
        old = state(self.desktop)
        return old, {**old, **state(self.laptop)}

    def after_crash(self, where: str, old: dict, new: dict) -> None:
        assert self.desktop.run(["check"]).returncode == 0, f"{where}: the vault does not read whole"
        now = state(self.desktop)
        assert now in (old, new), f"{where}: neither the old items nor the new ones: {sorted(now)}"
        self.outcomes["old" if now == old else "new"] += 1
        finished = self.desktop.run(["sync"])
        assert finished.returncode == 0, f"{where}: the next sync failed: {finished}"
        self.laptop.ok(["sync"])
        assert state(self.desktop) == state(self.laptop) == {**new, **state(self.laptop)}, f"{where}: not converged"


def test_kill_9_at_every_git_step_of_sync(pair, tmp_path):
    crashes = Crashes(pair, tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(GIT_WRAPPER.replace("{git}", shutil.which("git")))
    wrapper.chmod(0o755)
    count, log = tmp_path / "git-count", tmp_path / "git-log"
    env = {"PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "SYNC_GIT_COUNT": str(count), "SYNC_GIT_LOG": str(log)}
    # a whole sync first, to list the git commands a sync that merges and pushes runs
    crashes.diverge()
    crashes.desktop.ok(["sync"], env=env)
    commands = log.read_text().split()
    for name in ("commit", "fetch", "merge", "push"):
        assert name in commands, f"a sync that merges and pushes runs git {name}: {commands}"
    crashes.laptop.ok(["sync"])
    killed = 0
    points = [n for n in range(1, len(commands) + 1)
              if STRESS or (commands[n - 1] in CHANGING and commands[n - 1] not in commands[:n - 1])]
    for n in points:
        for when in ("before", "after"):
            old, new = crashes.diverge()
            count.unlink(missing_ok=True)
            log.unlink(missing_ok=True)
            result = crashes.desktop.run(["sync"], env={**env, "SYNC_KILL_AT": str(n), "SYNC_KILL_WHEN": when})
            if result.returncode == 0:
                crashes.after_crash(f"git command {n} ran to the end", old, new)
                continue
            where = f"killed {when} git command {n} ({log.read_text().split()[n - 1]})"
            assert result.returncode == -signal.SIGKILL, f"{where}: {result}"
            killed += 1
            crashes.after_crash(where, old, new)
    assert killed >= 2 * len(points) - 1, f"only {killed} kills around {len(points)} git commands"
    print(f"kill -9 around {len(points)} of the {len(commands)} git commands of a sync ({' '.join(commands)}): "
          f"{killed} kills, {crashes.outcomes['old']} old, {crashes.outcomes['new']} new, all synced again")


def test_kill_at_every_file_step_of_sync(pair, tmp_path):
    crashes = Crashes(pair, tmp_path)
    steps = 0
    k = 1
    while True:
        reached = False
        for action in ("exit-before", "exit-after") if STRESS else ("exit-before",):
            old, new = crashes.diverge()
            result = crashes.desktop.run(["sync"], fault=f"any:{k}:{action}")
            if result.returncode == 0:
                crashes.after_crash(f"file step {k} not reached", old, new)
                continue
            assert result.returncode == SEAM_EXIT, f"file step {k} {action}: {result}"
            reached = True
            crashes.after_crash(f"file step {k} {action}", old, new)
        if not reached:
            break
        steps = k
        k += 1
        assert k < 100, "the sync never completes"
    assert steps >= 4, f"a sync that merges writes the sync copy, the vault and the anchor: only {steps} steps"
    print(f"kill at each of {steps} file steps of a sync, before{' and after' if STRESS else ''}: "
          f"{crashes.outcomes['old']} old, {crashes.outcomes['new']} new, all synced again")
