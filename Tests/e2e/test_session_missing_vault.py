"""One missing-vault error for every command that goes through the session layer: named as the
user named the vault (--keychain NAME or a path), exit 50, before any prompt, nothing created."""
import pytest

from kcharness import EXIT_NO_SUCH_KEYCHAIN, assert_failure

COMMANDS = [
    ["find", "generic", "-s", "x"],
    ["list"],
    ["check"],
    ["compact"],
    ["history", "generic", "-s", "x"],
    ["conflicts"],
    ["repair", "--yes"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: args[0])
def test_a_missing_keychain_is_named_as_given(kc, args):
    result = kc.run(["--keychain", "nosuch", *args], unset=("KC_MASTER_PASSWORD_FILE",))
    assert_failure(result, "errSecNoSuchKeychain", EXIT_NO_SUCH_KEYCHAIN)
    assert "no keychain named nosuch" in result.stderr
    assert "kc keychain create nosuch" in (result.hint or "")
    assert not (kc.home / "data" / "kc" / "nosuch.kc").exists()


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: args[0])
def test_a_missing_vault_path_is_named_by_its_path(kc, args):
    result = kc.run(args, unset=("KC_MASTER_PASSWORD_FILE",))
    assert_failure(result, "errSecNoSuchKeychain", EXIT_NO_SUCH_KEYCHAIN)
    assert f"no vault at {kc.vault_path}" in result.stderr
    assert "kc init" in (result.hint or "")
    assert not kc.vault_path.exists()
