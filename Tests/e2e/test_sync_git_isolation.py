"""How `kc sync` runs git (Docs/SYNC.md, "How kc runs git"; security review 2026-12 M2, L1, L2): the
caller's GIT_* variables never redirect it, every command names the sync copy with --git-dir and
--work-tree, no hook or automatic maintenance runs, no descriptor git inherits holds the master
password, and a remote's .gitattributes cannot give the vault file another attribute (the fixtures of
test_sync.py)."""
import shutil
import subprocess
from pathlib import Path

import pytest

from test_sync import GIT_ENV, git, machine, pair, remote, secret, sync_folder  # noqa: F401  (pytest fixtures)

IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def global_config(kc, key: str, value: str):
    """`git config --global KEY VALUE` of the machine (its HOME's .gitconfig)."""
    git(kc.home, "config", "--file", str(kc.home / ".gitconfig"), key, value)


def other_repository(tmp_path: Path) -> tuple[Path, Path]:
    """A repository of the user's (dotfiles) with one commit, pushed to its own remote."""
    upstream, work = tmp_path / "dotfiles-remote.git", tmp_path / "dotfiles"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(upstream)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    (work / "README").write_text("hi\n")
    git(work, "add", "README")
    git(work, *IDENTITY, "commit", "-qm", "init")
    git(work, "remote", "add", "origin", str(upstream))
    git(work, "push", "-q", "-u", "origin", "main")
    return upstream, work


def test_git_variables_of_the_caller_do_not_redirect_the_sync(pair, tmp_path, remote):
    """As git sets them for a hook or `git rebase -x`, or a user exports them for a dotfiles repository."""
    laptop, desktop = pair
    upstream, work = other_repository(tmp_path)
    elsewhere = tmp_path / "elsewhere.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(elsewhere)], check=True)
    before = git(upstream, "rev-parse", "main"), git(work, "status", "--porcelain")
    laptop.add_generic("new-item", "me", "pw1")
    caller = {
        "GIT_DIR": str(work / ".git"), "GIT_WORK_TREE": str(work), "GIT_INDEX_FILE": str(work / ".git" / "other-index"),
        "GIT_CONFIG_PARAMETERS": f"'remote.origin.url'='{elsewhere}' 'core.hookspath'='{tmp_path}'",
        "GIT_OBJECT_DIRECTORY": str(work / ".git" / "objects"), "GIT_NAMESPACE": "elsewhere",
    }
    result = laptop.ok(["sync"], env=caller)
    assert "sent: 1 item" in result.stdout
    assert (git(upstream, "rev-parse", "main"), git(work, "status", "--porcelain")) == before, "the other repository is untouched"
    assert not (work / ".git" / "other-index").exists() and not (work / "login.kc").exists()
    assert git(elsewhere, "for-each-ref") == "", "nothing went to the remote the caller's configuration named"
    assert "login.kc" in git(remote, "ls-tree", "--name-only", "main")
    assert "received: 1 added" in desktop.ok(["sync"]).stdout
    assert secret(desktop, "new-item") == "pw1"


# Every program below appends what it can read from every descriptor it inherited to LOG.
READ_DESCRIPTORS = r"""
for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] 2>/dev/null || continue
  printf ' fd%s=[' "$n"; timeout 0.2 cat "$fd" 2>/dev/null; printf ']'; done
"""


def spy_git(folder: Path, log: Path) -> Path:
    """A `git` that logs its arguments, its GIT_* variables and what its descriptors above 2 hold,
    then runs the real git: put first on PATH, it is the git kc finds."""
    folder.mkdir()
    real = shutil.which("git")
    script = folder / "git"
    script.write_text(f"""#!/bin/sh
{{ printf 'git'; printf ' <%s>' "$@"; env | grep '^GIT_' | tr '\\n' ' '
{READ_DESCRIPTORS}
printf '\\n'; }} >> '{log}'
exec '{real}' "$@"
""")
    script.chmod(0o755)
    return folder


