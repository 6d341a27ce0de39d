"""Item names in the shell completions, from the chosen vault's unlocked agent only: the hidden
`kc __complete-items` and real bash, zsh and fish completing -s, --server and -a of find, update,
delete and history. Without an unlocked agent they complete nothing, at once, and never prompt
nor read the master password (a terminal is there to prompt on, and a password file too)."""
import shutil
import subprocess
from pathlib import Path

import pexpect
import pytest

from agentsupport import NO_SOURCE, akc, agent_pids, unlock, wait_until  # noqa: F401
from kcharness import EXIT_AUTH_FAILED
from test_cli_help import ZSH_CAPTURE

# A value that a shell expanding the candidates would run: it must come back as it is.
TRAP = "$(touch PWNED)`touch PWNED`"


def fill(kc):
    kc.add_generic("github.com", "me@example.com")
    kc.add_generic("git lab", "ops")
    kc.add_generic(TRAP, "trap")
    kc.add_internet("ftp.example.com", "deploy")
    kc.ok(["keychain", "create", "work", "--kdf-ops", "1", "--kdf-memory", "8K"])
    kc.ok(["--keychain", "work", "add", "generic", "-s", "work.example", "-a", "boss", "--password-stdin"], input="x")


def complete_items(kc, *args, **kwargs):
    return kc.ok(["__complete-items", *args], **kwargs).stdout.splitlines()


def shell_env(kc):
    """The user's environment, without a master password source, this kc first on PATH."""
    env = {name: value for name, value in kc.env.items() if name not in NO_SOURCE}
    return dict(env, PATH=f"{Path(kc.binary).parent}:/usr/bin:/bin")


