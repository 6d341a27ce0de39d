"""Words that help a newcomer: hints on not found and duplicate, other managers' verbs mapped to
kc's commands (never a misleading "did you mean"), `kc generate N`."""
import pexpect
import pytest

from kcharness import EXIT_DUPLICATE, EXIT_NOT_FOUND, EXIT_PARAM, assert_failure


def hint_at_a_terminal(kc, args):
    """The `kc: hint:` line of `args` run at a terminal (pexpect), and the exit status."""
    child = kc.spawn(args, env={"NO_COLOR": "1"})
    child.expect(pexpect.EOF)
    child.close()
    hints = [line for line in child.before.splitlines() if line.startswith("kc: hint: ")]
    return (hints[0][len("kc: hint: "):].rstrip("\r") if hints else None), child.exitstatus, child.before


def test_not_found_suggests_ignore_case_when_a_case_insensitive_match_exists(kc_ready):
    kc_ready.add_generic("github.com", "me@example.com", "pw")
    before = kc_ready.vault_path.read_bytes()
    hint, status, said = hint_at_a_terminal(kc_ready, ["find", "-s", "GITHUB.com"])
    assert status == EXIT_NOT_FOUND and "(errSecItemNotFound)" in said, said
    assert hint == "an item matches when case is ignored: add -i (--ignore-case)"
    assert kc_ready.vault_path.read_bytes() == before
    assert kc_ready.ok(["find", "-s", "GITHUB.com", "-i", "-w"]).stdout == "pw\n"


def test_not_found_suggests_search_for_a_part_of_a_name(kc_ready):
    kc_ready.add_generic("github.com", "me@example.com", "pw")
    hint, status, _ = hint_at_a_terminal(kc_ready, ["find", "-s", "github", "-w"])
    assert status == EXIT_NOT_FOUND
    assert hint == "to look for 'github' in every attribute: kc search github"
    assert "github.com" in kc_ready.ok(["search", "github"]).stdout
    hint, _, _ = hint_at_a_terminal(kc_ready, ["find", "-s", "nothing-like-it"])
    assert hint is None, "no hint where neither look finds anything"


def test_not_found_in_a_script_has_no_hint_and_reads_the_vault_once(kc_ready):
    """The hints' second look is for a person; a script's failed lookup stays one read of the vault
    (test_sync_cold_find.py measures the read)."""
    kc_ready.add_generic("github.com", "me", "pw")
    result = kc_ready.run(["find", "-s", "GitHub.com", "--json"])
    assert_failure(result, "errSecItemNotFound", EXIT_NOT_FOUND)
    assert result.stdout.strip() == "[]" and result.hint is None


def test_duplicate_suggests_update_existing(kc_ready):
    kc_ready.add_generic("github.com", "me@example.com", "pw")
    before = kc_ready.vault_path.read_bytes()
    result = kc_ready.run(["add", "generic", "-s", "github.com", "-a", "me@example.com", "--password-stdin"], input="x")
    assert_failure(result, "errSecDuplicateItem", EXIT_DUPLICATE)
    assert result.hint == "to update that item instead, add -U (--update-existing)"
    assert kc_ready.vault_path.read_bytes() == before


@pytest.mark.parametrize("verb, hint", [
    ("rm", "to delete an item: kc delete -s SERVICE -a ACCOUNT (see 'kc help delete')"),
    ("insert", "to add an item: kc add generic -s SERVICE -a ACCOUNT (see 'kc help add')"),
    ("otp", "TOTP codes are not in kc yet; 'kc find -s NAME -w' prints a stored otpauth:// URI"),
    ("grep", "to search every attribute: kc search TERM (see 'kc help search')"),
    ("version", "for kc's version: kc --version"),
])
def test_peer_verbs_map_to_kc_commands(kc, verb, hint):
    result = kc.run([verb, "x"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert f"unknown command '{verb}'" in result.stderr
    assert result.hint == hint


@pytest.mark.parametrize("verb", ["show", "get", "ls", "edit"])
def test_peer_verbs_that_kc_may_have_never_get_a_misleading_guess(kc, verb):
    """Other helpers add these as real commands; until then they point at kc's way, never 'init'."""
    result = kc.run([verb, "--help"])
    if result.returncode == 0:
        assert result.stdout.startswith(f"kc {verb}"), result   # a real command now
        return
    assert "did you mean" not in (result.hint or ""), result
    assert "kc " in (result.hint or ""), result


def test_generate_takes_the_length_as_a_word(kc):
    result = kc.ok(["generate", "16"])
    assert len(result.stdout) == 17 and result.stdout.endswith("\n")
    assert result.stderr.startswith("kc: strength: ")
    assert len(kc.ok(["generate", "24", "--no-symbols"]).stdout) == 25


@pytest.mark.parametrize("args, message", [
    (["generate", "16", "--length", "20"], "the length is given twice: as a word and with --length"),
    (["generate", "16", "--words", "6"], "--words and the length exclude each other"),
    (["generate", "sixteen"], "the length must be a whole number, not 'sixteen'"),
])
def test_generate_length_word_is_checked(kc, args, message):
    result = kc.run(args)
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert message in result.stderr


def test_generate_dash_l_is_not_the_length_and_says_so(kc):
    result = kc.run(["generate", "-l", "30"])
    assert_failure(result, "errSecParam", EXIT_PARAM)
    assert result.hint == "give the length as a word, 'kc generate 30', or as --length 30 (-l is --label in kc)"
