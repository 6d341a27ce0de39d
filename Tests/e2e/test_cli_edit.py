"""kc edit through the binary with real $EDITOR scripts: the file the editor gets is mode 0600 in a folder
0700 on a tmpfs; the edit becomes one update (secret before the separator line, comment after); afterwards
the file, the editor's swap file and the folder are gone and the secret is in no file under the temporary
folders; no change, a failing editor or a file without the separator write nothing; VISUAL comes before
EDITOR; the agent serves it too; with no tmpfs at all kc refuses."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kcharness import EXIT_BY_NAME, EXIT_PARAM, assert_failure, only_item

SEPARATOR = "--- kc: the secret is above this line, the comment below; keep this line ---"


def editor(tmp_path: Path, body: str, name: str = "editor") -> Path:
    """A shell script for $EDITOR: it logs the mode of its file and folder and the folder's file
    system (never the contents), then runs `body` with $1 the file."""
    log = tmp_path / f"{name}.log"
    script = tmp_path / f"{name}.sh"
    script.write_text(f"""#!/bin/sh
f="$1"; d=$(dirname "$f")
printf '%s %s %s %s\\n' "$(stat -c %a "$f")" "$(stat -c %a "$d")" "$(stat -f -c %T "$d")" "$f" >> '{log}'
{body}
""")
    script.chmod(0o755)
    return script


def logged(tmp_path: Path, name: str = "editor") -> list[list[str]]:
    return [line.split(" ", 3) for line in (tmp_path / f"{name}.log").read_text().splitlines()]


def files_holding(text: str, *folders: Path) -> list[str]:
    """Every regular file under `folders` whose bytes contain `text`."""
    found = []
    for folder in folders:
        for root, _, names in os.walk(folder):
            for name in names:
                path = Path(root) / name
                try:
                    if path.is_file() and not path.is_symlink() and text.encode() in path.read_bytes():
                        found.append(str(path))
                except OSError:
                    pass
    return found


def item(kc, *selector) -> dict:
    [found] = json.loads(kc.ok(["find", *selector, "--json", "-w"]).stdout)
    return found


REWRITE = f"""cp "$f" "$d/.kc-edit.txt.swp"
printf '%s\\n' 'new-secret-7Qx' '{SEPARATOR}' 'new comment' 'second line' > "$f.new" && mv "$f.new" "$f"
"""


def test_edit_writes_the_new_secret_and_comment_and_leaves_no_file(kc_ready, tmp_path):
    kc_ready.add_generic("github.com", "me", "old-secret-3Jk", "-j", "first comment")
    script = editor(tmp_path, REWRITE)
    result = kc_ready.run(["edit", "generic", "-s", "github.com", "-a", "me"], env={"EDITOR": str(script)})
    assert result.returncode == 0, result
    assert "kc: updated the secret and comment of github.com (me)" in result.stderr
    [[file_mode, folder_mode, fs_type, path]] = logged(tmp_path)
    assert (file_mode, folder_mode, fs_type) == ("600", "700", "tmpfs")
    assert path.startswith("/dev/shm/kc-edit-"), path
    assert not Path(path).exists() and not Path(path).parent.exists(), "the file and its folder are removed"
    found = item(kc_ready, "generic", "-s", "github.com")
    assert (found["password"], found["comment"]) == ("new-secret-7Qx", "new comment\nsecond line")
    # Under the temporary folders, only the editor script itself (which writes it) holds the new secret.
    temporary = (Path("/dev/shm"), tmp_path)   # kc's TMPDIR and HOME are under tmp_path
    assert files_holding("old-secret-3Jk", *temporary) == []
    assert files_holding("new-secret-7Qx", *temporary) == [str(script)]


def test_edit_with_the_class_inferred_and_xdg_runtime_dir_on_tmpfs(kc_ready, tmp_path):
    kc_ready.add_internet("ftp.example.com", "deploy", "old-ftp-secret")
    runtime = Path(f"/dev/shm/kc-test-runtime-{os.getpid()}-{tmp_path.name}")
    runtime.mkdir(mode=0o700)
    try:
        script = editor(tmp_path, REWRITE)
        kc_ready.ok(["edit", "-s", "ftp.example.com"], env={"EDITOR": str(script), "XDG_RUNTIME_DIR": str(runtime)})
        [[_, _, _, path]] = logged(tmp_path)
        assert path.startswith(f"{runtime}/kc-edit-"), path
        assert list(runtime.iterdir()) == []
        assert item(kc_ready, "internet", "-s", "ftp.example.com")["password"] == "new-secret-7Qx"
    finally:
        shutil.rmtree(runtime)


def test_an_unchanged_file_writes_nothing_and_a_multi_line_secret_survives(kc_ready, tmp_path):
    kc_ready.add_generic("notes", None, "line one\nline two\n", "--binary", "-j", "c1\n\nc3")
    before = kc_ready.vault_path.read_bytes()
    # The editor sees exactly the secret, the separator and the comment.
    script = editor(tmp_path, f"""[ "$(cat "$f"; printf x)" = "$(printf 'line one\\nline two\\n\\n%s\\nc1\\n\\nc3\\nx' '{SEPARATOR}')" ] || exit 3""")
    result = kc_ready.run(["edit", "generic", "-s", "notes"], env={"EDITOR": str(script)})
    assert result.returncode == 0, result
    assert "kc: no change; nothing was written" in result.stderr
    assert kc_ready.vault_path.read_bytes() == before


def test_visual_comes_before_editor(kc_ready, tmp_path):
    kc_ready.add_generic("site", "me", "old")
    visual = editor(tmp_path, REWRITE, name="visual")
    wrong = editor(tmp_path, "exit 9", name="wrong")
    kc_ready.ok(["edit", "generic", "-s", "site"], env={"VISUAL": str(visual), "EDITOR": str(wrong)})
    assert item(kc_ready, "generic", "-s", "site")["password"] == "new-secret-7Qx"
    assert not (tmp_path / "wrong.log").exists()


@pytest.mark.parametrize("body, name", [("exit 1", "errSecUserCanceled"),
                                        ("printf 'no separator\\n' > \"$f\"", "errSecParam"),
                                        (f"printf '\\n%s\\ncomment\\n' '{SEPARATOR}' > \"$f\"", "errSecParam")])
def test_a_failed_or_broken_edit_changes_nothing_and_removes_the_file(kc_ready, tmp_path, body, name):
    kc_ready.add_generic("site", "me", "keep-me-secret")
    before = kc_ready.vault_path.read_bytes()
    script = editor(tmp_path, body)
    result = kc_ready.run(["edit", "generic", "-s", "site"], env={"EDITOR": str(script)})
    assert_failure(result, name)
    assert "nothing was changed" in result.stderr
    assert kc_ready.vault_path.read_bytes() == before
    [[_, _, _, path]] = logged(tmp_path)
    assert not Path(path).parent.exists()
    assert files_holding("keep-me-secret", Path("/dev/shm")) == []


def test_several_matches_are_listed_and_nothing_is_edited(kc_ready, tmp_path):
    kc_ready.add_generic("site", "a", "one")
    kc_ready.add_generic("site", "b", "two")
    script = editor(tmp_path, REWRITE)
    result = kc_ready.run(["edit", "generic", "-s", "site"], env={"EDITOR": str(script)})
    assert_failure(result, "errSecParam")
    assert "2 items match" in result.stderr
    assert not (tmp_path / "editor.log").exists()


def test_no_selector_and_no_match(kc_ready, tmp_path):
    script = editor(tmp_path, REWRITE)
    assert_failure(kc_ready.run(["edit", "generic"], env={"EDITOR": str(script)}), "errSecParam")
    assert_failure(kc_ready.run(["edit", "generic", "-s", "absent"], env={"EDITOR": str(script)}), "errSecItemNotFound")


def test_a_binary_secret_is_not_edited(kc_ready, tmp_path):
    kc_ready.add_generic("bin", None, b"\xff\xfe", "--binary")
    script = editor(tmp_path, REWRITE)
    result = kc_ready.run(["edit", "generic", "-s", "bin"], env={"EDITOR": str(script)})
    assert_failure(result, "errSecParam")
    assert "not UTF-8" in result.stderr and not (tmp_path / "editor.log").exists()


def test_edit_through_the_agent(kc_ready, tmp_path):
    from agentsupport import NO_SOURCE, stop_agents, with_runtime_folder
    kc = with_runtime_folder(kc_ready)   # not a tmpfs: kc falls back to /dev/shm
    kc.add_generic("github.com", "me", "old-secret-3Jk")
    kc.ok(["unlock"])
    try:
        script = editor(tmp_path, REWRITE)
        result = kc.run(["edit", "generic", "-s", "github.com"], env={"EDITOR": str(script)}, unset=NO_SOURCE)
        assert result.returncode == 0, result
        history = kc.run(["history", "generic", "-s", "github.com", "-w"], unset=NO_SOURCE).stdout
        assert [line for line in history.splitlines() if line.startswith("password: ")] == [
            "password: old-secret-3Jk", "password: new-secret-7Qx"]
    finally:
        stop_agents(kc)


def test_without_a_tmpfs_kc_refuses(kc_ready, tmp_path):
    """/dev/shm hidden by a folder on disk (a private mount namespace) and XDG_RUNTIME_DIR on disk."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.fail("this test needs unshare and root (a mount namespace)")
    kc_ready.add_generic("site", "me", "keep-me-secret")
    before = kc_ready.vault_path.read_bytes()
    disk = tmp_path / "disk"
    disk.mkdir()
    script = editor(tmp_path, REWRITE)
    env = kc_ready.environment({"EDITOR": str(script), "XDG_RUNTIME_DIR": str(disk)})
    completed = subprocess.run(["unshare", "--mount", "sh", "-c",
                                f"mount --bind '{disk}' /dev/shm && exec \"$0\" \"$@\"", kc_ready.binary,
                                "edit", "generic", "-s", "site"], env=env, capture_output=True, text=True, timeout=60)
    assert completed.returncode == EXIT_BY_NAME["errSecNotAvailable"], completed
    assert "neither" in completed.stderr and "tmpfs" in completed.stderr, completed.stderr
    assert not (tmp_path / "editor.log").exists() and list(disk.iterdir()) == []
    assert kc_ready.vault_path.read_bytes() == before


