"""Item commands served by the unlocked agent: no prompt and no master password source, and every
write acknowledged by another process (which cannot reach the agent) visible in the next answer."""
import json
import os
import shutil

from agentsupport import NO_SOURCE, agent_pids, akc, alive, not_unlocked, status, unlock, wait_until  # noqa: F401
from kcharness import EXIT_INTERACTION, EXIT_NOT_FOUND, FAST_KDF, KC, assert_failure


def served(kc, args, **kwargs):
    """Runs kc without a master password source or terminal: only the agent can answer."""
    result = kc.run(args, unset=NO_SOURCE, **kwargs)
    assert result.returncode == 0, result
    return result


def bypassing(kc) -> KC:
    """The same home and vault, seen by a process that cannot reach the agent (another runtime
    folder) and so opens the vault itself with the master password file."""
    other = KC(kc.binary, kc.home)
    other.env = dict(kc.env)
    folder = kc.home / "elsewhere"
    folder.mkdir(mode=0o700, exist_ok=True)
    other.env["XDG_RUNTIME_DIR"] = str(folder)
    return other


def test_item_commands_through_the_agent(akc):
    akc.add_generic("github.com", "me", "gh-secret", "-l", "GitHub")
    # Without the agent, the same command cannot run.
    assert_failure(akc.run(["find", "-s", "github.com", "-w"], unset=NO_SOURCE),
                   "errSecInteractionNotAllowed", EXIT_INTERACTION)
    unlock(akc)
    assert served(akc, ["find", "-s", "github.com", "-w"]).stdout == "gh-secret\n"
    assert "gh-secret" not in served(akc, ["find", "-s", "github.com"]).stdout
    found = json.loads(served(akc, ["find", "-s", "github.com", "--json", "-w"]).stdout)
    assert [i["password"] for i in found] == ["gh-secret"]
    assert "password" not in json.loads(served(akc, ["find", "-s", "github.com", "--json"]).stdout)[0]

    served(akc, ["add", "generic", "-s", "bank", "-a", "me", "--password-stdin"], input="bank-pw")
    served(akc, ["add", "internet", "-s", "ftp.example.com", "-r", "ftp", "-a", "deploy", "--password-stdin"], input="ftp-pw")
    served(akc, ["update", "generic", "-s", "bank", "-a", "me", "--set-label", "My bank", "--password-stdin"], input="bank-pw2")
    assert served(akc, ["find", "generic", "-s", "bank", "-w"]).stdout == "bank-pw2\n"
    listed = served(akc, ["list"]).stdout
    assert "My bank" in listed and "GitHub" in listed and "ftp.example.com" in listed, listed
    assert "bank" in served(akc, ["search", "bank"]).stdout
    assert len(json.loads(served(akc, ["list", "--json"]).stdout)) == 3
    served(akc, ["delete", "generic", "-s", "bank", "-a", "me"])
    assert_failure(akc.run(["find", "generic", "-s", "bank"], unset=NO_SOURCE), "errSecItemNotFound", EXIT_NOT_FOUND)
    assert "bank" not in served(akc, ["list"]).stdout

    # What the agent wrote, the vault holds: read without the agent.
    akc.ok(["lock"])
    assert akc.ok(["find", "-s", "ftp.example.com", "-w"]).stdout == "ftp-pw\n"
    assert_failure(akc.run(["find", "generic", "-s", "bank"]), "errSecItemNotFound", EXIT_NOT_FOUND)


def test_export_import_netrc_and_git_credential_through_the_agent(akc, tmp_path):
    akc.add_internet("git.example.com", "dev", "git-pw", "-r", "https")
    unlock(akc)
    exported = json.loads(served(akc, ["export"]).stdout)
    assert [i["server"] for i in exported] == ["git.example.com"] and "password" not in exported[0]
    source = tmp_path / "in.json"
    source.write_text('[{"class": "generic", "service": "imported", "account": "x", "password": "imp-pw"}]')
    served(akc, ["import", "json", str(source)])
    assert served(akc, ["find", "-s", "imported", "-w"]).stdout == "imp-pw\n"
    assert "password git-pw" in served(akc, ["netrc", "-s", "git.example.com"]).stdout
    answer = served(akc, ["git-credential", "get"], input="protocol=https\nhost=git.example.com\n\n").stdout
    assert answer == "username=dev\npassword=git-pw\n"
    served(akc, ["git-credential", "store"], input="protocol=https\nhost=git.example.com\nusername=dev\npassword=new-pw\n\n")
    assert served(akc, ["find", "-s", "git.example.com", "-w"]).stdout == "new-pw\n"
    # Every secret at once takes the master password even while unlocked.
    out = tmp_path / "all.json"
    assert_failure(akc.run(["export", "--with-secrets", "-o", str(out)], unset=NO_SOURCE),
                   "errSecInteractionNotAllowed", EXIT_INTERACTION)
    akc.ok(["export", "--with-secrets", "-o", str(out)])