def test_no_hook_or_maintenance_runs_and_no_descriptor_holds_the_password(pair, tmp_path, remote):
    laptop, desktop = pair
    hooks, log = tmp_path / "hooks", tmp_path / "hooks.log"
    hooks.mkdir()
    for name in ["post-merge", "pre-commit", "commit-msg", "pre-push", "reference-transaction", "post-checkout",
                 "pre-merge-commit", "prepare-commit-msg", "pre-auto-gc", "post-rewrite"]:
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\n{{ printf 'hook {name} in %s' \"$PWD\"\n{READ_DESCRIPTORS}\nprintf '\\n'; }} >> '{log}'\nexit 0\n")
        hook.chmod(0o755)
    for kc in (laptop, desktop):
        global_config(kc, "core.hooksPath", str(hooks))
        global_config(kc, "gc.auto", "1")   # every command would start `git gc --auto`
        global_config(kc, "maintenance.auto", "true")
    laptop.add_generic("from-laptop", "me", "pw1")
    laptop.ok(["sync"])
    desktop.add_generic("from-desktop", "me", "pw2")
    spy_log = tmp_path / "git.log"
    path = f"{spy_git(tmp_path / 'spy', spy_log)}:{desktop.env['PATH']}"
    result = desktop.ok(["sync"], env={"PATH": path})                  # a real merge: both sides changed
    assert "received: 1 added" in result.stdout
    laptop.ok(["sync"], env={"PATH": path})                            # a fast-forward
    assert secret(laptop, "from-desktop") == "pw2"
    password = desktop.master_password
    # For a remote on a local path, git's receive-pack runs the remote's hooks (where a server would).
    ran = log.read_text().splitlines() if log.exists() else []
    assert [line for line in ran if line.startswith("hook ") and f" in {remote} " not in line] == [], ran
    assert password not in "\n".join(ran)
    assert password not in spy_log.read_text()
    calls = [line for line in spy_log.read_text().splitlines() if line.startswith("git <")]   # (not the script's own lines)
    assert any("<merge>" in call for call in calls) and any("<push>" in call for call in calls)
    for call in calls:
        assert "<core.hooksPath=/dev/null>" in call and "<maintenance.auto=false>" in call, call
        assert "GIT_DIR" not in call and "GIT_CONFIG_PARAMETERS" not in call, call
        if "<user.name>" not in call and "<user.email>" not in call:   # the identity probe has no repository
            folder = sync_folder(laptop if str(laptop.home) in call else desktop)
            assert f"<--git-dir={folder}/.git>" in call and f"<--work-tree={folder}>" in call, call
    assert not any("merge-driver" in call for call in calls), "kc merges the vault file itself"


def test_a_remote_gitattributes_cannot_give_the_vault_file_other_attributes(pair, tmp_path):
    """The attacker commits only attribute lines; the laptop has a filter `x` that would corrupt the file."""
    laptop, desktop = pair
    global_config(laptop, "filter.x.clean", "echo corrupted")
    global_config(laptop, "filter.x.smudge", "echo corrupted")
    global_config(laptop, "filter.x.required", "true")
    folder = sync_folder(desktop)
    with open(folder / ".gitattributes", "a") as attributes:
        attributes.write("*.kc working-tree-encoding=UTF-16 filter=x ident eol=crlf crlf text\n* filter=x\n")
    git(folder, "add", ".gitattributes")
    git(folder, *IDENTITY, "commit", "-qm", "kc sync")
    git(folder, "push", "-q", "origin", "main")
    laptop.add_generic("a", "me", "pw-a")
    assert "received: 0 added" in laptop.ok(["sync"]).stdout
    attributes = git(sync_folder(laptop), "check-attr", "-a", "login.kc")
    assert "working-tree-encoding: unset" in attributes and "filter: unset" in attributes, attributes
    laptop.add_generic("b", "me", "pw-b")
    assert "sent: 1 item" in laptop.ok(["sync"]).stdout
    assert "received: 2 added" in desktop.ok(["sync"]).stdout
    for kc in (laptop, desktop):
        assert secret(kc, "a") == "pw-a" and secret(kc, "b") == "pw-b" and secret(kc, "shared") == "pw0"
    assert "corrupted" not in (sync_folder(laptop) / ".gitattributes").read_text()


@pytest.mark.parametrize("head", ["unborn master", "master without the vault"])
def test_init_and_clone_with_a_remote_whose_head_is_not_the_vault_s_branch(kc_bin, tmp_path, head):
    """`git init --bare` (HEAD refs/heads/master with git 2.39) while the vault's branch is main."""
    remote = tmp_path / "plain.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(remote, "symbolic-ref", "HEAD", "refs/heads/master")
    laptop, desktop = machine(kc_bin, tmp_path, "laptop"), machine(kc_bin, tmp_path, "desktop")
    laptop.init()
    laptop.add_generic("shared", "me", "pw0")
    laptop.ok(["sync", "init", "--remote", remote])
    if head == "master without the vault":
        readme = tmp_path / "readme"
        subprocess.run(["git", "init", "-q", "-b", "master", str(readme)], check=True)
        (readme / "README").write_text("hi\n")
        git(readme, "add", "README")
        git(readme, *IDENTITY, "commit", "-qm", "readme")
        git(readme, "push", "-q", str(remote), "master")
    desktop.ok(["sync", "clone", remote])
    assert secret(desktop, "shared") == "pw0"
    assert git(sync_folder(desktop), "rev-parse", "--abbrev-ref", "HEAD@{u}").strip() == "origin/main"
    desktop.add_generic("from-desktop", "me", "pw1")
    assert "sent: 1 item" in desktop.ok(["sync"]).stdout
    assert "received: 1 added" in laptop.ok(["sync"]).stdout
    assert secret(laptop, "from-desktop") == "pw1"