def test_edit_by_name_as_get_resolves_it(kc_ready, tmp_path):
    kc_ready.add_generic("github.com", "me", "old-secret-3Jk", "-l", "GitHub")
    kc_ready.add_generic("github.com", "work", "work-secret-8Lp", "-l", "GitHub work")
    script = editor(tmp_path, REWRITE)
    # The label, exactly: one item of the two github.com ones.
    kc_ready.ok(["edit", "GitHub"], env={"EDITOR": str(script)})
    assert item(kc_ready, "generic", "-s", "github.com", "-a", "me")["password"] == "new-secret-7Qx"
    assert item(kc_ready, "generic", "-s", "github.com", "-a", "work")["password"] == "work-secret-8Lp"
    # NAME and ACCOUNT.
    kc_ready.ok(["edit", "github.com", "work"], env={"EDITOR": str(script)})
    assert item(kc_ready, "generic", "-s", "github.com", "-a", "work")["password"] == "new-secret-7Qx"


def test_edit_by_an_ambiguous_name_without_a_terminal_edits_nothing(kc_ready, tmp_path):
    kc_ready.add_generic("github.com", "me", "old-secret-3Jk")
    kc_ready.add_generic("github.com", "work", "work-secret-8Lp")
    before = kc_ready.vault_path.read_bytes()
    script = editor(tmp_path, REWRITE)
    result = kc_ready.run(["edit", "github.com"], env={"EDITOR": str(script)})
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "me" in result.stderr and "work" in result.stderr
    assert not (tmp_path / "editor.log").exists(), "the editor never ran"
    assert kc_ready.vault_path.read_bytes() == before