def test_writes_of_other_processes_are_seen_by_the_next_answer(akc):
    unlock(akc)
    other = bypassing(akc)
    assert not other.run(["status"]).returncode == 0, "the other process must not reach the agent"
    for n in range(5):
        other.add_generic(f"svc{n}", "me", f"pw{n}")
        # Acknowledged above; the very next answer through the agent has it.
        assert served(akc, ["find", "-s", f"svc{n}", "-w"]).stdout == f"pw{n}\n"
    other.ok(["update", "generic", "-s", "svc0", "-a", "me", "--password-stdin"], input="changed")
    assert served(akc, ["find", "-s", "svc0", "-w"]).stdout == "changed\n"
    other.ok(["delete", "generic", "-s", "svc1", "-a", "me"])
    assert_failure(akc.run(["find", "-s", "svc1"], unset=NO_SOURCE), "errSecItemNotFound", EXIT_NOT_FOUND)

    # A compaction rewrites the file (a new inode): the agent reloads it with the key it holds.
    other.ok(["compact"])
    served(akc, ["add", "generic", "-s", "after-compact", "--password-stdin"], input="ac")
    assert served(akc, ["find", "-s", "svc4", "-w"]).stdout == "pw4\n"
    assert other.ok(["find", "-s", "after-compact", "-w"]).stdout == "ac\n"

    # A new master password over the same key: the agent goes on serving.
    new_password = akc.home / "new-password"
    akc.write_secret_file(new_password, "a new master password: oyster gravel\n")
    other.ok(["passwd", "--new-password-file", str(new_password)])
    assert served(akc, ["find", "-s", "svc2", "-w"]).stdout == "pw2\n"
    assert status(akc)[0] == 0


def test_rotating_the_key_locks_the_agent(akc):
    akc.add_generic("svc", "me", "pw")
    unlock(akc)
    pid = status(akc)[1]["pid"]
    new_password = akc.home / "new-password"
    akc.write_secret_file(new_password, "rotated master password: lantern orbit\n")
    bypassing(akc).ok(["passwd", "--rotate-key", "--new-password-file", str(new_password)])
    # The next request finds the vault under another key: nothing served, the agent locks and exits.
    assert_failure(akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE), "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert wait_until(lambda: not alive(pid)), "the agent outlived the key it held"


def test_a_vault_replaced_by_another_vault_ends_the_agent(akc, tmp_path):
    akc.add_generic("svc", "me", "pw")
    unlock(akc)
    pid = status(akc)[1]["pid"]
    stranger = KC(akc.binary, tmp_path / "stranger")
    stranger.init()
    stranger.add_generic("svc", "me", "stranger-pw")
    shutil.copyfile(stranger.vault_path, akc.home / "replacement.kc")
    os.replace(akc.home / "replacement.kc", akc.vault_path)
    # Never an answer from the other vault through this agent.
    result = akc.run(["find", "-s", "svc", "-w"], unset=NO_SOURCE)
    assert "stranger-pw" not in result.stdout and result.returncode != 0, result
    assert wait_until(lambda: not alive(pid)), "the agent went on after its vault was replaced"
    assert not_unlocked(akc)


