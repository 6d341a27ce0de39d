"""How kc words failures and status lines: the CLI alone words them, in one form."""
import re

import pexpect

from kcharness import EXIT_DUPLICATE_KEYCHAIN, EXIT_NO_SUCH_KEYCHAIN, EXIT_PARAM, assert_failure


def test_missing_vault_hint_names_every_way_to_choose_a_vault(kc):
    result = kc.run(["list"])
    assert_failure(result, "errSecNoSuchKeychain", EXIT_NO_SUCH_KEYCHAIN)
    assert result.hint == "create one with 'kc init', or name another with --vault PATH, --keychain NAME or KC_VAULT"


def test_status_lines_have_one_form_without_a_final_period(kc_ready):
    kc = kc_ready
    kc.add_generic("svc", "a", "one")
    kc.add_generic("svc", "b", "two")
    lines = []
    for args in (["update", "generic", "-s", "svc", "-a", "a", "--set-label", "L"],
                 ["delete", "generic", "-s", "svc", "-a", "b"],
                 ["compact"]):
        result = kc.run(args)
        assert result.returncode == 0, result
        lines += result.stderr.splitlines()
    assert lines[:2] == ["kc: updated 1 item", "kc: deleted 1 item"]
    assert len(lines) == 3 and re.fullmatch(r"kc: compacted .*: \d+ records -> \d+; 1 deleted item dropped for good "
                                            r"\(no longer restorable\)", lines[2]), lines
    kc.run(["delete", "generic", "-s", "svc", "--all"])
    assert kc.run(["list"]).stderr == "kc: the vault has no items\n"


def test_an_ambiguous_change_lists_the_matches_and_changes_nothing(kc_ready):
    kc = kc_ready
    kc.add_generic("svc", "a", "one")
    kc.add_generic("svc", "b", "two")
    before = kc.vault_path.read_bytes()
    result = kc.run(["delete", "generic", "-s", "svc"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    lines = result.stderr.splitlines()
    assert lines[0] == "kc: 2 items match:"
    assert lines[1].split() == ["CLASS", "LABEL", "SERVICE/SERVER", "ACCOUNT", "MODIFIED"]
    assert [line.split()[:4] for line in lines[2:4]] == [["generic", "-", "svc", "a"], ["generic", "-", "svc", "b"]]
    assert len(lines) == 6 and lines[4] == "kc: error: 2 items match; nothing was changed (errSecParam)"
    assert "--all" in (result.hint or "")
    assert kc.vault_path.read_bytes() == before


def test_init_over_a_vault_is_refused_before_any_prompt_in_the_one_wording(kc_ready):
    kc = kc_ready
    before = kc.vault_path.read_bytes()
    # Without colour: the wording is compared here (test_cli_terminal_output.py checks the colour).
    child = kc.spawn(["init", "--kdf-ops", "2", "--kdf-memory", "64M"], unset=("KC_MASTER_PASSWORD_FILE",),
                     env={"NO_COLOR": "1"})
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == EXIT_DUPLICATE_KEYCHAIN, child.before
    assert child.before.splitlines() == [
        f"kc: error: a vault already exists at {kc.vault_path}; it was left untouched (errSecDuplicateKeychain)",
        "kc: hint: use it as it is, or choose another path with --vault PATH"]
    assert kc.vault_path.read_bytes() == before
