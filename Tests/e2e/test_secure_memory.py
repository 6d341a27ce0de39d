"""Secret memory that cannot be locked against swapping (a low RLIMIT_MEMLOCK, as in many
containers) is one warning: not silent, and not fatal."""
import os
import resource
import subprocess

from agentsupport import NO_SOURCE, akc  # noqa: F401
from kcharness import EXIT_NOT_FOUND, Result

WARNING = "kc: warning: secrets could not be locked in memory (mlock: "
AGENT_WARNING = "kc: warning: the agent could not lock its secrets in memory (mlock: "


def no_locked_memory():
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))


def run_unlockable(kc, args):
    """kc with RLIMIT_MEMLOCK 0 and, as root, without CAP_IPC_LOCK (which ignores the limit)."""
    prefix = ["setpriv", "--bounding-set", "-ipc_lock", "--"] if os.geteuid() == 0 else []
    completed = subprocess.run([*prefix, *kc.command(args)], env=kc.environment(), cwd=str(kc.home),
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=120, start_new_session=True,
                               preexec_fn=no_locked_memory)
    return Result(completed.returncode, completed.stdout, completed.stderr.decode("utf-8", "replace"), list(args), 0)


def test_mlock_failure_is_one_warning_and_not_fatal(kc_ready):
    kc = kc_ready
    kc.add_generic("github.com", "me", "hunter2")
    locked = kc.ok(["find", "generic", "-s", "github.com", "-w"])
    assert locked.stdout == "hunter2\n" and WARNING not in locked.stderr, "control: no warning when mlock works"

    result = run_unlockable(kc, ["find", "generic", "-s", "github.com", "-w"])
    assert result.returncode == 0, result
    assert result.stdout == "hunter2\n"
    assert result.stderr.count(WARNING) == 1, result.stderr
    assert result.stderr.splitlines() == [line for line in result.stderr.splitlines() if line.startswith(WARNING)]
    # A failing command still ends with its error line, the warning before it.
    failed = run_unlockable(kc, ["find", "generic", "-s", "nothing.example"])
    assert failed.returncode == EXIT_NOT_FOUND, failed
    lines = failed.stderr.splitlines()
    assert lines[0].startswith(WARNING) and lines[-1].endswith("(errSecItemNotFound)"), lines


def test_unlock_says_when_the_agent_could_not_lock_its_memory(akc):
    """The started agent's standard streams go to /dev/null: kc unlock prints its warning."""
    akc.add_generic("item", "me", "one")
    result = run_unlockable(akc, ["unlock"])
    assert result.returncode == 0, result
    assert result.stderr.count(AGENT_WARNING) == 1, result.stderr
    assert akc.ok(["find", "generic", "-s", "item", "-w"], unset=NO_SOURCE).stdout == "one\n"