def test_one_vault_one_agent_whatever_its_path_spelling(akc):
    akc.add_generic("svc", "me", "pw")
    unlock(akc)
    spelled = str(akc.vault_path.parent) + "/./" + akc.vault_path.name
    assert served(akc, ["--vault", spelled, "find", "-s", "svc", "-w"]).stdout == "pw\n"
    assert status(akc, env={"KC_VAULT": spelled})[0] == 0
    assert len(agent_pids(akc)) == 1
    # Another vault has no agent: its commands need its own master password.
    other_vault = akc.home / "other.kc"
    akc.ok(["--vault", str(other_vault), "init", *FAST_KDF])
    assert_failure(akc.run(["--vault", str(other_vault), "list"], unset=NO_SOURCE),
                   "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert akc.run(["--vault", str(other_vault), "status"]).returncode == EXIT_INTERACTION


def test_the_vaults_warnings_come_through_the_agent(akc):
    akc.add_generic("svc", "me", "pw")
    os.chmod(akc.vault_path, 0o644)
    unlock(akc)
    result = served(akc, ["find", "-s", "svc", "-w"])
    assert result.stdout == "pw\n"
    assert "kc: warning: the vault can be read by other users" in result.stderr, result


def test_a_torn_append_and_its_repair_by_other_processes(akc):
    """A writer that crashed mid-append (its record cut short) and a repair, both by processes that
    cannot reach the agent; each keeps its own state folder, as the crashed write was never
    acknowledged to anyone else."""
    for n in range(3):
        akc.add_generic(f"service-{n}", "acct", f"secret-{n}")
    unlock(akc)
    assert served(akc, ["find", "-s", "service-0", "-w"]).stdout == "secret-0\n"
    writer, repairer = bypassing(akc), bypassing(akc)
    writer.env["XDG_STATE_HOME"] = str(akc.home / "writer-state")
    repairer.env["XDG_STATE_HOME"] = str(akc.home / "repairer-state")
    writer.add_generic("torn", "acct", "never-acknowledged")
    data = akc.vault_path.read_bytes()
    akc.vault_path.write_bytes(data[:-7])       # the append cut short, as a crash leaves it
    result = served(akc, ["find", "-s", "service-2", "-w"])
    assert result.stdout == "secret-2\n" and "kc: warning:" in result.stderr, result
    assert_failure(akc.run(["find", "-s", "torn"], unset=NO_SOURCE), "errSecItemNotFound", EXIT_NOT_FOUND)
    repairer.ok(["repair", "--yes"])
    served(akc, ["add", "generic", "-s", "after-repair", "--password-stdin"], input="ar")
    assert served(akc, ["find", "-s", "after-repair", "-w"]).stdout == "ar\n"
    assert served(akc, ["find", "-s", "service-1", "-w"]).stdout == "secret-1\n"
    akc.ok(["lock"])
    akc.ok(["check"])


def test_a_secret_typed_slowly_at_the_prompt_is_still_added_through_the_agent(akc):
    """`kc add` checks the agent before it asks for the item's secret; the agent drops a connection
    that says nothing for 5 seconds, so a person who types for longer must still be served (by a
    fresh connection), not told that the agent stopped before answering."""
    import time

    import pexpect
    unlock(akc)
    child = akc.spawn(["add", "generic", "-s", "typed-slowly", "-a", "me"], unset=NO_SOURCE)
    child.expect_exact("Password for the item: ")
    time.sleep(6)
    child.sendline("slow-secret")
    child.expect_exact("Retype the password: ")
    child.sendline("slow-secret")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert served(akc, ["find", "-s", "typed-slowly", "-w"]).stdout == "slow-secret\n"


def test_an_add_whose_secret_comes_late_beside_a_locked_agent_goes_the_slow_way(akc):
    """Docs/kc-agent.service keeps a locked agent running, which every kc add connects to first: a
    secret piped after more than 5 seconds still takes the slow path (the master password file),
    not "the agent stopped before answering"."""
    import subprocess
    import time
    agent = akc.popen(["agent", "--foreground"], stdin=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: status(akc)[1]["state"] == "locked"), "the agent did not listen"
        add = akc.popen(["add", "generic", "-s", "slow", "-a", "me", "--password-stdin"])
        time.sleep(6)
        out, err = add.communicate(b"typed-slowly", timeout=60)
        assert add.returncode == 0, err.decode()
        assert akc.ok(["find", "-s", "slow", "-w"]).stdout == "typed-slowly\n"
    finally:
        agent.kill()
        agent.wait()


def test_an_import_of_many_frames_is_served_through_the_agent(akc, tmp_path):
    """An import beyond one frame (256 KiB of entries) reaches the agent as a request of several
    frames; it used to make the agent's connection spin, and the command wait for ever."""
    unlock(akc)
    entries = [{"class": "generic", "service": f"bulk-{n}", "account": "x", "password": "p" * 400} for n in range(1500)]
    source = tmp_path / "bulk.json"
    source.write_text(json.dumps(entries))
    served(akc, ["import", "json", str(source)], timeout=120)
    assert served(akc, ["find", "-s", "bulk-1499", "-w"]).stdout == "p" * 400 + "\n"
