"""Named keychains: kc keychain create|list|default|delete, --keychain, and the order in which a vault is chosen."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from kcharness import EXIT_PARAM, FAST_KDF, assert_failure
from test_cli_help import zsh_matches


def create(kc, name):
    return kc.ok(["keychain", "create", name, *FAST_KDF])


def secret_of(kc, service, *args):
    return kc.run([*args, "find", "generic", "-s", service, "-w"]).stdout.strip()


def test_create_list_default_and_find_with_keychain(kc):
    kc.init()
    create(kc, "work")
    folder = kc.home / "data" / "kc"
    assert kc.mode(folder / "work.kc") == 0o600
    assert kc.ok(["keychain", "list"]).stdout == "* login\n  work\n"
    assert json.loads(kc.ok(["keychain", "list", "--json"]).stdout) == [
        {"name": "login", "path": str(folder / "login.kc"), "default": True},
        {"name": "work", "path": str(folder / "work.kc"), "default": False}]
    assert kc.ok(["keychain", "list", "--names"]).stdout == "login\nwork\n"
    kc.ok(["--keychain", "work", "add", "generic", "-s", "intranet", "-a", "me", "--password-stdin"], input="w-secret")
    assert kc.ok(["--keychain", "work", "find", "generic", "-s", "intranet", "-w"]).stdout == "w-secret\n"
    assert_failure(kc.run(["find", "generic", "-s", "intranet"]), "errSecItemNotFound")

    assert kc.ok(["keychain", "default"]).stdout == "login\n"
    kc.ok(["keychain", "default", "work"])
    assert kc.ok(["keychain", "default"]).stdout == "work\n"
    assert kc.ok(["keychain", "list"]).stdout == "  login\n* work\n"
    config = kc.home / "config" / "kc"
    assert kc.mode(config) == 0o700 and kc.mode(config / "default-keychain") == 0o600
    assert (config / "default-keychain").read_text() == "work\n"
    assert kc.ok(["find", "generic", "-s", "intranet", "-w"]).stdout == "w-secret\n"


def test_five_sources_in_order(kc, tmp_path):
    for name in ["login", "viaflag", "default"]:
        create(kc, name)
        kc.ok(["--keychain", name, "add", "generic", "-s", "where", "--password-stdin"], input=name)
    explicit = tmp_path / "explicit.kc"
    env_vault = tmp_path / "env.kc"
    for path in [explicit, env_vault]:
        kc.ok(["--vault", str(path), "init", *FAST_KDF])
        kc.ok(["--vault", str(path), "add", "generic", "-s", "where", "--password-stdin"], input=path.stem)
    env = {"KC_VAULT": str(env_vault)}
    # Without a default set: login.
    assert secret_of(kc, "where") == "login"
    kc.ok(["keychain", "default", "default"])
    assert secret_of(kc, "where") == "default"
    assert kc.run(["find", "generic", "-s", "where", "-w"], env=env).stdout == "env\n"
    assert kc.run(["--keychain", "viaflag", "find", "generic", "-s", "where", "-w"], env=env).stdout == "viaflag\n"
    both = ["--vault", str(explicit), "--keychain", "viaflag", "find", "generic", "-s", "where", "-w"]
    assert kc.run(both, env=env).stdout == "explicit\n"


@pytest.mark.parametrize("name", ["", ".hidden", "a/b", "-x", "tab\there", "x" * 201, "..", "new\nline"])
def test_bad_names_are_refused(kc, name):
    kc.init()
    for args in (["keychain", "create", name, *FAST_KDF], ["--keychain", name, "list"], ["keychain", "default", name]):
        result = kc.run(args)
        assert_failure(result, "errSecParam", EXIT_PARAM)
    assert sorted(p.name for p in (kc.home / "data" / "kc").iterdir()) == ["login.kc"]
    assert not (kc.home / "config" / "kc").exists()


def test_longest_name_and_unicode_are_accepted(kc):
    for name in ["x" * 200, "büro ✓", "a.b"]:
        create(kc, name)
    assert kc.ok(["keychain", "list", "--names"]).stdout.splitlines() == sorted(["x" * 200, "büro ✓", "a.b"])


def test_unknown_and_duplicate_keychains(kc):
    create(kc, "work")
    before = (kc.home / "data" / "kc" / "work.kc").read_bytes()
    result = kc.run(["keychain", "create", "work", *FAST_KDF])
    assert_failure(result, "errSecDuplicateKeychain")
    assert (kc.home / "data" / "kc" / "work.kc").read_bytes() == before
    for args in (["--keychain", "nope", "list"], ["keychain", "default", "nope"], ["keychain", "delete", "nope", "--yes"]):
        result = kc.run(args)
        assert_failure(result, "errSecNoSuchKeychain")
        assert "kc keychain create nope" in result.hint
    assert not (kc.home / "config" / "kc").exists()


def test_delete_moves_the_file_aside(kc):
    kc.init()
    create(kc, "old")
    kc.ok(["--keychain", "old", "add", "generic", "-s", "kept", "--password-stdin"], input="still here")
    result = kc.run(["keychain", "delete", "old"])
    assert_failure(result, "errSecInteractionNotAllowed")
    assert "--yes" in result.hint
    assert (kc.home / "data" / "kc" / "old.kc").exists()
    kc.ok(["keychain", "delete", "old", "--yes"])
    aside = [p for p in (kc.home / "data" / "kc").iterdir() if p.name.startswith("old.kc.deleted-")]
    assert len(aside) == 1 and not (kc.home / "data" / "kc" / "old.kc").exists()
    assert aside[0].name[len("old.kc.deleted-"):].endswith("Z")
    assert kc.ok(["--vault", str(aside[0]), "find", "generic", "-s", "kept", "-w"]).stdout == "still here\n"
    assert kc.ok(["keychain", "list", "--names"]).stdout == "login\n"


def test_delete_asks_on_a_terminal(kc):
    kc.init()
    create(kc, "old")
    child = kc.spawn(["keychain", "delete", "old"])
    child.expect(r"Delete the keychain old .*\? \[y/N\] ")
    child.sendline("n")
    child.expect_exact("nothing was changed")
    child.wait()
    assert (kc.home / "data" / "kc" / "old.kc").exists()
    child = kc.spawn(["keychain", "delete", "old"])
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect_exact("deleted the keychain old")
    child.wait()
    assert not (kc.home / "data" / "kc" / "old.kc").exists()


def test_the_default_is_not_deleted(kc):
    kc.init()
    create(kc, "work")
    assert_failure(kc.run(["keychain", "delete", "login", "--yes"]), "errSecParam", EXIT_PARAM)
    kc.ok(["keychain", "default", "work"])
    assert_failure(kc.run(["keychain", "delete", "work", "--yes"]), "errSecParam", EXIT_PARAM)
    kc.ok(["keychain", "delete", "login", "--yes"])
    assert kc.ok(["keychain", "list", "--names"]).stdout == "work\n"


def test_bash_completes_keychain_names(kc, tmp_path):
    create(kc, "work")
    create(kc, "wallet")
    create(kc, "home")
    script = tmp_path / "kc.bash"
    script.write_text(kc.ok(["completions", "bash"]).stdout)
    env = dict(kc.env, PATH=f"{Path(kc.binary).parent}:{kc.env['PATH']}")

    def complete(*line):
        words = " ".join(f"'{w}'" for w in line)
        program = f"source '{script}'; COMP_WORDS=(kc {words}); COMP_CWORD={len(line)}; _kc; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        result = subprocess.run(["bash", "-c", program], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        assert result.returncode == 0, result.stderr
        return result.stdout.split()

    assert complete("--keychain", "w") == ["wallet", "work"]
    assert complete("--keychain", "") == ["home", "wallet", "work"]
    assert complete("keychain", "delete", "ho") == ["home"]
    assert complete("keychain", "default", "wo") == ["work"]
    assert complete("--keychain", "work", "find", "i") == ["internet"]


def shell_env(kc):
    """The user's environment with this kc first on PATH, as the completions call `kc keychain list --names`."""
    return {"PATH": f"{Path(kc.binary).parent}:/usr/bin:/bin", "XDG_DATA_HOME": kc.env["XDG_DATA_HOME"]}


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_keychain_names(kc, tmp_path):
    for name in ["work", "wallet", "home"]:
        create(kc, name)
    script = kc.ok(["completions", "zsh"]).stdout
    assert zsh_matches(tmp_path, script, "kc --keychain w", shell_env(kc)) == {"wallet", "work"}
    assert zsh_matches(tmp_path, script, "kc keychain delete h", shell_env(kc)) == {"home"}


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_keychain_names(kc, tmp_path):
    for name in ["work", "wallet", "home"]:
        create(kc, name)
    script = tmp_path / "kc.fish"
    script.write_text(kc.ok(["completions", "fish"]).stdout)

    def complete(line):
        result = subprocess.run(["fish", "-c", f"source {script}; complete -C '{line}'"], capture_output=True,
                                text=True, env=shell_env(kc))
        return sorted(entry.split("\t")[0] for entry in result.stdout.splitlines())

    assert complete("kc --keychain w") == ["wallet", "work"]
    assert complete("kc keychain default ") == ["home", "wallet", "work"]


def test_a_keychain_made_again_after_delete_is_not_reported_as_swapped(kc):
    kc.init()
    create(kc, "work")
    kc.ok(["--keychain", "work", "add", "generic", "-s", "old", "--password-stdin"], input="x")
    kc.ok(["keychain", "delete", "work", "--yes"])
    warnings = [line for line in create(kc, "work").stderr.splitlines() if "warning" in line]
    assert all("INTERACTIVE preset" in line for line in warnings), warnings
    result = kc.ok(["--keychain", "work", "--quiet", "add", "generic", "-s", "new", "--password-stdin"], input="y")
    assert result.stderr == "", result