def bash(kc, tmp_path, *line):
    """The candidates bash's completion offers for `kc LINE` (the last word being completed)."""
    script = tmp_path / "kc.bash"
    script.write_text(kc.ok(["completions", "bash"]).stdout)
    words = " ".join("'" + str(w).replace("'", "'\\''") + "'" for w in line)
    program = (f"source '{script}'; COMP_WORDS=(kc {words}); COMP_CWORD={len(line)}; _kc; "
               "printf '%s\\n' \"${COMPREPLY[@]}\"")
    result = subprocess.run(["bash", "-c", program], capture_output=True, text=True, env=shell_env(kc),
                            stdin=subprocess.DEVNULL, cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stderr
    return [w for w in result.stdout.splitlines() if w]


def zsh(kc, tmp_path, line):
    (tmp_path / "_kc").write_text(kc.ok(["completions", "zsh"]).stdout)
    (tmp_path / "out").unlink(missing_ok=True)
    (tmp_path / "capture.zsh").write_text(ZSH_CAPTURE)
    subprocess.run(["zsh", "-f", str(tmp_path / "capture.zsh")], env=dict(shell_env(kc), DIR=str(tmp_path), LINE=line),
                   capture_output=True, timeout=60, cwd=tmp_path)
    out = tmp_path / "out"
    return {m[len("MATCH:"):] for m in out.read_text().splitlines() if m.startswith("MATCH:")} if out.exists() else set()


def fish(kc, tmp_path, line):
    script = tmp_path / "kc.fish"
    script.write_text(kc.ok(["completions", "fish"]).stdout)
    result = subprocess.run(["fish", "-c", f"source {script}; complete -C {shlex_fish(line)}"], capture_output=True,
                            text=True, env=shell_env(kc), cwd=tmp_path, timeout=60)
    return sorted(entry.split("\t")[0] for entry in result.stdout.splitlines())


def shlex_fish(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def inserted(tmp_path, replies):
    """The words bash reads back from each completion reply once it is on the command line (bash's
    `complete -F` inserts a reply as it is): what the command run then receives. An unquoted reply
    holding $(...) or ; would run code here, in `tmp_path`."""
    words = []
    for reply in replies:
        result = subprocess.run(["bash", "-c", f"set -- {reply}\nprintf '%s\\0' \"$@\""], capture_output=True,
                                cwd=tmp_path, timeout=30, env={"PATH": "/usr/bin:/bin"})
        parsed = result.stdout.split(b"\0")[:-1]
        words.append(parsed[0].decode() if len(parsed) == 1 else f"{len(parsed)} words: {parsed!r}")
    return words


# Names that are shell code or several words unless quoted on insertion (security review L7).
HOSTILE = ["$(touch PWNED)x", "a; touch PWNED", "two words", "it's", 'say "hi"', "back`touch PWNED`tick",
           "star*", "amp&bg", "~tilde", "semi;colon|pipe>redirect"]


@pytest.fixture
def unlocked(akc):
    fill(akc)
    unlock(akc)
    return akc


def test_the_unlocked_agent_gives_the_values_of_each_attribute(unlocked):
    kc = unlocked
    assert complete_items(kc, unset=NO_SOURCE) == sorted(["ftp.example.com", "git lab", "github.com", TRAP])
    assert complete_items(kc, "--class", "generic", "--attribute", "service", unset=NO_SOURCE) == sorted(["git lab", "github.com", TRAP])
    assert complete_items(kc, "--class", "internet", "--attribute", "server", unset=NO_SOURCE) == ["ftp.example.com"]
    assert complete_items(kc, "--class", "internet", "--attribute", "account", unset=NO_SOURCE) == ["deploy"]
    assert complete_items(kc, "--attribute", "account", unset=NO_SOURCE) == ["deploy", "me@example.com", "ops", "trap"]
    # Another keychain has no agent: nothing.
    assert complete_items(kc, "--keychain", "work", unset=NO_SOURCE) == []


@pytest.mark.parametrize("source", ["file", "none"])
def test_without_an_agent_nothing_and_never_a_prompt(akc, source):
    fill(akc)
    # On a terminal that kc could prompt on, with or without a password file: no prompt, no vault opened.
    child = akc.spawn(["__complete-items", "--attribute", "account"], unset=() if source == "file" else NO_SOURCE, timeout=30)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and child.before == "", child.before
    assert not agent_pids(akc), "completing never starts an agent"


def test_a_locked_agent_gives_nothing(akc, tmp_path):
    """A locked agent (as the systemd user unit starts it, after a wrong password too) names no item."""
    fill(akc)
    agent = akc.popen(["agent", "--foreground"], stdin=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: agent_pids(akc) == {agent.pid}, timeout=10), "the agent did not start"
        wrong = akc.write_secret_file(tmp_path / "wrong", "not the password\n")
        assert akc.run(["unlock"], env={"KC_MASTER_PASSWORD_FILE": str(wrong)}).returncode == EXIT_AUTH_FAILED
        child = akc.spawn(["__complete-items"], timeout=30)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0 and child.before == ""
        assert agent_pids(akc) == {agent.pid}, "the locked agent went away: the test proved nothing"
    finally:
        agent.kill()
        agent.wait()


def test_bash_completes_item_names_taken_as_they_are(unlocked, tmp_path):
    kc = unlocked
    assert bash(kc, tmp_path, "find", "-s", "git") == ["git\\ lab", "github.com"]    # quoted for the line
    assert bash(kc, tmp_path, "find", "--server", "f") == ["ftp.example.com"]
    assert bash(kc, tmp_path, "find", "internet", "-s", "") == ["ftp.example.com"]
    assert bash(kc, tmp_path, "update", "generic", "-a", "o") == ["ops"]
    assert bash(kc, tmp_path, "delete", "internet", "--account", "") == ["deploy"]
    assert inserted(tmp_path, bash(kc, tmp_path, "history", "generic", "--service", "$")) == [TRAP]
    assert not (tmp_path / "PWNED").exists(), "a candidate was expanded by the shell"
    assert bash(kc, tmp_path, "--keychain", "work", "find", "-s", "") == []      # its own vault: no agent
    kc.ok(["--keychain", "work", "unlock"])
    assert bash(kc, tmp_path, "--keychain", "work", "find", "-s", "") == ["work.example"]
    assert bash(kc, tmp_path, "--vault", kc.home / "data" / "kc" / "work.kc", "find", "generic", "-a", "") == ["boss"]
    assert bash(kc, tmp_path, "--vault", "~/data/kc/work.kc", "find", "-a", "") == ["boss"]   # as typed: ~ is HOME
    # `--vault=PATH` as bash splits it (`=` is in COMP_WORDBREAKS), and whole (a shell without that break).
    assert bash(kc, tmp_path, "--vault", "=", "~/data/kc/work.kc", "find", "-a", "") == ["boss"]
    assert bash(kc, tmp_path, "--keychain", "=", "work", "find", "generic", "-s", "") == ["work.example"]
    assert bash(kc, tmp_path, "--vault=~/data/kc/work.kc", "find", "-a", "") == ["boss"]
    default = bash(kc, tmp_path, "find", "-a", "")                            # the default vault again
    assert "deploy" in default and "boss" not in default


def test_bash_quotes_every_name_it_inserts(akc, tmp_path):
    """Security review L7: each reply is quoted (printf %q), so the completed line holds the name as one
    word and runs nothing; typed as the quoted form or as the name's own characters, it still matches."""
    for name in HOSTILE:
        akc.add_generic(name, "acct")
    akc.ok(["keychain", "create", "$(touch PWNED)k", "--kdf-ops", "1", "--kdf-memory", "8K"])
    unlock(akc)
    replies = bash(akc, tmp_path, "find", "generic", "-s", "")
    assert sorted(inserted(tmp_path, replies)) == sorted(HOSTILE), replies
    for name in HOSTILE:                                     # typed as the name's first characters
        assert name in inserted(tmp_path, bash(akc, tmp_path, "find", "-s", name[:2])), name
    assert inserted(tmp_path, bash(akc, tmp_path, "find", "-s", "two\\ w")) == ["two words"]
    assert inserted(tmp_path, bash(akc, tmp_path, "find", "-s", "a\\;")) == ["a; touch PWNED"]
    keychains = bash(akc, tmp_path, "--keychain", "")
    assert "$(touch PWNED)k" in inserted(tmp_path, keychains), keychains
    assert "$(touch PWNED)k" in inserted(tmp_path, bash(akc, tmp_path, "keychain", "delete", "")), keychains
    assert not (tmp_path / "PWNED").exists(), "a name ran as shell code"


def test_bash_completes_the_path_after_vault_equals(akc, tmp_path):
    (tmp_path / "vault-one.kc").write_text("")
    assert bash(akc, tmp_path, "--vault", "=", "vault-o") == ["vault-one.kc"]
    assert "vault-one.kc" in bash(akc, tmp_path, "--vault", "=")


def test_bash_completes_nothing_without_an_agent(akc, tmp_path):
    fill(akc)
    assert bash(akc, tmp_path, "find", "-s", "") == []
    assert bash(akc, tmp_path, "delete", "generic", "-a", "") == []
    assert not agent_pids(akc)


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_item_names(unlocked, tmp_path):
    kc = unlocked
    assert zsh(kc, tmp_path, "kc find -s git") == {"git lab", "github.com"}
    assert zsh(kc, tmp_path, "kc delete internet -a ") == {"deploy"}
    assert TRAP in zsh(kc, tmp_path, "kc history generic -s ")
    assert not (tmp_path / "PWNED").exists()
    kc.ok(["--keychain", "work", "unlock"])
    assert zsh(kc, tmp_path, "kc --keychain work update generic -s ") == {"work.example"}
    assert zsh(kc, tmp_path, "kc --vault ~/data/kc/work.kc find -a ") == {"boss"}


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_nothing_without_an_agent(akc, tmp_path):
    fill(akc)
    assert zsh(akc, tmp_path, "kc find -s git") == set()


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_item_names(unlocked, tmp_path):
    kc = unlocked
    assert fish(kc, tmp_path, "kc find -s git") == ["git lab", "github.com"]
    assert fish(kc, tmp_path, "kc find internet --server ") == ["ftp.example.com"]
    assert fish(kc, tmp_path, "kc update generic -a o") == ["ops"]
    assert TRAP in fish(kc, tmp_path, "kc history generic -s ")
    assert not (tmp_path / "PWNED").exists()
    kc.ok(["--keychain", "work", "unlock"])
    assert fish(kc, tmp_path, "kc --keychain work delete generic -s ") == ["work.example"]
    assert fish(kc, tmp_path, "kc --keychain=work find -a ") == ["boss"]
    assert fish(kc, tmp_path, "kc --vault ~/data/kc/work.kc find -a ") == ["boss"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_nothing_without_an_agent(akc, tmp_path):
    fill(akc)
    assert fish(akc, tmp_path, "kc find -s ") == []
