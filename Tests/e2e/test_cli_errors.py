"""Usage errors, the error format, and the result codes of failures."""
import os

import pytest

from kcharness import (EXIT_AUTH_FAILED, EXIT_INTERACTION, EXIT_NO_SUCH_KEYCHAIN, EXIT_NOT_FOUND, EXIT_PARAM,
                       FAST_KDF, KC, assert_failure)


def test_missing_vault_is_50_with_hint_before_any_prompt(kc):
    # No password source either: the missing vault must be reported, not the missing password.
    result = kc.run(["find", "-s", "x"], unset=("KC_MASTER_PASSWORD_FILE",))
    assert_failure(result, "errSecNoSuchKeychain", EXIT_NO_SUCH_KEYCHAIN)
    assert "kc init" in (result.hint or "")
    assert not kc.vault_path.exists()
    for args in (["list"], ["add", "generic", "-s", "x", "--password-stdin"], ["delete", "generic", "-s", "x"]):
        assert_failure(kc.run(args, input="p"), "errSecNoSuchKeychain", EXIT_NO_SUCH_KEYCHAIN)
    assert not kc.vault_path.exists()


def test_wrong_password_is_51_and_vault_unchanged(kc_ready):
    kc = kc_ready
    kc.add_generic("svc", "a", "secret")
    before = kc.vault_path.read_bytes()
    wrong = KC.write_secret_file(kc.home / "wrong", "not the password\n")
    for args in (["find", "-s", "svc"], ["add", "generic", "-s", "new", "--password-stdin"], ["delete", "generic", "-s", "svc", "--all"]):
        result = kc.run(args, input="p", env={"KC_MASTER_PASSWORD_FILE": str(wrong)})
        assert_failure(result, "errSecAuthFailed", EXIT_AUTH_FAILED)
        assert "not the password" not in result.stderr
    assert kc.vault_path.read_bytes() == before


def test_no_terminal_and_no_password_source_is_36(kc_ready):
    result = kc_ready.run(["list"], unset=("KC_MASTER_PASSWORD_FILE",))
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)
    assert "KC_MASTER_PASSWORD_FILE" in (result.hint or "")


def test_stdin_is_never_the_master_password(kc_ready):
    result = kc_ready.run(["list"], input=kc_ready.master_password + "\n", unset=("KC_MASTER_PASSWORD_FILE",))
    assert_failure(result, "errSecInteractionNotAllowed", EXIT_INTERACTION)


@pytest.mark.parametrize("args,detail,hint", [
    (["lst"], "unknown command 'lst'", "did you mean 'list'?"),
    (["fnd", "-s", "x"], "unknown command 'fnd'", "did you mean 'find'?"),
    (["find", "--servce", "x"], "unknown option '--servce' for 'kc find'", "did you mean '--service'?"),
    (["list", "--jsno"], "unknown option '--jsno' for 'kc list'", "did you mean '--json'?"),
    (["add", "generc", "-s", "x"], "unknown word 'generc' after 'kc add'", "did you mean 'kc add generic'?"),
    (["add", "generic", "-P", "21"], "unknown option '-P' for 'kc add generic'", "'-P' is an option of 'kc add internet'"),
    (["--vualt", "x", "list"], "unknown option '--vualt'", "did you mean '--vault'?"),
    (["add", "-s", "x"], "'kc add' needs an item class", None),
    (["find", "generic", "-s"], "option '-s' needs a value", None),
    (["list", "--vault"], "option '--vault' needs a value", None),
    (["list", "--json=1"], "option '--json' takes no value", None),
    (["list", "extra"], "unexpected argument 'extra' for 'kc list'", None),
    (["find", "generic", "-s", "a", "--service", "b"], "given more than once", None),
    (["list", "--lock-timeout", "soon"], "--lock-timeout needs a number", None),
])
def test_usage_errors(kc_ready, args, detail, hint):
    result = kc_ready.run(args)
    assert_failure(result, "errSecParam", EXIT_PARAM)
    first = result.stderr.splitlines()[0]
    assert first.startswith("kc: error: ") and detail in first and first.endswith(" (errSecParam)")
    if hint is not None:
        assert result.stderr.splitlines()[1] == f"kc: hint: {hint}"
    assert result.stdout == ""


def test_usage_errors_do_not_need_a_vault(kc):
    assert_failure(kc.run(["lst"]), "errSecParam", EXIT_PARAM)


@pytest.mark.parametrize("args", [
    ["add", "generic", "-s", "x", "-w", "hunter2"],
    ["add", "generic", "-s", "x", "-whunter2"],
    ["add", "internet", "-s", "x", "--password=hunter2"],
    ["add", "internet", "-s", "x", "--password", "hunter2"],
    ["update", "generic", "-s", "x", "-w", "hunter2"],
])
def test_secret_on_argv_is_refused(kc_ready, args):
    result = kc_ready.run(args)
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert "never takes a secret on the command line" in result.stderr
    assert "--password-stdin" in (result.hint or "")
    assert "hunter2" not in result.stderr + result.stdout
    assert_failure(kc_ready.run(["find", "-s", "x"]), "errSecItemNotFound", EXIT_NOT_FOUND)


def test_global_options_after_the_command(kc):
    vault = kc.home / "v.kc"
    kc.ok(["init", "--vault", str(vault), *FAST_KDF])
    kc.ok(["add", "generic", "--vault", str(vault), "-s", "x", "--password-stdin", "--lock-timeout", "3"], input="p")
    kc.ok(["--vault", str(vault), "find", "generic", "-s", "x"])
    kc.ok(["find", "generic", "-s", "x", f"--vault={vault}"])
    assert_failure(kc.run(["find", "generic", "-s", "x"]), "errSecNoSuchKeychain", EXIT_NO_SUCH_KEYCHAIN)


def test_double_dash_ends_options(kc_ready):
    # A value starting with '-' needs the attached form; the separate form is a missing value.
    assert_failure(kc_ready.run(["add", "generic", "-s", "--weird", "--password-stdin"], input="p"), "errSecParam", EXIT_PARAM)
    kc_ready.ok(["add", "generic", "-s--weird", "--password-stdin"], input="p")
    kc_ready.ok(["find", "generic", "--service=--weird"])
    # After "--" nothing is an option: list takes no arguments.
    assert_failure(kc_ready.run(["list", "--", "--json"]), "errSecParam", EXIT_PARAM)


def test_every_failure_is_one_error_line(kc_ready):
    kc = kc_ready
    kc.add_generic("dup")
    failures = [
        kc.run(["add", "generic", "-s", "dup", "--password-stdin"], input="x"),
        kc.run(["find", "-s", "missing"]),
        kc.run(["bogus"]),
        kc.run(["list"], unset=("KC_MASTER_PASSWORD_FILE",)),
    ]
    for result in failures:
        assert result.returncode != 0
        lines = result.stderr.splitlines()
        assert len([l for l in lines if l.startswith("kc: error: ")]) == 1, result
        assert all(l.startswith(("kc: error: ", "kc: hint: ", "kc: warning: ")) for l in lines), result


def test_lock_timeout_zero_still_works_without_contention(kc_ready):
    kc_ready.ok(["list", "--lock-timeout", "0"])
