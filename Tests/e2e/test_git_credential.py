"""kc as git's credential helper: real git against a Basic-auth smart-HTTP server, and the
credential protocol's matching rules (get, store, erase) spoken to kc directly."""
import os
import subprocess
from pathlib import Path

import pytest

from gitserver import GitServer
from kcharness import EXIT_PARAM

USER, PASSWORD = "deploy", "s3cret pass"


def request(**attributes) -> str:
    """A credential message: key=value lines and the blank line that ends it."""
    return "".join(f"{key}={value}\n" for key, value in attributes.items()) + "\n"


def get(kc, **attributes) -> str:
    return kc.ok(["git-credential", "get"], input=request(**attributes)).stdout


def store(kc, **attributes):
    kc.ok(["git-credential", "store"], input=request(**attributes))


def erase(kc, **attributes):
    kc.ok(["git-credential", "erase"], input=request(**attributes))


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "repos"
    root.mkdir()
    served = GitServer(root, USER, PASSWORD)
    served.create_repository("project.git")
    served.start()
    yield served
    served.stop()


@pytest.fixture
def git(kc_ready, tmp_path):
    """Runs real git with `credential.helper kc` (git finds git-credential-kc, a link to kc, on
    PATH) and GIT_ASKPASS answering `answers`; `askpass_calls` lists the prompts it was asked."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git-credential-kc").symlink_to(kc_ready.binary)
    log = tmp_path / "askpass.log"
    askpass = tmp_path / "askpass"
    askpass.write_text('#!/bin/sh\nprintf "%s\\n" "$1" >> "$ASKPASS_LOG"\n'
                       'case "$1" in Username*) printf "%s\\n" "$ASKPASS_USER";; *) printf "%s\\n" "$ASKPASS_PASSWORD";; esac\n'
                       '[ "$ASKPASS_FAIL" != 1 ]\n')
    askpass.chmod(0o755)

    class Git:
        kc = kc_ready

        @staticmethod
        def run(*args, user=USER, password=PASSWORD, fail_askpass=False):
            env = kc_ready.environment({
                "PATH": f"{bin_dir}:{os.environ['PATH']}", "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_ASKPASS": str(askpass), "ASKPASS_LOG": str(log), "ASKPASS_USER": user,
                "ASKPASS_PASSWORD": password, "ASKPASS_FAIL": "1" if fail_askpass else "0",
                "GIT_TERMINAL_PROMPT": "0"})
            return subprocess.run(["git", "-c", "credential.helper=kc", *args], env=env, capture_output=True,
                                  text=True, timeout=60, start_new_session=True, cwd=str(tmp_path))

        @staticmethod
        def askpass_calls() -> list[str]:
            return log.read_text().splitlines() if log.exists() else []

    return Git


def test_first_clone_prompts_and_stores_then_second_clone_uses_the_stored_password(git, server, tmp_path):
    first = git.run("clone", "-q", server.url("project.git"), str(tmp_path / "one"))
    assert first.returncode == 0, first.stderr
    assert len(git.askpass_calls()) == 2 and git.askpass_calls()[0].startswith("Username")
    host = f"127.0.0.1:{server.port}"
    assert get(git.kc, protocol="http", host=host) == f"username={USER}\npassword={PASSWORD}\n"

    second = git.run("clone", "-q", server.url("project.git"), str(tmp_path / "two"), fail_askpass=True)
    assert second.returncode == 0, second.stderr
    assert len(git.askpass_calls()) == 2, "git asked again although kc holds the password"
    assert (tmp_path / "two" / "README").read_text() == "hello\n"


def test_a_rejected_stored_password_is_erased(git, server, tmp_path):
    host = f"127.0.0.1:{server.port}"
    store(git.kc, protocol="http", host=host, username=USER, password="wrong")
    rejected = git.run("ls-remote", server.url("project.git"), fail_askpass=True)
    assert rejected.returncode != 0
    assert server.requests["served"] == 0
    assert get(git.kc, protocol="http", host=host) == ""
    again = git.run("ls-remote", server.url("project.git"))
    assert again.returncode == 0, again.stderr
    assert get(git.kc, protocol="http", host=host) == f"username={USER}\npassword={PASSWORD}\n"


def test_git_credential_kc_link_runs_the_helper(kc_ready, tmp_path):
    link = tmp_path / "git-credential-kc"
    link.symlink_to(kc_ready.binary)
    stored = subprocess.run([str(link), "store"], input=request(protocol="https", host="h", username="u", password="p").encode(),
                            env=kc_ready.environment(), capture_output=True, timeout=60)
    assert stored.returncode == 0, stored.stderr
    assert get(kc_ready, protocol="https", host="h") == "username=u\npassword=p\n"


def test_get_matches_port_and_path_exactly(kc_ready):
    store(kc_ready, protocol="https", host="example.com:8443", username="alice", password="on-8443")
    store(kc_ready, protocol="https", host="example.com", path="team/a.git", username="alice", password="on-a")
    assert get(kc_ready, protocol="https", host="example.com") == ""
    assert get(kc_ready, protocol="http", host="example.com:8443") == ""
    assert get(kc_ready, protocol="https", host="example.com:8443") == "username=alice\npassword=on-8443\n"
    assert get(kc_ready, protocol="https", host="example.com", path="team/b.git") == ""
    assert get(kc_ready, protocol="https", host="example.com", path="team/a.git") == "username=alice\npassword=on-a\n"
    assert get(kc_ready, protocol="https", host="example.com:8443", username="bob") == ""


def test_get_with_a_username_answers_only_that_account_and_empty_is_a_username(kc_ready):
    store(kc_ready, protocol="https", host="h", username="alice", password="pa")
    store(kc_ready, protocol="https", host="h", username="bob", password="pb")
    assert get(kc_ready, protocol="https", host="h", username="alice") == "username=alice\npassword=pa\n"
    assert get(kc_ready, protocol="https", host="h") == "username=bob\npassword=pb\n"
    assert get(kc_ready, protocol="https", host="h", username="") == ""
    store(kc_ready, protocol="https", host="h", username="", password="pe")
    assert get(kc_ready, protocol="https", host="h", username="") == "username=\npassword=pe\n"
    assert get(kc_ready, protocol="https", host="h", username="alice") == "username=alice\npassword=pa\n"


def test_store_changes_only_the_exact_item(kc_ready):
    store(kc_ready, protocol="https", host="h:8443", username="alice", password="old")
    store(kc_ready, protocol="https", host="h", username="alice", password="new")
    store(kc_ready, protocol="https", host="h:8443", path="p.git", username="alice", password="pathed")
    assert get(kc_ready, protocol="https", host="h:8443", username="alice") == "username=alice\npassword=old\n"
    store(kc_ready, protocol="https", host="h:8443", username="alice", password="changed")
    assert get(kc_ready, protocol="https", host="h:8443", username="alice") == "username=alice\npassword=changed\n"
    assert get(kc_ready, protocol="https", host="h", username="alice") == "username=alice\npassword=new\n"
    assert get(kc_ready, protocol="https", host="h:8443", path="p.git") == "username=alice\npassword=pathed\n"


def test_store_of_the_stored_password_leaves_the_vault_bytes_unchanged(kc_ready):
    store(kc_ready, protocol="https", host="h", username="alice", password="same")
    before = kc_ready.vault_path.read_bytes()
    store(kc_ready, protocol="https", host="h", username="alice", password="same")
    assert kc_ready.vault_path.read_bytes() == before
    store(kc_ready, protocol="https", host="h", username="alice", password="other")
    assert kc_ready.vault_path.read_bytes() != before


def test_ephemeral_credentials_and_incomplete_stores_are_not_stored(kc_ready):
    before = kc_ready.vault_path.read_bytes()
    store(kc_ready, protocol="https", host="h", username="alice", password="p", ephemeral="1")
    store(kc_ready, protocol="https", host="h", password="p")
    store(kc_ready, protocol="https", host="h", username="alice")
    assert kc_ready.vault_path.read_bytes() == before


def test_erase_without_username_erases_every_account_of_that_host_only(kc_ready):
    store(kc_ready, protocol="https", host="h", username="alice", password="pa")
    store(kc_ready, protocol="https", host="h", username="bob", password="pb")
    store(kc_ready, protocol="https", host="h:8443", username="alice", password="pp")
    store(kc_ready, protocol="https", host="other", username="alice", password="po")
    erase(kc_ready, protocol="https", host="h")
    assert get(kc_ready, protocol="https", host="h") == ""
    assert get(kc_ready, protocol="https", host="h:8443") == "username=alice\npassword=pp\n"
    assert get(kc_ready, protocol="https", host="other") == "username=alice\npassword=po\n"


def test_erase_with_a_password_erases_only_items_holding_it(kc_ready):
    store(kc_ready, protocol="https", host="h", username="alice", password="pa")
    store(kc_ready, protocol="https", host="h", username="bob", password="pb")
    erase(kc_ready, protocol="https", host="h", password="pb")
    assert get(kc_ready, protocol="https", host="h", username="bob") == ""
    assert get(kc_ready, protocol="https", host="h", username="alice") == "username=alice\npassword=pa\n"
    erase(kc_ready, protocol="https", host="h", username="alice", password="not it")
    assert get(kc_ready, protocol="https", host="h", username="alice") == "username=alice\npassword=pa\n"
    erase(kc_ready, protocol="https", host="h", username="alice")
    assert get(kc_ready, protocol="https", host="h") == ""


def test_get_without_a_master_password_source_answers_nothing(kc_ready):
    store(kc_ready, protocol="https", host="h", username="alice", password="pa")
    result = kc_ready.run(["git-credential", "get"], input=request(protocol="https", host="h"),
                          unset=("KC_MASTER_PASSWORD_FILE",))
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr.startswith("kc: warning: git-credential: no unlocked agent, no terminal")


def test_unknown_operations_and_attributes_are_ignored_and_bad_lines_refused(kc_ready):
    before = kc_ready.vault_path.read_bytes()
    assert kc_ready.ok(["git-credential", "capability"], input="x\n").stdout == ""
    store(kc_ready, protocol="https", host="h", username="alice", password="pa", wwwauth="Basic", **{"capability[]": "authtype"})
    assert get(kc_ready, protocol="https", host="h", password_expiry_utc="1") == "username=alice\npassword=pa\n"
    after = kc_ready.vault_path.read_bytes()
    assert after != before
    result = kc_ready.run(["git-credential", "store"], input=b"protocol=https\nhost=h\nusername=x\npassword=a\0b\n\n")
    assert result.returncode == EXIT_PARAM and "line 4 holds a NUL byte" in result.stderr
    assert kc_ready.vault_path.read_bytes() == after


def test_global_options_after_the_helper_name_choose_the_vault(kc_ready, tmp_path):
    """git runs `credential.helper 'kc --vault FILE'` as `git-credential-kc --vault FILE get`."""
    other = tmp_path / "other.kc"
    kc_ready.ok(["--vault", str(other), "init", "--kdf-ops", "1", "--kdf-memory", "8K"])
    link = tmp_path / "git-credential-kc"
    link.symlink_to(kc_ready.binary)
    for operation, message in (("store", request(protocol="https", host="h", username="u", password="in-other")),
                               ("get", request(protocol="https", host="h"))):
        result = subprocess.run([str(link), "--vault", str(other), operation], input=message.encode(),
                                env=kc_ready.environment(), capture_output=True, timeout=60)
        assert result.returncode == 0, result.stderr
    assert result.stdout == b"username=u\npassword=in-other\n"
    assert get(kc_ready, protocol="https", host="h") == ""


def test_an_empty_username_and_an_empty_password_are_stored_and_returned(kc_ready):
    """As git-credential-store does (git's own helper tests expect it): both sent, both empty, is a
    credential; absent ones still are not (test_ephemeral_credentials_and_incomplete_stores_are_not_stored)."""
    store(kc_ready, protocol="https", host="empty.example", username="", password="")
    assert get(kc_ready, protocol="https", host="empty.example") == "username=\npassword=\n"
    assert get(kc_ready, protocol="https", host="empty.example", username="") == "username=\npassword=\n"
    store(kc_ready, protocol="https", host="empty.example", username="", password="now-set")
    assert get(kc_ready, protocol="https", host="empty.example") == "username=\npassword=now-set\n"
    store(kc_ready, protocol="https", host="empty.example", username="", password="")
    assert get(kc_ready, protocol="https", host="empty.example") == "username=\npassword=\n"


def test_get_never_prints_a_secret_holding_a_line_break(kc_ready):
    """Mutation survivor M33: git's credential protocol is line-based, so a secret `pw\\nusername=evil`
    (stored through standard input, which keeps the line break) would inject a field. kc answers
    nothing and warns."""
    kc_ready.ok(["add", "internet", "-s", "inject.example", "-a", "alice", "-r", "https", "--password-stdin"],
                input=b"pw\nusername=evil")
    assert kc_ready.ok(["find", "-s", "inject.example", "-w"]).stdout_bytes == b"pw\nusername=evil\n", \
        "the line break was stored: the test proves something"
    result = kc_ready.run(["git-credential", "get"], input=request(protocol="https", host="inject.example"))
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith("password=")], result
    assert "username=evil" not in lines and result.stdout == "", result
    assert result.stderr.startswith("kc: warning: git-credential: the item for inject.example holds a line break"), result
